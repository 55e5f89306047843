/**
 * End to end: the extension's controller drives the real Python server (`python -m lsp_agent serve`) over stdio
 * through vscode-languageserver-protocol (the protocol layer of vscode-languageclient), with the scripted model.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import {
  CodeAction,
  CodeActionRequest,
  Command,
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  WorkDoneProgressCancelNotification,
} from "vscode-languageserver-protocol/node";
import { AgentController } from "../src/controller";
import { ProgressTokenView, ProgressValue } from "../src/progressView";
import { AgentEvent, EVENT_NOTIFICATION, PERMISSION_TITLES } from "../src/protocol";
import { serverKeys, userSetSettings } from "../src/userSettings";
import { ScriptedModel, ServerSession, tempWorkspace, waitFor } from "./support/lspHarness";
import { applyWorkspaceEdit } from "./support/textEdits";

const GREET = 'def greet(name):\n    return "Hello " + name\n\n\ndef farewell(name):\n    return "Bye " + name\n';

const SCRIPT = [
  {
    match: "APPLY-TASK",
    tool_calls: [{ name: "edit_file", arguments: { path: "greet.py", old_text: 'return "Hello " + name', new_text: 'return f"Hello, {name}!"' } }],
  },
  {
    match: "COMMAND-TASK",
    tool_calls: [{ name: "edit_file", arguments: { path: "greet.py", old_text: 'return "Bye " + name', new_text: 'return f"Bye, {name}."' } }],
  },
  {
    match: "REJECT-TASK",
    tool_calls: [{ name: "write_file", arguments: { path: "notes.txt", content: "not wanted\n" } }],
  },
  {
    match: "HUNKS-TASK",
    tool_calls: [
      { name: "edit_file", arguments: { path: "greet.py", old_text: "def greet(name):", new_text: "def greet(name: str):" } },
      { name: "edit_file", arguments: { path: "greet.py", old_text: "def farewell(name):", new_text: "def farewell(name: str):" } },
      { name: "task_complete", arguments: { summary: "type hints" } },
    ],
  },
  {
    match: "PERMISSION-TASK",
    tool_calls: [
      { name: "run_command", arguments: { argv: ["echo", "-n", "tests/x"] } },
      { name: "run_command", arguments: { argv: ["echo", "-n", "tests/y"] } },
      { name: "task_complete", arguments: { summary: "echoed" } },
    ],
  },
  { match: "what did I reject?", content: "You rejected the type hint on farewell." },
  { match: "CANCEL-TASK", delay: 30, content: "too late" },
  { match: "PROGRESS-CANCEL", delay: 30, content: "too late" },
  { tool_calls: [{ name: "task_complete", arguments: { summary: "greeting uses an f-string" } }] },
  { tool_calls: [{ name: "task_complete", arguments: { summary: "farewell uses an f-string" } }] },
  { tool_calls: [{ name: "task_complete", arguments: { summary: "wrote notes" } }] },
  { match: "PLAN-TASK", content: JSON.stringify({ subtasks: [{ id: 1, description: "SUBTASK: add a docstring to greet" }] }) },
  {
    tool_calls: [{ name: "edit_file", arguments: { path: "greet.py", old_text: "def greet(name):\n", new_text: 'def greet(name):\n    """Greet someone."""\n' } }],
  },
  { tool_calls: [{ name: "task_complete", arguments: { summary: "docstring added" } }] },
];

function manifest(): { contributes: { configuration: { properties: Record<string, { default: unknown }> } } } {
  return JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8"));
}

/** The default of every `lspAgent.*` setting package.json contributes, by key without the prefix. */
function contributedDefaults(): Record<string, unknown> {
  const defaults: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(manifest().contributes.configuration.properties)) {
    defaults[key.replace(/^lspAgent\./, "")] = spec.default;
  }
  return defaults;
}

let workspace: ReturnType<typeof tempWorkspace>;
let model: ScriptedModel;
let server: ServerSession;
let controller: AgentController;
let greetUri: string;
let section: Record<string, unknown>;
const events: AgentEvent[] = [];
const transcript: string[] = [];

