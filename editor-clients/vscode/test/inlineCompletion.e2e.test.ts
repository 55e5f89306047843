/**
 * End to end: the inline completion middleware in front of the real server (`python -m lsp_agent serve`) and the
 * scripted model's streamed `/v1/completions`, as vscode-languageclient's inline completion feature calls it.
 */

import assert from "node:assert/strict";
import Module, { createRequire } from "node:module";
import { after, before, test } from "node:test";
import { CancellationTokenSource, ExecuteCommandRequest, InlineCompletionRequest, InlineCompletionTriggerKind } from "vscode-languageserver-protocol/node";
import { AgentController } from "../src/controller";
import { CompletionSetting, completionView, inlineCompletionMiddleware } from "../src/inlineCompletion";
import { ScriptedModel, ServerSession, tempWorkspace, waitFor } from "./support/lspHarness";

const SHAPES = 'def area_of(width: float, height: float) -> float:\n    """The area of a rectangle."""\n    return width * height\n';
const LINES = { plain: "size = area_of(", slow: "big = area_of(", failing: "small = area_of(", feature: "tile = area_of(" };
const SCRIPT = [
  { match: LINES.plain, content: "3.0, 4.0)" },
  { match: LINES.slow, content: "1.0, 2.0) + area_of(5.0, 6.0) + area_of(7.0, 8.0)", chunk_delay: 0.5 },
  { match: LINES.failing, status: 500, error: "the model crashed" },
  { match: LINES.feature, content: "9.0, 9.0)" },
];

let workspace: ReturnType<typeof tempWorkspace>;
let model: ScriptedModel;
let server: ServerSession;
let controller: AgentController;

before(async () => {
  workspace = tempWorkspace({ "shapes.py": SHAPES });
  model = await ScriptedModel.start(SCRIPT);
  const settings = { model: "openai/qwen2.5-coder-1.5b", apiBase: model.baseUrl, apiKey: "test", completionDebounceMs: 0 };
  server = await ServerSession.start(workspace.root, settings);
  controller = new AgentController(
    { executeCommand: (command, args) => server.connection.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }) },
    () => undefined,
    undefined,
  );
  await waitFor("the index to be ready", async () => (await controller.status()).index.ready, 60_000);
});

after(async () => {
  await server?.stop();
  model?.stop();
  workspace?.cleanup();
});

async function completionStatus() {
  return (await controller.status()).completion;
}

type Provide = NonNullable<ReturnType<typeof inlineCompletionMiddleware>["provideInlineCompletionItems"]>;
type Args = Parameters<Provide>;

/** What vscode-languageclient's feature does after the middleware: send the request with VS Code's token. */
function viaServer(uri: string, line: number, character: number): Args[4] {
  return ((_doc: unknown, _pos: unknown, _ctx: unknown, token: CancellationTokenSource["token"]) =>
    server.connection.sendRequest(
      InlineCompletionRequest.type,
      { textDocument: { uri }, position: { line, character }, context: { triggerKind: InlineCompletionTriggerKind.Automatic } },
      token,
    )) as unknown as Args[4];
}

function provider(setting: () => CompletionSetting, answered: () => void = () => undefined): Provide {
  let status: Awaited<ReturnType<typeof completionStatus>>;
  return inlineCompletionMiddleware({
    setting,
    status: () => status,
    answered: () => {
      answered();
      void completionStatus().then((s) => (status = s));
    },
  }).provideInlineCompletionItems as Provide;
}

/** A file whose last line is `line`, the cursor after it (a `)` follows, as an editor's auto-pairing leaves it). */
async function fileEndingIn(name: string, line: string): Promise<string> {
  return server.open(name, `from shapes import area_of\n\n${line})\n`);
}

function ask(provide: Provide, uri: string, line: string, token = new CancellationTokenSource().token): ReturnType<Provide> {
  return provide(...([{}, {}, {}, token, viaServer(uri, 2, line.length)] as unknown as Args));
}

test("a suggestion from the scripted /v1/completions reaches the provider; off sends nothing", { timeout: 60_000 }, async () => {
  const uri = await fileEndingIn("plain.py", LINES.plain);
  let setting: CompletionSetting = "off";
  const provide = provider(() => setting);
  assert.equal(await ask(provide, uri, LINES.plain), undefined);
  assert.equal(model.requests.length, 0, "the toggle is off: the server was not asked");
  setting = "auto";
  const result = (await ask(provide, uri, LINES.plain)) as { items: { insertText: string; range?: unknown }[] };
  assert.deepEqual(result.items.map((i) => i.insertText), ["3.0, 4.0"]); // the `)` after the cursor is not repeated
  // The scripted model reports its requests on stdout every 20 ms: the answer can come back before the report.
  const request = await waitFor("the model to report the completion request", () => model.requests[0], 10_000);
  const prompt = String((request as unknown as { prompt: string }).prompt);
  assert.match(prompt, /def area_of\(width: float, height: float\) -> float:/); // the other file's definition
  const status = await completionStatus();
  assert.equal(status?.enabled, true);
  assert.equal(status?.modelDown, false);
  assert.equal(completionView({ serverState: "running", setting, status }).text, "$(sparkle) Completions");
});

