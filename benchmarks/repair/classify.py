"""`classify`: is a repaired task's patch the project's own line, equivalent to it, or only plausible?

A patch the project's tests pass is plausible; automated program repair counts the correct ones apart. Per repaired
run of a results file (its `patch`, the lines the agent changed, recorded by judge.py):
- `original`: every file the agent changed parses to the same tree as the sdist's (the project's own line);
- `equivalent`: it passes the project's full suite (the judge ran it: that is what repaired means) and the function
  under test behaves as the original on generated inputs: the suite's own calls to it, recorded on the original
  code, each again with its defaulted parameters left out, and each with one argument varied (probe.py), run on the original code (twice: inputs whose outcome
  changes between two runs are dropped) and on the patched one in the project's test environment, comparing the
  returned values, the arguments afterwards and the exceptions raised; a returned callable (a decorator, a
  closure) by its behaviour: what it returns for the same sample calls (probe.py's `behaviour`);
- `plausible`: some input behaves differently (the first one is the evidence);
- `undetermined`: no input could be recorded (the suite never calls the function with arguments that pickle), or
  `unknown` for a results file from before patches were recorded.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.repair.build import Task, read_task_set
from benchmarks.repair.judge import apply_patch, buggy_text
from benchmarks.repair.projects import Project, copy_tree, fetch, project_named, testenv_python
from benchmarks.repair.suite import suite_environment

PROBE = Path(__file__).with_name("probe.py")
PROBE_TIMEOUT = 600.0
CLASSES = ("original", "equivalent", "plausible", "undetermined", "unknown")


def classify_results(
    results: Path,
    task_file: Path | None = None,
    python: Path | None = None,
    locate: Callable[[Task], tuple[Project, Path]] | None = None,
) -> dict[str, Any]:
    """Every repaired run of a results file classified: {"results": .., "classes": [{task, agent, class, ..}]}.
    `locate` gives a task's project and pristine tree (default: the pinned projects, fetched)."""
    data = json.loads(results.read_text(encoding="utf-8"))
    _, tasks = read_task_set(task_file or Path(data["task_file"]))
    by_id = {task.id: task for task in tasks}
    python = python or testenv_python()
    classes = []
    for record in data["results"]:
        if not record.get("repaired"):
            continue
        task = by_id.get(record["task"])
        if task is None:
            raise FileNotFoundError(f"task {record['task']} is not in the task file: pass --task-file")
        project, pristine = (locate or _pinned)(task)
        verdict = classify_patch(task, project, pristine, python, record.get("patch"), record)
        classes.append({"task": task.id, "agent": record.get("agent", ""), "kind": task.kind, **verdict})
    return {"results": str(results), "classes": classes}


def _pinned(task: Task) -> tuple[Project, Path]:
    """A task's pinned project and its pristine tree (fetched once)."""
    project = project_named(task.project)
    return project, fetch(project)