before(async () => {
  workspace = tempWorkspace({ "greet.py": GREET });
  model = await ScriptedModel.start(SCRIPT);
  // What the extension sends: the settings the user set (inspect), never the manifest's defaults.
  const userSet: Record<string, unknown> = { model: "openai/scripted", apiBase: model.baseUrl, apiKey: "test", maxIterations: 5 };
  const defaults = contributedDefaults();
  section = userSetSettings(serverKeys(manifest()), (key) => ({ defaultValue: defaults[key], globalValue: userSet[key] }));
  assert.deepEqual(section, userSet);
  server = await ServerSession.start(workspace.root, section, section);
  controller = new AgentController(
    { executeCommand: (command, args) => server.connection.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }) },
    (line) => transcript.push(line),
    "vscode-e2e-session",
  );
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

function kinds(runId: string): string[] {
  return events.filter((e) => e.runId === runId).map((e) => e.kind);
}

async function finished(runId: string): Promise<void> {
  await waitFor(`run ${runId} to finish (events so far: ${kinds(runId).join(", ")})`, () => kinds(runId).includes("done"), 60_000);
}

async function codeActions(uri: string, line: number): Promise<(CodeAction | Command)[]> {
  const result = await server.connection.sendRequest(CodeActionRequest.type, {
    textDocument: { uri },
    range: { start: { line, character: 0 }, end: { line, character: 0 } },
    context: { diagnostics: [] },
  });
  return result ?? [];
}

function titled(actions: (CodeAction | Command)[], prefix: string): CodeAction | undefined {
  return actions.find((a): a is CodeAction => a.title.startsWith(prefix) && "kind" in a);
}

test("ask streams events, the proposal becomes a code action, and applying it changes the document", async () => {
  const runId = await controller.ask({
    task: "APPLY-TASK: make greet use an f-string",
    uri: greetUri,
    selection: { start: { line: 0, character: 0 }, end: { line: 1, character: 26 } },
  });
  await finished(runId);
  const run = controller.tracker.get(runId)!;
  assert.deepEqual(kinds(runId).filter((k) => k !== "usage" && k !== "thought"), ["start", "tool_call", "tool_result", "tool_call", "tool_result", "proposal", "done"]);
  assert.equal(run.state, "succeeded");
  assert.match(model.userText(0), /def greet\(name\):\n {4}return "Hello " \+ name/, "the selection goes along");
  assert.match(model.userText(0), /APPLY-TASK/);
  assert.equal(run.proposal, "pending");
  assert.deepEqual(run.files, ["greet.py"]);
  assert.ok(transcript.some((l) => l.includes('-> edit_file(path="greet.py"')), transcript.join("\n"));
  assert.ok(server.logs.some((l) => l.includes(runId)), "the server also logs the run as window/logMessage lines");
  // The run's own progress token begins and ends (its `end` may arrive just after the `done` event).
  const runProgress = (kind: string) => server.progress.some((p) => p.token === `lsp-agent/run/${runId}` && p.value.kind === kind);
  assert.ok(runProgress("begin"));
  await waitFor("the run's progress to end", () => runProgress("end"), 5_000);
  assert.equal(readFileSync(join(workspace.root, "greet.py"), "utf8"), GREET, "the server never writes a proposal to disk");

  const list = await codeActions(greetUri, 1);
  const apply = titled(list, "Apply agent edit: ");
  assert.ok(apply?.edit, `no "Apply agent edit" action among ${list.map((a) => a.title).join(" | ")}`);
  const reject = list.find((a) => a.title.startsWith("Reject agent edit"));
  assert.ok(reject && typeof reject.command === "string", "reject is a plain Command every client runs as is");
  assert.equal(apply.command, undefined, "the edit alone: one click, and the server checks the text that follows");
  applyWorkspaceEdit(server.docs, apply.edit as never);
  server.sendChange(greetUri);
  assert.equal(server.docs.get(greetUri)!.text, GREET.replace('return "Hello " + name', 'return f"Hello, {name}!"'));
  await waitFor("the server to settle the applied edit from the document text", () => run.proposal === "applied", 10_000);
  const settled = events.find((e) => e.runId === runId && e.kind === "edits")!;
  assert.deepEqual(settled.changes, [{ path: "greet.py", what: "line 2" }]);
  assert.ok(transcript.some((l) => l.includes("edits applied: greet.py line 2")), transcript.join("\n"));
  const status = await controller.status();
  assert.deepEqual((status.pending ?? []).map((p) => p.runId), []);
  assert.equal(status.model, "openai/scripted");
  assert.ok(server.configurationRequests > 0, "the server read the lspAgent section with workspace/configuration");
  assert.equal(status.settingsErrors, undefined, "every contributed setting is one the server accepts");
  assert.deepEqual(server.shown.filter((m) => m.type === 1), [], "no error message was shown");
  assert.equal(titled(await codeActions(greetUri, 1), "Apply agent edit: "), undefined, "nothing left to apply");
});

