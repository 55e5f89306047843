"""Next edits: which call sites a real signature change makes stale, against what the next release changed.

For consecutive releases of pure-Python packages from PyPI (wheels, fetched with pip into benchmarks/.cache), every
definition whose call shape changed (`diff_definitions`: a parameter added without a default, removed, renamed or
reordered, a constructor field made required) is replayed as the user's edit: the old tree is indexed, the
definition's header in its file is replaced by the new release's, and next edits' site finding (no model) proposes
sites. The truth is the old release's calls of that name that the new release no longer has verbatim in the same
file (the call sites the project itself changed). Reported: precision and recall of the proposed sites, and the
same for a plain reference search (every call of the name), in the same run.

Limits of the truth: a call the project changed for another reason counts as a site to find, a file the new
release dropped is left out, and a call the project left broken (or fixed through *args) counts as unchanged.

Run: python benchmarks/next_edits.py [--pairs click:8.0.4:8.1.0 ...] [--verbose]
"""

from __future__ import annotations

import argparse
import ast
import inspect
import re
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from registry_corpus import pip_download

from lsp_agent.index import WorkspaceIndex
from lsp_agent.index.edit_sites import EditSite, find_sites, uses
from lsp_agent.index.signatures import DefinitionChange, Param, definitions, diff_definitions, parse_tree

CACHE = Path(__file__).resolve().parent / ".cache" / "next_edits"
PAIRS = (
    "click:8.0.4:8.1.0",
    "httpx:0.27.2:0.28.0",
    "werkzeug:2.2.3:2.3.0",
    "jinja2:3.0.3:3.1.0",
    "flask:2.2.5:2.3.0",
)


@dataclass
class Score:
    """Sites proposed and sites the project changed, summed over changes."""

    proposed: int = 0
    truth: int = 0
    hits: int = 0
    broken: int = 0  # changed calls that Python's own binding says the new signature breaks
    broken_hits: int = 0
    rows: list[str] = field(default_factory=list)

    def add(self, proposed: set, truth: set, broken: set) -> None:
        self.proposed += len(proposed)
        self.truth += len(truth)
        self.hits += len(proposed & truth)
        self.broken += len(broken)
        self.broken_hits += len(proposed & broken)

    def figures(self) -> str:
        precision = self.hits / self.proposed if self.proposed else 0.0
        recall = self.hits / self.truth if self.truth else 0.0
        strict = self.broken_hits / self.broken if self.broken else 0.0
        return (
            f"precision {precision:.2f} ({self.hits}/{self.proposed}), recall {recall:.2f} ({self.hits}/{self.truth}),"
            f" recall of the changed calls the new signature breaks {strict:.2f} ({self.broken_hits}/{self.broken})"
        )


def wheel(package: str, version: str) -> Path:
    """The package's wheel for `version`, downloaded once with pip."""
    CACHE.mkdir(parents=True, exist_ok=True)
    found = [p for p in CACHE.glob("*.whl") if _wheel_matches(p, package, version)]
    if not found:
        pip_download(f"{package}=={version}", CACHE, binary=True)
        found = [p for p in CACHE.glob("*.whl") if _wheel_matches(p, package, version)]
    return found[0]


def _wheel_matches(path: Path, package: str, version: str) -> bool:
    name, ver = path.name.split("-")[:2]
    return name.lower().replace("_", "-") == package.lower() and ver == version


def unpack(path: Path, into: Path) -> dict[str, str]:
    """The .py files of a wheel, written under `into`; {relative path: text}."""
    texts: dict[str, str] = {}
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if name.endswith(".py") and ".dist-info/" not in name:
                text = archive.read(name).decode("utf-8", "replace")
                (into / name).parent.mkdir(parents=True, exist_ok=True)
                (into / name).write_text(text)
                texts[name] = text
    return texts


def call_texts(rel: str, text: str, name: str) -> list[tuple[int, int, str]]:
    """(first row, last row + 1, normalised text) of every call of `name` in a file."""
    parsed = parse_tree(rel, text)
    if parsed is None:
        return []
    return [
        (n.start_point.row, n.end_point.row + 1, re.sub(r"\s+", "", n.text.decode("utf-8", "replace")))
        for n in uses(parsed[1].root_node, "call", name)
    ]


def edited_text(old_text: str, change: DefinitionChange) -> str:
    """The old file with only the changed definition's header replaced by the new release's."""
    lines = old_text.splitlines(keepends=True)
    first = change.before.line - 1
    count = change.before.header.count("\n") + 1
    return "".join(lines[:first]) + change.after.header + "\n" + "".join(lines[first + count :])


