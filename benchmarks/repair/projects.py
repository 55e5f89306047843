"""The projects tasks are built from: pinned sdists from the package registry, unpacked, plus the test environment.

Each project is small, pure Python, ships its tests in its sdist and runs them with plain pytest in seconds.
Nothing here names a task or a fix: tasks come from `build.py` with a seed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "repair"
# The interpreter environment every project's tests (and both agents' test runs) use: plain pytest plus what the
# projects' tests import. pytest-cov records which test covers which line when tasks are built.
# pytest-benchmark serves humanize's benchmark tests (run once each without timing: its `addopts`).
TEST_REQUIREMENTS = [
    "pytest==9.2.0",
    "pytest-cov==7.1.0",
    "coverage==7.17.3",
    "freezegun==1.5.5",
    "pytest-benchmark==5.3.1",
]
IGNORED_DIRS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".git"}


@dataclass(frozen=True)
class Project:
    """One project: its pinned sdist, where its code and tests are, and what to leave out of mutation."""

    name: str  # the registry name
    version: str
    packages: tuple[str, ...]  # directories (relative to the tree) whose modules may get a bug
    tests: tuple[str, ...]  # the test suite: files or directories handed to pytest
    source_root: str = ""  # what goes on PYTHONPATH ("src" for a src layout)
    # path prefixes never mutated (tests inside the package, shims)
    excluded: tuple[str, ...] = field(default=())
    addopts: str = ""  # PYTEST_ADDOPTS of every test run in this project, the agents' included

    @property
    def key(self) -> str:
        """The project's directory name under the cache."""
        return f"{self.name}-{self.version}"

    def tree(self, cache: Path = CACHE) -> Path:
        """The pristine unpacked sdist (never run in; tasks copy it)."""
        return cache / "projects" / self.key

    def source_files(self, tree: Path) -> list[str]:
        """Sorted relative paths of the modules that may get a bug."""
        files = []
        for package in self.packages:
            for path in sorted((tree / package).rglob("*.py")):
                rel = path.relative_to(tree).as_posix()
                name = path.name
                if name.startswith("test_") or name == "conftest.py" or rel.startswith(self.excluded):
                    continue
                files.append(rel)
        return sorted(files)

    def environment(self, tree: Path) -> dict[str, str]:
        """What a copy of this project needs in the environment for its tests: imports from the copy."""
        env = {"PYTHONPATH": str(tree / self.source_root) if self.source_root else str(tree)}
        if self.addopts:
            env["PYTEST_ADDOPTS"] = self.addopts
        return env

    def is_test_file(self, rel: str) -> bool:
        """True for a file of the test suite (restored from the sdist before judging)."""
        name = rel.rsplit("/", 1)[-1]
        in_suite = any(rel == t or rel.startswith(t.rstrip("/") + "/") for t in self.tests)
        return in_suite or name.startswith("test_") or name == "conftest.py"


PROJECTS: tuple[Project, ...] = (
    Project("boltons", "26.2.0", packages=("boltons",), tests=("tests",)),
    Project("cachetools", "8.0.0", packages=("src/cachetools",), tests=("tests",), source_root="src"),
    Project(
        "humanize",
        "4.17.0",
        packages=("src/humanize",),
        tests=("tests",),
        source_root="src",
        addopts="--benchmark-disable",
    ),
    Project("inflection", "0.5.1", packages=("inflection",), tests=("test_inflection.py",)),
    Project("isodate", "0.7.2", packages=("src/isodate",), tests=("tests",), source_root="src"),
    Project(
        "toolz",
        "1.2.0",
        packages=("toolz",),
        tests=("toolz/tests", "toolz/sandbox/tests"),
        excluded=("toolz/tests/", "toolz/sandbox/tests/"),
    ),
)

# Projects no change was ever measured on, chosen on 29 November 2026 (issue 34): `build --held-out-projects` makes
# the one-line held-out set from them. Never tune on these; report their figure beside the set above.
# parse's and semver's own addopts ask for pytest-cov, which --without-coverage turns off: `-o addopts=` replaces
# them (keeping semver's import mode).
HELD_OUT_PROJECTS: tuple[Project, ...] = (
    Project("parse", "1.22.4", packages=("parse",), tests=("tests",), addopts="-o addopts="),
    Project(
        "semver",
        "3.1.1",
        packages=("src/semver",),
        tests=("tests",),
        source_root="src",
        addopts="-o addopts=--import-mode=importlib",
    ),
    Project("tabulate", "0.10.0", packages=("tabulate",), tests=("test",)),
)


class SetupError(RuntimeError):
    """Fetching a project or creating the test environment failed; the message says what to do."""


def project_named(name: str) -> Project:
    """The project called `name`."""
    for project in PROJECTS + HELD_OUT_PROJECTS:
        if project.name == name:
            return project
    known = ", ".join(p.name for p in PROJECTS + HELD_OUT_PROJECTS)
    raise SetupError(f"unknown project {name!r}; known projects: {known}")


def fetch(project: Project, cache: Path = CACHE) -> Path:
    """Download the pinned sdist (once) and unpack it as the pristine tree; returns the tree."""
    tree = project.tree(cache)
    if tree.is_dir():
        return tree
    sdists = cache / "sdists"
    sdists.mkdir(parents=True, exist_ok=True)
    archive = _find_sdist(project, sdists)
    if archive is None:
        spec = f"{project.name}=={project.version}"
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", spec]
        done = subprocess.run([*cmd, "-d", str(sdists)], capture_output=True, text=True)
        archive = _find_sdist(project, sdists)
        if done.returncode != 0 or archive is None:
            raise SetupError(f"could not download the sdist of {spec}: {done.stderr.strip()[-500:]}")
    staging = tree.with_name(tree.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(staging, filter="data")
    (top,) = [p for p in staging.iterdir() if p.is_dir()]
    top.rename(tree)
    shutil.rmtree(staging)
    return tree


def _find_sdist(project: Project, folder: Path) -> Path | None:
    """The downloaded sdist of `project` in `folder` (names may use - or _)."""
    for stem in {project.name, project.name.replace("-", "_")}:
        archive = folder / f"{stem}-{project.version}.tar.gz"
        if archive.is_file():
            return archive
    return None


def testenv_python(cache: Path = CACHE) -> Path:
    """The interpreter of the test environment, created on first use with TEST_REQUIREMENTS."""
    venv = cache / "testenv"
    python = venv / "bin" / "python"
    marker = venv / "requirements.txt"
    wanted = "\n".join(TEST_REQUIREMENTS) + "\n"
    if python.is_file() and marker.is_file() and marker.read_text() == wanted:
        return python
    shutil.rmtree(venv, ignore_errors=True)
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
    if made.returncode != 0:
        raise SetupError(f"could not create the test environment {venv}: {made.stderr.strip()[-500:]}")
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *TEST_REQUIREMENTS]
    done = subprocess.run(pip, capture_output=True, text=True)
    if done.returncode != 0:
        raise SetupError(f"could not install {TEST_REQUIREMENTS} into {venv}: {done.stderr.strip()[-500:]}")
    marker.write_text(wanted)
    return python


def copy_tree(source: Path, target: Path) -> Path:
    """A fresh copy of a project tree without caches; returns `target`."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(*IGNORED_DIRS, "*.pyc"), symlinks=True)
    return target
