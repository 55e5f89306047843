"""Building the task set: seeded one-line bugs in covered functions, kept only where the named tests then fail.

Deterministic for a seed: the same projects, seed and quota give the same tasks in the same order (the file
written holds no timings). The task file lives under benchmarks/.cache/ and is never committed, so neither the
code nor a prompt carries a task's expected fix.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from benchmarks.repair.multiline import MULTI_KINDS, find_multiline_mutations
from benchmarks.repair.mutations import KINDS, Mutation, find_mutations_in_file, is_valid
from benchmarks.repair.projects import Project, copy_tree
from benchmarks.repair.suite import (
    coverage_by_line,
    covered_by_name,
    has_coverage_plugin,
    list_test_files,
    run_pytest,
)

ATTEMPTS_PER_TASK = 4  # candidates tried per wanted task before a project gives up
HELD_OUT_SEED = 34  # the multi-line tasks' split: random.Random(34) over their ids, half dev, half held out
DESCRIPTION = (
    "The tests in {test_file} fail since the last change to {file}; fix it. "
    "Run them with `python -m pytest {test_file}`."
)


@dataclass
class Task:
    """One repair task: the bug (where, what kind), the tests that show it, and what a user would say."""

    id: str
    project: str
    version: str
    file: str
    line: int
    kind: str
    function: str
    test_file: str
    test_command: str
    description: str
    original: str  # the line before the bug: the expected fix, never shown to an agent
    mutated: str
    failing_tests: int
    split: str = ""  # multi-line tasks: "dev" or "held_out" (assign_split), fixed before any tuning on them


@dataclass
class ProjectStats:
    """What building one project's tasks took: candidates per kind, tries and why candidates were dropped."""

    project: str
    coverage: str = ""  # "coverage" (pytest-cov contexts) or "names" (function names in the tests)
    candidates: dict[str, int] = field(default_factory=dict)
    tried: int = 0
    kept: dict[str, int] = field(default_factory=dict)
    # tests_still_pass | timeout | no_test_failure_reported | does_not_parse_or_same_ast (not counted in tried)
    dropped: dict[str, int] = field(default_factory=dict)


def build_project(
    project: Project,
    tree: Path,
    python: Path,
    *,
    seed: int,
    quota: int,
    log: Callable[[str], None] = print,
    multiline: bool = False,
) -> tuple[list[Task], ProjectStats]:
    """Up to `quota` tasks for one project whose pristine tree is `tree`; the suite must pass there first. With
    `multiline`, bugs beyond one line (multiline.py: MULTI_KINDS, task ids NAME-mNN) instead of one-line ones."""
    stats = ProjectStats(project.name)
    with tempfile.TemporaryDirectory(prefix=f"repair-build-{project.name}-") as tmp:
        work = copy_tree(tree, Path(tmp) / "tree")
        targets = list(project.tests)
        baseline = run_pytest(work, python, project, targets, timeout=600)
        if not baseline.passed:
            raise RuntimeError(
                f"{project.key}: its own suite fails before any change:\n{baseline.output[-1500:]}"
            )
        limit = max(60.0, 5 * baseline.seconds)
        covered = _coverage(project, work, python, targets, limit, stats)
        candidates = _candidates(project, work, covered, multiline)
        stats.candidates = dict(sorted(Counter(m.kind for m in candidates).items()))
        log(f"{project.key}: suite passes in {baseline.seconds:.1f}s; {len(candidates)} candidate mutations")
        kinds = MULTI_KINDS if multiline else KINDS
        tasks = _select(
            project,
            work,
            python,
            candidates,
            covered,
            seed=seed,
            quota=quota,
            limit=limit,
            stats=stats,
            kinds=kinds,
        )
    stats.kept = dict(sorted(Counter(t.kind for t in tasks).items()))
    stats.dropped = dict(sorted(stats.dropped.items()))
    return tasks, stats


def _coverage(
    project: Project, work: Path, python: Path, targets: list[str], limit: float, stats: ProjectStats
) -> dict[str, dict[int, set[str]]]:
    """Which test files run which source lines: pytest-cov contexts when available, else the name heuristic."""
    if has_coverage_plugin(python):
        stats.coverage = "coverage"
        return coverage_by_line(work, python, project, targets, timeout=limit * 3)
    stats.coverage = "names"
    return covered_by_name(work, project.source_files(work), list_test_files(work, targets))


def _candidates(
    project: Project, work: Path, covered: dict[str, dict[int, set[str]]], multiline: bool = False
) -> list[Mutation]:
    """Every mutation on a line that some test file runs (one-line ones, or with `multiline` those beyond one
    line), in a stable order."""
    found = []
    for rel in project.source_files(work):
        lines = {
            n for n, files in covered.get(rel, {}).items() if any(project.is_test_file(f) for f in files)
        }
        if lines and multiline:
            found += find_multiline_mutations((work / rel).read_text(encoding="utf-8"), rel, lines)
        elif lines:
            found += find_mutations_in_file(work, rel, lines, check=False)
    return found


