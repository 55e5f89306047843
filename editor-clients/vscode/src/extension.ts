/** VS Code entry point: starts `lsp-agent serve` through vscode-languageclient and wires up the agent commands. */

import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  ExecuteCommandSignature,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  TransportKind,
} from "vscode-languageclient/node";
import { InputError } from "./commandArgs";
import { AgentController } from "./controller";
import { Conversations, renderConversation, wantsDiagnostics } from "./conversation";
import { collectDiagnostics, promptTask } from "./mentionInput";
import { EVENT_NOTIFICATION, Range, SETTINGS_SECTION } from "./protocol";
import { NotificationProgressFeature } from "./progressFeature";
import { describeRewind, rewindItems } from "./rewind";
import { RunInfo, runStateText, soleCandidate } from "./runState";
import { serverCommandLine, serverEnvironment } from "./settings";
import { CANCELLED, pickFolder, pickReadFolders, pickModel } from "./askPickers";
import { anySettingSet, configurationMiddleware, pushSettings, userSettingsFor } from "./configSync";
import { serverKeys } from "./userSettings";
import { statusView } from "./statusText";
import { CompletionUi } from "./completionUi";

const STATUS_POLL_MS = 2000;

let client: LanguageClient | undefined;
let controller: AgentController | undefined;
let conversations: Conversations | undefined;
let settingKeys: string[] = []; // the server-read settings the manifest declares
let completionUi: CompletionUi | undefined;

/** Everything the extension shows, shared by the command handlers. */
interface Ui {
  events: vscode.OutputChannel;
  serverLog: vscode.OutputChannel;
  status: vscode.StatusBarItem;
  serverState: "starting" | "running" | "stopped";
  index?: { ready: boolean; files: number };
  model?: string;
  poll?: NodeJS.Timeout;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const ui: Ui = {
    events: vscode.window.createOutputChannel("LSP Agent"),
    serverLog: vscode.window.createOutputChannel("LSP Agent (server)"),
    status: vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50),
    serverState: "starting",
  };
  ui.status.command = "lsp-agent.showTranscript";
  settingKeys = serverKeys(context.extension.packageJSON);
  context.subscriptions.push(ui.events, ui.serverLog, ui.status, { dispose: () => stopPolling(ui) });
  completionUi = new CompletionUi(async () => (controller && client?.isRunning() ? (await controller.status()).completion : undefined));
  completionUi.activate(context);

  // The server starts on the first lspAgent command, or at once when the user set an lspAgent setting.
  const register = (id: string, fn: (...args: unknown[]) => unknown): void => {
    const run = async (...args: unknown[]): Promise<unknown> => (await ensureStarted(ui), fn(...args));
    context.subscriptions.push(vscode.commands.registerCommand(id, (...args: unknown[]) => guard(ui, () => run(...args))));
  };
  register("lsp-agent.ask", () => askCommand(ui, { plan: false, needSelection: false }));
  register("lsp-agent.askSelection", () => askCommand(ui, { plan: false, needSelection: true }));
  register("lsp-agent.planAndAsk", () => askCommand(ui, { plan: true, needSelection: false }));
  register("lsp-agent.askReadingFolders", () => askCommand(ui, { plan: false, needSelection: false, readFolders: true }));
  register("lsp-agent.cancelRun", () => cancelCommand());
  register("lsp-agent.applyPending", () => applyCommand());
  register("lsp-agent.rejectPending", () => rejectCommand());
  register("lsp-agent.undoApply", async () => {
    const undone = await requireController().undoApply();
    void vscode.window.showInformationMessage(`LSP Agent: undid the edits of run ${undone.runId.slice(0, 8)} (${undone.files.join(", ")}).`);
  });
  register("lsp-agent.rewind", () => rewindCommand());
  register("lsp-agent.reindexWorkspace", () => reindexCommand(ui));
  register("lsp-agent.managePermissions", () => permissionsCommand());
  register("lsp-agent.showTranscript", () => transcriptCommand(ui));
  context.subscriptions.push(vscode.commands.registerCommand("lsp-agent.restartServer", () => guard(ui, () => restart(ui))));
  register("lsp-agent.newConversation", () => newConversationCommand(ui));
  register("lsp-agent.followUp", () => askCommand(ui, { plan: false, needSelection: false, followUp: true }));
  register("lsp-agent.retryLast", () => retryCommand(ui));

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(`${SETTINGS_SECTION}.server`)) {
        void guard(ui, () => (client ? restart(ui) : ensureStarted(ui)));
      } else if (e.affectsConfiguration(SETTINGS_SECTION)) {
        void guard(ui, () => (client ? pushSettings(client, settingKeys) : ensureStarted(ui)));
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => void guard(ui, () => startIfConfigured(ui))),
  );
  await guard(ui, () => startIfConfigured(ui));
}

