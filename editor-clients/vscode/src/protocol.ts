/** The lsp-agent server's wire names and payload shapes (issue 4); no `vscode` import so tests can use it. */

import type { CompletionStatus } from "./inlineCompletion";

/** workspace/executeCommand names the server implements. */
export const ServerCommand = {
  ask: "lspAgent.ask",
  cancel: "lspAgent.cancel",
  status: "lspAgent.status",
  search: "lspAgent.search",
  reindex: "lspAgent.reindex",
  applyEdits: "lspAgent.applyEdits",
  rejectEdits: "lspAgent.rejectEdits",
  /** Revert the last applyEdits to the exact text before it; refused (nothing changed) when a file changed since. */
  undoApply: "lspAgent.undoApply",
  /** A conversation's exchanges, numbered, with the files each applied (the rewind picker). */
  exchanges: "lspAgent.exchanges",
  /** Back to exchange N: the files applied since restored (file by file), the conversation goes on from N. */
  rewind: "lspAgent.rewind",
  /** A client's claim that it applied edits; the server checks the document text and settles only what it finds. */
  editsApplied: "lspAgent.editsApplied",
  /** `{action: "list"}` or `{action: "revoke", key | all}`: the remembered "always" permission answers. */
  permissions: "lspAgent.permissions",
  /** `{runId, uri, line, version}`: the proposal takes another version of a line that passed the tests too. */
  useAlternative: "lspAgent.useAlternative",
} as const;

/** The four answers of a permission prompt (window/showMessageRequest action titles; ACP's option kinds). */
export const PERMISSION_TITLES = ["Allow once", "Allow always", "Reject once", "Reject always"] as const;

/** The notification carrying one run event. */
export const EVENT_NOTIFICATION = "lspAgent/event";

/** The settings section the server reads. */
export const SETTINGS_SECTION = "lspAgent";

export const EVENT_KINDS = [
  "start",
  "thought",
  "tool_call",
  "tool_result",
  "plan",
  "subtask",
  "compaction",
  "usage",
  "permission",
  "error",
  "proposal",
  "edits",
  "done",
  "context",
  /** The user put another passing version of a line in the proposal (lspAgent.useAlternative). */
  "alternative",
] as const;

export type EventKind = (typeof EVENT_KINDS)[number];

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

/** One `lspAgent/event` payload: flat, `{runId, kind, ...data}`. */
export interface AgentEvent {
  runId: string;
  kind: string;
  [key: string]: unknown;
}

/** An LSP diagnostic as the server takes it with an ask (the clients collect them from every language server). */
export interface LspDiagnostic {
  range: Range;
  message: string;
  severity?: number;
  source?: string;
  code?: string | number;
}

export interface AskParams {
  task: string;
  uri?: string;
  range?: Range;
  plan?: boolean;
  sessionId?: string;
  /** The current file's diagnostics (for `#diagnostics` and "fix this diagnostic"). */
  diagnostics?: LspDiagnostic[];
  /** Continue the conversation: it must have an exchange; the last ask's file is the default. */
  followUp?: boolean;
  /** A litellm model string overriding `lspAgent.model` for this ask. */
  model?: string;
  /** The workspace folder (URI) of an ask without a file, in a multi-root workspace. */
  folder?: string;
  /** Other workspace folders (names or URIs) the run may read, read-only, as `@name/...`. */
  readFolders?: string[];
}

export interface AskResult {
  runId: string;
}

/** The `edits` event: what the server settled (applied: found in the text or reported by applyEdit; rejected). */
export interface EditsEvent extends AgentEvent {
  kind: "edits";
  outcome: "applied" | "rejected";
  changes: { path: string; what: string }[];
  /** The proposal afterwards: still pending, or settled as applied (anything applied) or rejected. */
  state: "pending" | "applied" | "rejected";
  remaining: string[];
  reason?: string;
}

/** One remembered permission rule as `lspAgent.permissions` lists it. */
export interface PermissionRule {
  tool: string;
  decision: "allow" | "deny";
  key: string;
  prefix?: string[];
  created?: string;
}

export interface PermissionListing {
  workspaces: { workspace: string; file: string; rules: PermissionRule[] }[];
  revoked?: PermissionRule[];
}

export interface PendingSummary {
  runId: string;
  summary: string;
  files: { path: string; uri: string; kind: string }[];
}

export interface StatusResult {
  index: { files: number; chunks: number; symbols: number; ready: boolean };
  runs: { runId: string; state: string; task: string }[];
  pending?: PendingSummary[];
  model?: string | null;
  models?: string[];
  settingsErrors?: string[];
  completion?: CompletionStatus;
}

/** Accepts anything and returns it as an AgentEvent when it has the two required string fields. */
export function asAgentEvent(value: unknown): AgentEvent | undefined {
  if (typeof value !== "object" || value === null) {
    return undefined;
  }
  const v = value as Record<string, unknown>;
  if (typeof v.runId !== "string" || typeof v.kind !== "string") {
    return undefined;
  }
  return v as AgentEvent;
}
