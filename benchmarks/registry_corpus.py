"""A mixed-language corpus from the package registries: sdists from PyPI and tarballs from npm, pinned.

    python benchmarks/registry_corpus.py [--dest benchmarks/.cache/registry]

Downloads with the registries' own clients (`pip download --no-deps --no-binary :all:`, `npm pack`) into
benchmarks/.cache (git-ignored) and extracts each package into its own folder; already extracted packages are
kept. Prints the folder, files and lines. Two releases of the same packages (`--release 2`) give a second commit.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache"
# (name, version of release 1, version of release 2): Python with C, C++ and Fortran, TypeScript and JavaScript.
# pip prepares an sdist's metadata to download it: packages that build with setuptools or hatch only (numpy,
# scipy, pandas and scikit-learn need meson and a compiler just for that; with --no-binary :all: the build
# requirements come as sdists too, so SQLAlchemy's Cython would be compiled first).
PYPI = [
    ("Django", "5.0.6", "5.0.7"),
    ("sympy", "1.12", "1.12.1"),
    ("transformers", "4.41.2", "4.42.0"),
    ("networkx", "3.3", "3.4"),
]
NPM = [
    ("typescript", "5.4.5", "5.5.2"),
    ("@angular/core", "17.3.10", "17.3.11"),
    ("lodash", "4.17.21", "4.17.21"),
    ("rxjs", "7.8.1", "7.8.1"),
    ("three", "0.165.0", "0.166.0"),
    ("@babel/core", "7.24.7", "7.24.9"),
    ("eslint", "9.4.0", "9.5.0"),
    ("webpack", "5.91.0", "5.92.0"),
    ("@mui/material", "5.15.20", "5.16.0"),
    ("antd", "5.18.0", "5.18.3"),
]


def pip_download(spec: str, dest: Path, *, binary: bool) -> None:
    """`pip download` of one pinned package without its dependencies: its wheel (binary) or its sdist."""
    only = ["--only-binary" if binary else "--no-binary", ":all:"]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", *only, "-d", str(dest), spec], check=True
    )


def fetch(dest: Path, release: int) -> Path:
    """Download and extract every package of a release under dest/rN; returns that folder."""
    downloads = dest / "downloads"
    tree = dest / f"r{release}"
    downloads.mkdir(parents=True, exist_ok=True)
    tree.mkdir(parents=True, exist_ok=True)
    for name, *versions in PYPI:
        spec = f"{name}=={versions[release - 1]}"
        folder = tree / "pypi" / name  # the same paths in both releases
        if folder.exists():
            continue
        before = set(downloads.iterdir())
        pip_download(spec, downloads, binary=False)
        new = sorted(set(downloads.iterdir()) - before) or sorted(
            p
            for p in downloads.iterdir()
            if p.name.lower().startswith(name.lower().replace("-", "_")) and versions[release - 1] in p.name
        )
        extract(new[0], folder)
    for name, *versions in NPM:
        spec = f"{name}@{versions[release - 1]}"
        folder = tree / "npm" / name.replace("/", "__")
        if folder.exists():
            continue
        done = subprocess.run(
            ["npm", "pack", "--silent", spec], cwd=downloads, check=True, capture_output=True, text=True
        )
        extract(downloads / done.stdout.strip().splitlines()[-1], folder)
    return tree


def extract(archive: Path, folder: Path) -> None:
    """Unpack a .tar.gz, .tgz or .zip archive into folder (members outside it are refused)."""
    folder.mkdir(parents=True)
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as z:
            z.extractall(folder)
        return
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")


def count(tree: Path, extensions: set[str]) -> tuple[int, int]:
    """(files, lines) of the indexable files under tree."""
    files = lines = 0
    for path in tree.rglob("*"):
        if path.suffix in extensions and path.is_file():
            files += 1
            lines += path.read_bytes().count(b"\n")
    return files, lines


def main() -> None:
    """Fetch a release and print its size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dest", type=Path, default=CACHE / "registry")
    parser.add_argument("--release", type=int, choices=(1, 2), default=1)
    args = parser.parse_args()
    tree = fetch(args.dest, args.release)
    from team_index import EXTENSIONS

    print(tree, *count(tree, EXTENSIONS))


if __name__ == "__main__":
    main()