test("Apply Pending Edits sends the proposal with workspace/applyEdit, versioned and annotated for preview", async () => {
  const before = server.docs.get(greetUri)!.text;
  const runId = await controller.ask({ task: "COMMAND-TASK: make farewell use an f-string", uri: greetUri });
  await finished(runId);
  assert.equal(controller.tracker.get(runId)!.proposal, "pending");
  const outcome = await controller.apply(runId);
  assert.deepEqual(outcome, { ok: true, message: "Agent edits applied." });
  assert.equal(server.docs.get(greetUri)!.text, before.replace('return "Bye " + name', 'return f"Bye, {name}."'));
  const request = server.applyEditRequests.at(-1)!;
  const first = request.edit.documentChanges?.[0];
  assert.ok(first && "textDocument" in first, "VS Code advertises documentChanges, so the edit uses them");
  assert.equal(first.textDocument.uri, greetUri);
  const annotations = Object.values(request.edit.changeAnnotations ?? {});
  assert.ok(annotations.some((a) => a.needsConfirmation === true), "a change annotation asks VS Code for its refactor preview");
  assert.equal(controller.tracker.get(runId)!.proposal, "applied");
});

test("Undo Last Apply restores the text before Apply Pending Edits, and refuses after a later change", async () => {
  const applied = server.applyEditRequests.at(-1)!;
  const doc = server.docs.get(greetUri)!;
  const after = doc.text;
  doc.text = after + "# typed after the apply\n";
  doc.version += 1;
  server.sendChange(greetUri);
  await assert.rejects(controller.undoApply(), /undo refused, nothing was changed: greet.py: changed since the apply/);
  assert.equal(server.applyEditRequests.at(-1), applied, "a refused undo sends no edit");
  doc.text = after;
  doc.version += 1;
  server.sendChange(greetUri);
  const undone = await controller.undoApply();
  assert.deepEqual(undone.files, ["greet.py"]);
  assert.equal(server.docs.get(greetUri)!.text, after.replace('return f"Bye, {name}."', 'return "Bye " + name'));
  await assert.rejects(controller.undoApply(), /nothing to undo/);
});

test("Reject Pending Edits drops the proposal and keeps the documents", async () => {
  const text = server.docs.get(greetUri)!.text;
  const runId = await controller.ask({ task: "REJECT-TASK: write notes", uri: greetUri });
  await finished(runId);
  const run = controller.tracker.get(runId)!;
  assert.deepEqual(run.files, ["notes.txt"]);
  await controller.reject(runId, "no notes file, please");
  assert.equal(run.proposal, "rejected");
  const status = await controller.status();
  assert.ok(!(status.pending ?? []).some((p) => p.runId === runId));
  assert.equal(server.docs.get(greetUri)!.text, text);
  await assert.rejects(controller.apply(runId), /no pending edits/);
});

