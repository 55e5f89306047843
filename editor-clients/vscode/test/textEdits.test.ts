import assert from "node:assert/strict";
import { test } from "node:test";
import { applyTextEdits, applyWorkspaceEdit, Doc, offsetAt } from "./support/textEdits";

const r = (sl: number, sc: number, el: number, ec: number) => ({ start: { line: sl, character: sc }, end: { line: el, character: ec } });

test("offsets clamp to the line end and the text end", () => {
  assert.equal(offsetAt("ab\ncd", { line: 1, character: 1 }), 4);
  assert.equal(offsetAt("ab\ncd", { line: 0, character: 99 }), 2);
  assert.equal(offsetAt("ab\ncd", { line: 5, character: 0 }), 5);
});

test("edits apply against the original text in any order", () => {
  const text = "one\ntwo\nthree\n";
  assert.equal(applyTextEdits(text, [{ range: r(0, 0, 0, 3), newText: "1" }, { range: r(2, 0, 2, 5), newText: "3" }]), "1\ntwo\n3\n");
  assert.throws(() => applyTextEdits(text, [{ range: r(0, 0, 1, 1), newText: "" }, { range: r(0, 2, 0, 3), newText: "" }]), /overlapping/);
});

test("documentChanges check versions; plain changes do not", () => {
  const docs = new Map<string, Doc>([["file:///a", { text: "x = 1\n", version: 3 }]]);
  assert.throws(() => applyWorkspaceEdit(docs, { documentChanges: [{ textDocument: { uri: "file:///a", version: 2 }, edits: [] }] }), /version mismatch/);
  applyWorkspaceEdit(docs, { documentChanges: [{ textDocument: { uri: "file:///a", version: 3 }, edits: [{ range: r(0, 4, 0, 5), newText: "2" }] }] });
  assert.deepEqual(docs.get("file:///a"), { text: "x = 2\n", version: 4 });
  applyWorkspaceEdit(docs, { changes: { "file:///a": [{ range: r(0, 0, 0, 1), newText: "y" }] } });
  assert.equal(docs.get("file:///a")!.text, "y = 2\n");
  applyWorkspaceEdit(docs, { documentChanges: [{ kind: "create", uri: "file:///b" }, { kind: "delete", uri: "file:///a" }] });
  assert.deepEqual([...docs.keys()], ["file:///b"]);
});