def evaluate(package: str, old: str, new: str, ours: Score, plain: Score, verbose: bool) -> None:
    """Replay every call-shape change between two releases; add to both scores."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "old"
        old_texts = unpack(wheel(package, old), root)
        new_texts = unpack(wheel(package, new), Path(tmp) / "new")
        index = WorkspaceIndex(root, db_path=Path(tmp) / "index.db")
        index.refresh()
        for rel, text in sorted(old_texts.items()):
            if rel not in new_texts:
                continue
            found = diff_definitions(definitions(rel, text), definitions(rel, new_texts[rel]))
            for change in (c for c in found if c.kind == "call" and not c.callee.startswith("__")):
                edited = (rel, edited_text(text, change))
                sites = find_sites(index, change, lambda p: old_texts.get(p), edited)
                truth, every, calls = _truth(change, old_texts, new_texts, edited)
                broken = {site for site in truth if breaks(change, calls[site])}
                proposed = {(s.path, row) for s in sites for row in _call_rows(s, every)}
                ours.add(proposed, truth, broken)
                plain.add(set(every), truth, broken)
                row = (
                    f"{package} {old}->{new} {change.describe()}: changed {len(truth)} ({len(broken)} broken by "
                    f"it), ours {len(proposed)} ({len(proposed & truth)} right, {len(proposed & broken)} broken), "
                    f"plain {len(every)}"
                )
                ours.rows.append(row)
                if verbose:
                    print(row)
        index.close()


def _truth(
    change: DefinitionChange, old_texts: dict[str, str], new_texts: dict[str, str], edited: tuple[str, str]
) -> tuple[set[tuple[str, int]], dict[tuple[str, int], int], dict[tuple[str, int], str]]:
    """(calls the new release changed, every call of the name: (path, first row) -> last row + 1, call texts)."""
    truth: set[tuple[str, int]] = set()
    every: dict[tuple[str, int], int] = {}
    calls: dict[tuple[str, int], str] = {}
    for rel, text in old_texts.items():
        if change.callee not in text or rel not in new_texts:
            continue
        text = edited[1] if rel == edited[0] else text
        kept = {t for _, _, t in call_texts(rel, new_texts[rel], change.callee)}
        for start, end, call in call_texts(rel, text, change.callee):
            every[(rel, start)] = end
            calls[(rel, start)] = call
            if call not in kept:
                truth.add((rel, start))
    return truth, every, calls


def _signature(params: tuple[Param, ...]) -> inspect.Signature:
    """A Python signature with these parameters (defaults as placeholders)."""
    kinds = {
        "positional_only": inspect.Parameter.POSITIONAL_ONLY,
        "positional": inspect.Parameter.POSITIONAL_OR_KEYWORD,
        "keyword": inspect.Parameter.KEYWORD_ONLY,
        "var_positional": inspect.Parameter.VAR_POSITIONAL,
        "var_keyword": inspect.Parameter.VAR_KEYWORD,
    }
    out = []
    for p in params:
        default = (
            0
            if p.has_default and p.kind not in ("var_positional", "var_keyword")
            else inspect.Parameter.empty
        )
        out.append(inspect.Parameter(p.name, kinds[p.kind], default=default))
    return inspect.Signature(sorted(out, key=lambda q: (q.kind, q.default is not inspect.Parameter.empty)))


def breaks(change: DefinitionChange, call_text: str) -> bool:
    """Whether Python's own binding says the call's arguments stop fitting (or land elsewhere) after the change."""
    try:
        call = ast.parse(call_text, mode="eval").body
    except SyntaxError:
        return False
    if not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    if any(k.arg is None for k in call.keywords):
        return False
    args, kwargs = list(range(len(call.args))), {k.arg: k.arg for k in call.keywords}
    try:
        old = _signature(change.before.params).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        return False  # did not fit before: another function of that name
    try:
        new = _signature(change.after.params).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        return True
    renames = dict(change.renamed)
    return {renames.get(k, k): v for k, v in old.items()} != dict(new)


def _call_rows(site: EditSite, every: dict[tuple[str, int], int]) -> list[int]:
    """The calls (by first row) a proposed site covers."""
    return [row for (path, row), _ in every.items() if path == site.path and site.start <= row < site.end]


def main(argv: list[str] | None = None) -> int:
    """Print precision and recall of next edits' sites over real release pairs."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", nargs="*", default=list(PAIRS), help="package:old:new release pairs")
    parser.add_argument("--verbose", action="store_true", help="one line per change")
    args = parser.parse_args(argv)
    ours, plain = Score(), Score()
    for pair in args.pairs:
        package, old, new = pair.split(":")
        evaluate(package, old, new, ours, plain, args.verbose)
    print(f"{len(ours.rows)} call-shape changes over {len(args.pairs)} release pairs")
    print(f"next edits' sites:      {ours.figures()}")
    print(f"plain reference search: {plain.figures()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
