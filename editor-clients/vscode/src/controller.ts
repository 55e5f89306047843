/** Talks to the server's agent commands and keeps the run tracker in step; no `vscode` import. */

import { applyArguments, askArguments, AskInput, cancelArguments, describeApplyResult, rejectArguments } from "./commandArgs";
import { formatEvent } from "./eventFormat";
import { LiveLog, streamedThought } from "./liveText";
import { AgentEvent, asAgentEvent, AskResult, PermissionListing, ServerCommand, StatusResult } from "./protocol";
import { RunTracker } from "./runState";
import { describeRewind, ExchangeRow, listExchanges, RewindResult, rewindTo } from "./rewind";

/** The one thing the controller needs from a language client: send workspace/executeCommand. */
export interface CommandConnection {
  executeCommand(command: string, args: unknown[]): Promise<unknown>;
}

export type LogSink = (line: string) => void;

/** Runs, cancels, applies and rejects agent work through a CommandConnection. */
export class AgentController {
  readonly tracker: RunTracker;
  private readonly live?: LiveLog;
  private readonly log: LogSink;

  constructor(
    private readonly connection: CommandConnection,
    log: LogSink,
    /** The conversation asks join; undefined: the server's current conversation of the folder (kept across restarts). */
    public sessionId: string | undefined,
    tracker?: RunTracker,
    /** Appends text without a line end (an output channel's `append`): the model's words are shown as they come. */
    append?: (text: string) => void,
  ) {
    this.tracker = tracker ?? new RunTracker();
    this.live = append ? new LiveLog(append) : undefined;
    this.log = (line) => {
      this.live?.breakLine();
      log(line);
    };
  }

  /** Start a run; resolves with its id as soon as the server accepted it. */
  async ask(input: Omit<AskInput, "sessionId">): Promise<string> {
    const args = askArguments({ ...input, sessionId: this.sessionId });
    const result = (await this.connection.executeCommand(ServerCommand.ask, args)) as AskResult | null;
    if (!result || typeof result.runId !== "string") {
      throw new Error(`the server did not start a run (it answered ${JSON.stringify(result)})`);
    }
    this.tracker.started(result.runId, args[0].task);
    return result.runId;
  }

  /** Handle one `lspAgent/event` notification; malformed payloads are logged and dropped. */
  onEvent(payload: unknown): void {
    const event: AgentEvent | undefined = asAgentEvent(payload);
    if (!event) {
      this.log(`ignored a malformed lspAgent/event: ${JSON.stringify(payload)}`);
      return;
    }
    this.tracker.handle(event);
    if (event.kind === "text") {
      this.live?.text(event); // without an append sink the run's transcript still has them
      return;
    }
    if (this.live && streamedThought(event)) {
      return; // its words were shown as they came
    }
    this.log(formatEvent(event));
  }

  /**
   * Complete and send a command that came with a server code action (VS Code's middleware routes them here):
   * "Ask agent about this selection" has no task yet, so `promptTask` asks the user; a reject asks for an optional
   * reason (`promptReason`; dismissing it keeps the edits); the others are sent as they are and tracked.
   */
  async executeServerCommand(
    command: string,
    args: unknown[],
    send: (command: string, args: unknown[]) => Promise<unknown>,
    promptTask: () => Promise<string | undefined>,
    promptReason?: () => Promise<string | undefined>,
  ): Promise<unknown> {
    if (command === ServerCommand.rejectEdits && promptReason) {
      const params: Record<string, unknown> = { ...((args[0] ?? {}) as Record<string, unknown>) };
      if (typeof params.reason !== "string") {
        const reason = await promptReason();
        if (reason === undefined) {
          return undefined;
        }
        if (reason.trim()) {
          params.reason = reason.trim();
        }
      }
      args = [params, ...args.slice(1)];
    }
    if (command !== ServerCommand.ask) {
      const result = await send(command, args);
      this.noteServerCommand(command, args, result);
      return result;
    }
    const params: Record<string, unknown> = { ...((args[0] ?? {}) as Record<string, unknown>) };
    delete params.needsTask;
    if (typeof params.task !== "string" || !params.task.trim()) {
      const task = (await promptTask())?.trim();
      if (!task) {
        return undefined;
      }
      params.task = task;
    }
    params.sessionId = params.sessionId ?? this.sessionId;
    const result = (await send(command, [params, ...args.slice(1)])) as AskResult | null | undefined;
    if (result && typeof result.runId === "string") {
      this.tracker.started(result.runId, String(params.task));
    }
    return result;
  }