test("VS Code cancelling the token sends $/cancelRequest and the server cancels its model request", { timeout: 60_000 }, async () => {
  const uri = await fileEndingIn("slow.py", LINES.slow);
  const before = (await completionStatus())?.cancelled ?? 0;
  const source = new CancellationTokenSource();
  const pending = ask(provider(() => "auto"), uri, LINES.slow, source.token);
  // Cancel once the model is generating (its first chunk is out), as a keystroke would.
  const asked = () => model.requests.some((q) => String((q as unknown as { prompt?: string }).prompt).includes(LINES.slow));
  await waitFor("the model to receive the completion request", asked, 30_000);
  await new Promise((r) => setTimeout(r, 300));
  source.cancel();
  await assert.rejects(async () => pending, /cancel/i);
  let cancelled = before;
  for (let i = 0; i < 100 && cancelled === before; i++) {
    await new Promise((r) => setTimeout(r, 100));
    cancelled = (await completionStatus())?.cancelled ?? 0;
  }
  assert.equal(cancelled, before + 1);
});

/** A stand-in for the `vscode` module that records inline completion providers (VS Code itself cannot run here). */
const registered: { selector: unknown; provider: { provideInlineCompletionItems: (...args: unknown[]) => Promise<unknown> } }[] = [];
const fakeVscode = {
  CancellationError: class extends Error {}, // features.js subclasses it when it loads
  languages: {
    registerInlineCompletionItemProvider: (selector: unknown, provider: (typeof registered)[number]["provider"]) => {
      registered.push({ selector, provider });
      return { dispose: () => undefined };
    },
  },
};

/** vscode-languageclient's own InlineCompletionItemFeature (what registerProposedFeatures adds), loaded against the stand-in. */
function loadInlineCompletionFeature(): new (client: unknown) => { initialize(caps: unknown, selector: unknown): void } {
  const loader = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
  const load = loader._load;
  loader._load = (request: string, ...rest: unknown[]) => (request === "vscode" ? fakeVscode : load(request, ...rest));
  try {
    return (createRequire(__filename)("vscode-languageclient/lib/common/inlineCompletion") as { InlineCompletionItemFeature: never }).InlineCompletionItemFeature;
  } finally {
    loader._load = load;
  }
}

test("vscode-languageclient's proposed inline completion feature registers a provider from the server's capabilities, and it runs the middleware", { timeout: 60_000 }, async () => {
  assert.ok(server.capabilities.inlineCompletionProvider, "the server advertises inlineCompletionProvider");
  const uri = await fileEndingIn("feature.py", LINES.feature);
  let setting: CompletionSetting = "auto";
  const client = {
    middleware: inlineCompletionMiddleware({ setting: () => setting, status: () => undefined, answered: () => undefined }),
    sendRequest: (type: typeof InlineCompletionRequest.type, params: unknown, token: CancellationTokenSource["token"]) =>
      server.connection.sendRequest(type, params as never, token),
    // The converters between VS Code's and the protocol's types (VS Code's classes are not here): plain copies.
    code2ProtocolConverter: {
      asInlineCompletionParams: (doc: { uri: string }, position: unknown, context: { triggerKind: number }) => ({
        textDocument: { uri: doc.uri },
        position,
        context: { triggerKind: context.triggerKind },
      }),
    },
    protocol2CodeConverter: { asInlineCompletionResult: async (result: unknown) => result, asDocumentSelector: (s: unknown) => s },
    handleFailedRequest: (_type: unknown, _token: unknown, error: unknown) => {
      throw error;
    },
  };
  const Feature = loadInlineCompletionFeature();
  new Feature(client).initialize(server.capabilities, [{ scheme: "file" }]);
  assert.equal(registered.length, 1);
  assert.deepEqual(registered[0].selector, [{ scheme: "file" }]);
  const provide = (token = new CancellationTokenSource().token) =>
    registered[0].provider.provideInlineCompletionItems({ uri }, { line: 2, character: LINES.feature.length }, { triggerKind: InlineCompletionTriggerKind.Automatic }, token);
  setting = "off";
  assert.equal(await provide(), undefined);
  setting = "auto";
  const result = (await provide()) as { items: { insertText: string }[] };
  assert.deepEqual(result.items.map((i) => i.insertText), ["9.0, 9.0"]);
});

// Last: after a failure the server rests the model for 5 s.
test("a model that fails shows the status bar item as paused (lspAgent.status modelDown)", { timeout: 60_000 }, async () => {
  const uri = await fileEndingIn("failing.py", LINES.failing);
  let refreshed = 0;
  const provide = provider(() => "auto", () => (refreshed += 1));
  assert.equal(await ask(provide, uri, LINES.failing), null); // quietly no suggestion
  assert.equal(refreshed, 1);
  const status = await completionStatus();
  assert.equal(status?.modelDown, true);
  assert.equal(completionView({ serverState: "running", setting: "auto", status }).text, "$(debug-disconnect) Completions");
  assert.ok(server.shown.some((m) => /inline completions paused/.test(m.message)), "said once, as a warning");
});
