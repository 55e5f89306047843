"""`classify` on a function that returns a decorator or a closure: the returned callable is compared by what it
does (called with the same sample arguments, its state and argument-free attributes afterwards), a lambda the suite
passed is recorded as a stand-in function, and objects without a `__dict__` by their slots (no model, no network)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_repair_tasks import NO_PLUGINS  # noqa: E402

from benchmarks.repair.build import _try  # noqa: E402
from benchmarks.repair.classify import classify_patch  # noqa: E402
from benchmarks.repair.mutations import Mutation  # noqa: E402
from benchmarks.repair.projects import Project, copy_tree  # noqa: E402
from benchmarks.repair.suite import covered_by_name  # noqa: E402

pytestmark = pytest.mark.slow  # each classification runs the suite and the function in subprocesses
MEMO = '''\
"""A memoizing decorator, used bare or with a size."""
import functools


def memoize(function=None, size=2):
    """Keep the last `size` results of `function`."""
    if function is None:
        return lambda f: memoize(f, size)
    cache = {}

    @functools.wraps(function)
    def wrapper(*args):
        if args not in cache:
            if len(cache) >= size:
                cache.pop(next(iter(cache)))
            cache[args] = function(*args)
        return cache[args]

    wrapper.cache = cache
    wrapper.parameters = lambda: {"size": size}
    return wrapper
'''
TEST_MEMO = """\
from pkg.memo import memoize


def test_bare():
    calls = []
    square = memoize(lambda x: calls.append(x) or x * x)
    assert square(3) == 9 and square(3) == 9 and calls == [3]


def test_sized():
    calls = []
    double = memoize(size=1)(lambda x: calls.append(x) or 2 * x)
    assert double(2) == 4 and double(3) == 6 and double(2) == 4
    assert calls == [2, 3, 2]
"""
PROJECT = Project("tinymemo", "0.1", packages=("pkg",), tests=("tests",), addopts=NO_PLUGINS)
LINE = "            if len(cache) >= size:"


@pytest.fixture
def pristine(tmp_path: Path) -> Path:
    """The tiny project, its suite passing."""
    root = tmp_path / "pristine"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "memo.py").write_text(MEMO)
    (root / "tests").mkdir()
    (root / "tests" / "test_memo.py").write_text(TEST_MEMO)
    return root


def _task(pristine: Path, work: Path, mutated: str):
    """The task of the bug `mutated` in place of LINE (built as `build` builds it: the suite must fail)."""
    number = MEMO.splitlines().index(LINE) + 1
    covered = covered_by_name(pristine, ["pkg/memo.py"], ["tests/test_memo.py"])
    mutation = Mutation("pkg/memo.py", number, "swapped_comparison", "memoize", LINE, mutated)
    task, reason = _try(
        PROJECT, copy_tree(pristine, work), Path(sys.executable), mutation, covered, 60, index=1
    )
    assert task is not None, reason
    return task


def _classify(task, pristine: Path, version: str | None) -> dict:
    """The class of a patch putting `version` in the bug's line (None: the bug itself)."""
    patch = {task.file: [] if version is None else [[task.line - 1, task.line, [version + "\n"]]]}
    return classify_patch(task, PROJECT, pristine, Path(sys.executable), patch)


def test_a_decorator_that_behaves_differently_is_plausible_and_one_that_behaves_the_same_is_equivalent(
    pristine: Path, tmp_path: Path
) -> None:
    # the suite passes a lambda (recorded as a stand-in) and calls memoize(size=1), which returns a decorator
    task = _task(pristine, tmp_path / "w", "            if len(cache) > size:")
    bug = _classify(task, pristine, None)  # keeps one result too many: the suite's size=1 case fails on it
    assert bug["class"] == "plausible"
    assert bug["evidence"].startswith("memoize(")  # the call, then where the outcomes part
    assert "cache = " in bug["evidence"]  # the cache's contents after the same calls tell them apart
    same = _classify(task, pristine, "            if not len(cache) < size:")
    assert same["class"] == "equivalent" and same["inputs"] >= 4
    assert _classify(task, pristine, LINE)["class"] == "original"


def test_returned_callables_and_slotted_objects_compare_by_behaviour_not_identity() -> None:
    spec = importlib.util.spec_from_file_location(
        "probe", Path(__file__).resolve().parents[2] / "benchmarks" / "repair" / "probe.py"
    )
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)

    def adder(n):
        def add(x=0, *rest):
            return x + n

        return add

    class Point:
        __slots__ = ("x", "y")

        def __init__(self, x, y):
            self.x, self.y = x, y

    # two closures made by two calls are different objects with the same behaviour
    assert probe.canonical(adder(1), consume=True) == probe.canonical(adder(1), consume=True)
    assert probe.canonical(adder(1), consume=True) != probe.canonical(adder(2), consume=True)
    assert "called[" in probe.canonical(adder(1), consume=True)
    # an object with slots and the default repr: by its slots, not by its address
    assert probe.canonical(Point(1, 2)) == "Point{'x': 1, 'y': 2}" != probe.canonical(Point(1, 3))
    # a function given as an argument that does not pickle is recorded as the stand-in
    assert probe._portable(lambda x: x) is probe._probe_target and probe._portable(len) is len
