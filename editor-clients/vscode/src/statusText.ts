/** Text of the status bar item: indexing, running runs and pending edits. */

export interface StatusInput {
  serverState: "starting" | "running" | "stopped";
  indexReady?: boolean;
  indexFiles?: number;
  running: number;
  pending: number;
  /** Pending proposals whose own checks failed (tests, syntax). */
  checksFailed?: number;
  model?: string;
}

export interface StatusView {
  text: string;
  tooltip: string;
}

/** Codicon-prefixed status text and a tooltip that says what clicking does. */
export function statusView(s: StatusInput): StatusView {
  if (s.serverState === "stopped") {
    return { text: "$(error) Agent", tooltip: "The lsp-agent server is not running; see the LSP Agent output." };
  }
  if (s.serverState === "starting") {
    return { text: "$(loading~spin) Agent", tooltip: "Starting the lsp-agent server..." };
  }
  const parts: string[] = [];
  if (s.running > 0) {
    parts.push(`$(sync~spin) ${s.running} running`);
  }
  if (s.pending > 0) {
    parts.push(`$(diff) ${s.pending} pending`);
  }
  if (s.checksFailed) {
    parts.push(`$(warning) ${s.checksFailed} checks failed`);
  }
  if (s.indexReady === false) {
    parts.push("$(database) indexing");
  }
  const text = parts.length ? `Agent: ${parts.join(" ")}` : "$(hubot) Agent";
  const index =
    s.indexReady === undefined ? "index: unknown" : s.indexReady ? `index ready (${s.indexFiles ?? 0} files)` : "indexing the workspace";
  const model = s.model ? `model ${s.model}` : "no model configured (lspAgent.model)";
  const failed = s.checksFailed ? ` (${s.checksFailed} failing their own checks: apply only after a look)` : "";
  const tooltip = `lsp-agent: ${model}; ${index}; ${s.running} running, ${s.pending} with pending edits${failed}. Click to show the transcript.`;
  return { text, tooltip };
}
