/** The server command to spawn and its environment, from the `lspAgent.server.*` settings. */

export interface ServerCommandLine {
  command: string;
  args: string[];
}

/** The command line from `lspAgent.server.command`; throws with an actionable message when it is unusable. */
export function serverCommandLine(setting: unknown): ServerCommandLine {
  const hint = 'set "lspAgent.server.command" to e.g. ["lsp-agent", "serve"] or ["/path/to/venv/bin/python", "-m", "lsp_agent", "serve"]';
  let parts: unknown[];
  if (typeof setting === "string") {
    parts = [setting];
  } else if (Array.isArray(setting)) {
    parts = setting;
  } else if (setting === undefined || setting === null) {
    parts = ["lsp-agent", "serve"];
  } else {
    throw new Error(`lspAgent.server.command must be a list of strings: ${hint}`);
  }
  if (!parts.length || !parts.every((p) => typeof p === "string" && p.length > 0)) {
    throw new Error(`lspAgent.server.command must be a non-empty list of non-empty strings: ${hint}`);
  }
  const [command, ...args] = parts as string[];
  return { command, args };
}

/** Extra environment for the server from `lspAgent.server.env` (non-string values are ignored). */
export function serverEnvironment(setting: unknown, base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  if (typeof setting === "object" && setting !== null) {
    for (const [k, v] of Object.entries(setting as Record<string, unknown>)) {
      if (typeof v === "string") {
        env[k] = v;
      }
    }
  }
  return env;
}
