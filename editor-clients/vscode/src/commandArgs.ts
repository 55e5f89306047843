/** Builds and checks the argument lists of the server's workspace/executeCommand commands. */

import { AskParams, LspDiagnostic, Range } from "./protocol";

export interface AskInput {
  task: string | undefined;
  uri?: string;
  selection?: Range;
  plan?: boolean;
  sessionId?: string;
  diagnostics?: LspDiagnostic[];
  followUp?: boolean;
  model?: string;
  folder?: string;
  readFolders?: string[];
}

/** Thrown for input the user must fix; the message says how. */
export class InputError extends Error {}

function isEmptyRange(r: Range): boolean {
  return r.start.line === r.end.line && r.start.character === r.end.character;
}

/** `lspAgent.ask` arguments; an empty selection is left out so the server sees the whole file. */
export function askArguments(input: AskInput): [AskParams] {
  const task = (input.task ?? "").trim();
  if (!task) {
    throw new InputError("Describe the task for the agent (the task was empty).");
  }
  const params: AskParams = { task };
  if (input.uri) {
    params.uri = input.uri;
    if (input.selection && !isEmptyRange(input.selection)) {
      params.range = input.selection;
    }
  }
  if (input.plan) {
    params.plan = true;
  }
  if (input.sessionId) {
    params.sessionId = input.sessionId;
  }
  if (input.diagnostics) {
    params.diagnostics = input.diagnostics;
  }
  if (input.followUp) {
    params.followUp = true;
  }
  if (input.model) {
    params.model = input.model;
  }
  if (input.folder && !input.uri) {
    params.folder = input.folder;
  }
  if (input.readFolders && input.readFolders.length) {
    params.readFolders = [...input.readFolders];
  }
  return [params];
}

export function cancelArguments(runId: string): [{ runId: string }] {
  return [{ runId }];
}

export function applyArguments(runId: string, files?: string[]): [{ runId: string; files?: string[] }] {
  return files && files.length ? [{ runId, files }] : [{ runId }];
}

export function rejectArguments(runId: string, reason?: string, files?: string[]): [{ runId: string; reason?: string; files?: string[] }] {
  const arg: { runId: string; reason?: string; files?: string[] } = { runId };
  const r = (reason ?? "").trim();
  if (r) {
    arg.reason = r;
  }
  if (files && files.length) {
    arg.files = files;
  }
  return [arg];
}

/** A readable sentence from whatever `lspAgent.applyEdits` returned. */
export function describeApplyResult(result: unknown): { ok: boolean; message: string } {
  if (typeof result !== "object" || result === null) {
    return { ok: true, message: "Agent edits applied." };
  }
  const r = result as Record<string, unknown>;
  const applied = r.applied === true || (Array.isArray(r.applied) && r.applied.length > 0);
  const reason = typeof r.failureReason === "string" ? r.failureReason : typeof r.error === "string" ? r.error : "";
  const refused = Array.isArray(r.refused) ? r.refused.map(String) : Array.isArray(r.errors) ? r.errors.map(String) : [];
  if (!applied) {
    return { ok: false, message: `Agent edits not applied${reason ? `: ${reason}` : ""}${refused.length ? ` (${refused.join("; ")})` : ""}.` };
  }
  if (refused.length) {
    return { ok: false, message: `Agent edits partly applied; refused: ${refused.join("; ")}` };
  }
  return { ok: true, message: "Agent edits applied." };
}
