/**
 * Conversations, @mentions, #diagnostics and project rules: the pure helpers, then the controller and the
 * Conversations client against the real Python server over stdio with the scripted model.
 */

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ExecuteCommandRequest } from "vscode-languageserver-protocol/node";
import { AgentController } from "../src/controller";
import { Conversations, foreignDiagnostics, insertMention, mentionPrefix, renderConversation, wantsDiagnostics } from "../src/conversation";
import { describeEvent } from "../src/eventFormat";
import { AgentEvent, EVENT_NOTIFICATION } from "../src/protocol";
import { ScriptedModel, ServerSession, tempWorkspace, waitFor } from "./support/lspHarness";

const GREET = 'def greet(name):\n    return "Hello " + name\n\n\ndef farewell(name):\n    return "Bye " + name\n';
const ANSWER = "greet concatenates Hello and the name, which the type checker flags. ".repeat(8).trim();
const done = (summary: string, match: string) => ({ match, tool_calls: [{ name: "task_complete", arguments: { summary } }] });

const SCRIPT = [
  done(ANSWER, "CONV-ONE"),
  { match: "CONV-TWO", tool_calls: [{ name: "edit_file", arguments: { path: "greet.py", old_text: "def farewell(name):", new_text: "def farewell(name: str):" } }] },
  { tool_calls: [{ name: "task_complete", arguments: { summary: "typed farewell" } }] },
  done("second try", "CONV-TWO"),
  done("fixed", "Fix this problem"),
  done("fresh", "CONV-FIVE"),
  done("went on without it", "CONV-SIX"),
];

test("mention helpers: the mention being typed is completed in place, #diagnostics is recognised", () => {
  assert.equal(mentionPrefix("explain @src/ma"), "@src/ma");
  assert.equal(mentionPrefix("explain this"), "@");
  assert.equal(mentionPrefix("fix #dia"), "#dia");
  assert.equal(insertMention("explain @src/ma", "@src/main.py"), "explain @src/main.py ");
  assert.equal(insertMention("explain", "@selection"), "explain @selection ");
  assert.equal(insertMention("", "@Cart"), "@Cart ");
  assert.ok(wantsDiagnostics("fix #diagnostics please") && wantsDiagnostics("#Diagnostics"));
  assert.ok(!wantsDiagnostics("fix ##diagnostics") && !wantsDiagnostics("fix diagnostics"));
  const range = { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } };
  assert.deepEqual(
    foreignDiagnostics([{ range, message: "a", source: "lsp-agent" }, { range, message: "b", source: "pyright" }, { range, message: "c" }]).map((d) => d.message),
    ["b", "c"],
  );
});

test("context events and the conversation document read well", () => {
  const rules: AgentEvent = { runId: "r", kind: "context", what: "rules", status: "project rules: loaded AGENTS.md (20 B)" };
  assert.equal(describeEvent(rules), "project rules: loaded AGENTS.md (20 B)");
  const mentions: AgentEvent = { runId: "r", kind: "context", what: "mentions", attached: ["@a.py (3 lines)"], problems: ["@b.py: no file"] };
  assert.equal(describeEvent(mentions), "context: attached @a.py (3 lines); @b.py: no file");
  const doc = renderConversation(
    {
      sessionId: "s",
      exchanges: [{ runId: "r1", task: "why?", answer: "because", outcome: "complete", proposed: ["a.py"], notes: ["user rejected ..."], retried: true, state: "done" }],
      notes: [],
      promptTokens: 10,
      budget: 8000,
      compacted: 2,
    },
    (runId) => (runId === "r1" ? "-> read_file(path=\"a.py\")" : undefined),
  );
  assert.match(doc, /## 1\. why\?\n\n\*run r1, complete, retried\*\n\nbecause\n\nProposed: a\.py\n\n- user rejected \.\.\./);
  assert.match(doc, /```text\n-> read_file\(path="a\.py"\)\n```/);
  assert.match(doc, /leaves out the 2 oldest exchanges to fit 8000 tokens/);
  const summarized = renderConversation({
    sessionId: "s",
    exchanges: [{ runId: "r1", task: "why?", answer: "because", outcome: "complete", proposed: [], notes: [], retried: false, state: "done", folded: true }],
    notes: [],
    promptTokens: 10,
    compacted: 0,
    summary: { text: "the user asked why", exchanges: 1, model: "openai/m" },
    folded: 1,
  });
  assert.match(summarized, /## Summary of the 1 oldest exchanges\n\n\*what the prompt shows instead of them \(written by openai\/m\)\*\n\nthe user asked why/);
  assert.match(summarized, /\*run r1, complete, in the summary\*/);
});

let workspace: ReturnType<typeof tempWorkspace>;
let model: ScriptedModel;
let server: ServerSession;
let controller: AgentController;
let conversations: Conversations;
let greetUri: string;
const events: AgentEvent[] = [];

before(async () => {
  workspace = tempWorkspace({ "greet.py": GREET, "AGENTS.md": "Answer briefly.\n" });
  model = await ScriptedModel.start(SCRIPT);
  const section = { model: "openai/scripted", apiBase: model.baseUrl, apiKey: "test", maxIterations: 5 };
  server = await ServerSession.start(workspace.root, section, section);
  const connection = {
    executeCommand: (command: string, args: unknown[]) => server.connection.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }),
  };
  controller = new AgentController(connection, () => undefined, "vscode-conversation");
  conversations = new Conversations(connection, controller);
  server.onNotification((method, params) => {
    if (method === EVENT_NOTIFICATION) {
      events.push(params as AgentEvent);
      controller.onEvent(params);
    }
  });
  greetUri = await server.open("greet.py", GREET);
});

