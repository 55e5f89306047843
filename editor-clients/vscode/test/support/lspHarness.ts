/** Starts the scripted model and the real `python -m lsp_agent serve`, and plays a VS Code-like client over stdio. */

import { ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import {
  ApplyWorkspaceEditParams,
  ApplyWorkspaceEditRequest,
  ConfigurationRequest,
  createProtocolConnection,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  LogMessageNotification,
  ProtocolConnection,
  RegistrationRequest,
  ServerCapabilities,
  ShowMessageNotification,
  ShowMessageRequest,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  WorkDoneProgressCreateRequest,
} from "vscode-languageserver-protocol/node";
import { Doc, applyWorkspaceEdit } from "./textEdits";

/** Repository root (editor-clients/vscode/out/test/support -> repo). */
export const REPO_ROOT = resolve(__dirname, "..", "..", "..", "..", "..");
export const PYTHON = process.env.LSP_AGENT_TEST_PYTHON || "python3";

function pythonEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra, LITELLM_LOCAL_MODEL_COST_MAP: "True" };
  env.PYTHONPATH = env.PYTHONPATH ? `${REPO_ROOT}:${env.PYTHONPATH}` : REPO_ROOT;
  for (const k of ["LSP_AGENT_MODEL", "LSP_AGENT_API_BASE", "LSP_AGENT_API_KEY", "OPENAI_API_KEY"]) {
    delete env[k];
  }
  return env;
}

/** Runs lsp_agent.testing.scripted_model's server and reports each request it receives on stdout. */
const SCRIPTED_MODEL = `
import json, sys, time
from lsp_agent.testing.scripted_model import ScriptedModelServer
with ScriptedModelServer(json.load(open(sys.argv[1]))) as server:
    print(server.base_url, flush=True)
    seen = 0
    while True:
        while seen < len(server.requests):
            print("request", json.dumps(server.requests[seen]), flush=True)
            seen += 1
        time.sleep(0.02)
`;

/** The scripted OpenAI-compatible model server, with the chat requests it received so far. */
export class ScriptedModel {
  readonly requests: { messages: { role: string; content: unknown }[]; tools?: unknown[] }[] = [];

  private constructor(
    private readonly proc: ChildProcess,
    readonly baseUrl: string,
  ) {}

  static async start(script: object[]): Promise<ScriptedModel> {
    // Outside the workspace: the index would find the script's match strings and put them in the agent's prompt.
    const dir = mkdtempSync(join(tmpdir(), "lsp-agent-script-"));
    const file = join(dir, "script.json");
    writeFileSync(file, JSON.stringify(script));
    const proc = spawn(PYTHON, ["-c", SCRIPTED_MODEL, file], { env: pythonEnv(), stdio: ["ignore", "pipe", "inherit"] });
    const rl = createInterface({ input: proc.stdout! });
    const baseUrl = await new Promise<string>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error("the scripted model did not print its URL within 20 s")), 20_000);
      rl.once("line", (line) => {
        clearTimeout(timer);
        ok(line.trim());
      });
      proc.once("exit", (code) => fail(new Error(`the scripted model exited with ${code}`)));
    });
    proc.on("exit", () => rmSync(dir, { recursive: true, force: true }));
    const model = new ScriptedModel(proc, baseUrl);
    rl.on("line", (line) => {
      if (line.startsWith("request ")) {
        model.requests.push(JSON.parse(line.slice("request ".length)));
      }
    });
    return model;
  }

  /** The text of the last user message of request `index`. */
  userText(index: number): string {
    const users = (this.requests[index]?.messages ?? []).filter((m) => m.role === "user");
    const last = users.at(-1)?.content;
    return typeof last === "string" ? last : JSON.stringify(last ?? "");
  }

  stop(): void {
    this.proc.kill();
  }
}

export interface ServerMessage {
  type: number;
  message: string;
}

/** A client session with the real server, holding the documents it opened and everything the server sent. */
export class ServerSession {
  readonly docs = new Map<string, Doc>();
  readonly logs: string[] = [];
  readonly shown: ServerMessage[] = [];
  readonly progress: { token: string | number; value: { kind: string; title?: string; message?: string } }[] = [];
  readonly applyEditRequests: ApplyWorkspaceEditParams[] = [];
  private readonly notificationHandlers: ((method: string, params: unknown) => void)[] = [];
  stderr = "";
  /** What the server advertised in its initialize result. */
  capabilities: ServerCapabilities = {};
  configurationRequests = 0;
  /** The action the user picks in window/showMessageRequest prompts (null: dismissed), and the prompts seen. */
  messageAnswer: string | null = null;
  readonly messageRequests: { message: string; titles: string[] }[] = [];

  private constructor(
    readonly root: string,
    private readonly proc: ChildProcess,
    readonly connection: ProtocolConnection,
  ) {}

