import assert from "node:assert/strict";
import { test } from "node:test";
import { AgentController } from "../src/controller";
import { describeRewind, ExchangeRow, rewindItems } from "../src/rewind";

const row = (number: number, task: string, applied: string[], rewound = false): ExchangeRow => ({
  number,
  runId: `r${number}`,
  task,
  outcome: "complete",
  applied,
  rewound,
  retried: false,
});

test("the picker offers each exchange still in the conversation but the newest, then its start, newest first", () => {
  const items = rewindItems([row(1, "fix add", ["calc.py"]), row(2, "gone", ["x.py"], true), row(3, "swap mul", ["calc.py", "b.py"])]);
  assert.deepEqual(
    items.map((i) => [i.exchange, i.label, i.detail]),
    [
      [1, "1. fix add", "restores calc.py, b.py"],
      [0, "0. The start of the conversation", "restores calc.py, b.py"],
    ],
  );
  assert.equal(items[0].description, "keep up to here; drop 1 later exchange(s)");
  assert.deepEqual(rewindItems([]), []);
});

test("the controller lists and rewinds the window's conversation and logs what was restored and refused", async () => {
  const sent: { command: string; args: unknown[] }[] = [];
  const answers: Record<string, unknown> = {
    "lspAgent.exchanges": { sessionId: "s", exchanges: [row(1, "a", [])] },
    "lspAgent.rewind": { sessionId: "s", exchange: 0, dropped: ["r1"], restored: ["a.py"], refused: ["b.py: changed since the apply"] },
  };
  const lines: string[] = [];
  const ctl = new AgentController(
    { executeCommand: async (command, args) => (sent.push({ command, args }), answers[command]) },
    (l) => lines.push(l),
    "s",
  );
  assert.equal((await ctl.exchanges()).length, 1);
  const result = await ctl.rewind(0);
  assert.deepEqual(sent.map((s) => s.args[0]), [{ sessionId: "s" }, { exchange: 0, sessionId: "s" }]);
  const outcome = describeRewind(result);
  assert.equal(outcome.ok, false);
  assert.match(lines[0], /rewound to exchange 0 \(1 later exchange\(s\) dropped\): restored a\.py; left as they are: b\.py: changed since the apply/);
});
