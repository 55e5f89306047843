/**
 * The `lspAgent` settings the user really set, for the server.
 *
 * The server ranks editor settings above the environment (LSP_AGENT_MODEL, LSP_AGENT_MAX_ITERATIONS, a workspace
 * `.env`), so the client must not send the manifest's defaults: a default would silently override the user's
 * environment. `WorkspaceConfiguration.get` and `JSON.stringify(getConfiguration(...))` include defaults;
 * `inspect` tells which scope set a value, and only user, workspace and folder values go to the server.
 */

/** The scopes of one setting as `WorkspaceConfiguration.inspect` returns them (language scopes are ignored). */
export interface InspectedSetting {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/** Prefixes of manifest keys that only the client uses (how it starts the server, LSP tracing). */
const CLIENT_ONLY_PREFIXES = ["server.", "trace."];

/** The server-read keys (without `lspAgent.`) the manifest contributes, e.g. "model", "index.exclude". */
export function serverKeys(packageJson: unknown): string[] {
  const properties = (packageJson as { contributes?: { configuration?: { properties?: Record<string, unknown> } } })
    ?.contributes?.configuration?.properties;
  return Object.keys(properties ?? {})
    .filter((key) => key.startsWith("lspAgent."))
    .map((key) => key.slice("lspAgent.".length))
    .filter((key) => !CLIENT_ONLY_PREFIXES.some((prefix) => key.startsWith(prefix)));
}

/** The most specific value the user set (folder, then workspace, then user settings), or undefined. */
export function userValue(inspected: InspectedSetting | undefined): unknown {
  if (!inspected) {
    return undefined;
  }
  for (const value of [inspected.workspaceFolderValue, inspected.workspaceValue, inspected.globalValue]) {
    if (value !== undefined) {
      return value;
    }
  }
  return undefined;
}

/** A JSON object of the settings the user set, nested by dotted key ("index.exclude" -> {index: {exclude}}). */
export function userSetSettings(keys: string[], inspect: (key: string) => InspectedSetting | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const value = userValue(inspect(key));
    if (value === undefined || value === null) {
      continue;
    }
    const path = key.split(".");
    let node = out;
    for (const part of path.slice(0, -1)) {
      node = (node[part] ??= {}) as Record<string, unknown>;
    }
    node[path[path.length - 1]] = JSON.parse(JSON.stringify(value));
  }
  return out;
}
