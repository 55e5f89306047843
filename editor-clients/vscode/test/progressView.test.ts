import assert from "node:assert/strict";
import { test } from "node:test";
import { ProgressSink, ProgressTokenView, ProgressUpdate, sinkFromWithProgress, WithProgress } from "../src/progressView";

/** A recording stand-in for the editor side: what was opened, reported and closed. */
function recorder(): { open: (t: string, c: boolean, cancel: () => void) => ProgressSink; log: string[]; cancels: (() => void)[] } {
  const log: string[] = [];
  const cancels: (() => void)[] = [];
  return {
    log,
    cancels,
    open: (title, cancellable, onCancel) => {
      log.push(`open ${title} cancellable=${cancellable}`);
      cancels.push(onCancel);
      return {
        report: (u: ProgressUpdate) => log.push(`report ${u.message ?? "-"} +${u.increment ?? 0}`),
        done: () => log.push("done"),
      };
    },
  };
}

test("begin opens, percentages become increments, messages pass through, end closes", () => {
  const r = recorder();
  const view = new ProgressTokenView(r.open, () => r.log.push("cancel sent"));
  assert.equal(view.handle({ kind: "begin", title: "lsp-agent: indexing", cancellable: true, percentage: 0, message: "scanning" }), false);
  view.handle({ kind: "report", message: "a.py", percentage: 40 });
  view.handle({ kind: "report", message: "calling read_file" });
  view.handle({ kind: "report", percentage: 30 });
  assert.equal(view.handle({ kind: "end", message: "indexed" }), true);
  assert.deepEqual(r.log, [
    "open lsp-agent: indexing cancellable=true",
    "report scanning +0",
    "report a.py +40",
    "report calling read_file +0",
    "done",
  ]);
});

test("the user's cancel goes to the server once the progress is open, and not after it ended", () => {
  const r = recorder();
  const view = new ProgressTokenView(r.open, () => r.log.push("cancel sent"));
  view.handle({ kind: "report", message: "before begin" });
  view.handle({ kind: "begin", title: "lsp-agent: fix the bug", cancellable: true });
  r.cancels[0]();
  view.handle({ kind: "end" });
  r.cancels[0]();
  view.handle({ kind: "begin", title: "again" });
  assert.deepEqual(r.log, ["open lsp-agent: fix the bug cancellable=true", "cancel sent", "done"]);
});

test("a withProgress task that starts late gets the queued updates; done before it starts ends it at once", async () => {
  let start: (() => Promise<void>) | undefined;
  const reported: ProgressUpdate[] = [];
  const cancelListeners: (() => void)[] = [];
  const withProgress: WithProgress = (task) => {
    start = () => task({ report: (u) => reported.push(u) }, { onCancellationRequested: (l) => cancelListeners.push(l) });
  };
  let cancelled = 0;
  const sink = sinkFromWithProgress(withProgress, () => cancelled++);
  sink.report({ message: "queued", increment: 5 });
  const running = start!();
  sink.report({ message: "live" });
  cancelListeners[0]();
  sink.done();
  await running;
  assert.deepEqual(reported, [{ message: "queued", increment: 5 }, { message: "live" }]);
  assert.equal(cancelled, 1);

  const early = sinkFromWithProgress(withProgress, () => undefined);
  early.done();
  await start!(); // resolves at once
});
