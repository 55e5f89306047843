/** The client's view of agent runs: which are running, which have edits pending, each run's transcript. */

import { describeEvent, proposalChanges } from "./eventFormat";
import { channelLabel, streamedThought, textChannel } from "./liveText";
import { AgentEvent } from "./protocol";

/** `checks_failed`: the run finished, but its proposal fails its own checks (tests, syntax): no success, no error. */
export type RunState = "running" | "succeeded" | "checks_failed" | "failed" | "cancelled";
export type ProposalState = "none" | "pending" | "applied" | "rejected";

export interface RunInfo {
  runId: string;
  task: string;
  state: RunState;
  proposal: ProposalState;
  /** Workspace-relative paths of the proposal's files. */
  files: string[];
  /** Document URI of each proposal file, once the server's status told it. */
  fileUris: Record<string, string>;
  summary: string;
  answer: string;
  error?: string;
  /** The checks the run's proposal fails at the end (state `checks_failed`). */
  checksFailed: string[];
  startedAt: number;
  /** Readable transcript lines of this run. */
  lines: string[];
}

type Listener = (run: RunInfo) => void;

/** Keeps every run of this window and tells listeners when one changes. */
export class RunTracker {
  private readonly runs = new Map<string, RunInfo>();
  private readonly listeners: Listener[] = [];
  /** The channel of each run's live line (its streamed words), while the reply streams. */
  private readonly liveChannel = new Map<string, string>();

  constructor(private readonly clock: () => number = Date.now) {}

  /** Register a callback for every change to a run. */
  onDidChange(listener: Listener): { dispose(): void } {
    this.listeners.push(listener);
    return {
      dispose: () => {
        const i = this.listeners.indexOf(listener);
        if (i >= 0) {
          this.listeners.splice(i, 1);
        }
      },
    };
  }

  /** Record a run the client just started (its events may already have arrived). */
  started(runId: string, task: string): RunInfo {
    const run = this.ensure(runId, task);
    if (!run.task) {
      run.task = task;
    }
    this.fire(run);
    return run;
  }

  /** Fold one server event into the run's state. */
  handle(event: AgentEvent): RunInfo {
    const run = this.ensure(event.runId, "");
    if (event.kind === "text") {
      this.addLiveText(run, event);
      this.fire(run);
      return run;
    }
    if (!streamedThought(event)) {
      run.lines.push(describeEvent(event));
    }
    switch (event.kind) {
      case "start":
        if (typeof event.task === "string") {
          run.task = event.task;
        }
        break;
      case "error":
        run.error = typeof event.message === "string" ? event.message : "unknown error";
        break;
      case "proposal":
        run.proposal = "pending";
        run.files = proposalChanges(event).map((c) => c.path);
        run.summary = typeof event.summary === "string" ? event.summary : "";
        break;
      case "edits":
        if (event.state === "applied" || event.state === "rejected") {
          run.proposal = event.state;
        }
        if (Array.isArray(event.remaining) && event.remaining.length) {
          run.files = event.remaining.filter((f): f is string => typeof f === "string");
        }
        break;
      case "alternative":
        if (typeof event.summary === "string") {
          run.summary = event.summary;
        }
        break;
      case "done":
        run.answer = typeof event.answer === "string" ? event.answer : "";
        run.checksFailed = Array.isArray(event.checksFailed) ? event.checksFailed.map((c) => String(c)) : [];
        run.state = doneState(event);
        if (typeof event.error === "string" && event.error) {
          run.error = event.error;
        }
        break;
    }
    this.fire(run);
    return run;
  }

  /** Fold a `text` event into the run's transcript: a new line where a reply or channel starts, else the last line grows. */
  private addLiveText(run: RunInfo, event: AgentEvent): void {
    const channel = textChannel(event);
    const text = typeof event.text === "string" ? event.text : "";
    if (event.first === true || this.liveChannel.get(run.runId) !== channel) {
      if (text.trim()) {
        run.lines.push(channelLabel(channel) + text.replace(/^\s+/, ""));
        this.liveChannel.set(run.runId, channel);
      }
    } else {
      run.lines[run.lines.length - 1] += text;
    }
    if (event.final === true) {
      this.liveChannel.delete(run.runId);
    }
  }

  /** Mark a run's proposal as applied or rejected by the user (from a command's result `state`). */
  settle(runId: string, outcome: "applied" | "rejected"): void {
    const run = this.runs.get(runId);
    if (run && run.proposal === "pending") {
      run.proposal = outcome;
      run.lines.push(outcome === "applied" ? "edits applied" : "edits rejected");
      this.fire(run);
    }
  }

