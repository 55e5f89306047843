import assert from "node:assert/strict";
import { test } from "node:test";
import { chosenModel, modelItems } from "../src/askChoices";
import { askArguments } from "../src/commandArgs";
import { statusView } from "../src/statusText";

test("the model quick pick offers the default first, marked, and nothing when there is no choice", () => {
  assert.deepEqual(modelItems({ model: "openai/a", models: ["openai/b", "openai/c"] }), [
    { label: "openai/a", description: "default (lspAgent.model)" },
    { label: "openai/b" },
    { label: "openai/c" },
  ]);
  assert.deepEqual(modelItems({ model: "openai/a", models: [] }), []);
  assert.deepEqual(modelItems({ model: "openai/a", models: ["openai/a"] }), []);
  assert.equal(chosenModel("openai/a", { model: "openai/a" }), undefined, "the default needs no override");
  assert.equal(chosenModel("openai/b", { model: "openai/a" }), "openai/b");
});

test("an ask carries the picked model, and the folder only when no file goes along", () => {
  assert.deepEqual(askArguments({ task: "t", model: "openai/b", folder: "file:///w/lib" }), [
    { task: "t", model: "openai/b", folder: "file:///w/lib" },
  ]);
  assert.deepEqual(askArguments({ task: "t", uri: "file:///w/app/a.py", folder: "file:///w/lib" }), [{ task: "t", uri: "file:///w/app/a.py" }]);
});

test("the status tooltip names the model, or says none is configured", () => {
  assert.match(statusView({ serverState: "running", running: 0, pending: 0, model: "openai/a" }).tooltip, /^lsp-agent: model openai\/a;/);
  assert.match(statusView({ serverState: "running", running: 0, pending: 0 }).tooltip, /no model configured \(lspAgent\.model\)/);
});
