/** The ask prompt with @mention insertion (a quick pick fed by the server) and the editor's diagnostics. */

import * as vscode from "vscode";
import { Conversations, foreignDiagnostics, insertMention, mentionPrefix } from "./conversation";
import { LspDiagnostic } from "./protocol";

/** Ask the user for a task; the input box's "@" button (or typing "@..." and pressing it) inserts a mention. */
export async function promptTask(
  conversations: Conversations | undefined,
  opts: { title: string; prompt: string; placeHolder?: string; uri?: string },
): Promise<string | undefined> {
  const box = vscode.window.createInputBox();
  box.title = opts.title;
  box.prompt = `${opts.prompt}. @file, @symbol, @selection and #diagnostics add context`;
  box.placeholder = opts.placeHolder;
  box.ignoreFocusOut = true;
  const mentionButton: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon("mention"), tooltip: "Insert @mention" };
  box.buttons = conversations ? [mentionButton] : [];
  return new Promise<string | undefined>((resolve) => {
    let done = false;
    let picking = false; // the mention quick pick hides the input box for a moment: that is not a cancel
    const finish = (value: string | undefined): void => {
      if (!done) {
        done = true;
        resolve(value);
        box.dispose();
      }
    };
    box.onDidAccept(() => finish(box.value));
    box.onDidHide(() => {
      if (!picking) {
        finish(undefined);
      }
    });
    box.onDidTriggerButton(async () => {
      if (!conversations) {
        return;
      }
      const typed = box.value;
      picking = true;
      try {
        const items = await conversations.completeMention(mentionPrefix(typed), opts.uri);
        const picked = await vscode.window.showQuickPick(
          items.map((i) => ({ label: i.label, description: i.kind, detail: i.detail || undefined })),
          { title: "Insert a mention", placeHolder: items.length ? "files, symbols, @selection, #diagnostics" : "nothing matches" },
        );
        box.value = picked ? insertMention(typed, picked.label) : typed;
      } finally {
        picking = false;
        box.show(); // the quick pick hid the input box; bring it back with the text kept
      }
    });
    box.show();
  });
}

/** The diagnostics every language server reports for a document, in the LSP shape (not the agent's own hints). */
export function collectDiagnostics(uri: vscode.Uri): LspDiagnostic[] {
  return foreignDiagnostics(
    vscode.languages.getDiagnostics(uri).map((d) => {
      const item: LspDiagnostic = {
        range: {
          start: { line: d.range.start.line, character: d.range.start.character },
          end: { line: d.range.end.line, character: d.range.end.character },
        },
        message: d.message,
        severity: d.severity + 1, // vscode counts Error = 0 .. Hint = 3; LSP counts 1 .. 4
      };
      if (d.source) {
        item.source = d.source;
      }
      const code = typeof d.code === "object" && d.code !== null ? d.code.value : d.code;
      if (typeof code === "string" || typeof code === "number") {
        item.code = code;
      }
      return item;
    }),
  );
}