  /** Sync with the server's runs (`lspAgent.status`): runs it reports finished are finished here too. */
  reconcile(serverRuns: { runId: string; state: string; task: string }[]): void {
    for (const s of serverRuns) {
      const run = this.ensure(s.runId, s.task);
      const state = serverRunState(s.state);
      if (state !== "running" && run.state === "running") {
        run.state = state;
        this.fire(run);
      }
    }
  }

  /** Learn the document URIs of pending proposals' files from `lspAgent.status`'s `pending` list. */
  learnPendingFiles(pending: { runId: string; files?: { path: string; uri: string }[] }[]): void {
    for (const p of pending) {
      const run = this.runs.get(p.runId);
      if (run && Array.isArray(p.files)) {
        for (const f of p.files) {
          run.fileUris[f.path] = f.uri;
        }
      }
    }
  }

  get(runId: string): RunInfo | undefined {
    return this.runs.get(runId);
  }

  /** All runs, newest first. */
  all(): RunInfo[] {
    return [...this.runs.values()].sort((a, b) => b.startedAt - a.startedAt);
  }

  running(): RunInfo[] {
    return this.all().filter((r) => r.state === "running");
  }

  pending(): RunInfo[] {
    return this.all().filter((r) => r.proposal === "pending");
  }

  /** Runs whose pending proposal fails its own checks. */
  pendingChecksFailed(): RunInfo[] {
    return this.pending().filter((r) => r.state === "checks_failed");
  }

  /** The run's transcript as a Markdown document. */
  transcript(runId: string): string {
    const run = this.runs.get(runId);
    if (!run) {
      return `No run ${runId} in this window.`;
    }
    const header = [
      `# LSP Agent run ${run.runId}`,
      "",
      `- task: ${run.task}`,
      `- state: ${runStateText(run)}; edits: ${run.proposal}`,
      "",
      "```text",
    ];
    return [...header, ...run.lines, "```", ""].join("\n");
  }

  private ensure(runId: string, task: string): RunInfo {
    let run = this.runs.get(runId);
    if (!run) {
      run = {
        runId,
        task,
        state: "running",
        proposal: "none",
        files: [],
        fileUris: {},
        summary: "",
        answer: "",
        checksFailed: [],
        startedAt: this.clock(),
        lines: [],
      };
      this.runs.set(runId, run);
    }
    return run;
  }

  private fire(run: RunInfo): void {
    for (const l of [...this.listeners]) {
      l(run);
    }
  }
}

/** The server's run states (starting | running | done | cancelled | error) in the client's terms. */
export function serverRunState(state: string): RunState {
  switch (state) {
    case "starting":
    case "running":
      return "running";
    case "cancelled":
      return "cancelled";
    case "error":
      return "failed";
    default:
      return "succeeded";
  }
}

function doneState(event: AgentEvent): RunState {
  if (event.stopReason === "cancelled") {
    return "cancelled";
  }
  const checks = Array.isArray(event.checksFailed) && event.checksFailed.length > 0;
  if (event.status === "checks_failed" || (checks && event.stopReason !== "error")) {
    return "checks_failed";
  }
  return event.success === false ? "failed" : "succeeded";
}

/** A run's state in words: "checks failed: tests fail: ..." says which checks, apart from an error ("failed: ..."). */
export function runStateText(run: RunInfo): string {
  switch (run.state) {
    case "checks_failed":
      return checksFailedText(run.checksFailed);
    case "failed":
      return run.error ? `failed: ${run.error}` : "failed";
    case "succeeded":
      return "finished";
    default:
      return run.state;
  }
}

/** "checks failed: <first check> (+N more)", as the server's titles say it. */
export function checksFailedText(checks: string[], limit = 120): string {
  const first = (checks[0] ?? "").replace(/\s+/g, " ").trim();
  const shown = first.length <= limit ? first : first.slice(0, limit - 3) + "...";
  const more = checks.length > 1 ? ` (+${checks.length - 1} more)` : "";
  return shown ? `checks failed: ${shown}${more}` : "checks failed";
}

/** Which run a command should act on: the only candidate, or undefined when the user must choose. */
export function soleCandidate(candidates: RunInfo[]): RunInfo | undefined {
  return candidates.length === 1 ? candidates[0] : undefined;
}