/** Start the server now when a workspace is open and the user configured lsp-agent; else wait for a command. */
async function startIfConfigured(ui: Ui): Promise<void> {
  if (!client && vscode.workspace.workspaceFolders?.length && anySettingSet(settingKeys)) {
    await ensureStarted(ui);
  }
}

/** Start the server once (needs an open workspace: lsp-agent indexes and edits a workspace). */
async function ensureStarted(ui: Ui): Promise<void> {
  if (client) {
    return;
  }
  if (!vscode.workspace.workspaceFolders?.length) {
    throw new InputError("open a folder or a workspace first: the agent works on a workspace");
  }
  await start(ui);
}

/** Pick an exchange of the conversation and rewind to it: files applied since restored, the conversation goes on from there. */
async function rewindCommand(): Promise<void> {
  const ctl = requireController();
  const items = rewindItems(await ctl.exchanges());
  if (!items.length) {
    void vscode.window.showInformationMessage("LSP Agent: nothing to rewind (the conversation has no exchange left).");
    return;
  }
  const picked = await vscode.window.showQuickPick(items, { placeHolder: "Rewind the conversation to after which exchange?", matchOnDetail: true });
  if (!picked) {
    return;
  }
  const outcome = describeRewind(await ctl.rewind(picked.exchange));
  const show = outcome.ok ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
  void show(`LSP Agent: ${outcome.message}`);
}

export async function deactivate(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) {
    await c.stop();
  }
}

/** Run a command handler, turning failures into readable messages instead of silent rejections. */
async function guard(ui: Ui, fn: () => unknown): Promise<void> {
  try {
    await fn();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    ui.events.appendLine(`error: ${message}`);
    if (err instanceof InputError) {
      void vscode.window.showWarningMessage(`LSP Agent: ${message}`);
    } else {
      void vscode.window.showErrorMessage(`LSP Agent: ${message}`);
    }
  }
}

async function start(ui: Ui): Promise<void> {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
  const line = serverCommandLine(config.get("server.command"));
  const serverOptions: ServerOptions = {
    command: line.command,
    args: line.args,
    transport: TransportKind.stdio,
    options: { env: serverEnvironment(config.get("server.env"), process.env) },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
    // File watching: the server registers workspace/didChangeWatchedFiles itself (dynamic registration).
    // Settings: only what the user set goes to the server (initializationOptions, workspace/configuration and
    // the didChangeConfiguration this extension sends), so manifest defaults never override the environment.
    initializationOptions: userSettingsFor(settingKeys),
    outputChannel: ui.serverLog,
    middleware: {
      executeCommand: (command, args, next) => completeServerCommand(command, args, next),
      workspace: configurationMiddleware(settingKeys),
      ...completionUi?.middleware(), // textDocument/inlineCompletion: vscode-languageclient's own feature
    },
  };
  const c = new LanguageClient("lspAgent", "LSP Agent", serverOptions, clientOptions);
  c.registerFeature(new NotificationProgressFeature(c));
  c.registerProposedFeatures(); // textDocument/inlineCompletion is a proposed feature in vscode-languageclient 9
  const connection = {
    executeCommand: (command: string, args: unknown[]) => c.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }),
  };
  const ctl = new AgentController(
    connection,
    (text) => ui.events.appendLine(text),
    controller?.sessionId,
    controller?.tracker,
    (text) => ui.events.append(text),
  );
  conversations = new Conversations(connection, ctl);
  c.onDidChangeState((e) => {
    ui.serverState = e.newState === State.Running ? "running" : e.newState === State.Starting ? "starting" : "stopped";
    refreshStatus(ui);
    completionUi?.serverChanged(ui.serverState);
  });
  c.onNotification(EVENT_NOTIFICATION, (payload: unknown) => {
    ctl.onEvent(payload);
    if (typeof payload === "object" && payload !== null && (payload as { kind?: unknown }).kind === "done") {
      void pollStatus(ui);
    }
  });
  if (!controller) {
    ctl.tracker.onDidChange(() => refreshStatus(ui)); // the tracker outlives restarts: subscribe once
  }
  client = c;
  controller = ctl;
  ui.status.show();
  ui.events.appendLine(`starting ${[line.command, ...line.args].join(" ")}`);
  await c.start();
  startPolling(ui);
}

