"""A mixed-language corpus for benchmarks/index_speed.py --mixed, gathered into benchmarks/.cache/mixed/.

Each language comes from code already on the machine or from a package registry through its ordinary client
(nothing here is committed):
  javascript  npm's own package (`npm root -g`/npm, lib/ and node_modules/)
  typescript  `npm pack rxjs@7.8.2` (src/)
  java        the JDK's lib/src.zip (java.base/java/util/)
  c, cpp      /usr/include/*.h and /usr/include/c++/N/bits/*.h (.h goes to C or C++ by its content)
  go          Debian's golang-1.19-src (`apt-get download`; src/net/ and src/go/)
  rust        Debian's librust-syn-dev and librust-regex-syntax-dev (`apt-get download`; the crates' src/)
  python      django/db/ from the Django sdist the benchmark already uses
A language whose source is missing is left out, and the corpus says so.
"""

from __future__ import annotations

import glob
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

MAX_FILES = 600  # per language, so no single one dominates the corpus


def _copy(files: Iterable[Path], base: Path, dest: Path) -> int:
    """Copy files under dest keeping their path below base; how many."""
    n = 0
    for path in sorted(files)[:MAX_FILES]:
        out = dest / path.relative_to(base)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, out)
        n += 1
    return n


def _javascript(dest: Path, work: Path, django: Path) -> int:
    root = subprocess.run(["npm", "root", "-g"], capture_output=True, text=True, check=True).stdout.strip()
    npm = Path(root) / "npm"
    return _copy([p for p in npm.rglob("*.js") if p.is_file()], npm, dest)


def _typescript(dest: Path, work: Path, django: Path) -> int:
    subprocess.run(["npm", "pack", "-q", "rxjs@7.8.2"], cwd=work, capture_output=True, check=True)
    with tarfile.open(next(work.glob("rxjs-*.tgz"))) as tar:
        tar.extractall(work / "rxjs", filter="data")
    src = work / "rxjs" / "package" / "src"
    return _copy(src.rglob("*.ts"), src, dest)


def _java(dest: Path, work: Path, django: Path) -> int:
    archive = next(Path(p) for p in sorted(glob.glob("/usr/lib/jvm/*/lib/src.zip")) if Path(p).exists())
    with zipfile.ZipFile(archive) as z:
        names = [n for n in z.namelist() if n.startswith("java.base/java/util/") and n.endswith(".java")]
        for name in names[:MAX_FILES]:
            z.extract(name, work / "jdk")
    return _copy((work / "jdk").rglob("*.java"), work / "jdk", dest)


def _c_and_cpp(dest: Path, work: Path, django: Path) -> int:
    include = Path("/usr/include")
    n = _copy([p for p in include.glob("*.h") if p.is_file()], include, dest / "include")
    cxx = sorted(include.glob("c++/*/bits"))
    return n + (_copy(cxx[-1].glob("*.h"), cxx[-1], dest / "cxx-bits") if cxx else 0)


def _debian(packages: list[str], work: Path) -> Path:
    """Download and unpack Debian packages; the unpacked root."""
    subprocess.run(["apt-get", "download", "-q", *packages], cwd=work, capture_output=True, check=True)
    for deb in work.glob("*.deb"):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(work / "root")], check=True)
    return work / "root"


def _go(dest: Path, work: Path, django: Path) -> int:
    src = _debian(["golang-1.19-src"], work) / "usr/share/go-1.19/src"
    files = [
        p
        for d in ("net", "go")
        for p in (src / d).rglob("*.go")
        if p.is_file() and not p.name.endswith("_test.go") and "testdata" not in p.parts
    ]
    return _copy(files, src, dest)


def _rust(dest: Path, work: Path, django: Path) -> int:
    registry = _debian(["librust-syn-dev", "librust-regex-syntax-dev"], work) / "usr/share/cargo/registry"
    return _copy([p for p in registry.rglob("*.rs") if "/src/" in p.as_posix()], registry, dest)


def _python(dest: Path, work: Path, django: Path) -> int:
    db = django / "django" / "db"
    return _copy(db.rglob("*.py"), db, dest)


SOURCES: dict[str, Callable[[Path, Path, Path], int]] = {
    "javascript": _javascript,
    "typescript": _typescript,
    "java": _java,
    "c-cpp": _c_and_cpp,
    "go": _go,
    "rust": _rust,
    "python": _python,
}


def mixed_tree(cache: Path, django: Path) -> Path:
    """The corpus folder, built once (one sub-folder per source); prints what each source gave."""
    dest = cache / "mixed"
    if dest.exists():
        return dest
    staging = cache / "mixed.partial"
    shutil.rmtree(staging, ignore_errors=True)
    for name, gather in SOURCES.items():
        with tempfile.TemporaryDirectory(dir=cache) as work:
            try:
                n = gather(staging / name, Path(work), django)
            except (OSError, subprocess.CalledProcessError, StopIteration) as exc:
                shutil.rmtree(staging / name, ignore_errors=True)
                print(f"  mixed corpus: {name} left out ({exc})")
                continue
        print(f"  mixed corpus: {name}, {n} files")
    staging.rename(dest)
    return dest
