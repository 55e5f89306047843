import assert from "node:assert/strict";
import { test } from "node:test";
import { AgentController } from "../src/controller";
import { LiveLog } from "../src/liveText";

const noon = () => new Date(2026, 0, 1, 12, 0, 0);

test("streamed words grow one output line per reply and channel; other lines start on a fresh line", () => {
  const out: string[] = [];
  const log = new LiveLog((t) => out.push(t), noon);
  log.text({ runId: "run1", kind: "text", channel: "thought", text: "\nlooking ", first: true });
  log.text({ runId: "run1", kind: "text", channel: "thought", text: "at calc.py" });
  log.text({ runId: "run1", kind: "text", channel: "message", text: "It adds\n" });
  log.text({ runId: "run1", kind: "text", channel: "message", text: "numbers.\n", final: true });
  log.text({ runId: "run1", kind: "text", channel: "message", text: "", final: true });
  assert.equal(out.join(""), "[12:00:00] [run1] thinking: looking at calc.py\n[12:00:00] [run1] It adds\nnumbers.\n");
});

test("the controller shows text live, skips the streamed thought and keeps the words in the run's transcript", () => {
  const appended: string[] = [];
  const lines: string[] = [];
  const ctl = new AgentController({ executeCommand: async () => undefined }, (l) => lines.push(l), "s", undefined, (t) => appended.push(t));
  ctl.onEvent({ runId: "r", kind: "text", channel: "message", text: "The answer ", first: true, request: 1 });
  ctl.onEvent({ runId: "r", kind: "tool_call", name: "read_file", arguments: { path: "a.py" } }); // ends the live line
  ctl.onEvent({ runId: "r", kind: "text", channel: "message", text: "is 4.", first: true, final: true, request: 2 });
  ctl.onEvent({ runId: "r", kind: "thought", text: "is 4.", iteration: 2, streamed: true });
  assert.match(appended.join(""), /\] \[r\] The answer \n.*\] \[r\] is 4\.\n$/s);
  assert.equal(lines.length, 1);
  assert.match(lines[0], /-> read_file/);
  assert.deepEqual(ctl.tracker.get("r")!.lines, ["The answer ", '-> read_file(path="a.py")', "is 4."]);
});
