/** The server's `$/progress` (work done progress) as editor progress, with cancel going back; no `vscode` import. */

/** One `$/progress` value: begin, report or end. */
export interface ProgressValue {
  kind: "begin" | "report" | "end";
  title?: string;
  message?: string;
  percentage?: number;
  cancellable?: boolean;
}

/** An update for a visible progress: the message and how far it moved (in percent points). */
export interface ProgressUpdate {
  message?: string;
  increment?: number;
}

/** One visible progress in the editor. */
export interface ProgressSink {
  report(update: ProgressUpdate): void;
  done(): void;
}

/** Opens a visible progress; `onCancel` runs when the user cancels it. */
export type OpenProgress = (title: string, cancellable: boolean, onCancel: () => void) => ProgressSink;

/** What a `window.withProgress`-style function hands its task: a reporter and a cancellation token. */
export type WithProgress = (
  task: (
    progress: { report(update: ProgressUpdate): void },
    token: { onCancellationRequested(listener: () => void): unknown },
  ) => Promise<void>,
) => unknown;

/** One progress token of the server: opens a visible progress on begin, reports, closes on end. */
export class ProgressTokenView {
  private sink?: ProgressSink;
  private reported = 0;
  private finished = false;

  constructor(
    private readonly open: OpenProgress,
    private readonly cancel: () => void,
  ) {}

  /** Fold one value in; returns true once the progress has ended. */
  handle(value: ProgressValue): boolean {
    if (this.finished) {
      return true;
    }
    switch (value.kind) {
      case "begin":
        if (!this.sink) {
          this.sink = this.open(value.title || "lsp-agent", value.cancellable === true, () => {
            if (!this.finished) {
              this.cancel();
            }
          });
          this.report(value);
        }
        return false;
      case "report":
        this.report(value);
        return false;
      case "end":
        this.finished = true;
        this.sink?.done();
        return true;
      default:
        return false;
    }
  }

  private report(value: ProgressValue): void {
    if (!this.sink) {
      return;
    }
    const update: ProgressUpdate = {};
    if (typeof value.message === "string" && value.message) {
      update.message = value.message;
    }
    if (typeof value.percentage === "number") {
      const percentage = Math.max(0, Math.min(100, value.percentage));
      if (percentage > this.reported) {
        update.increment = percentage - this.reported;
        this.reported = percentage;
      }
    }
    if (update.message !== undefined || update.increment !== undefined) {
      this.sink.report(update);
    }
  }
}

/**
 * A ProgressSink over a `window.withProgress`-style function, whose task starts later: updates that come before
 * it are replayed, and a `done()` that comes first ends it at once.
 */
export function sinkFromWithProgress(withProgress: WithProgress, onCancel: () => void): ProgressSink {
  const queued: ProgressUpdate[] = [];
  let reporter: { report(update: ProgressUpdate): void } | undefined;
  let finish: (() => void) | undefined;
  let ended = false;
  withProgress((progress, token) => {
    token.onCancellationRequested(onCancel);
    reporter = progress;
    for (const update of queued.splice(0)) {
      progress.report(update);
    }
    return ended ? Promise.resolve() : new Promise<void>((resolve) => (finish = resolve));
  });
  return {
    report(update) {
      if (reporter) {
        reporter.report(update);
      } else {
        queued.push(update);
      }
    },
    done() {
      ended = true;
      finish?.();
    },
  };
}