after(async () => {
  await server?.stop();
  model?.stop();
  workspace?.cleanup();
});

async function finished(runId: string): Promise<void> {
  await waitFor(`run ${runId} to finish`, () => events.some((e) => e.runId === runId && e.kind === "done"), 60_000);
}

/** The task message of the first model request of the run started when the model had seen `seen` requests. */
function firstUserText(seen: number): string {
  const user = model.requests[seen].messages.find((m) => m.role === "user");
  return String(user?.content ?? "");
}

test("a conversation: mentions and #diagnostics go along, follow-up, retry, the view, new conversation", async () => {
  const range = { start: { line: 1, character: 4 }, end: { line: 1, character: 10 } };
  const diagnostics = [{ range, message: "Operator + not supported", severity: 1, source: "pyright" }];
  await waitFor("the index to be ready", async () => (await controller.status()).index.ready, 30_000);
  const items = await conversations.completeMention("@gr", greetUri);
  assert.deepEqual(items.map((i) => i.label), ["@greet.py", "@greet"]);

  const seen: number[] = [];
  seen.push(model.requests.length);
  const one = await controller.ask({ task: "CONV-ONE: explain @greet.py and #diagnostics", uri: greetUri, diagnostics });
  await finished(one);
  assert.match(firstUserText(seen[0]), /greet\.py \(mentioned\):/);
  assert.match(firstUserText(seen[0]), /greet\.py:2: error \[pyright\]: Operator \+ not supported/);
  assert.match(String(model.requests[seen[0]].messages[0].content), /Answer briefly\./, "AGENTS.md is in the system prompt");
  const context = events.filter((e) => e.runId === one && e.kind === "context").map((e) => describeEvent(e));
  assert.deepEqual(context, ["context: attached @greet.py (6 lines), #diagnostics (1)", "project rules: loaded AGENTS.md (16 B)"]);

  seen.push(model.requests.length);
  const two = await conversations.followUp({ task: "CONV-TWO: type farewell" });
  await finished(two);
  assert.ok(firstUserText(seen[1]).includes(ANSWER), "the follow-up sees the first answer in full");
  assert.match(firstUserText(seen[1]), /The user is looking at the file greet\.py/, "the follow-up keeps the last ask's file");
  assert.equal(controller.tracker.get(two)!.proposal, "pending");

  seen.push(model.requests.length);
  const retried = await conversations.retry();
  assert.equal(retried.retried, two);
  assert.equal(retried.task, "CONV-TWO: type farewell");
  assert.equal(controller.tracker.get(two)!.proposal, "rejected", "the retried attempt's edits are dropped");
  await finished(retried.runId);
  assert.match(firstUserText(seen[2]), /The user discarded this attempt and asked again\./);

  seen.push(model.requests.length);
  const fix = await controller.ask({ task: "Fix this problem reported at line 2 (pyright): Operator + not supported", uri: greetUri, selection: range, diagnostics });
  await finished(fix);
  assert.match(firstUserText(seen[3]), /Diagnostics near the one to fix \(from pyright\):/);

  const conv = await conversations.show();
  assert.deepEqual(conv.exchanges.map((e) => [e.task, e.retried]), [
    ["CONV-ONE: explain @greet.py and #diagnostics", false],
    ["CONV-TWO: type farewell", true],
    ["CONV-TWO: type farewell", false],
    ["Fix this problem reported at line 2 (pyright): Operator + not supported", false],
  ]);
  assert.equal(conv.exchanges[0].answer, ANSWER);
  assert.match(conv.exchanges[1].notes.join("\n"), /user rejected changes of run .*reason: the user retried the ask/);

  const old = controller.sessionId;
  const fresh = await conversations.startNew();
  assert.notEqual(fresh, old);
  assert.equal(controller.sessionId, fresh);
  await assert.rejects(conversations.followUp({ task: "more?" }), /nothing to follow up in conversation .*: ask first/);
  await assert.rejects(conversations.retry(), /has no ask to retry; ask first/);
  seen.push(model.requests.length);
  const five = await controller.ask({ task: "CONV-FIVE: fresh start" });
  await finished(five);
  assert.doesNotMatch(firstUserText(seen[4]), /CONV-ONE/);
  assert.deepEqual((await conversations.show()).exchanges.map((e) => e.task), ["CONV-FIVE: fresh start"]);
});

test("a mention of a file that does not exist is reported and the ask goes on", async () => {
  const before = server.shown.length;
  const runId = await controller.ask({ task: "CONV-SIX: read @missing.py" });
  await finished(runId);
  const context = events.find((e) => e.runId === runId && e.kind === "context" && e.what === "mentions")!;
  assert.deepEqual(context.problems, ["@missing.py: no file named 'missing.py' in the workspace; the ask goes on without it"]);
  assert.ok(server.shown.slice(before).some((m) => m.type === 2 && m.message.includes("@missing.py: no file named")));
  assert.equal(events.find((e) => e.runId === runId && e.kind === "done")!.success, true);
});
