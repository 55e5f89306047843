"""The rg prefilter of search_text: identical results with and without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.tools import rg
from lsp_agent.tools.registry import ToolContext, ToolLimits
from lsp_agent.workspace.overlay import Overlay

pytestmark = pytest.mark.skipif(
    rg.rg_binary() is None, reason="ripgrep (rg) is neither on PATH nor in this venv"
)

PATTERNS = [
    {"pattern": "needle"},
    {"pattern": "Needle"},
    {"pattern": "NEEDLE", "case_sensitive": False},
    {"pattern": "kelvin"},
    {"pattern": "fix"},  # Python also matches U+0130/U+0131 for i: rg must not be trusted here
    {"pattern": "café"},
    {"pattern": "only_in_overlay"},
    {"pattern": "line"},  # many hits: stops at the limit with the marker
    {"pattern": r"need\w+", "regex": True},
]


@pytest.fixture(scope="module")
def big_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once: the tests only read it (their writes go to overlays)."""
    root = tmp_path_factory.mktemp("rg") / "big"
    for i in range(260):
        pkg = root / f"pkg{i % 7}"
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / f"m{i:03d}.txt").write_text(f"line one of {i}\nline two\n")
    (root / "pkg1" / "m150.txt").write_text("a needle here\r\nNEEDLE there\n")
    (root / "pkg2" / "m240.txt").write_bytes("\ufeffNeedle with BOM\nKELVIN \u212a\n".encode())
    (root / "pkg3" / "m250.txt").write_text("f\u0130x and f\u0131x\ncafé au lait\n")
    (root / "pkg4" / "m251.txt").write_bytes(b"needle\x00binary")
    (root / "pkg5" / "m252.txt").write_text("needle " * 400)  # over the size limit below
    (root / ".gitignore").write_text("ignored/\n")
    (root / "ignored").mkdir()
    (root / "ignored" / "x.txt").write_text("needle\n")
    return root


def _ctx(root: Path) -> ToolContext:
    overlay = Overlay(root)
    overlay.write_text("pkg0/m200.txt", "only_in_overlay needle\n")
    overlay.write_text("pkg6/new.txt", "fresh needle\n")
    overlay.delete("pkg1/m150.txt")
    overlay.write_text("pkg1/m150.txt", "a needle here\r\n")
    return ToolContext(
        root=root, overlay=overlay, limits=ToolLimits(search_max_results=20, max_file_size=2000)
    )


@pytest.mark.parametrize("args", PATTERNS, ids=lambda a: a["pattern"])
def test_search_results_are_identical_with_and_without_rg(big_workspace, call, args, monkeypatch):
    with_rg = call(_ctx(big_workspace), "search_text", args)
    monkeypatch.setattr(rg, "ENABLED", False)
    without = call(_ctx(big_workspace), "search_text", args)
    assert with_rg.ok == without.ok
    assert with_rg.output == without.output


def test_prefilter_narrows_to_files_holding_the_literal(big_workspace):
    files = sorted(p.relative_to(big_workspace).as_posix() for p in big_workspace.glob("pkg*/*.txt"))
    found = rg.literal_candidates(big_workspace, files, "needle", case_sensitive=False)
    assert found == {"pkg1/m150.txt", "pkg2/m240.txt", "pkg4/m251.txt", "pkg5/m252.txt"}
    assert rg.literal_candidates(big_workspace, files, "fix", case_sensitive=False) is None
    assert rg.literal_candidates(big_workspace, files[:10], "needle", case_sensitive=True) is None  # too few
