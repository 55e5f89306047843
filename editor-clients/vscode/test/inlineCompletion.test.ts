import assert from "node:assert/strict";
import { test } from "node:test";
import { completionView, effectiveSetting, inlineCompletionMiddleware, Throttle, toggledSetting } from "../src/inlineCompletion";

const ON = { enabled: true, model: "openai/qwen2.5-coder-1.5b", modelDown: false, requests: 4, suggestions: 3 };

test("the completion status bar says on, off, unavailable with the server's reason, or paused", () => {
  const on = completionView({ serverState: "running", setting: "auto", status: ON });
  assert.equal(on.text, "$(sparkle) Completions");
  assert.match(on.tooltip, /on from openai\/qwen2\.5-coder-1\.5b \(3 suggestions for 4 requests\); Tab accepts/);
  assert.equal(on.warning, false);

  const off = completionView({ serverState: "running", setting: "off", status: ON });
  assert.equal(off.text, "$(circle-slash) Completions");
  assert.match(off.tooltip, /off\. Click to turn inline completions on/);

  const none = completionView({ serverState: "running", setting: "on", status: { enabled: false, reason: "gpt-4o-mini is a chat model" } });
  assert.equal(none.text, "$(warning) Completions");
  assert.match(none.tooltip, /unavailable: gpt-4o-mini is a chat model/);
  assert.equal(none.warning, true);

  const down = completionView({ serverState: "running", setting: "auto", status: { ...ON, modelDown: true } });
  assert.equal(down.text, "$(debug-disconnect) Completions");
  assert.match(down.tooltip, /paused: the completion model from openai\/qwen2\.5-coder-1\.5b did not answer/);
  assert.equal(down.warning, true);

  const stopped = completionView({ serverState: "stopped", setting: "auto", status: ON });
  assert.match(stopped.tooltip, /server is not running/);
  assert.equal(completionView({ serverState: "starting", setting: "auto" }).text, "$(loading~spin) Completions");
});

test("the toggle turns off in the scope that turned completions on, and back on there", () => {
  assert.equal(effectiveSetting(undefined), "auto");
  assert.equal(effectiveSetting({ globalValue: "off", workspaceValue: "on" }), "on");
  assert.equal(effectiveSetting({ globalValue: "nonsense" }), "auto");
  assert.deepEqual(toggledSetting(undefined), { value: "off", target: "global" });
  assert.deepEqual(toggledSetting({ globalValue: "off" }), { value: "auto", target: "global" });
  assert.deepEqual(toggledSetting({ globalValue: "off", workspaceValue: "on" }), { value: "off", target: "workspace" });
  assert.deepEqual(toggledSetting({ workspaceFolderValue: "off" }), { value: "auto", target: "workspaceFolder" });
});

type Provide = NonNullable<ReturnType<typeof inlineCompletionMiddleware>["provideInlineCompletionItems"]>;
type Args = Parameters<Provide>;

function call(provide: Provide, next: Args[4]): ReturnType<Provide> {
  return provide(...([{}, {}, {}, {}, next] as unknown as Args));
}

test("the middleware asks the server only while on and with a completion model, and refreshes the status after", async () => {
  let setting: "auto" | "on" | "off" = "auto";
  let status: { enabled: boolean } | undefined;
  let answered = 0;
  let asked = 0;
  const provide = inlineCompletionMiddleware({ setting: () => setting, status: () => status, answered: () => (answered += 1) })
    .provideInlineCompletionItems as Provide;
  const next = (async () => ((asked += 1), [{ insertText: "x" }])) as unknown as Args[4];

  assert.deepEqual(await call(provide, next), [{ insertText: "x" }]); // status not known yet: ask
  setting = "off";
  assert.equal(await call(provide, next), undefined);
  setting = "on";
  status = { enabled: false };
  assert.equal(await call(provide, next), undefined);
  status = { enabled: true };
  await call(provide, next);
  assert.equal(asked, 2);
  assert.equal(answered, 2);

  const failing = (async () => {
    throw new Error("server gone");
  }) as unknown as Args[4];
  await assert.rejects(async () => call(provide, failing), /server gone/);
  assert.equal(answered, 3); // a failed request may mean the model went down: the status is asked again
});

test("the status refresh is throttled: a burst of answers asks once now and once after the interval", async () => {
  let calls = 0;
  const throttle = new Throttle(() => (calls += 1), 150);
  for (let i = 0; i < 5; i++) {
    throttle.poke();
  }
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(calls, 1);
  throttle.poke();
  throttle.poke();
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(calls, 1); // still inside the interval
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(calls, 2);
  throttle.dispose();
});