test("Reject this agent change rejects one hunk through the code action, with the reason the user typed", async () => {
  const runId = await controller.ask({ task: "HUNKS-TASK: add type hints", uri: greetUri });
  await finished(runId);
  const run = controller.tracker.get(runId)!;
  const list = await codeActions(greetUri, 4);
  const reject = list.find((a): a is Command => a.title.startsWith("Reject this agent change") && typeof a.command === "string");
  assert.ok(reject, `no "Reject this agent change" among ${list.map((a) => a.title).join(" | ")}`);
  const reasons: string[] = [];
  const send = (command: string, args: unknown[]) => server.connection.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  const noTask = async () => assert.fail("a reject never asks for a task");
  assert.equal(await controller.executeServerCommand(reject.command, reject.arguments ?? [], send, noTask, async () => undefined), undefined, "Escape keeps the edits");
  const result = (await controller.executeServerCommand(reject.command, reject.arguments ?? [], send, noTask, async () => {
    reasons.push("asked");
    return "keep farewell untyped";
  })) as { changes: { what: string }[]; state: string };
  assert.deepEqual(reasons, ["asked"]);
  assert.deepEqual(result.changes, [{ path: "greet.py", what: "line 5" }]);
  assert.equal(result.state, "pending");
  assert.equal(run.proposal, "pending", "the other hunk still waits");
  const left = await codeActions(greetUri, 0);
  const apply = titled(left, "Apply agent edit: ")!;
  assert.ok(!titled(await codeActions(greetUri, 4), "Apply agent edit: "), "the rejected hunk has no action any more");
  applyWorkspaceEdit(server.docs, apply.edit as never);
  server.sendChange(greetUri);
  await waitFor("the applied remainder to settle the run", () => run.proposal === "applied", 10_000);
  assert.match(server.docs.get(greetUri)!.text, /def greet\(name: str\):\n[\s\S]*def farewell\(name\):/);
  const before = model.requests.length;
  const follow = await controller.ask({ task: "what did I reject?", uri: greetUri });
  await waitFor("the follow-up to reach the model", () => model.requests.length > before, 30_000);
  assert.match(model.userText(before), /user rejected changes of run [\s\S]*reason: keep farewell untyped/);
  await finished(follow);
  const doc = server.docs.get(greetUri)!; // the user undoes the hint; the later tests expect the plain signature
  doc.text = doc.text.replace("def greet(name: str):", "def greet(name):");
  doc.version += 1;
  server.sendChange(greetUri);
});

test("a guarded tool offers the four permission answers; Allow always is remembered, listed and revoked", async () => {
  server.messageAnswer = "Allow always";
  const asked = server.messageRequests.length;
  const runId = await controller.ask({ task: "PERMISSION-TASK: echo things", uri: greetUri });
  await finished(runId);
  const prompts = server.messageRequests.slice(asked);
  assert.equal(prompts.length, 1, "the prefix `echo -n` covers the second command");
  assert.deepEqual(prompts[0].titles, [...PERMISSION_TITLES]);
  const results = events.filter((e) => e.runId === runId && e.kind === "tool_result" && e.name === "run_command");
  assert.deepEqual(results.map((r) => r.ok), [true, true]);
  const listing = await controller.permissions();
  assert.deepEqual(listing.workspaces[0].rules.map((r) => [r.key, r.decision]), [["run_command: echo -n", "allow"]]);
  const after = await controller.revokePermission("run_command: echo -n");
  assert.deepEqual(after.revoked?.map((r) => r.key), ["run_command: echo -n"]);
  assert.deepEqual(after.workspaces[0].rules, []);
  server.messageAnswer = null;
});

test("Cancel Run stops a run mid-request to the model within seconds", async () => {
  const before = model.requests.length;
  // Start it the way the "Ask agent about this selection" code action does: the client asks for the task.
  const list = await server.connection.sendRequest(CodeActionRequest.type, {
    textDocument: { uri: greetUri },
    range: { start: { line: 0, character: 0 }, end: { line: 1, character: 10 } },
    context: { diagnostics: [] },
  });
  const askAction = (list ?? []).find((a): a is Command => a.title === "Ask agent about this selection" && typeof a.command === "string");
  assert.ok(askAction, `no "Ask agent about this selection" Command among ${(list ?? []).map((a) => a.title).join(" | ")}`);
  const prompts: string[] = [];
  const result = (await controller.executeServerCommand(
    askAction.command,
    askAction.arguments ?? [],
    (command, args) => server.connection.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }),
    async () => {
      prompts.push("asked");
      return "CANCEL-TASK: think for a long time";
    },
  )) as { runId: string };
  assert.deepEqual(prompts, ["asked"]);
  const runId = result.runId;
  assert.equal(controller.tracker.get(runId)!.task, "CANCEL-TASK: think for a long time");
  await waitFor("the model to receive the request", () => model.requests.length > before, 30_000);
  assert.match(model.userText(before), /CANCEL-TASK/);
  assert.match(model.userText(before), /def greet\(name\):/, "the code action's selection went along");
  const started = Date.now();
  await controller.cancel(runId);
  await waitFor("the cancelled run's done event", () => kinds(runId).includes("done"), 10_000);
  assert.ok(Date.now() - started < 5000, `cancel took ${Date.now() - started} ms`);
  assert.equal(controller.tracker.get(runId)!.state, "cancelled");
  assert.equal(controller.tracker.get(runId)!.proposal, "none");
});

