"""Source trees for the localization benchmark: each instance's repository at (or just before) its base commit.

Two sources, tried in this order:
- git mirrors (exact): a folder holding `<owner>+<name>` git directories, as the search tool's `fetch` leaves
  them under /work/.mirror (pass --mirrors DIR or set LSP_AGENT_MIRRORS). Each base commit is materialised with
  `git archive <commit>` into benchmarks/.cache/localization/<owner+name>/<commit>/.
- released distributions (approximate): when a repository has no mirror (these three are over the fetch size
  limit here), the newest release published before the instance's development cycle, from PyPI through pip: a
  sdist where one unpacks without a build (Django), else a wheel laid out as the repository lays its package
  (`lib/` for matplotlib). The release never contains the fix (it predates the base commit), but it can lack
  files added since; `Corpus.missing` says for which instances the gold file is absent.
Only source and text files are kept. benchmarks/.cache is git-ignored; nothing fetched is ever committed.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache" / "localization"
KEEP_SUFFIXES = (".py", ".pyi", ".pyx", ".pxd", ".txt", ".rst", ".md", ".cfg", ".toml")

# Release cycles by fixing-PR number: a PR numbered below the bound was opened while `release` was the newest
# published version (pre-releases mark the point where the main branch moved on). Derived from release dates,
# not from any instance's gold files.
RELEASES: dict[str, list[tuple[float, str]]] = {
    "django/django": [
        (11750, "2.2a1"),
        (12900, "3.0a1"),
        (13900, "3.1a1"),
        (14870, "3.2a1"),
        (15700, "4.0a1"),
        (16450, "4.1a1"),
        (float("inf"), "4.2a1"),
    ],
    "scikit-learn/scikit-learn": [
        (12000, "0.19.0"),
        (13700, "0.20.0"),
        (16000, "0.21.1"),
        (float("inf"), "1.2.0rc1"),
    ],
    "matplotlib/matplotlib": [
        (19500, "3.3.0"),
        (23800, "3.5.0"),
        (24900, "3.6.0rc1"),
        (float("inf"), "3.7.0rc1"),
    ],
}
# How to get each repository's distribution without building it: (pip spec name, pip flags, prefix in the repo).
WHEEL_3_6 = ["--only-binary", ":all:", "--platform", "manylinux1_x86_64", "--python-version", "3.6"]
WHEEL_3_8 = ["--only-binary", ":all:", "--platform", "manylinux1_x86_64", "--python-version", "3.8"]
WHEEL_3_10 = ["--only-binary", ":all:", "--platform", "manylinux2014_x86_64", "--python-version", "3.10"]
DISTRIBUTIONS: dict[str, tuple[str, str]] = {
    "django/django": ("django", ""),
    "scikit-learn/scikit-learn": ("scikit-learn", ""),
    "matplotlib/matplotlib": ("matplotlib", "lib/"),
}


@dataclass(frozen=True)
class Corpus:
    """One source tree to index, and how it was obtained ("git <commit>" or "release <version>")."""

    repo: str
    root: Path
    source: str
    when: float = (
        0.0  # orders a repository's trees oldest first: commit time, or the release's place in RELEASES
    )


def mirror_dir(mirrors: Path | None, repo: str) -> Path | None:
    """The git directory of `repo` under `mirrors` (bare `<owner>+<name>` or anything below it holding HEAD)."""
    if mirrors is None:
        return None
    base = mirrors / repo.replace("/", "+")
    if not base.is_dir():
        return None
    if (base / "HEAD").exists():
        return base
    for head in sorted(base.rglob("HEAD")):
        if (head.parent / "objects").is_dir():
            return head.parent
    return None


def _keep(name: str) -> bool:
    return name.endswith(KEEP_SUFFIXES) and "/." not in f"/{name}"


def from_git(git_dir: Path, repo: str, commit: str) -> Corpus:
    """The tree of `commit` (source and text files only), extracted once."""
    dest = CACHE / repo.replace("/", "+") / commit
    if not (dest / ".complete").exists():
        archive = subprocess.run(
            ["git", f"--git-dir={git_dir}", "archive", "--format=tar", commit],
            check=True,
            capture_output=True,
        ).stdout
        _extract_tar(tarfile.open(fileobj=io.BytesIO(archive)), dest, strip=0, prefix="")
    stamp = subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", "-s", "--format=%ct", commit],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return Corpus(repo, dest, f"git {commit[:12]}", float(stamp.strip() or 0))


def release_for(repo: str, instance_id: str) -> str:
    """The newest release published before the instance's fixing PR was opened (see RELEASES)."""
    number = int(instance_id.rsplit("-", 1)[1])
    return next(version for bound, version in RELEASES[repo] if number < bound)


