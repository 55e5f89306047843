import assert from "node:assert/strict";
import { test } from "node:test";
import { serverCommandLine, serverEnvironment } from "../src/settings";
import { statusView } from "../src/statusText";

test("the server command line comes from a list, a string or the default", () => {
  assert.deepEqual(serverCommandLine(["/v/bin/python", "-m", "lsp_agent", "serve"]), { command: "/v/bin/python", args: ["-m", "lsp_agent", "serve"] });
  assert.deepEqual(serverCommandLine("lsp-agent"), { command: "lsp-agent", args: [] });
  assert.deepEqual(serverCommandLine(undefined), { command: "lsp-agent", args: ["serve"] });
});

test("a bad server command names the setting and an example", () => {
  assert.throws(() => serverCommandLine([]), /lspAgent\.server\.command.*python/);
  assert.throws(() => serverCommandLine(["ok", 3]), /non-empty list/);
  assert.throws(() => serverCommandLine(42), /list of strings/);
});

test("server env adds string values to the base environment", () => {
  const env = serverEnvironment({ OPENAI_API_KEY: "k", BAD: 1 }, { PATH: "/bin" });
  assert.deepEqual(env, { PATH: "/bin", OPENAI_API_KEY: "k" });
});

test("the status bar shows running, pending and indexing", () => {
  assert.equal(statusView({ serverState: "running", indexReady: true, indexFiles: 3, running: 0, pending: 0 }).text, "$(hubot) Agent");
  const busy = statusView({ serverState: "running", indexReady: false, running: 2, pending: 1 });
  assert.equal(busy.text, "Agent: $(sync~spin) 2 running $(diff) 1 pending $(database) indexing");
  assert.match(busy.tooltip, /indexing the workspace; 2 running, 1 with pending edits/);
  assert.equal(statusView({ serverState: "stopped", running: 0, pending: 0 }).text, "$(error) Agent");
});