  /**
   * Spawn the server in `root` and initialize it with `settings` as initializationOptions; `section` answers
   * workspace/configuration for `lspAgent` (the extension answers with the settings the user set).
   */
  static async start(root: string, settings: Record<string, unknown>, section: Record<string, unknown> = settings): Promise<ServerSession> {
    // A private config dir: remembered permissions ("Allow always") never reach the user's own.
    const config = mkdtempSync(join(tmpdir(), "lsp-agent-vscode-config-"));
    // ...and a private state dir inside it: the day's spend and the apply records stay out of the user's own.
    // ...and a private cache: the index and the stored conversations of one test run never reach the next.
    const env = pythonEnv({ XDG_CONFIG_HOME: config, XDG_STATE_HOME: join(config, "state"), XDG_CACHE_HOME: join(config, "cache") });
    const proc = spawn(PYTHON, ["-m", "lsp_agent", "serve"], { cwd: root, env, stdio: ["pipe", "pipe", "pipe"] });
    proc.on("exit", () => rmSync(config, { recursive: true, force: true }));
    const connection = createProtocolConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
    const session = new ServerSession(root, proc, connection);
    proc.stderr!.on("data", (chunk: Buffer) => {
      session.stderr = (session.stderr + chunk.toString()).slice(-20_000);
    });
    connection.onRequest(ApplyWorkspaceEditRequest.type, (params) => {
      session.applyEditRequests.push(params);
      try {
        applyWorkspaceEdit(session.docs, params.edit as Parameters<typeof applyWorkspaceEdit>[1]);
        for (const uri of session.touched(params.edit)) {
          session.sendChange(uri);
        }
        return { applied: true };
      } catch (err) {
        return { applied: false, failureReason: String(err) };
      }
    });
    connection.onRequest(ConfigurationRequest.type, (params) => {
      session.configurationRequests += 1;
      return params.items.map((item) => (item.section === "lspAgent" ? section : null));
    });
    connection.onRequest(WorkDoneProgressCreateRequest.type, () => null);
    connection.onRequest(RegistrationRequest.type, () => null);
    connection.onRequest(ShowMessageRequest.type, (params) => {
      session.messageRequests.push({ message: params.message, titles: (params.actions ?? []).map((a) => a.title) });
      return session.messageAnswer === null ? null : { title: session.messageAnswer };
    });
    connection.onNotification(LogMessageNotification.type, (p) => session.logs.push(p.message));
    connection.onNotification(ShowMessageNotification.type, (p) => session.shown.push(p));
    for (const method of ["lspAgent/event", "textDocument/publishDiagnostics", "$/progress"]) {
      connection.onNotification(method, (params: unknown) => {
        if (method === "$/progress") {
          session.progress.push(params as never);
        }
        for (const h of session.notificationHandlers) {
          h(method, params);
        }
      });
    }
    connection.listen();
    const rootUri = pathToFileURL(root).toString();
    const initialized = await connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: "fixture" }],
      initializationOptions: settings,
      capabilities: {
        workspace: {
          applyEdit: true,
          configuration: true,
          workspaceFolders: true,
          didChangeConfiguration: { dynamicRegistration: true },
          workspaceEdit: {
            documentChanges: true,
            resourceOperations: ["create", "rename", "delete"],
            failureHandling: "textOnlyTransactional",
            changeAnnotationSupport: { groupsOnLabel: true },
          },
          executeCommand: { dynamicRegistration: true },
        },
        textDocument: {
          synchronization: { dynamicRegistration: true, didSave: true },
          codeAction: {
            dynamicRegistration: true,
            isPreferredSupport: true,
            disabledSupport: true,
            dataSupport: true,
            resolveSupport: { properties: ["edit"] },
            codeActionLiteralSupport: { codeActionKind: { valueSet: ["", "quickfix", "refactor", "refactor.rewrite", "source"] } },
          },
          publishDiagnostics: { relatedInformation: true },
        },
        window: { workDoneProgress: true, showMessage: {} },
      },
    });
    session.capabilities = initialized.capabilities;
    await connection.sendNotification(InitializedNotification.type, {});
    return session;
  }

  /** lspAgent/event, textDocument/publishDiagnostics and $/progress notifications. */
  onNotification(handler: (method: string, params: unknown) => void): void {
    this.notificationHandlers.push(handler);
  }

  uri(rel: string): string {
    return pathToFileURL(join(this.root, rel)).toString();
  }

  async open(rel: string, text: string): Promise<string> {
    const uri = this.uri(rel);
    this.docs.set(uri, { text, version: 1 });
    await this.connection.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: "python", version: 1, text },
    });
    return uri;
  }

  /** Tell the server a document's whole new text, as VS Code does after applying an edit. */
  sendChange(uri: string): void {
    const doc = this.docs.get(uri);
    if (doc) {
      void this.connection.sendNotification(DidChangeTextDocumentNotification.type, {
        textDocument: { uri, version: doc.version },
        contentChanges: [{ text: doc.text }],
      });
    }
  }

  touched(edit: ApplyWorkspaceEditParams["edit"]): string[] {
    const uris = new Set<string>(Object.keys(edit.changes ?? {}));
    for (const c of edit.documentChanges ?? []) {
      if ("textDocument" in c) {
        uris.add(c.textDocument.uri);
      }
    }
    return [...uris];
  }

  async stop(): Promise<void> {
    try {
      await Promise.race([this.connection.sendRequest(ShutdownRequest.type), new Promise((r) => setTimeout(r, 3000))]);
      await this.connection.sendNotification(ExitNotification.type);
    } catch {
      // the process may already be gone
    }
    await new Promise<void>((ok) => {
      const timer = setTimeout(() => {
        this.proc.kill("SIGKILL");
        ok();
      }, 3000);
      this.proc.once("exit", () => {
        clearTimeout(timer);
        ok();
      });
    });
    this.connection.dispose();
  }
}

/** Poll `check` until it returns a truthy value or `ms` pass. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | null | Promise<T | undefined | false | null>,
  ms = 30_000,
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) {
      return value;
    }
    if (Date.now() > until) {
      throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function tempWorkspace(files: Record<string, string>): { root: string; cleanup(): void } {
  const root = mkdtempSync(join(tmpdir(), "lsp-agent-vscode-"));
  for (const [rel, text] of Object.entries(files)) {
    writeFileSync(join(root, rel), text);
  }
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}
