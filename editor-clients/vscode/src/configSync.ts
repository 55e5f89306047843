/** Keeps the server's view of the `lspAgent` settings to what the user set (never the manifest's defaults). */

import * as vscode from "vscode";
import { DidChangeConfigurationNotification, LanguageClient, Middleware } from "vscode-languageclient/node";
import { SETTINGS_SECTION } from "./protocol";
import { userSetSettings } from "./userSettings";

/** The settings the user set for `scope` (a folder URI string; none = the workspace). */
export function userSettingsFor(keys: string[], scope?: string | null): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION, scope ? vscode.Uri.parse(scope) : undefined);
  return userSetSettings(keys, (key) => config.inspect(key));
}

/** True when the user set any lspAgent setting (server ones or the server command): a reason to start. */
export function anySettingSet(keys: string[]): boolean {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
  const all = [...keys, "server.command", "server.env"];
  return Object.keys(userSetSettings(all, (key) => config.inspect(key))).length > 0;
}

/** workspace/configuration middleware: the `lspAgent` section answers with the user-set values only. */
export function configurationMiddleware(keys: string[]): Middleware["workspace"] {
  return {
    configuration: async (params, token, next) => {
      const others = await next(params, token);
      if (!Array.isArray(others)) {
        return others; // an error from VS Code: pass it on
      }
      return params.items.map((item, i) => (item.section === SETTINGS_SECTION ? userSettingsFor(keys, item.scopeUri) : others[i]));
    },
  };
}

/** Send the changed settings (user-set only) with workspace/didChangeConfiguration. */
export async function pushSettings(client: LanguageClient, keys: string[]): Promise<void> {
  await client.sendNotification(DidChangeConfigurationNotification.type, { settings: { [SETTINGS_SECTION]: userSettingsFor(keys) } });
}
