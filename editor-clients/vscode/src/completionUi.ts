/** The inline completion status bar toggle: shows on/off/unavailable/paused and flips lspAgent.inlineCompletion. */

import * as vscode from "vscode";
import type { Middleware } from "vscode-languageclient/node";
import { SETTINGS_SECTION } from "./protocol";
import {
  CompletionSetting,
  CompletionStatus,
  completionView,
  effectiveSetting,
  inlineCompletionMiddleware,
  SettingTarget,
  Throttle,
  toggledSetting,
} from "./inlineCompletion";

export const TOGGLE_COMMAND = "lsp-agent.toggleInlineCompletion";
const KEY = "inlineCompletion";
const REFRESH_MS = 3000; // after answers, lspAgent.status is asked at most this often

/** The VS Code configuration target of a toggle (looked up when used: nothing of `vscode` is read at load time). */
function configurationTarget(target: SettingTarget): vscode.ConfigurationTarget {
  const targets = vscode.ConfigurationTarget;
  return target === "workspaceFolder" ? targets.WorkspaceFolder : target === "workspace" ? targets.Workspace : targets.Global;
}

/** The status bar item of inline completions and the state the middleware consults. */
export class CompletionUi implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("lspAgent.completions", vscode.StatusBarAlignment.Right, 100);
  private readonly refresh: Throttle;
  private status: CompletionStatus | undefined;
  private serverState: "starting" | "running" | "stopped" | undefined; // undefined: not started yet (item hidden)

  /** `fetchStatus` asks the server for lspAgent.status' `completion` section (undefined: no server). */
  constructor(fetchStatus: () => Promise<CompletionStatus | undefined>) {
    this.item.name = "LSP Agent Completions";
    this.item.command = TOGGLE_COMMAND;
    this.refresh = new Throttle(() => void fetchStatus().then((s) => this.update(s), () => undefined), REFRESH_MS);
  }

  /** Register the toggle command and the configuration listener. */
  activate(context: vscode.ExtensionContext): void {
    context.subscriptions.push(
      this,
      vscode.commands.registerCommand(TOGGLE_COMMAND, () => this.toggle()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(SETTINGS_SECTION)) {
          this.show();
          this.refresh.poke(); // other completion settings change what the server can do
        }
      }),
    );
  }

  /** The middleware for LanguageClientOptions: no request while off or without a completion model. */
  middleware(): Middleware {
    return inlineCompletionMiddleware({
      setting: () => this.setting(),
      status: () => this.status,
      answered: () => this.refresh.poke(),
    });
  }

  /** The server's state changed (starting, running, stopped). */
  serverChanged(state: "starting" | "running" | "stopped"): void {
    this.serverState = state;
    if (state === "running") {
      this.refresh.poke();
    }
    this.show();
  }

  /** A fresh lspAgent.status answer (its `completion` section). */
  update(status: CompletionStatus | undefined): void {
    this.status = status;
    this.show();
  }

  private setting(): CompletionSetting {
    return effectiveSetting(vscode.workspace.getConfiguration(SETTINGS_SECTION, this.scope()).inspect(KEY));
  }

  private scope(): vscode.Uri | undefined {
    return vscode.window.activeTextEditor?.document.uri;
  }

  private async toggle(): Promise<void> {
    const config = vscode.workspace.getConfiguration(SETTINGS_SECTION, this.scope());
    const { value, target } = toggledSetting(config.inspect(KEY));
    await config.update(KEY, value, configurationTarget(target));
    void vscode.window.setStatusBarMessage(`LSP Agent: inline completions ${value === "off" ? "off" : "on"}`, 2500);
  }

  private show(): void {
    if (this.serverState === undefined) {
      return;
    }
    const view = completionView({ serverState: this.serverState, setting: this.setting(), status: this.status });
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor = view.warning ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
    this.item.show();
  }

  dispose(): void {
    this.refresh.dispose();
    this.item.dispose();
  }
}
