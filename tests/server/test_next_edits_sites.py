"""Next edits' pieces below the protocol: what a definition edit changed, which uses it breaks, the reply format."""

from __future__ import annotations

from lsp_agent.index.edit_sites import file_sites
from lsp_agent.index.signatures import definitions, diff_definitions
from lsp_agent.server.next_edit_model import build_messages, build_proposal, parse_reply

MODULE = """from dataclasses import dataclass


@dataclass
class Config:
    name: str
    size: int = 1


class Box:
    def __init__(self, width, height=1):
        self.width = width
        self.height = height

    def area(self):
        return self.width * self.height


def parse(text, strict=False):
    return text


class Reader:
    def read(self, path, mode="r"):
        return path
"""

USES = """from m import parse, Box, Config, Reader
parse("a")
parse("a", True)
parse("a", strict=True)
x = parse(parse("b"),
          True)
def forward(*args): return parse(*args)
box = Box(1, 2)
print(box.height, box.width)
cfg = Config("n", size=2)
Reader().read("p", mode="w")
Reader().read("p")
"""


def changes(edited: str) -> dict[str, object]:
    return {
        c.describe(): c for c in diff_definitions(definitions("m.py", MODULE), definitions("m.py", edited))
    }


def site_lines(change) -> list[str]:
    return [s.text.strip() for s in file_sites("u.py", USES, change)]


def test_a_parameter_made_keyword_only_and_required_breaks_positional_and_missing_uses():
    (change,) = changes(
        MODULE.replace("def parse(text, strict=False)", "def parse(text, *, strict)")
    ).values()
    assert change.describe() == "signature of `parse`: `strict` now required, `strict` now keyword-only"
    assert site_lines(change) == ['parse("a")', 'parse("a", True)', 'x = parse(parse("b"),\n          True)']


def test_a_renamed_parameter_breaks_only_the_calls_passing_it_by_name():
    (change,) = changes(
        MODULE.replace('def read(self, path, mode="r")', 'def read(self, path, flags="r")')
    ).values()
    assert change.renamed == (("mode", "flags"),) and change.callee == "read"
    assert site_lines(change) == ['Reader().read("p", mode="w")']


def test_a_parameter_made_keyword_only_with_its_default_breaks_only_positional_uses():
    (change,) = changes(
        MODULE.replace("def parse(text, strict=False)", "def parse(text, *, strict=False)")
    ).values()
    assert change.describe() == "signature of `parse`: `strict` now keyword-only"
    assert site_lines(change) == ['parse("a", True)', 'x = parse(parse("b"),\n          True)']


def test_other_languages_follow_added_parameters_of_functions_and_methods():
    source = "function parse(t) { return t }\nclass A { run(x) { return parse(x) } }\nnew A().run(1);\n"
    edited = source.replace("function parse(t)", "function parse(t, sep)").replace("run(x) {", "run(x, y) {")
    found = diff_definitions(definitions("a.ts", source), definitions("a.ts", edited))
    assert [c.describe() for c in found] == [
        "signature of `parse`: new required `sep`",
        "signature of `A.run`: new required `y`",
    ]
    assert [[s.text for s in file_sites("a.ts", edited, c)] for c in found] == [
        ["class A { run(x, y) { return parse(x) } }\n"],
        ["new A().run(1);\n"],
    ]
    go = 'package m\n\nfunc Parse(text string) string { return text }\n\nfunc use() { Parse("b") }\n'
    (change,) = diff_definitions(
        definitions("m.go", go), definitions("m.go", go.replace("text string)", "text string, sep string)"))
    )
    assert [s.text for s in file_sites("m.go", go, change)] == ['func use() { Parse("b") }\n']


def test_an_optional_parameter_added_at_the_end_is_no_change_at_all():
    assert (
        changes(MODULE.replace("def parse(text, strict=False)", "def parse(text, strict=False, n=0)")) == {}
    )


def test_a_new_required_dataclass_field_breaks_every_construction():
    (change,) = changes(MODULE.replace("    size: int = 1\n", "    size: int = 1\n    owner: str\n")).values()
    assert change.describe() == "constructor of `Config`: new required `owner`"
    assert site_lines(change) == ['cfg = Config("n", size=2)']


def test_a_renamed_attribute_finds_its_uses_and_reordered_constructor_its_calls():
    edited = MODULE.replace("self.height = height", "self.tall = height").replace(
        "self.height\n", "self.tall\n"
    )
    found = changes(
        edited.replace("def __init__(self, width, height=1)", "def __init__(self, height, width)")
    )
    attribute = found["attribute `height` of `Box` renamed to `tall`"]
    assert site_lines(attribute) == ["print(box.height, box.width)"]
    constructor = next(c for c in found.values() if c.kind == "call")
    assert constructor.callee == "Box" and constructor.reordered
    assert site_lines(constructor) == ["box = Box(1, 2)"]


def test_a_definition_being_typed_is_not_diffed():
    assert "parse" not in definitions(
        "m.py", MODULE.replace("def parse(text, strict=False)", "def parse(text, st")
    )


def test_the_reply_is_read_strictly_and_the_proposal_keeps_what_parses():
    (change,) = changes(
        MODULE.replace("def parse(text, strict=False)", "def parse(text, *, strict)")
    ).values()
    sites = file_sites("u.py", USES, change)
    messages = build_messages(change, "m.py", sites)
    assert '<site id="3" path="u.py" lines="5-6">' in messages[-1]["content"]
    notes: list[str] = []
    reply = (
        '<site id="1">\nparse("a", strict=False)\n</site>\n'
        '<site id="2">\nparse("a", strict=True\n</site>\n'  # unbalanced: breaks the file
        '<site id="9">\nnothing\n</site>\n'
    )
    edits = parse_reply(reply, sites, notes.append)
    assert [e.site.start for e in edits] == [1, 2]
    assert any("site 9" in n for n in notes) and any(
        "site 3" in n and "no well-formed block" in n for n in notes
    )
    proposal, kept = build_proposal(edits, {"u.py": USES}, "Update call sites of `parse`")
    assert kept == 1
    assert proposal.changes[0].new_text == USES.replace('parse("a")\n', 'parse("a", strict=False)\n', 1)
