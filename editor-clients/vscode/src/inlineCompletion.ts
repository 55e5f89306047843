/** Inline completions (ghost text): the status bar toggle's state, what it shows, and the middleware that asks the server. */

import type { CancellationToken, InlineCompletionContext, Position, TextDocument } from "vscode";
import type { Middleware } from "vscode-languageclient/node";

/** vscode-languageclient 9 has the feature but does not export its middleware types. */
type InlineCompletionMiddleware = Required<Pick<Middleware, "provideInlineCompletionItems">>;
type ProvideInlineCompletionItemsSignature = Parameters<InlineCompletionMiddleware["provideInlineCompletionItems"]>[4];

/** The `completion` section of lspAgent.status (lsp_agent/completion/engine.py `status`). */
export interface CompletionStatus {
  enabled: boolean;
  model?: string | null;
  template?: string | null;
  reason?: string;
  modelDown?: boolean;
  requests?: number;
  suggestions?: number;
  cancelled?: number;
  cacheHits?: number;
}

export type CompletionSetting = "auto" | "on" | "off";

export interface CompletionViewInput {
  serverState: "starting" | "running" | "stopped";
  setting: CompletionSetting; // the effective lspAgent.inlineCompletion in this window
  status?: CompletionStatus; // undefined until the server answered lspAgent.status
}

export interface CompletionView {
  text: string;
  tooltip: string;
  warning: boolean; // shown with the warning background: on, but no suggestion will come
}

const TOGGLE = "Click to turn inline completions";

/** What the completion status bar item shows: on, off, no FIM model (and why), the model down, or the server down. */
export function completionView(s: CompletionViewInput): CompletionView {
  if (s.setting === "off") {
    return { text: "$(circle-slash) Completions", tooltip: `lsp-agent inline completions are off. ${TOGGLE} on.`, warning: false };
  }
  if (s.serverState !== "running" || !s.status) {
    const what = s.serverState === "stopped" ? "the lsp-agent server is not running" : "waiting for the lsp-agent server";
    return { text: "$(loading~spin) Completions", tooltip: `Inline completions: ${what}. ${TOGGLE} off.`, warning: s.serverState === "stopped" };
  }
  const st = s.status;
  if (!st.enabled) {
    const reason = st.reason ?? "no fill-in-the-middle model: set lspAgent.completionModel (see docs/completions.md)";
    return { text: "$(warning) Completions", tooltip: `Inline completions are unavailable: ${reason}. ${TOGGLE} off.`, warning: true };
  }
  const model = st.model ? ` from ${st.model}` : "";
  if (st.modelDown) {
    return {
      text: "$(debug-disconnect) Completions",
      tooltip: `Inline completions are paused: the completion model${model} did not answer (retried as you type; see the LSP Agent (server) output). ${TOGGLE} off.`,
      warning: true,
    };
  }
  const counts = st.requests !== undefined ? ` (${st.suggestions ?? 0} suggestions for ${st.requests} requests)` : "";
  return { text: "$(sparkle) Completions", tooltip: `Inline completions are on${model}${counts}; Tab accepts. ${TOGGLE} off.`, warning: false };
}

/** The values of lspAgent.inlineCompletion in each scope, as `WorkspaceConfiguration.inspect` returns them. */
export interface SettingScopes {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

export type SettingTarget = "global" | "workspace" | "workspaceFolder";

/** The effective setting: the most specific scope set, else the server's default `auto`. */
export function effectiveSetting(scopes: SettingScopes | undefined): CompletionSetting {
  const value = scopes?.workspaceFolderValue ?? scopes?.workspaceValue ?? scopes?.globalValue;
  return value === "on" || value === "off" ? value : "auto";
}

/** What the toggle writes: off when on (in the scope that turned it on), else back on in that scope. */
export function toggledSetting(scopes: SettingScopes | undefined): { value: CompletionSetting; target: SettingTarget } {
  const target: SettingTarget =
    scopes?.workspaceFolderValue !== undefined ? "workspaceFolder" : scopes?.workspaceValue !== undefined ? "workspace" : "global";
  return { value: effectiveSetting(scopes) === "off" ? "auto" : "off", target };
}

/** Calls `fn` at most once per `intervalMs`, the last call of a burst included (trailing). */
export class Throttle {
  private last = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly fn: () => void,
    private readonly intervalMs: number,
  ) {}

  poke(): void {
    if (this.timer) {
      return;
    }
    const wait = Math.max(0, this.last + this.intervalMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.last = Date.now();
      this.fn();
    }, wait);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

export interface CompletionGate {
  setting(): CompletionSetting; // the effective lspAgent.inlineCompletion
  status(): CompletionStatus | undefined; // the last lspAgent.status answer
  answered(): void; // a request ended: the status may have changed (the model went down or came back)
}

/**
 * vscode-languageclient's inline completion feature sends `textDocument/inlineCompletion` (and `$/cancelRequest`
 * when VS Code cancels the token); this middleware skips the request while the toggle is off or the server said it
 * has no completion model, and refreshes the status after each answer.
 */
export function inlineCompletionMiddleware(gate: CompletionGate): InlineCompletionMiddleware {
  return {
    provideInlineCompletionItems: async (
      document: TextDocument,
      position: Position,
      context: InlineCompletionContext,
      token: CancellationToken,
      next: ProvideInlineCompletionItemsSignature,
    ) => {
      if (gate.setting() === "off" || gate.status()?.enabled === false) {
        return undefined;
      }
      try {
        return await next(document, position, context, token);
      } finally {
        gate.answered();
      }
    },
  };
}