def _pip_flags(repo: str, version: str) -> list[str]:
    if repo == "django/django":
        return ["--no-binary", ":all:"]
    if repo == "scikit-learn/scikit-learn" and version.startswith("0."):
        return WHEEL_3_6
    if repo == "matplotlib/matplotlib" and version.startswith("3.3"):
        return WHEEL_3_8
    return WHEEL_3_10


def _download(repo: str, version: str) -> Path:
    """The distribution file of `version`, downloaded once with pip (no build, no dependencies)."""
    name, _ = DISTRIBUTIONS[repo]
    dists = CACHE / "dists"
    dists.mkdir(parents=True, exist_ok=True)
    stem = name.replace("-", "_").lower()

    def found() -> list[Path]:
        """Distribution files of this version already in the cache."""
        return [
            p
            for p in dists.iterdir()
            if p.name.lower().replace("-", "_").startswith(f"{stem}_{version}".lower())
            and p.suffix in (".whl", ".gz")
        ]

    if not found():
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(dists)]
        subprocess.run([*cmd, *_pip_flags(repo, version), f"{name}=={version}"], check=True)
    files = found()
    if not files:
        raise FileNotFoundError(f"pip left no distribution of {name}=={version} in {dists}")
    return files[0]


def from_release(repo: str, version: str) -> Corpus:
    """The released tree of `version`, laid out as in the repository, extracted once."""
    dest = CACHE / repo.replace("/", "+") / f"release-{version}"
    if not (dest / ".complete").exists():
        dist = _download(repo, version)
        _, prefix = DISTRIBUTIONS[repo]
        if dist.suffix == ".whl":
            _extract_wheel(dist, dest, prefix)
        else:
            _extract_tar(tarfile.open(dist), dest, strip=1, prefix=prefix)
    order = [v for _, v in RELEASES[repo]].index(version)
    return Corpus(repo, dest, f"release {version}", float(order))


def _extract_tar(tar: tarfile.TarFile, dest: Path, strip: int, prefix: str) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    with tar:
        for member in tar:
            parts = member.name.split("/")[strip:]
            name = "/".join(parts)
            if not member.isfile() or not parts or not _keep(name) or ".." in parts:
                continue
            out = dest / prefix / name
            out.parent.mkdir(parents=True, exist_ok=True)
            data = tar.extractfile(member)
            if data is not None:
                out.write_bytes(data.read())
    (dest / ".complete").write_text("")


def _extract_wheel(wheel: Path, dest: Path, prefix: str) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            top = name.split("/", 1)[0]
            if not _keep(name) or top.endswith((".dist-info", ".data")) or ".." in name.split("/"):
                continue
            out = dest / prefix / name
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(zf.read(name))
    (dest / ".complete").write_text("")


def corpus_for(repo: str, instance_id: str, commit: str, mirrors: Path | None) -> Corpus:
    """The exact tree from a mirror when there is one, else the approximating release."""
    git_dir = mirror_dir(mirrors, repo)
    if git_dir is not None:
        return from_git(git_dir, repo, commit)
    if repo not in RELEASES:
        raise LookupError(f"no mirror of {repo} under {mirrors} and no release table for it")
    return from_release(repo, release_for(repo, instance_id))


def default_mirrors() -> Path | None:
    """LSP_AGENT_MIRRORS, else /work/.mirror when it exists."""
    env = os.environ.get("LSP_AGENT_MIRRORS")
    if env:
        return Path(env)
    default = Path("/work/.mirror")
    return default if default.is_dir() else None
