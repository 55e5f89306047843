import assert from "node:assert/strict";
import { test } from "node:test";
import { describeEvent, firstLines, formatEvent, shortArgs } from "../src/eventFormat";

test("tool calls show name and compact arguments", () => {
  const text = describeEvent({ runId: "r1", kind: "tool_call", name: "read_file", arguments: { path: "a.py", start: 3 } });
  assert.equal(text, '-> read_file(path="a.py", start=3)');
});

test("long arguments are cut with an ellipsis and newlines escaped", () => {
  const text = shortArgs({ content: "x\n".repeat(200) }, 40);
  assert.equal(text.length, 40);
  assert.ok(text.endsWith("..."));
  assert.ok(!text.includes("\n"));
});

test("tool results show status, time and the first lines with a count of the rest", () => {
  const output = ["one", "two", "three", "four", "five"].join("\n");
  const text = describeEvent({ runId: "r", kind: "tool_result", name: "search_text", ok: false, seconds: 0.1234, output });
  assert.equal(text, "<- search_text failed in 0.12s: one\n   two\n   three\n   ... (2 more lines)");
  assert.equal(firstLines("single"), "single");
});

test("plans list subtasks with dependencies and the fallback", () => {
  const text = describeEvent({
    runId: "r",
    kind: "plan",
    subtasks: [
      { id: 1, description: "read the CLI" },
      { id: 2, description: "add the flag", dependencies: [1] },
    ],
    fallback: "model returned no JSON",
  });
  assert.equal(text, "plan (2 subtasks):\n  1. read the CLI\n  2. add the flag after 1\n  (fallback: model returned no JSON)");
});

test("proposals name every changed file and how to apply", () => {
  const text = describeEvent({
    runId: "r",
    kind: "proposal",
    summary: "rename greet",
    changes: [
      { path: "src/a.py", kind: "modify" },
      { path: "new.py", kind: "create" },
    ],
  });
  const lines = text.split("\n");
  assert.equal(lines[0], "proposal: 2 file(s) changed - rename greet");
  assert.equal(lines[1], "   modify src/a.py");
  assert.equal(lines[2], "   create new.py");
  assert.match(lines[3], /Apply agent edit/);
});

test("done shows the stop reason, error and the answer", () => {
  assert.equal(
    describeEvent({ runId: "r", kind: "done", stopReason: "complete", iterations: 3, answer: "Renamed.\nAll good." }),
    "done: complete after 3 iterations\n   answer: Renamed.\n   All good.",
  );
  assert.equal(
    describeEvent({ runId: "r", kind: "done", stopReason: "error", iterations: 0, error: "no model configured" }),
    "done: error after 0 iterations, error: no model configured",
  );
});

test("usage, errors, permissions and unknown kinds stay readable", () => {
  assert.equal(describeEvent({ runId: "r", kind: "usage", promptTokens: 120, completionTokens: 7, cost: 0.00123 }), "tokens: 120 in / 7 out, cost $0.0012");
  assert.equal(describeEvent({ runId: "r", kind: "error", message: "rate limited" }), "error: rate limited");
  assert.equal(describeEvent({ runId: "r", kind: "permission", tool: "run_command", decision: "deny", reason: "no answer" }), "permission for run_command: deny (no answer)");
  assert.equal(describeEvent({ runId: "r", kind: "mystery", value: 1 }), 'mystery: {"value":1}');
});

test("formatEvent prefixes the clock and a short run id", () => {
  const when = new Date(2026, 0, 2, 3, 4, 5);
  assert.equal(formatEvent({ runId: "0123456789abcdef", kind: "thought", text: " thinking " }, when), "[03:04:05] [01234567] thought: thinking");
});