test("Cancel on a run's progress notification cancels the run on the server", async () => {
  // The extension's progress view, fed the server's real $/progress; the editor side only records what opened.
  const opened: { title: string; cancellable: boolean; cancel: () => void; updates: string[] }[] = [];
  const views = new Map<string | number, ProgressTokenView>();
  server.onNotification((method, params) => {
    if (method !== "$/progress") {
      return;
    }
    const { token, value } = params as { token: string | number; value: ProgressValue };
    let view = views.get(token);
    if (!view) {
      view = new ProgressTokenView(
        (title, cancellable, cancel) => {
          const shown = { title, cancellable, cancel, updates: [] as string[] };
          opened.push(shown);
          return { report: (u) => shown.updates.push(u.message ?? ""), done: () => shown.updates.push("(done)") };
        },
        () => void server.connection.sendNotification(WorkDoneProgressCancelNotification.type, { token }),
      );
      views.set(token, view);
    }
    view.handle(value);
  });
  const before = model.requests.length;
  const runId = await controller.ask({ task: "PROGRESS-CANCEL: wait for the model", uri: greetUri });
  await waitFor("the model to receive the request", () => model.requests.length > before, 30_000);
  const shown = await waitFor("the run's progress", () => opened.find((o) => o.title.includes("PROGRESS-CANCEL")), 10_000);
  assert.equal(shown.cancellable, true);
  shown.cancel();
  await finished(runId);
  assert.equal(controller.tracker.get(runId)!.state, "cancelled");
  await waitFor("the progress to close", () => shown.updates.includes("(done)"), 5_000);
});

test("Plan and Ask sends plan: true; the run plans, works through its subtask and proposes the edit", async () => {
  const before = model.requests.length;
  const runId = await controller.ask({ task: "PLAN-TASK: document greet", uri: greetUri, plan: true });
  await finished(runId);
  const k = kinds(runId);
  assert.ok(k.includes("plan") && k.includes("subtask"), k.join(", "));
  assert.equal(model.requests[before].tools, undefined, "the planning request offers no tools");
  assert.ok(transcript.some((l) => l.includes("plan (1 subtasks):")), transcript.join("\n"));
  const run = controller.tracker.get(runId)!;
  assert.equal(run.state, "succeeded");
  assert.deepEqual(run.files, ["greet.py"]);
  assert.equal(run.answer, "docstring added");
  await controller.reject(runId);
});

function indexingBegins(): number {
  return server.progress.filter((p) => p.value.kind === "begin" && p.value.title === "lsp-agent: indexing").length;
}

async function indexReady(): Promise<void> {
  await waitFor("the index to be ready", async () => (await controller.status()).index.ready, 30_000);
}

test("Reindex Workspace rebuilds the index under an indexing $/progress", async () => {
  await indexReady();
  const begins = indexingBegins();
  await controller.reindex();
  await waitFor("an indexing progress to begin", () => indexingBegins() > begins, 10_000);
  await indexReady();
  assert.ok((await controller.status()).index.files >= 1);
});

test("changed lspAgent settings reach the running server (workspace/didChangeConfiguration)", async () => {
  await indexReady();
  const begins = indexingBegins();
  // What vscode-languageclient sends for `synchronize.configurationSection: "lspAgent"` when a setting changes.
  section.model = "openai/scripted-changed";
  section.index = { ...(section.index as Record<string, unknown>), exclude: ["*.txt"] };
  await server.connection.sendNotification(DidChangeConfigurationNotification.type, { settings: { lspAgent: section } });
  const status = await waitFor("the new model in lspAgent.status", async () => {
    const s = await controller.status();
    return s.model === "openai/scripted-changed" ? s : undefined;
  }, 10_000);
  assert.equal(status.settingsErrors, undefined);
  await waitFor("a changed index exclusion to trigger reindexing", () => indexingBegins() > begins, 10_000);
});
