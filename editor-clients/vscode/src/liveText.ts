/** The model's words as they stream (`text` events) in a line-based log: one line per reply and channel, growing as words come; no `vscode` import. */

import { shortRunId } from "./eventFormat";
import { AgentEvent } from "./protocol";

/** The channel of a `text` event: what the model says, or its reasoning. */
export function textChannel(event: AgentEvent): "message" | "thought" {
  return event.channel === "thought" ? "thought" : "message";
}

/** The label a live line starts with after its prefix. */
export function channelLabel(channel: "message" | "thought"): string {
  return channel === "thought" ? "thinking: " : "";
}

/** True for a `thought` event whose words were already shown live (the server marks it `streamed`). */
export function streamedThought(event: AgentEvent): boolean {
  return event.kind === "thought" && event.streamed === true;
}

/** Writes `text` events into an append-only log (an output channel), starting a new line where a reply or channel starts. */
export class LiveLog {
  private open: { runId: string; channel: string } | undefined;
  private held = "";

  constructor(
    private readonly append: (text: string) => void,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Show one `text` event; line ends that end it wait for more text (a reply's last one is not shown twice). */
  text(event: AgentEvent): void {
    const channel = textChannel(event);
    let text = typeof event.text === "string" ? event.text : "";
    const same = this.open && this.open.runId === event.runId && this.open.channel === channel && event.first !== true;
    if (!same) {
      this.breakLine();
      text = text.replace(/^\s+/, "");
      if (text) {
        const clock = this.clock().toTimeString().slice(0, 8);
        this.append(`[${clock}] [${shortRunId(event.runId)}] ${channelLabel(channel)}`);
        this.open = { runId: event.runId, channel };
      }
    }
    const body = text.replace(/\n+$/, "");
    if (this.open && body) {
      this.append(this.held + body);
      this.held = text.slice(body.length);
    } else {
      this.held += text;
    }
    if (event.final === true) {
      this.breakLine();
    }
  }

  /** End a live line before another line is written. */
  breakLine(): void {
    if (this.open) {
      this.append("\n");
      this.open = undefined;
    }
    this.held = "";
  }
}