async function restart(ui: Ui): Promise<void> {
  stopPolling(ui);
  const old = client;
  client = undefined;
  if (old) {
    await old.stop();
  }
  await start(ui);
}

function requireController(): AgentController {
  if (!controller || !client || !client.isRunning()) {
    throw new Error('the lsp-agent server is not running; check "lspAgent.server.command" and the "LSP Agent (server)" output');
  }
  return controller;
}

/** Code actions such as "Ask agent about this selection" come without a task: ask the user for it here. */
async function completeServerCommand(command: string, args: unknown[], next: ExecuteCommandSignature): Promise<unknown> {
  const first = args[0] as { withDiagnostics?: unknown; uri?: unknown } | undefined;
  if (first?.withDiagnostics && typeof first.uri === "string") {
    // "Ask agent to fix": the diagnostic's neighbours from every language server go along
    const { withDiagnostics: _w, ...rest } = first;
    args = [{ ...rest, diagnostics: collectDiagnostics(vscode.Uri.parse(first.uri)) }, ...args.slice(1)];
  }
  return requireController().executeServerCommand(
    command,
    args,
    async (c, a) => next(c, a),
    async () =>
      vscode.window.showInputBox({
        title: "LSP Agent",
        prompt: "What should the agent do with this code?",
        ignoreFocusOut: true,
      }),
    async () =>
      vscode.window.showInputBox({
        title: "LSP Agent: Reject",
        prompt: "Why? (optional; the agent sees it on the next ask. Escape keeps the edits)",
        ignoreFocusOut: true,
      }),
  );
}

function toRange(selection: vscode.Selection): Range {
  return {
    start: { line: selection.start.line, character: selection.start.character },
    end: { line: selection.end.line, character: selection.end.character },
  };
}

async function askCommand(ui: Ui, opts: { plan: boolean; needSelection: boolean; followUp?: boolean; readFolders?: boolean }): Promise<void> {
  const ctl = requireController();
  const editor = vscode.window.activeTextEditor;
  if (opts.needSelection && (!editor || editor.selection.isEmpty)) {
    throw new InputError("Select some code first, then run \"Ask About Selection\".");
  }
  const task = await promptTask(conversations, {
    title: opts.followUp ? "LSP Agent: Follow Up" : opts.plan ? "LSP Agent: Plan and Ask" : "LSP Agent: Ask",
    prompt: editor && !editor.selection.isEmpty ? "Task for the agent (the selection goes along)" : "Task for the agent (the current file goes along)",
    placeHolder: opts.needSelection ? "e.g. Explain this, or: add error handling here" : "e.g. Add a --verbose flag to the CLI",
    uri: editor?.document.uri.toString(),
  });
  if (task === undefined) {
    return;
  }
  const model = await pickModel(ctl);
  const folder = editor ? undefined : await pickFolder();
  if (model === CANCELLED || folder === CANCELLED) {
    return;
  }
  const own = editor?.document.uri.toString() ?? folder ?? vscode.workspace.workspaceFolders?.[0]?.uri.toString();
  const readFolders = opts.readFolders ? await pickReadFolders(own) : undefined;
  if (readFolders === CANCELLED) {
    return;
  }
  const runId = await ctl.ask({
    task,
    uri: editor?.document.uri.toString(),
    selection: editor ? toRange(editor.selection) : undefined,
    plan: opts.plan,
    followUp: opts.followUp,
    diagnostics: editor && wantsDiagnostics(task) ? collectDiagnostics(editor.document.uri) : undefined,
    model,
    folder,
    readFolders,
  });
  ui.events.show(true);
  ui.events.appendLine(`[${runId.slice(0, 8)}] asked${model ? ` (model ${model})` : ""}: ${task.trim()}`);
  startPolling(ui);
}