def classify_patch(
    task: Task,
    project: Project,
    pristine: Path,
    python: Path,
    patch: dict[str, list[Any]] | None,
    record: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The class of one repaired task's patch (changes to the buggy files, judge.py's form) and its evidence."""
    if patch is None:
        exact = bool(record and record.get("exact_fix"))
        return {"class": "original" if exact else "unknown", "evidence": "" if exact else "no patch recorded"}
    with tempfile.TemporaryDirectory(prefix=f"classify-{task.id}-") as scratch:
        original = copy_tree(pristine, Path(scratch) / "original" / project.key)
        patched = copy_tree(pristine, Path(scratch) / "patched" / project.key)
        for path, changes in patch.items():
            base = buggy_text(task, pristine) if path == task.file else (pristine / path).read_text("utf-8")
            (patched / path).write_text(apply_patch(base, changes), encoding="utf-8")
        if all(_same_tree(original / path, patched / path) for path in patch):
            return {"class": "original", "evidence": "the project's own code"}
        return _differential(task, project, original, patched, python, Path(scratch))


def _same_tree(a: Path, b: Path) -> bool:
    """Whether two Python files parse to the same tree (formatting and comments aside)."""
    try:
        return ast.dump(ast.parse(a.read_text("utf-8"))) == ast.dump(ast.parse(b.read_text("utf-8")))
    except (OSError, SyntaxError, ValueError):
        return False


def module_name(project: Project, path: str) -> str:
    """The importable name of a source file ("src/pkg/mod.py" -> "pkg.mod" for a src layout)."""
    rel = path[len(project.source_root) + 1 :] if project.source_root else path
    parts = rel.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _differential(
    task: Task, project: Project, original: Path, patched: Path, python: Path, scratch: Path
) -> dict[str, Any]:
    """Original and patched code on the recorded and varied inputs of the function under test."""
    module = module_name(project, task.file)
    calls = scratch / "calls.pickle"
    _probe(
        python,
        project,
        original,
        ["capture", module, task.function, str(calls), "--", *_pytest_args(project)],
    )
    if not calls.is_file():
        return {"class": "undetermined", "evidence": "the suite's calls could not be recorded"}
    (name, first), (_, again), (_, fixed) = (
        _outcomes(python, project, tree, module, task.function, calls, scratch / f"{n}.json")
        for n, tree in (("first", original), ("again", original), ("patched", patched))
    )
    steady = [i for i, (a, b) in enumerate(zip(first, again, strict=False)) if a == b]
    if not steady:
        return {"class": "undetermined", "evidence": "no input to compare", "inputs": 0}
    for index in steady:
        if index < len(fixed) and first[index][1] != fixed[index][1]:
            described, was = first[index]
            was, now = _where_they_differ(was, fixed[index][1])
            evidence = f"{name}{described}: the original {was}; the patch {now}"
            return {"class": "plausible", "evidence": evidence, "inputs": len(steady)}
    if len(fixed) != len(first):  # the original ran them all, twice
        evidence = f"{name} could not be run on the recorded inputs with the patch (the original could)"
        return {"class": "plausible", "evidence": evidence, "inputs": len(steady)}
    return {"class": "equivalent", "evidence": f"same outcome on {len(steady)} inputs", "inputs": len(steady)}


def _where_they_differ(was: str, now: str, shown: int = 300, before: int = 80) -> tuple[str, str]:
    """Two outcomes cut to where they start to differ (a long common beginning, such as a returned decorator's
    calls that agree, is elided), at most `shown` characters each."""
    same = next(
        (i for i, (a, b) in enumerate(zip(was, now, strict=False)) if a != b), min(len(was), len(now))
    )
    start = max(0, same - before) if same > shown - before else 0
    cut = "..." if start else ""
    return cut + was[start : start + shown], cut + now[start : start + shown]


def _pytest_args(project: Project) -> list[str]:
    """The whole suite, quietly, without the cache plugin."""
    return ["-q", "-p", "no:cacheprovider", "--tb=no", "--color=no", *project.tests]


def _outcomes(
    python: Path, project: Project, tree: Path, module: str, function: str, calls: Path, out: Path
) -> tuple[str, list[list[str]]]:
    """(the function probed, [[input, outcome], ..]) in `tree` (no outcomes when the probe failed)."""
    _probe(python, project, tree, ["run", module, function, str(calls), str(out)])
    if not out.is_file():
        return function, []
    found = json.loads(out.read_text())
    return str(found.get("function") or function), list(found.get("results") or [])


def _probe(python: Path, project: Project, tree: Path, arguments: list[str]) -> None:
    """Run probe.py in the project's test environment, in `tree`."""
    env = {
        **suite_environment(tree, python, project),
        "PYTHONHASHSEED": "0",
    }  # sets shown in one order each run
    try:
        subprocess.run(
            [str(python), str(PROBE), *arguments],
            cwd=tree,
            env=env,
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pass  # no output file: undetermined


def print_classes(classified: dict[str, Any], out=sys.stdout) -> None:
    """A line per repaired run and the counts per agent."""
    rows = classified["classes"]
    for row in rows:
        print(f"{row['task']:<16} {row['agent']:<15} {row['class']:<13} {row.get('evidence', '')}", file=out)
    for agent in sorted({row["agent"] for row in rows}):
        counts = Counter(row["class"] for row in rows if row["agent"] == agent)
        shown = ", ".join(f"{name} {counts[name]}" for name in CLASSES if counts[name])
        print(f"{agent}: {sum(counts.values())} repaired: {shown}", file=out)


def add_classify_arguments(parser: Any) -> None:
    """The flags of `classify`."""
    parser.add_argument("results", type=Path, help="a results file of `run`")
    parser.add_argument("--task-file", type=Path, help="the task file (default: the one the results name)")
    parser.add_argument("--out", type=Path, help="where the classes go (default RESULTS.classes.json)")


def run_classify(results: Path, task_file: Path | None, out: Path | None) -> int:
    """`classify`: classify, print, and write the classes next to the results (or to `out`)."""
    classified = classify_results(results, task_file)
    print_classes(classified)
    target = out or results.with_suffix(".classes.json")
    target.write_text(json.dumps(classified, indent=1) + "\n", encoding="utf-8")
    print(f"classes: {target}")
    return 0
