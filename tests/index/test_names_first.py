"""Exact names first, definitions before tests, on real projects' code the test environment installs anyway.

click (a dependency of litellm) stands for a small library; numpy's `lib` package, which ships its tests,
for code next to tests that mention its functions hundreds of times.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import click
import numpy
import pytest

from lsp_agent.index import IndexConfig, SearchHit, WorkspaceIndex
from lsp_agent.index.locate import file_kind

pytestmark = pytest.mark.slow


def _index(src: Path, root: Path, rel: str) -> WorkspaceIndex:
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.pyi", "data")
    shutil.copytree(src, root / "project" / rel, ignore=ignore)
    index = WorkspaceIndex(root / "project", IndexConfig(), db_path=root / "index.sqlite")
    index.refresh()
    return index


@pytest.fixture(scope="module")
def click_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkspaceIndex]:
    """The installed click package under src/click, indexed."""
    root = tmp_path_factory.mktemp("click-project")
    index = _index(Path(click.__file__).parent, root, "src/click")
    yield index
    index.close()


@pytest.fixture(scope="module")
def numpy_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkspaceIndex]:
    """The installed numpy/lib package with its tests, indexed."""
    root = tmp_path_factory.mktemp("numpy-project")
    index = _index(Path(numpy.__file__).parent / "lib", root, "numpy/lib")
    yield index
    index.close()


def _kinds(hits: list[SearchHit]) -> list[str]:
    return [file_kind(h.path) for h in hits]


@pytest.mark.parametrize("name", ["Group.invoke", "Context.invoke", "secho", "Command.make_context"])
def test_a_query_naming_a_symbol_ranks_its_definition_first(click_index: WorkspaceIndex, name: str) -> None:
    hits = click_index.search(name, top_k=10)
    assert hits[0].symbol == name, [(h.symbol, h.score) for h in hits]
    assert hits[0].kind in ("function", "method")


def test_a_query_naming_a_path_ranks_that_file_first(click_index: WorkspaceIndex) -> None:
    hits = click_index.search("src/click/termui.py", top_k=5)
    assert hits[0].path == "src/click/termui.py"
    assert click_index.locate("termui.py")[0].path == "src/click/termui.py"


def test_a_question_about_behaviour_finds_definitions(click_index: WorkspaceIndex) -> None:
    hits = click_index.search("how are subcommands dispatched in a group", top_k=5)
    assert all(h.path == "src/click/core.py" for h in hits[:3]), [(h.path, h.symbol) for h in hits]
    assert any(h.symbol and h.symbol.startswith("Group.") for h in hits[:5])


def test_definition_outranks_the_tests_that_call_it(numpy_index: WorkspaceIndex) -> None:
    hits = numpy_index.search("genfromtxt", top_k=50)
    assert hits[0].symbol == "genfromtxt" and _kinds(hits)[0] == "code", [(h.path, h.symbol) for h in hits]
    assert "test" in _kinds(hits)  # the tests that call it are still found, after the definition


def test_behaviour_questions_rank_code_before_tests(numpy_index: WorkspaceIndex) -> None:
    hits = numpy_index.search("how does genfromtxt fill in missing values", top_k=5)
    assert _kinds(hits)[:2] == ["code", "code"], [(h.path, h.symbol) for h in hits]


def test_a_query_asking_for_tests_gets_tests(numpy_index: WorkspaceIndex) -> None:
    hits = numpy_index.search("tests for genfromtxt missing values", top_k=5)
    assert _kinds(hits)[0] == "test", [(h.path, h.symbol) for h in hits]


def test_locate_ranks_files_with_the_matching_symbols(numpy_index: WorkspaceIndex) -> None:
    files = numpy_index.locate("np.genfromtxt ignores filling_values when usecols is given", limit=5)
    assert files[0].path == "numpy/lib/_npyio_impl.py", [(f.path, f.reasons) for f in files]
    assert "genfromtxt" in [name for name, _ in files[0].symbols]
    assert any(reason.startswith("defines genfromtxt") for reason in files[0].reasons)
