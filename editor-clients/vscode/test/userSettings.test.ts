import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { InspectedSetting, serverKeys, userSetSettings, userValue } from "../src/userSettings";

const manifest = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8"));

test("manifest defaults are never sent: an untouched maxIterations leaves LSP_AGENT_MAX_ITERATIONS in charge", () => {
  const defaults: Record<string, InspectedSetting> = {};
  for (const [key, spec] of Object.entries(manifest.contributes.configuration.properties as Record<string, { default: unknown }>)) {
    defaults[key.replace(/^lspAgent\./, "")] = { defaultValue: spec.default };
  }
  assert.equal(defaults.maxIterations.defaultValue, 30);
  assert.deepEqual(userSetSettings(serverKeys(manifest), (key) => defaults[key]), {});
});

test("user, workspace and folder values are sent, the most specific winning, nested by dotted key", () => {
  const inspected: Record<string, InspectedSetting> = {
    model: { defaultValue: null, globalValue: "openai/gpt-4o-mini", workspaceValue: "anthropic/claude-sonnet-4-5" },
    maxIterations: { defaultValue: 30, globalValue: 12, workspaceFolderValue: 8 },
    "index.exclude": { defaultValue: [], workspaceValue: ["dist/"] },
    apiBase: { defaultValue: null, globalValue: null },
  };
  assert.deepEqual(userSetSettings(Object.keys(inspected), (key) => inspected[key]), {
    model: "anthropic/claude-sonnet-4-5",
    maxIterations: 8,
    index: { exclude: ["dist/"] },
  });
  assert.equal(userValue(undefined), undefined);
});

test("client-only settings (server.*, trace.*) are not among the server's keys", () => {
  const keys = serverKeys(manifest);
  assert.ok(keys.includes("model") && keys.includes("index.exclude") && keys.includes("apiKey"));
  assert.ok(!keys.some((k) => k.startsWith("server.") || k.startsWith("trace.")));
});
