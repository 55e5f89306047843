/** Shows the server's `$/progress` as VS Code progress notifications with a Cancel button (runs, indexing). */

import * as vscode from "vscode";
import {
  BaseLanguageClient,
  ClientCapabilities,
  Disposable,
  FeatureState,
  StaticFeature,
  WorkDoneProgress,
  WorkDoneProgressCancelNotification,
  WorkDoneProgressCreateRequest,
} from "vscode-languageclient/node";
import { OpenProgress, ProgressTokenView, ProgressValue, sinkFromWithProgress } from "./progressView";

/** Cancellable progress goes to a notification (with Cancel); the rest to the status bar. */
const openVsCodeProgress: OpenProgress = (title, cancellable, onCancel) =>
  sinkFromWithProgress(
    (task) =>
      vscode.window.withProgress(
        { location: cancellable ? vscode.ProgressLocation.Notification : vscode.ProgressLocation.Window, title, cancellable },
        task,
      ),
    onCancel,
  );

/**
 * Registered after the client's own progress feature, so its window/workDoneProgress/create handler is the one
 * in effect: vscode-languageclient's shows every progress in the status bar only, where it cannot be cancelled.
 */
export class NotificationProgressFeature implements StaticFeature {
  private readonly active = new Map<string | number, { view: ProgressTokenView; subscription: Disposable }>();

  constructor(private readonly client: BaseLanguageClient) {}

  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.window = { ...capabilities.window, workDoneProgress: true };
  }

  initialize(): void {
    this.client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
      const view = new ProgressTokenView(openVsCodeProgress, () => {
        void this.client.sendNotification(WorkDoneProgressCancelNotification.type, { token });
      });
      const subscription = this.client.onProgress(WorkDoneProgress.type, token, (value) => {
        if (view.handle(value as ProgressValue)) {
          this.forget(token);
        }
      });
      this.active.set(token, { view, subscription });
    });
  }

  getState(): FeatureState {
    return { kind: "static" };
  }

  /** The client stopped: close every open progress. */
  clear(): void {
    for (const [token, { view }] of this.active) {
      view.handle({ kind: "end" });
      this.forget(token);
    }
  }

  private forget(token: string | number): void {
    this.active.get(token)?.subscription.dispose();
    this.active.delete(token);
  }
}