  /** Note what an edits command did: the server's answer says whether the proposal is settled (`state`). */
  noteServerCommand(command: string, args: unknown[], result: unknown): void {
    const runId = (args[0] as { runId?: unknown } | undefined)?.runId;
    if (typeof runId !== "string") {
      return;
    }
    const edits: string[] = [ServerCommand.rejectEdits, ServerCommand.applyEdits, ServerCommand.editsApplied];
    if (edits.includes(command)) {
      this.settleFrom(runId, result);
    }
  }

  /** Settle a run's proposal when a command's result says it is no longer pending. */
  private settleFrom(runId: string, result: unknown): void {
    const state = (result as { state?: unknown } | null | undefined)?.state;
    if (state === "applied" || state === "rejected") {
      this.tracker.settle(runId, state);
    }
  }

  async cancel(runId: string): Promise<void> {
    await this.connection.executeCommand(ServerCommand.cancel, cancelArguments(runId));
  }

  /** Ask the server to send the run's edits with workspace/applyEdit; returns a readable outcome. */
  async apply(runId: string, files?: string[]): Promise<{ ok: boolean; message: string }> {
    const result = await this.connection.executeCommand(ServerCommand.applyEdits, applyArguments(runId, files));
    const outcome = describeApplyResult(result);
    this.settleFrom(runId, result);
    this.log(`[${runId.slice(0, 8)}] ${outcome.message}`);
    return outcome;
  }

  /** Undo the last applied edits (the server refuses, changing nothing, when a file changed since). */
  async undoApply(): Promise<{ runId: string; files: string[] }> {
    const result = (await this.connection.executeCommand(ServerCommand.undoApply, [])) as { runId: string; files: string[] };
    this.log(`[${result.runId.slice(0, 8)}] undid the applied edits: ${result.files.join(", ")}`);
    return result;
  }

  /** The exchanges of this window's conversation (the rewind picker). */
  async exchanges(): Promise<ExchangeRow[]> {
    return listExchanges(this.connection, this.sessionId);
  }

  /** Rewind the conversation to an exchange: the files applied since are restored (file by file) and logged. */
  async rewind(exchange: number): Promise<RewindResult> {
    const result = await rewindTo(this.connection, exchange, this.sessionId);
    this.log(`=== ${describeRewind(result).message} ===`);
    return result;
  }

  /** Reject a run's edits (all of them, or some files); the reason reaches the agent's next exchange. */
  async reject(runId: string, reason?: string, files?: string[]): Promise<void> {
    const result = await this.connection.executeCommand(ServerCommand.rejectEdits, rejectArguments(runId, reason, files));
    this.settleFrom(runId, result);
    this.log(`[${runId.slice(0, 8)}] edits rejected${reason ? `: ${reason}` : ""}`);
  }

  /** The remembered "Allow always" / "Reject always" answers of the workspace folders. */
  async permissions(): Promise<PermissionListing> {
    return (await this.connection.executeCommand(ServerCommand.permissions, [{ action: "list" }])) as PermissionListing;
  }

  /** Forget a remembered answer (by its key as listed) so the agent asks again. */
  async revokePermission(key: string, workspace?: string): Promise<PermissionListing> {
    const arg: Record<string, unknown> = { action: "revoke", key };
    if (workspace) {
      arg.workspace = workspace;
    }
    return (await this.connection.executeCommand(ServerCommand.permissions, [arg])) as PermissionListing;
  }

  async reindex(): Promise<void> {
    await this.connection.executeCommand(ServerCommand.reindex, []);
  }

  /** The server's index and run state; also settles runs the client missed the end of. */
  async status(): Promise<StatusResult> {
    const result = (await this.connection.executeCommand(ServerCommand.status, [])) as StatusResult;
    if (result && Array.isArray(result.runs)) {
      this.tracker.reconcile(result.runs);
    }
    if (result && Array.isArray(result.pending)) {
      this.tracker.learnPendingFiles(result.pending);
    }
    return result;
  }
}
