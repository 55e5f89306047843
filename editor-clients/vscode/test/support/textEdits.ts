/** Applies LSP WorkspaceEdits to in-memory documents the way an editor does (for the end-to-end test's client). */

export interface TextEditLike {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  newText: string;
}

/** Offset of an LSP position (UTF-16 code units, like JavaScript strings) in text. */
export function offsetAt(text: string, pos: { line: number; character: number }): number {
  let offset = 0;
  for (let line = 0; line < pos.line; line++) {
    const next = text.indexOf("\n", offset);
    if (next < 0) {
      return text.length;
    }
    offset = next + 1;
  }
  const lineEnd = text.indexOf("\n", offset);
  const end = lineEnd < 0 ? text.length : lineEnd;
  return Math.min(offset + pos.character, end);
}

/** Apply non-overlapping text edits (all against the original text) and return the new text. */
export function applyTextEdits(text: string, edits: TextEditLike[]): string {
  const spans = edits
    .map((e) => ({ start: offsetAt(text, e.range.start), end: offsetAt(text, e.range.end), newText: e.newText }))
    .sort((a, b) => b.start - a.start || b.end - a.end);
  for (let i = 1; i < spans.length; i++) {
    if (spans[i].end > spans[i - 1].start) {
      throw new Error("overlapping text edits");
    }
  }
  let out = text;
  for (const s of spans) {
    out = out.slice(0, s.start) + s.newText + out.slice(s.end);
  }
  return out;
}

export interface Doc {
  text: string;
  version: number;
}

interface WorkspaceEditLike {
  changes?: Record<string, TextEditLike[]>;
  documentChanges?: (
    | { textDocument: { uri: string; version: number | null }; edits: TextEditLike[] }
    | { kind: "create"; uri: string }
    | { kind: "delete"; uri: string }
    | { kind: "rename"; oldUri: string; newUri: string }
  )[];
}

/** Apply a WorkspaceEdit to documents keyed by URI; refuses a stale version like VS Code does. Returns touched URIs. */
export function applyWorkspaceEdit(docs: Map<string, Doc>, edit: WorkspaceEditLike): string[] {
  const touched: string[] = [];
  if (edit.documentChanges) {
    for (const change of edit.documentChanges) {
      if ("textDocument" in change) {
        const doc = docs.get(change.textDocument.uri) ?? { text: "", version: 0 };
        if (change.textDocument.version !== null && docs.has(change.textDocument.uri) && change.textDocument.version !== doc.version) {
          throw new Error(`version mismatch for ${change.textDocument.uri}: edit for ${change.textDocument.version}, document at ${doc.version}`);
        }
        docs.set(change.textDocument.uri, { text: applyTextEdits(doc.text, change.edits), version: doc.version + 1 });
        touched.push(change.textDocument.uri);
      } else if (change.kind === "create") {
        docs.set(change.uri, docs.get(change.uri) ?? { text: "", version: 0 });
        touched.push(change.uri);
      } else if (change.kind === "delete") {
        docs.delete(change.uri);
        touched.push(change.uri);
      } else {
        const doc = docs.get(change.oldUri);
        if (doc) {
          docs.delete(change.oldUri);
          docs.set(change.newUri, doc);
        }
        touched.push(change.newUri);
      }
    }
  } else if (edit.changes) {
    for (const [uri, edits] of Object.entries(edit.changes)) {
      const doc = docs.get(uri) ?? { text: "", version: 0 };
      docs.set(uri, { text: applyTextEdits(doc.text, edits), version: doc.version + 1 });
      touched.push(uri);
    }
  }
  return touched;
}