/** Pick one run from candidates: the only one directly, else a quick pick. */
async function pickRun(candidates: RunInfo[], what: string): Promise<RunInfo | undefined> {
  if (!candidates.length) {
    void vscode.window.showInformationMessage(`LSP Agent: no ${what}.`);
    return undefined;
  }
  const only = soleCandidate(candidates);
  if (only) {
    return only;
  }
  const picked = await vscode.window.showQuickPick(
    candidates.map((r) => ({ label: r.task || r.runId, description: `${r.runId} (${runStateText(r)})`, detail: r.files.join(", "), run: r })),
    { title: `LSP Agent: choose a run (${what})` },
  );
  return picked?.run;
}

async function cancelCommand(): Promise<void> {
  const ctl = requireController();
  const run = await pickRun(ctl.tracker.running(), "running runs");
  if (run) {
    await ctl.cancel(run.runId);
  }
}

/** The document URI of a proposal file: the server's, else resolved against the first workspace folder. */
function fileUri(run: RunInfo, path: string): string {
  const known = run.fileUris[path];
  if (known) {
    return known;
  }
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder ? vscode.Uri.joinPath(folder.uri, path).toString() : vscode.Uri.file(path).toString();
}

async function applyCommand(): Promise<void> {
  const ctl = requireController();
  const run = await pickRun(ctl.tracker.pending(), "runs with pending edits");
  if (!run) {
    return;
  }
  let files: string[] | undefined;
  if (run.files.length > 1) {
    await ctl.status();
    const picked = await vscode.window.showQuickPick(
      run.files.map((f) => ({ label: f, picked: true })),
      { canPickMany: true, title: "LSP Agent: files to apply" },
    );
    if (!picked || !picked.length) {
      return;
    }
    files = picked.length === run.files.length ? undefined : picked.map((p) => fileUri(run, p.label));
  }
  const outcome = await ctl.apply(run.runId, files);
  if (outcome.ok) {
    void vscode.window.showInformationMessage(`LSP Agent: ${outcome.message}`);
  } else {
    void vscode.window.showWarningMessage(`LSP Agent: ${outcome.message}`);
  }
}

async function rejectCommand(): Promise<void> {
  const ctl = requireController();
  const run = await pickRun(ctl.tracker.pending(), "runs with pending edits");
  if (!run) {
    return;
  }
  let files: string[] | undefined;
  if (run.files.length > 1) {
    await ctl.status();
    const picked = await vscode.window.showQuickPick(
      run.files.map((f) => ({ label: f, picked: true })),
      { canPickMany: true, title: "LSP Agent: files to reject" },
    );
    if (!picked || !picked.length) {
      return;
    }
    files = picked.length === run.files.length ? undefined : picked.map((p) => fileUri(run, p.label));
  }
  const reason = await vscode.window.showInputBox({
    title: "LSP Agent: Reject Pending Edits",
    prompt: "Why? (optional; the agent sees it on the next ask)",
    ignoreFocusOut: true,
  });
  if (reason === undefined) {
    return;
  }
  await ctl.reject(run.runId, reason, files);
}

