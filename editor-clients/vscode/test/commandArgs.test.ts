import assert from "node:assert/strict";
import { test } from "node:test";
import { applyArguments, askArguments, describeApplyResult, InputError, rejectArguments } from "../src/commandArgs";

const sel = { start: { line: 1, character: 0 }, end: { line: 3, character: 4 } };

test("ask sends the trimmed task, file, selection, plan flag and session", () => {
  assert.deepEqual(askArguments({ task: "  add logging ", uri: "file:///w/a.py", selection: sel, plan: true, sessionId: "s" }), [
    { task: "add logging", uri: "file:///w/a.py", range: sel, plan: true, sessionId: "s" },
  ]);
});

test("an empty selection or a missing file leaves range out", () => {
  const caret = { start: { line: 2, character: 5 }, end: { line: 2, character: 5 } };
  assert.deepEqual(askArguments({ task: "t", uri: "file:///a", selection: caret }), [{ task: "t", uri: "file:///a" }]);
  assert.deepEqual(askArguments({ task: "t", selection: sel }), [{ task: "t" }]);
});

test("readFolders goes along when folders were picked, and is left out when none were", () => {
  assert.deepEqual(askArguments({ task: "compare", readFolders: ["file:///w/api", "lib"] }), [
    { task: "compare", readFolders: ["file:///w/api", "lib"] },
  ]);
  assert.deepEqual(askArguments({ task: "t", readFolders: [] }), [{ task: "t" }]);
});

test("an empty task is an input error that says what to do", () => {
  assert.throws(() => askArguments({ task: "   " }), (e: unknown) => e instanceof InputError && /task/.test((e as Error).message));
  assert.throws(() => askArguments({ task: undefined }), InputError);
});

test("apply and reject leave out empty optional parts", () => {
  assert.deepEqual(applyArguments("r"), [{ runId: "r" }]);
  assert.deepEqual(applyArguments("r", []), [{ runId: "r" }]);
  assert.deepEqual(applyArguments("r", ["file:///a"]), [{ runId: "r", files: ["file:///a"] }]);
  assert.deepEqual(rejectArguments("r", "  "), [{ runId: "r" }]);
  assert.deepEqual(rejectArguments("r", " wrong file "), [{ runId: "r", reason: "wrong file" }]);
});

test("apply results become a sentence that names refusals", () => {
  assert.deepEqual(describeApplyResult({ applied: true }), { ok: true, message: "Agent edits applied." });
  assert.deepEqual(describeApplyResult({ applied: false, failureReason: "user cancelled" }), {
    ok: false,
    message: "Agent edits not applied: user cancelled.",
  });
  assert.equal(describeApplyResult({ applied: true, refused: ["a.py changed since the agent read it"] }).ok, false);
});