def _select(
    project: Project,
    work: Path,
    python: Path,
    candidates: list[Mutation],
    covered: dict[str, dict[int, set[str]]],
    *,
    seed: int,
    quota: int,
    limit: float,
    stats: ProjectStats,
    kinds: tuple[str, ...] = KINDS,
) -> list[Task]:
    """Seeded round-robin over the kinds: try a random candidate of each kind until `quota` tasks are kept."""
    rng = random.Random(f"{seed}:{project.name}")
    pools = {kind: [m for m in candidates if m.kind == kind] for kind in kinds}
    order = [kind for kind in kinds if pools[kind]]
    rng.shuffle(order)
    used_functions: set[tuple[str, str]] = set()
    tasks: list[Task] = []
    dropped: Counter[str] = Counter()
    while len(tasks) < quota and stats.tried < quota * ATTEMPTS_PER_TASK and any(pools.values()):
        for kind in order:
            pool = pools[kind]
            if not pool or len(tasks) >= quota:
                continue
            mutation = pool.pop(rng.randrange(len(pool)))
            if (mutation.path, mutation.function) in used_functions:
                continue
            if not is_valid(mutation, (work / mutation.path).read_text(encoding="utf-8")):
                dropped["does_not_parse_or_same_ast"] += 1
                continue
            stats.tried += 1
            task, reason = _try(project, work, python, mutation, covered, limit, index=len(tasks) + 1)
            if task is None:
                dropped[reason] += 1
                continue
            used_functions.add((mutation.path, mutation.function))
            tasks.append(task)
    stats.dropped = dict(dropped)
    return tasks


def _try(
    project: Project,
    work: Path,
    python: Path,
    mutation: Mutation,
    covered: dict[str, dict[int, set[str]]],
    limit: float,
    *,
    index: int,
) -> tuple[Task | None, str]:
    """Apply the mutation, run the test files covering its line, restore; the task if some test failed."""
    path = work / mutation.path
    pristine = path.read_text(encoding="utf-8")
    covering = covered.get(mutation.path, {}).get(mutation.line, set())
    targets = sorted(f for f in covering if project.is_test_file(f)) or list(project.tests)
    try:
        path.write_text(mutation.apply(pristine), encoding="utf-8")
        result = run_pytest(work, python, project, targets, timeout=limit)
    finally:
        path.write_text(pristine, encoding="utf-8")
    if result.timed_out:
        return None, "timeout"
    if result.passed:
        return None, "tests_still_pass"
    failing = {f: n for f, n in result.failed.items() if project.is_test_file(f)}
    if not failing:
        return None, "no_test_failure_reported"
    test_file = sorted(failing, key=lambda f: (-failing[f], f))[0]
    command = f"python -m pytest {test_file}"
    prefix = "m" if mutation.kind in MULTI_KINDS else ""
    return (
        Task(
            id=f"{project.name}-{prefix}{index:02d}",
            project=project.name,
            version=project.version,
            file=mutation.path,
            line=mutation.line,
            kind=mutation.kind,
            function=mutation.function,
            test_file=test_file,
            test_command=command,
            description=DESCRIPTION.format(test_file=test_file, file=mutation.path),
            original=mutation.original,
            mutated=mutation.mutated,
            failing_tests=failing[test_file],
        ),
        "",
    )


def assign_split(tasks: list[Task], seed: int = HELD_OUT_SEED) -> None:
    """Split tasks half dev, half held out (the odd one out held out): random.Random(seed) shuffles their ids in
    sorted order. Fixed when the tasks are built, before any change is measured on them."""
    ids = sorted(task.id for task in tasks)
    random.Random(seed).shuffle(ids)
    dev = set(ids[: len(ids) // 2])
    for task in tasks:
        task.split = "dev" if task.id in dev else "held_out"


def write_task_set(path: Path, seed: int, tasks: list[Task], stats: list[ProjectStats]) -> None:
    """The task file: seed, tasks in order, per-project statistics (no timings, so rebuilds are identical)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "seed": seed,
        "tasks": [asdict(t) for t in tasks],
        "stats": [asdict(s) for s in stats],
    }
    path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")


def read_task_set(path: Path) -> tuple[int, list[Task]]:
    """(seed, tasks) from a task file written by `write_task_set`."""
    if not path.is_file():
        raise FileNotFoundError(f"no task set at {path}: run `python -m benchmarks.repair build` first")
    data = json.loads(path.read_text(encoding="utf-8"))
    return data["seed"], [Task(**t) for t in data["tasks"]]
