import assert from "node:assert/strict";
import { test } from "node:test";
import { checksFailedText, RunTracker, runStateText, soleCandidate } from "../src/runState";
import { statusView } from "../src/statusText";

function tracker(): RunTracker {
  let t = 0;
  return new RunTracker(() => ++t);
}

test("a run goes from running to pending edits to applied", () => {
  const runs = tracker();
  const seen: string[] = [];
  runs.onDidChange((r) => seen.push(`${r.state}/${r.proposal}`));
  runs.started("r1", "rename greet");
  runs.handle({ runId: "r1", kind: "tool_call", name: "edit_file", arguments: {} });
  runs.handle({ runId: "r1", kind: "proposal", summary: "renamed", changes: [{ path: "a.py", kind: "modify" }] });
  runs.handle({ runId: "r1", kind: "done", success: true, stopReason: "complete", iterations: 2, answer: "renamed" });
  const run = runs.get("r1")!;
  assert.equal(run.state, "succeeded");
  assert.equal(run.proposal, "pending");
  assert.deepEqual(run.files, ["a.py"]);
  assert.deepEqual(runs.pending().map((r) => r.runId), ["r1"]);
  assert.deepEqual(runs.running(), []);
  runs.settle("r1", "applied");
  assert.equal(run.proposal, "applied");
  assert.deepEqual(runs.pending(), []);
  assert.deepEqual(seen, ["running/none", "running/none", "running/pending", "succeeded/pending", "succeeded/applied"]);
});

test("events that arrive before the ask reply create the run, and the task is kept", () => {
  const runs = tracker();
  runs.handle({ runId: "r2", kind: "start", task: "explain", model: "m" });
  runs.started("r2", "explain (from client)");
  assert.equal(runs.get("r2")!.task, "explain");
  assert.equal(runs.running().length, 1);
});

test("cancelled and failed runs are told apart; settling a run without a proposal does nothing", () => {
  const runs = tracker();
  runs.handle({ runId: "a", kind: "done", success: false, stopReason: "cancelled" });
  runs.handle({ runId: "b", kind: "error", message: "boom" });
  runs.handle({ runId: "b", kind: "done", success: false, stopReason: "error", error: "boom" });
  assert.equal(runs.get("a")!.state, "cancelled");
  assert.equal(runs.get("b")!.state, "failed");
  assert.equal(runs.get("b")!.error, "boom");
  runs.settle("a", "rejected");
  assert.equal(runs.get("a")!.proposal, "none");
});

test("runs are listed newest first and the sole candidate is picked without asking", () => {
  const runs = tracker();
  runs.started("old", "one");
  runs.started("new", "two");
  assert.deepEqual(runs.all().map((r) => r.runId), ["new", "old"]);
  assert.equal(soleCandidate(runs.all()), undefined);
  assert.equal(soleCandidate([runs.get("old")!])!.runId, "old");
});

test("reconcile finishes runs the server no longer runs", () => {
  const runs = tracker();
  runs.started("x", "t");
  runs.reconcile([{ runId: "x", state: "cancelled", task: "t" }, { runId: "y", state: "running", task: "u" }]);
  assert.equal(runs.get("x")!.state, "cancelled");
  assert.equal(runs.get("y")!.state, "running");
});

test("the transcript is a Markdown document with every event line", () => {
  const runs = tracker();
  runs.started("r", "fix the bug");
  runs.handle({ runId: "r", kind: "thought", text: "look at a.py" });
  runs.handle({ runId: "r", kind: "done", success: true, stopReason: "complete", iterations: 1 });
  const text = runs.transcript("r");
  assert.match(text, /^# LSP Agent run r\n/);
  assert.match(text, /- task: fix the bug/);
  assert.match(text, /thought: look at a.py\ndone: complete after 1 iterations\n```/);
  assert.equal(runs.transcript("nope"), "No run nope in this window.");
});

test("a run whose checks failed has its own state, apart from an error, in the transcript and the status", () => {
  const runs = tracker();
  const failed = "tests fail: `python -m pytest test_calc.py`: 1 failed";
  runs.handle({ runId: "c", kind: "proposal", summary: "fixed", changes: [{ path: "calc.py", kind: "modify" }] });
  runs.handle({ runId: "c", kind: "done", success: false, status: "checks_failed", checksFailed: [failed], stopReason: "complete", iterations: 3 });
  runs.handle({ runId: "e", kind: "done", success: false, status: "failed", stopReason: "error", error: "model down" });
  const c = runs.get("c")!;
  assert.equal(c.state, "checks_failed");
  assert.deepEqual(c.checksFailed, [failed]);
  assert.equal(runStateText(c), `checks failed: ${failed}`);
  assert.equal(runStateText(runs.get("e")!), "failed: model down");
  assert.deepEqual(runs.pendingChecksFailed().map((r) => r.runId), ["c"]);
  assert.match(runs.transcript("c"), /- state: checks failed: tests fail: .*; edits: pending/);
  assert.match(runs.transcript("c"), /checks failed: tests fail: `python -m pytest test_calc.py`: 1 failed \(complete\) after 3 iterations/);
  assert.equal(checksFailedText(["a", "b", "c"]), "checks failed: a (+2 more)");
  const view = statusView({ serverState: "running", running: 0, pending: 1, checksFailed: 1 });
  assert.equal(view.text, "Agent: $(diff) 1 pending $(warning) 1 checks failed");
  assert.match(view.tooltip, /1 with pending edits \(1 failing their own checks/);
});

test("an alternative the user picked updates the run's summary and reads well in the transcript", () => {
  const runs = tracker();
  runs.handle({ runId: "a", kind: "context", what: "alternatives", status: "2 different versions of the line pass the tests", versions: ["x", "y"] });
  runs.handle({ runId: "a", kind: "proposal", summary: "pkg/stats.py line 12", changes: [{ path: "pkg/stats.py", kind: "modify" }] });
  runs.handle({ runId: "a", kind: "alternative", path: "pkg/stats.py", line: 12, version: "    return min(x, hi)", previous: "    return hi", summary: "Using `return min(x, hi)`" });
  const run = runs.get("a")!;
  assert.equal(run.summary, "Using `return min(x, hi)`");
  assert.deepEqual(run.lines, [
    "2 different versions of the line pass the tests (code actions on the line offer the others)",
    ...run.lines.slice(1, 2),
    "alternative used: pkg/stats.py line 12 is now `return min(x, hi)` (was `return hi`); it passes the tests too",
  ]);
});