/** List the remembered "always" permission answers; picking one offers to revoke it. */
async function permissionsCommand(): Promise<void> {
  const ctl = requireController();
  const listing = await ctl.permissions();
  const items = listing.workspaces.flatMap((w) =>
    w.rules.map((r) => ({
      label: r.key,
      description: r.decision === "allow" ? "Allow always" : "Reject always",
      detail: `${w.workspace}${r.created ? `, since ${r.created}` : ""}`,
      workspace: w.workspace,
    })),
  );
  if (!items.length) {
    void vscode.window.showInformationMessage("LSP Agent: no remembered permissions in this workspace.");
    return;
  }
  const picked = await vscode.window.showQuickPick(items, { title: "LSP Agent: remembered permissions (pick one to revoke)" });
  if (!picked) {
    return;
  }
  const confirm = await vscode.window.showWarningMessage(`Revoke "${picked.label}"? The agent will ask again.`, "Revoke");
  if (confirm === "Revoke") {
    await ctl.revokePermission(picked.label, picked.workspace);
    void vscode.window.showInformationMessage(`LSP Agent: revoked "${picked.label}".`);
  }
}

async function reindexCommand(ui: Ui): Promise<void> {
  await requireController().reindex();
  ui.index = { ready: false, files: ui.index?.files ?? 0 };
  refreshStatus(ui);
  startPolling(ui);
}

/** The transcript view: the whole conversation (tasks, full answers, what was applied), each run's events folded in. */
async function transcriptCommand(ui: Ui): Promise<void> {
  const ctl = requireController();
  if (!conversations) {
    ui.events.show(true);
    return;
  }
  const conv = await conversations.show();
  const content = renderConversation(conv, (runId) => {
    const run = ctl.tracker.get(runId);
    return run ? run.lines.join("\n") : undefined;
  });
  const doc = await vscode.workspace.openTextDocument({ language: "markdown", content });
  await vscode.window.showTextDocument(doc, { preview: true });
}

async function newConversationCommand(ui: Ui): Promise<void> {
  requireController();
  const id = await conversations!.startNew();
  ui.events.appendLine(`=== new conversation ${id} ===`);
  void vscode.window.showInformationMessage("LSP Agent: new conversation started; earlier exchanges are left behind.");
}

async function retryCommand(ui: Ui): Promise<void> {
  requireController();
  const result = await conversations!.retry();
  ui.events.show(true);
  ui.events.appendLine(`[${result.runId.slice(0, 8)}] retrying: ${result.task}`);
  startPolling(ui);
}

function refreshStatus(ui: Ui): void {
  const tracker = controller?.tracker;
  const view = statusView({
    serverState: ui.serverState,
    indexReady: ui.index?.ready,
    indexFiles: ui.index?.files,
    running: tracker?.running().length ?? 0,
    pending: tracker?.pending().length ?? 0,
    checksFailed: tracker?.pendingChecksFailed().length ?? 0,
    model: ui.model,
  });
  ui.status.text = view.text;
  ui.status.tooltip = view.tooltip;
  void vscode.commands.executeCommand("setContext", "lspAgent.hasPendingEdits", (tracker?.pending().length ?? 0) > 0);
  void vscode.commands.executeCommand("setContext", "lspAgent.running", (tracker?.running().length ?? 0) > 0);
}

async function pollStatus(ui: Ui): Promise<void> {
  if (!controller || !client?.isRunning()) {
    return;
  }
  try {
    const s = await controller.status();
    ui.index = { ready: Boolean(s.index?.ready), files: s.index?.files ?? 0 };
    ui.model = s.model ?? undefined;
    completionUi?.update(s.completion);
    refreshStatus(ui);
    if (ui.index.ready && !controller.tracker.running().length) {
      stopPolling(ui);
    }
  } catch (err) {
    ui.serverLog.appendLine(`lspAgent.status failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Poll the server's status while the index builds or runs are going (stops by itself). */
function startPolling(ui: Ui): void {
  if (!ui.poll) {
    ui.poll = setInterval(() => void pollStatus(ui), STATUS_POLL_MS);
    void pollStatus(ui);
  }
}

function stopPolling(ui: Ui): void {
  if (ui.poll) {
    clearInterval(ui.poll);
    ui.poll = undefined;
  }
}
