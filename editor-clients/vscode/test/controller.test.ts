import assert from "node:assert/strict";
import { test } from "node:test";
import { AgentController } from "../src/controller";

/** A connection that records what the controller sends and answers from a table. */
function recorder(answers: Record<string, unknown>) {
  const sent: { command: string; args: unknown[] }[] = [];
  const send = async (command: string, args: unknown[]) => {
    sent.push({ command, args });
    return answers[command];
  };
  return { sent, send };
}

test("a code action's ask without a task prompts, drops needsTask and adds the session", async () => {
  const { sent, send } = recorder({ "lspAgent.ask": { runId: "r1" } });
  const ctl = new AgentController({ executeCommand: send }, () => {}, "session-1");
  const range = { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } };
  const result = await ctl.executeServerCommand("lspAgent.ask", [{ uri: "file:///a.py", range, needsTask: true }], send, async () => "  explain  ");
  assert.deepEqual(result, { runId: "r1" });
  assert.deepEqual(sent, [{ command: "lspAgent.ask", args: [{ uri: "file:///a.py", range, task: "explain", sessionId: "session-1" }] }]);
  assert.equal(ctl.tracker.get("r1")!.task, "explain");
});

test("dismissing the task prompt sends nothing", async () => {
  const { sent, send } = recorder({});
  const ctl = new AgentController({ executeCommand: send }, () => {}, "s");
  assert.equal(await ctl.executeServerCommand("lspAgent.ask", [{ needsTask: true }], send, async () => undefined), undefined);
  assert.equal(await ctl.executeServerCommand("lspAgent.ask", [{}], send, async () => "   "), undefined);
  assert.deepEqual(sent, []);
});

test("an ask that already has a task (Ask agent to fix) goes out without prompting", async () => {
  const { sent, send } = recorder({ "lspAgent.ask": { runId: "r2" } });
  const ctl = new AgentController({ executeCommand: send }, () => {}, "s");
  await ctl.executeServerCommand("lspAgent.ask", [{ task: "Fix this problem" }], send, async () => assert.fail("must not prompt"));
  assert.deepEqual(sent[0].args, [{ task: "Fix this problem", sessionId: "s" }]);
});

test("edits commands settle the run's proposal when the server says it is no longer pending", async () => {
  const { send } = recorder({ "lspAgent.editsApplied": { runId: "a", state: "applied" }, "lspAgent.rejectEdits": { state: "rejected" } });
  const ctl = new AgentController({ executeCommand: send }, () => {}, "s");
  for (const id of ["a", "b", "c"]) {
    ctl.onEvent({ runId: id, kind: "proposal", changes: [{ path: "x.py", kind: "modify" }] });
  }
  await ctl.executeServerCommand("lspAgent.editsApplied", [{ runId: "a", uri: "file:///x.py", hunk: 0 }], send, async () => undefined);
  await ctl.executeServerCommand("lspAgent.rejectEdits", [{ runId: "b" }], send, async () => undefined);
  assert.equal(ctl.tracker.get("a")!.proposal, "applied");
  assert.equal(ctl.tracker.get("b")!.proposal, "rejected");
  assert.equal(ctl.tracker.get("c")!.proposal, "pending");
});

test("a partly applied proposal stays pending, and malformed events are logged, not thrown", async () => {
  const lines: string[] = [];
  const { send } = recorder({ "lspAgent.editsApplied": { runId: "a", state: "pending" } });
  const ctl = new AgentController({ executeCommand: send }, (l) => lines.push(l), "s");
  ctl.onEvent({ runId: "a", kind: "proposal", changes: [{ path: "x.py" }, { path: "y.py" }] });
  await ctl.executeServerCommand("lspAgent.editsApplied", [{ runId: "a", uri: "file:///x.py", hunk: 0 }], send, async () => undefined);
  assert.equal(ctl.tracker.get("a")!.proposal, "pending");
  ctl.onEvent({ kind: "thought" });
  ctl.onEvent(null);
  assert.equal(lines.filter((l) => l.startsWith("ignored a malformed lspAgent/event")).length, 2);
});

test("ask refuses a server answer without a run id", async () => {
  const ctl = new AgentController({ executeCommand: async () => null }, () => {}, "s");
  await assert.rejects(ctl.ask({ task: "t" }), /did not start a run/);
});

test("a reject code action asks for an optional reason; Escape sends nothing", async () => {
  const { sent, send } = recorder({ "lspAgent.rejectEdits": { state: "pending" } });
  const ctl = new AgentController({ executeCommand: send }, () => {}, "s");
  const hunk = { runId: "r", hunks: [{ uri: "file:///a.py", id: "abc-0" }] };
  const noTask = async () => assert.fail("must not prompt for a task");
  assert.equal(await ctl.executeServerCommand("lspAgent.rejectEdits", [hunk], send, noTask, async () => undefined), undefined);
  await ctl.executeServerCommand("lspAgent.rejectEdits", [hunk], send, noTask, async () => "  too clever ");
  await ctl.executeServerCommand("lspAgent.rejectEdits", [hunk], send, noTask, async () => "");
  assert.deepEqual(sent.map((s) => s.args[0]), [{ ...hunk, reason: "too clever" }, hunk]);
});

test("the edits event settles a run: partly applied stays pending, all done settles it", async () => {
  const ctl = new AgentController({ executeCommand: async () => null }, () => {}, "s");
  ctl.onEvent({ runId: "a", kind: "proposal", changes: [{ path: "x.py" }, { path: "y.py" }] });
  ctl.onEvent({ runId: "a", kind: "edits", outcome: "applied", changes: [{ path: "x.py", what: "line 2" }], state: "pending", remaining: ["y.py"] });
  assert.equal(ctl.tracker.get("a")!.proposal, "pending");
  assert.deepEqual(ctl.tracker.get("a")!.files, ["y.py"]);
  ctl.onEvent({ runId: "a", kind: "edits", outcome: "rejected", changes: [{ path: "y.py", what: "line 1" }], state: "applied", remaining: [], reason: "no" });
  assert.equal(ctl.tracker.get("a")!.proposal, "applied");
  assert.ok(ctl.tracker.get("a")!.lines.some((l) => l === "edits rejected: y.py line 1 (reason: no)"));
});

test("permissions lists and revokes through lspAgent.permissions", async () => {
  const listing = { workspaces: [{ workspace: "/w", file: "/c/w.json", rules: [] }] };
  const { sent, send } = recorder({ "lspAgent.permissions": listing });
  const ctl = new AgentController({ executeCommand: send }, () => {}, "s");
  assert.deepEqual(await ctl.permissions(), listing);
  await ctl.revokePermission("run_command: pytest -q", "/w");
  assert.deepEqual(sent.map((s) => s.args[0]), [{ action: "list" }, { action: "revoke", key: "run_command: pytest -q", workspace: "/w" }]);
});
