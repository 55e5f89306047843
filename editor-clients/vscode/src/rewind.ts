/** Rewind: the conversation's exchanges as picker items, and the rewind's outcome as a message; no `vscode` import. */

import { ServerCommand } from "./protocol";

/** What the rewind needs from a language client: send workspace/executeCommand. */
interface Connection {
  executeCommand(command: string, args: unknown[]): Promise<unknown>;
}

/** One exchange as lspAgent.exchanges lists it. */
export interface ExchangeRow {
  number: number;
  runId: string;
  task: string;
  outcome: string;
  applied: string[];
  rewound: boolean;
  retried: boolean;
}

/** lspAgent.rewind's answer. */
export interface RewindResult {
  sessionId: string;
  exchange: number;
  dropped: string[];
  restored: string[];
  refused: string[];
}

/** A quick pick item that rewinds to one exchange. */
export interface RewindItem {
  label: string;
  description: string;
  detail?: string;
  exchange: number;
}

function cut(text: string, limit: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= limit ? flat : flat.slice(0, limit - 3) + "...";
}

/** The picker's items, newest first: "back to after exchange N" for each exchange still in the conversation, and its start. */
export function rewindItems(rows: ExchangeRow[]): RewindItem[] {
  const kept = rows.filter((r) => !r.rewound);
  const items: RewindItem[] = kept
    .slice(0, -1)
    .reverse()
    .map((r) => {
      const later = kept.filter((k) => k.number > r.number);
      const files = [...new Set(later.flatMap((k) => k.applied))];
      return {
        label: `${r.number}. ${cut(r.task, 70)}`,
        description: `keep up to here; drop ${later.length} later exchange(s)`,
        detail: files.length ? `restores ${files.join(", ")}` : "no applied files to restore",
        exchange: r.number,
      };
    });
  if (kept.length) {
    const files = [...new Set(kept.flatMap((k) => k.applied))];
    items.push({
      label: "0. The start of the conversation",
      description: `drop all ${kept.length} exchange(s)`,
      detail: files.length ? `restores ${files.join(", ")}` : "no applied files to restore",
      exchange: 0,
    });
  }
  return items;
}

/** The rewind's outcome in a sentence, and whether it left files as they were. */
export function describeRewind(result: RewindResult): { ok: boolean; message: string } {
  const restored = result.restored.length ? `restored ${result.restored.join(", ")}` : "no files to restore";
  const refused = result.refused.length ? `; left as they are: ${result.refused.join("; ")}` : "";
  return {
    ok: result.refused.length === 0,
    message: `rewound to exchange ${result.exchange} (${result.dropped.length} later exchange(s) dropped): ${restored}${refused}`,
  };
}

/** The exchanges of a conversation (the folder's current one when `sessionId` is undefined). */
export async function listExchanges(connection: Connection, sessionId?: string): Promise<ExchangeRow[]> {
  const result = (await connection.executeCommand(ServerCommand.exchanges, [sessionId ? { sessionId } : {}])) as {
    exchanges?: ExchangeRow[];
  };
  return Array.isArray(result?.exchanges) ? result.exchanges : [];
}

/** Rewind a conversation to exchange `exchange`. */
export async function rewindTo(connection: Connection, exchange: number, sessionId?: string): Promise<RewindResult> {
  const arg: Record<string, unknown> = { exchange };
  if (sessionId) {
    arg.sessionId = sessionId;
  }
  return (await connection.executeCommand(ServerCommand.rewind, [arg])) as RewindResult;
}
