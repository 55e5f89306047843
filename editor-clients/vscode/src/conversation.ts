/** Conversations, @mentions and #diagnostics on the server's commands; no `vscode` import so tests can use it. */

import { randomUUID } from "node:crypto";
import { AgentController, CommandConnection } from "./controller";
import { LspDiagnostic, Range } from "./protocol";

/** The server's conversation commands. */
export const ConversationCommand = {
  newConversation: "lspAgent.newConversation",
  conversation: "lspAgent.conversation",
  retry: "lspAgent.retry",
  completeMention: "lspAgent.completeMention",
} as const;

/** One exchange as `lspAgent.conversation` returns it. */
export interface ExchangeInfo {
  runId: string;
  task: string;
  answer: string;
  outcome: string;
  proposed: string[];
  notes: string[];
  retried: boolean;
  state: string;
  folded?: boolean;
  /** Dropped by a rewind: listed, but left out of the next prompt. */
  rewound?: boolean;
}

export interface ConversationInfo {
  sessionId: string;
  exchanges: ExchangeInfo[];
  notes: string[];
  promptTokens: number;
  budget?: number;
  compacted: number;
  summary?: { text: string; exchanges: number; model?: string } | null;
  folded?: number;
}

/** A completion for a mention being typed. */
export interface MentionItem {
  label: string;
  kind: "file" | "folder" | "symbol" | "selection" | "diagnostics";
  detail: string;
}

const OWN_SOURCE = "lsp-agent";

/** True when the task asks for the current file's diagnostics. */
export function wantsDiagnostics(task: string): boolean {
  return /(^|[^\w#])#diagnostics\b/i.test(task);
}

/** The diagnostics worth sending: every source but the server's own hints about its pending edits. */
export function foreignDiagnostics(diagnostics: LspDiagnostic[]): LspDiagnostic[] {
  return diagnostics.filter((d) => d.source !== OWN_SOURCE);
}

/** The mention being typed at the end of a task ("@src/ma" in "explain @src/ma"), or "@" to start one. */
export function mentionPrefix(task: string): string {
  const match = /(^|\s)([@#][^\s]*)$/.exec(task);
  return match ? match[2] : "@";
}

/** The task with a picked mention in place of the one being typed (or appended). */
export function insertMention(task: string, label: string): string {
  const match = /(^|\s)([@#][^\s]*)$/.exec(task);
  if (match) {
    return task.slice(0, task.length - match[2].length) + label + " ";
  }
  return (task && !task.endsWith(" ") ? `${task} ` : task) + label + " ";
}

/** The conversation as a Markdown document: each exchange's task, full answer, proposed files and outcome. */
export function renderConversation(conv: ConversationInfo, runTranscript?: (runId: string) => string | undefined): string {
  const lines = [`# LSP Agent conversation ${conv.sessionId}`, ""];
  if (!conv.exchanges.length) {
    lines.push("No exchanges yet: \"LSP Agent: Ask\" starts the conversation.", "");
  }
  if (conv.summary) {
    const by = conv.summary.model ? ` by ${conv.summary.model}` : "";
    lines.push(`## Summary of the ${conv.summary.exchanges} oldest exchanges`, "", `*what the prompt shows instead of them (written${by})*`, "");
    lines.push(conv.summary.text.trim(), "");
  }
  conv.exchanges.forEach((e, i) => {
    lines.push(`## ${i + 1}. ${e.task.replace(/\n/g, " ")}`, "");
    lines.push(`*run ${e.runId}, ${e.outcome}${e.retried ? ", retried" : ""}${e.folded ? ", in the summary" : ""}${e.rewound ? ", rewound" : ""}*`, "");
    lines.push(e.answer.trim() || "(no answer yet)", "");
    if (e.proposed.length) {
      lines.push(`Proposed: ${e.proposed.join(", ")}`, "");
    }
    for (const note of e.notes) {
      lines.push(`- ${note}`);
    }
    const events = runTranscript?.(e.runId);
    if (events) {
      lines.push("", "<details><summary>events</summary>", "", "```text", events, "```", "</details>");
    }
    lines.push("");
  });
  if (conv.notes.length) {
    lines.push("## Notes", "", ...conv.notes.map((n) => `- ${n}`), "");
  }
  if (conv.compacted > 0) {
    lines.push(`*The prompt leaves out the ${conv.compacted} oldest exchanges to fit ${conv.budget ?? "its"} tokens.*`, "");
  }
  return lines.join("\n");
}

/** New conversation, follow-up, retry, the conversation view and mention completion for one window. */
export class Conversations {
  constructor(
    private readonly connection: CommandConnection,
    private readonly controller: AgentController,
  ) {}

  /** Start a new conversation: later asks no longer see the earlier exchanges. Returns its id. */
  async startNew(): Promise<string> {
    const result = (await this.connection.executeCommand(ConversationCommand.newConversation, [
      { sessionId: `vscode-${randomUUID()}` },
    ])) as { sessionId?: unknown } | null;
    if (!result || typeof result.sessionId !== "string") {
      throw new Error(`the server did not start a conversation (it answered ${JSON.stringify(result)})`);
    }
    this.controller.sessionId = result.sessionId;
    return result.sessionId;
  }

  /** Ask a follow-up in the current conversation (the last ask's file is the server's default). */
  async followUp(input: { task: string | undefined; uri?: string; selection?: Range; diagnostics?: LspDiagnostic[] }): Promise<string> {
    return this.controller.ask({ ...input, followUp: true });
  }

  /** Ask the conversation's last task again; the old attempt's pending edits are rejected by the server. */
  async retry(): Promise<{ runId: string; task: string; retried: string }> {
    const result = (await this.connection.executeCommand(ConversationCommand.retry, [{ sessionId: this.controller.sessionId }])) as {
      runId: string;
      task: string;
      retried: string;
    };
    if (this.controller.tracker.get(result.retried)?.proposal === "pending") {
      this.controller.tracker.settle(result.retried, "rejected");
    }
    this.controller.tracker.started(result.runId, result.task);
    return result;
  }

  /** The current conversation as the server keeps it. */
  async show(): Promise<ConversationInfo> {
    return (await this.connection.executeCommand(ConversationCommand.conversation, [
      { sessionId: this.controller.sessionId },
    ])) as ConversationInfo;
  }

  /** Completions for the mention being typed (`@pkg/ca`, `@Cart`, `#dia`). */
  async completeMention(prefix: string, uri?: string): Promise<MentionItem[]> {
    const arg: Record<string, unknown> = { prefix };
    if (uri) {
      arg.uri = uri;
    }
    const result = (await this.connection.executeCommand(ConversationCommand.completeMention, [arg])) as { items?: MentionItem[] };
    return Array.isArray(result?.items) ? result.items : [];
  }
}
