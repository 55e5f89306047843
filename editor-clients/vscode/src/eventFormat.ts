/** Turns `lspAgent/event` payloads into readable transcript lines (mirrors the CLI's wording). */

import { AgentEvent } from "./protocol";

const ARG_LIMIT = 120;
const OUTPUT_LINES = 3;
const LINE_WIDTH = 160;

/** A short form of the run id used as a line prefix. */
export function shortRunId(runId: string): string {
  return runId.length > 8 ? runId.slice(0, 8) : runId;
}

function str(value: unknown, fallback = ""): string {
  if (value === undefined || value === null) {
    return fallback;
  }
  return typeof value === "string" ? value : JSON.stringify(value);
}

function num(value: unknown, fallback = 0): number {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

function cut(text: string, limit: number): string {
  return text.length <= limit ? text : text.slice(0, limit - 3) + "...";
}

/** Tool-call arguments as `k=v, ...`, cut to a readable length. */
export function shortArgs(args: unknown, limit = ARG_LIMIT): string {
  let text: string;
  if (typeof args === "object" && args !== null && !Array.isArray(args)) {
    text = Object.entries(args as Record<string, unknown>)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(", ");
  } else {
    text = str(args);
  }
  return cut(text.replace(/\n/g, "\\n"), limit);
}

/** The first lines of a tool output with a count of what was left out. */
export function firstLines(text: string, lines = OUTPUT_LINES, width = LINE_WIDTH): string {
  const parts = text.split(/\r?\n/);
  const shown = parts.slice(0, lines).map((p) => cut(p, width));
  const more = parts.length - lines;
  return shown.join("\n   ") + (more > 0 ? `\n   ... (${more} more lines)` : "");
}

interface ChangeSummary {
  path: string;
  kind: string;
}

/** The changed files of a proposal event. */
export function proposalChanges(event: AgentEvent): ChangeSummary[] {
  const changes = Array.isArray(event.changes) ? event.changes : [];
  return changes
    .filter((c): c is Record<string, unknown> => typeof c === "object" && c !== null)
    .map((c) => ({ path: str(c.path, "?"), kind: str(c.kind, "modify") }));
}

/** One event as text without a prefix; several lines for plans and proposals. */
export function describeEvent(event: AgentEvent): string {
  const e = event;
  switch (e.kind) {
    case "start":
      return `task: ${str(e.task)} (model ${str(e.model, "?")}, tool calling ${str(e.toolCalling, "?")})`;
    case "thought":
      return `thought: ${str(e.text).trim()}`;
    case "tool_call":
      return `-> ${str(e.name)}(${shortArgs(e.arguments)})`;
    case "tool_result":
      return `<- ${str(e.name)} ${e.ok ? "ok" : "failed"} in ${num(e.seconds).toFixed(2)}s: ${firstLines(str(e.output))}`;
    case "plan": {
      const subtasks = Array.isArray(e.subtasks) ? (e.subtasks as Record<string, unknown>[]) : [];
      const lines = [`plan (${subtasks.length} subtasks):`];
      for (const t of subtasks) {
        const deps = Array.isArray(t.dependencies) && t.dependencies.length ? ` after ${t.dependencies.join(", ")}` : "";
        lines.push(`  ${str(t.id)}. ${str(t.description)}${deps}`);
      }
      if (e.fallback) {
        lines.push(`  (fallback: ${str(e.fallback)})`);
      }
      return lines.join("\n");
    }
    case "subtask":
      return `subtask ${str(e.id)} ${str(e.status)}: ${str(e.description)}`;
    case "compaction":
      return `compacted context: ${str(e.before)} -> ${str(e.after)} tokens (${num(e.removed)} messages removed, ${num(e.truncated)} outputs cut)`;
    case "usage":
      return `tokens: ${num(e.promptTokens)} in / ${num(e.completionTokens)} out, cost $${num(e.cost).toFixed(4)}`;
    case "permission":
      return `permission for ${str(e.tool)}: ${str(e.decision)}${e.reason ? ` (${str(e.reason)})` : ""}`;
    case "error":
      return `error: ${str(e.message, "unknown error")}`;
    case "proposal": {
      const changes = proposalChanges(e);
      const lines = [`proposal: ${changes.length} file(s) changed${e.summary ? ` - ${cut(str(e.summary), 200)}` : ""}`];
      for (const c of changes) {
        lines.push(`   ${c.kind} ${c.path}`);
      }
      lines.push("   (apply with the code action \"Apply agent edit\" or \"LSP Agent: Apply Pending Edits\")");
      return lines.join("\n");
    }
    case "edits": {
      const changes = Array.isArray(e.changes) ? (e.changes as Record<string, unknown>[]) : [];
      const what = changes.map((c) => `${str(c.path, "?")} ${str(c.what)}`.trim()).join(", ");
      const reason = e.reason ? ` (reason: ${cut(str(e.reason), 200)})` : "";
      const left = Array.isArray(e.remaining) && e.remaining.length ? `; still pending: ${e.remaining.join(", ")}` : "";
      return `edits ${str(e.outcome)}: ${what}${reason}${left}`;
    }
    case "done": {
      const answer = str(e.answer).trim();
      const error = e.error ? `, error: ${str(e.error)}` : "";
      const checks = Array.isArray(e.checksFailed) ? e.checksFailed.map((c) => str(c)) : [];
      const state = e.status === "checks_failed" || checks.length ? `checks failed: ${checks.join("; ") || "?"} (${str(e.stopReason, "?")})` : `done: ${str(e.stopReason, "?")}`;
      const head = `${state} after ${num(e.iterations)} iterations${error}`;
      return answer ? `${head}\n   answer: ${answer.replace(/\n/g, "\n   ")}` : head;
    }
    case "context":
      return describeContext(e);
    case "alternative":
      return `alternative used: ${str(e.path, "?")} line ${num(e.line)} is now \`${str(e.version).trim()}\` (was \`${str(e.previous).trim()}\`); it passes the tests too`;
    default: {
      const { runId: _r, kind: _k, ...rest } = e;
      return `${e.kind}: ${cut(JSON.stringify(rest), 200)}`;
    }
  }
}

/** A `context` event (project rules loaded, mentions attached or not found) as one line. */
export function describeContext(e: AgentEvent): string {
  if (e.what === "rules") {
    return typeof e.status === "string" ? e.status : "project rules";
  }
  if (e.what === "alternatives" && typeof e.status === "string") {
    return `${e.status} (code actions on the line offer the others)`;
  }
  const attached = Array.isArray(e.attached) && e.attached.length ? e.attached.join(", ") : "nothing";
  const problems = Array.isArray(e.problems) ? e.problems.map((p) => `; ${String(p)}`).join("") : "";
  return `context: attached ${attached}${problems}`;
}

/** One event as a transcript line: `[hh:mm:ss] [run] text`. */
export function formatEvent(event: AgentEvent, now: Date = new Date()): string {
  const clock = now.toTimeString().slice(0, 8);
  return `[${clock}] [${shortRunId(event.runId)}] ${describeEvent(event)}`;
}
