/** Quick picks before an ask: the model, for an ask without a file the workspace folder, and other folders to read. */

import * as vscode from "vscode";
import { chosenModel, modelItems } from "./askChoices";
import { AgentController } from "./controller";

/** Cancelled by the user (Escape): the ask does not happen. */
export const CANCELLED = Symbol("cancelled");

/** The model for one ask: a quick pick when `lspAgent.models` offers a choice; undefined = the default. */
export async function pickModel(ctl: AgentController): Promise<string | undefined | typeof CANCELLED> {
  const status = await ctl.status();
  const items = modelItems(status);
  if (!items.length) {
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(items, { title: "LSP Agent: model for this ask", placeHolder: status.model ?? undefined });
  return picked ? chosenModel(picked.label, status) : CANCELLED;
}

/** The folder of an ask without a file: the only one, or the one the user picks. */
export async function pickFolder(): Promise<string | undefined | typeof CANCELLED> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length < 2) {
    return undefined;
  }
  const folder = await vscode.window.showWorkspaceFolderPick({ placeHolder: "LSP Agent: which folder should the agent work in?" });
  return folder ? folder.uri.toString() : CANCELLED;
}

/** The other workspace folders the run may read (read-only): several picked at once; undefined when there are none. */
export async function pickReadFolders(own: string | undefined): Promise<string[] | undefined | typeof CANCELLED> {
  const ownFolder = own ? vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(own)) : undefined;
  const others = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.toString() !== ownFolder?.uri.toString());
  if (!others.length) {
    void vscode.window.showInformationMessage("LSP Agent: this workspace has no other folder to read; add one to the workspace first.");
    return CANCELLED;
  }
  const picked = await vscode.window.showQuickPick(
    others.map((f) => ({ label: f.name, description: f.uri.fsPath, uri: f.uri.toString() })),
    { title: "LSP Agent: folders the agent may read (read-only, as @name/...)", canPickMany: true },
  );
  return picked && picked.length ? picked.map((p) => p.uri) : CANCELLED;
}
