"""Rank files, not only chunks, for a task: where to look first, from an identifier, a question or an issue report.

A file's score joins three kinds of evidence:
- text: BM25 of the query over the file's chunks (the best chunk plus a share of the next ones), and with an
  embedding model the best chunk's cosine;
- names: paths, traceback frames and identifiers the query names that exist in the index (a definition of a
  rare name, a path that matches) are evidence for the files that hold them;
- kind: tests, docs and examples are down-weighted unless the query asks for them.
benchmarks/localization.py measures each part (--ablations).
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from lsp_agent.index.chunk_owners import ChunkOwners, chunk_owners, file_paths
from lsp_agent.index.lexical import LexicalIndex
from lsp_agent.index.query import SHORT_QUERY_WORDS, QueryAnalysis, written_alone
from lsp_agent.index.tokens import tokenize

# SECOND_CHUNKS, PATH_EVIDENCE, FRAME_EVIDENCE, DEFINITION_EVIDENCE, LOCATE_TEST_FACTOR: the majority of three
# leave-one-repository-out folds (benchmarks/localization_folds.md, docs/benchmarks-localization.md).
SECOND_CHUNKS = 0.5  # share of a file's next best chunk scores added to its best one
NEXT_CHUNKS = 3
MAX_CHUNKS = 2000  # best chunks grouped into file scores
MIN_CHUNK_SHARE = 0.1  # chunks scoring below this share of the best chunk are left out of the file scores
# Name evidence multiplies a file's normalised text score by (1 + evidence), so a name alone cannot lift a file
# the text does not support (an issue names many classes and the files of a traceback's callers in passing);
# adding it instead measured worse. In a short query a named path adds: the query is about that file.
PATH_EVIDENCE = 0.4  # a path the query names
SHORT_PATH_EVIDENCE = 0.8  # the same in a short query, where it adds (not tuned: the folds' queries are long)
FRAME_EVIDENCE = 0.25  # a traceback frame inside the project; the last such frame gets twice this
MAX_PATH_EVIDENCE = 2.0
MULTIPLY_PATHS = True  # in long queries path evidence multiplies too (see rank_files)
DEFINITION_EVIDENCE = 0.2  # a definition of a name the query uses, for a name defined in one file
MAX_DEFINING_FILES = 20  # a name defined in more files than this is no evidence
MAX_QUERY_NAMES = 500  # names of a query looked up (SQLite's parameter limit is far above)
TEST_FACTOR = 0.5  # search's reranking (rerank.py)
LOCATE_TEST_FACTOR = 0.3  # locate's file ranking
DOC_FACTOR = 0.4
EXAMPLE_FACTOR = 0.6
DENSE_SHARE = 0.3  # with an embedding model: the share of the file score from the best chunk's cosine
NOT_ASKED_FACTOR = 0.5  # files of other kinds when a query asks for tests or docs
_TEST_PATH = re.compile(r"(^|/)(tests?|testing|test_\w+\.\w+|\w+_tests?\.\w+|conftest\.py)(/|$)")
_DOC_PATH = re.compile(r"(^|/)(docs?|doc_src)(/|$)|\.(md|rst|txt)$")
_EXAMPLE_PATH = re.compile(r"(^|/)(examples?|galleries|tutorials?|samples?|benchmarks?|asv_bench)(/|$)")


@dataclass
class FileHit:
    """A file worth looking at: its score, why, and the symbols in it that match the query."""

    path: str
    score: float
    symbols: list[tuple[str, int]] = field(default_factory=list)  # (symbol, line) of its best chunks or names
    reasons: list[str] = field(default_factory=list)


def file_kind(path: str) -> str:
    """ "test", "doc", "example" or "code", from the path alone."""
    if _TEST_PATH.search(path):
        return "test"
    if _EXAMPLE_PATH.search(path):
        return "example"
    if _DOC_PATH.search(path):
        return "doc"
    return "code"


def sorted_lookup(keys: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index into the ascending `keys` of each wanted value, whether it is there); indexes of misses are any."""
    if not len(keys):
        return np.zeros(len(wanted), dtype=np.int64), np.zeros(len(wanted), dtype=bool)
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return at, keys[at] == wanted


class ChunkFiles(Mapping[int, int]):
    """Chunk id -> file position over sorted arrays (a dict of every chunk took a second on 3M lines)."""

    def __init__(self, ids: np.ndarray, positions: np.ndarray) -> None:
        self.ids, self.positions = ids, positions

    def __getitem__(self, chunk_id: int) -> int:
        i = int(np.searchsorted(self.ids, chunk_id))
        if i < len(self.ids) and self.ids[i] == chunk_id:
            return int(self.positions[i])
        raise KeyError(chunk_id)

    def found(self, chunk_ids: list[int]) -> dict[int, int]:
        """The positions of those of `chunk_ids` that are here, in one search (a search's candidates at once)."""
        wanted = np.asarray(chunk_ids, dtype=np.int64)
        at, hit = sorted_lookup(self.ids, wanted)
        return dict(zip(wanted[hit].tolist(), self.positions[at[hit]].tolist(), strict=True))

    def __iter__(self) -> Iterator[int]:
        return iter(self.ids.tolist())

    def __len__(self) -> int:
        return len(self.ids)


class FileMap:
    """Which file each chunk belongs to (positions into `paths`), and each file's kind."""

    def __init__(
        self, conn: sqlite3.Connection, lexical: LexicalIndex, owners: ChunkOwners | None = None
    ) -> None:
        """`owners`: every chunk's file as read with the BM25 build (else read here)."""
        self.file_ids, self.paths = file_paths(conn)
        owners = owners or chunk_owners(conn)
        at, owned = sorted_lookup(self.file_ids, owners.files)
        self.chunk_positions = ChunkFiles(owners.ids[owned], at[owned])
        at, found = sorted_lookup(self.chunk_positions.ids, lexical.ids)
        positions = self.chunk_positions.positions
        self.chunk_file = np.where(found, positions[at] if len(positions) else -1, -1)
        self._factors: dict[tuple, np.ndarray] = {}

    @cached_property
    def position(self) -> dict[str, int]:
        """Path -> position (on first use)."""
        return {p: i for i, p in enumerate(self.paths)}

    @cached_property
    def id_position(self) -> dict[int, int]:
        """File id -> position (on first use)."""
        return {int(fid): i for i, fid in enumerate(self.file_ids.tolist())}

    @cached_property
    def kinds(self) -> list[str]:
        """file_kind() of every file (on first use: search needs it only for the files it reranks)."""
        return [file_kind(p) for p in self.paths]

    @cached_property
    def by_tail(self) -> dict[str, list[int]]:
        """Every path tail (a/b.py, b.py) -> positions of the files it ends."""
        tails: dict[str, list[int]] = defaultdict(list)
        for i, p in enumerate(self.paths):
            parts = p.split("/")
            for start in range(len(parts)):
                tails["/".join(parts[start:])].append(i)
        return tails

    def kind_factors(self, analysis: QueryAnalysis) -> np.ndarray:
        """kind_factor() of every file for this query (cached per kind of query)."""
        key = (analysis.wants_tests, analysis.wants_docs, LOCATE_TEST_FACTOR, DOC_FACTOR, EXAMPLE_FACTOR)
        if key not in self._factors:
            factors = [kind_factor(k, analysis, LOCATE_TEST_FACTOR) for k in self.kinds]
            self._factors[key] = np.array(factors, dtype=np.float64)
        return self._factors[key]


def kind_factor(kind: str, analysis: QueryAnalysis, test_factor: float | None = None) -> float:
    """How much a file of this kind counts for this query: the kinds it asks for lead, else code leads."""
    if analysis.wants_tests or analysis.wants_docs:
        asked = kind == "test" if analysis.wants_tests else False
        asked = asked or (analysis.wants_docs and kind in ("doc", "example"))
        return 1.0 if asked else NOT_ASKED_FACTOR
    test = TEST_FACTOR if test_factor is None else test_factor
    return {"test": test, "doc": DOC_FACTOR, "example": EXAMPLE_FACTOR}.get(kind, 1.0)


def text_scores(
    lexical: LexicalIndex, files: FileMap, terms: list[str], delta_files: Mapping[int, int]
) -> tuple[np.ndarray, dict[int, int]]:
    """Per-file text score (best chunk + a share of the next ones) and the best chunk id of each scored file."""
    scores = lexical.base_scores(terms)
    floor = float(scores.max()) * MIN_CHUNK_SHARE if len(scores) else 0.0
    hit = np.nonzero((scores > floor) & (files.chunk_file >= 0))[0]
    if len(hit) > MAX_CHUNKS:  # a long report matches much of the code a little: keep the best chunks
        hit = hit[np.argpartition(-scores[hit], MAX_CHUNKS - 1)[:MAX_CHUNKS]]
    owner, chunk, score = files.chunk_file[hit], lexical.ids[hit], scores[hit].astype(np.float64)
    delta = [(delta_files[c], c, s) for c, s in lexical.delta_scores(terms) if c in delta_files]
    if delta:
        owner = np.concatenate([owner, np.array([d[0] for d in delta], dtype=np.int64)])
        chunk = np.concatenate([chunk, np.array([d[1] for d in delta], dtype=np.int64)])
        score = np.concatenate([score, np.array([d[2] for d in delta], dtype=np.float64)])
    out = np.zeros(len(files.paths), dtype=np.float64)
    if not len(owner):
        return out, {}
    order = np.lexsort((-score, owner))  # by file, best chunk first
    owner, chunk, score = owner[order], chunk[order], score[order]
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    rank = np.arange(len(owner)) - np.repeat(starts, np.diff(np.r_[starts, len(owner)]))
    weight = np.where(rank == 0, 1.0, np.where(rank <= NEXT_CHUNKS, SECOND_CHUNKS, 0.0))
    out += np.bincount(owner, weights=score * weight, minlength=len(out))
    return out, dict(zip(owner[starts].tolist(), chunk[starts].tolist(), strict=True))


def path_matches(files: FileMap, mentioned: str) -> list[int]:
    """Files whose path is, or ends with, a mentioned path (at a folder boundary)."""
    mentioned = mentioned.strip("/")
    if not mentioned:
        return []
    exact = files.position.get(mentioned)
    if exact is not None:
        return [exact]
    parts = mentioned.split("/")
    # Try ever shorter tails of an absolute or foreign path (site-packages/django/db/models/query.py).
    for start in range(len(parts)):
        tail = "/".join(parts[start:])
        if start and len(parts) - start < 2 and len(parts) > 1:
            break
        found = files.by_tail.get(tail, [])
        if found:
            return found if len(found) <= 3 else []
    return []


def module_paths(dotted: str) -> list[str]:
    """Paths a dotted module name may live at (a.b.c -> a/b/c.py, a/b/c/__init__.py, a/b.py for a.b.Name)."""
    parts = dotted.split(".")
    out = []
    for end in range(len(parts), 1, -1):
        base = "/".join(parts[:end])
        out += [f"{base}.py", f"{base}/__init__.py"]
    return out


def name_evidence(
    conn: sqlite3.Connection, files: FileMap, analysis: QueryAnalysis, path_weight: float | None = None
) -> tuple[dict[int, float], dict[int, list[str]], dict[int, list[tuple[str, int]]]]:
    """Bonus per file from named paths, modules and traceback frames; the reasons; the named symbols' lines."""
    path_weight = PATH_EVIDENCE if path_weight is None else path_weight
    bonus: dict[int, float] = defaultdict(float)
    reasons: dict[int, list[str]] = defaultdict(list)
    symbols: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for path in analysis.paths:
        for f in path_matches(files, path):
            bonus[f] += path_weight
            reasons[f].append(f"named: {path}")
    in_repo = [(f, line, func) for p, line, func in analysis.frames for f in path_matches(files, p)[:1]]
    for k, (f, line, _) in enumerate(in_repo):
        bonus[f] += FRAME_EVIDENCE * (2 if k == len(in_repo) - 1 else 1)
        reasons[f].append(f"traceback line {line}")
        row = conn.execute(
            "SELECT symbol, start FROM chunks WHERE file_id = ? AND start <= ? AND ? <= end_line "
            "AND symbol IS NOT NULL ORDER BY end_line - start LIMIT 1",
            (int(files.file_ids[f]), line, line),
        ).fetchone()
        if row is not None:
            symbols[f].append((row[0], row[1]))
    for dotted in analysis.dotted:
        for path in module_paths(dotted):
            f = files.position.get(path)
            if f is not None:
                bonus[f] += path_weight / 2
                reasons[f].append(f"module {dotted}")
                break
    for f in bonus:
        bonus[f] = min(bonus[f], MAX_PATH_EVIDENCE)
    return bonus, reasons, symbols


def _definition_evidence(
    conn: sqlite3.Connection,
    files: FileMap,
    analysis: QueryAnalysis,
    bonus: dict[int, float],
    reasons: dict[int, list[str]],
    symbols: dict[int, list[tuple[str, int]]],
) -> None:
    """Files defining names the query uses: rarer names (fewer defining files) weigh more.

    A qualified name credits only its own definition: `Settings.load_config` is not a use of a module-level
    `load_config` elsewhere, nor of `Settings` itself, unless the query also writes that part alone.
    """
    wanted = _written_names(analysis)
    if not wanted:
        return
    definers: dict[str, dict[int, tuple[str, int]]] = defaultdict(dict)
    names = list(wanted)[:MAX_QUERY_NAMES]
    marks = ",".join("?" * len(names))
    # Names defined all over (get, save, __init__) say nothing about where to look: left out before reading rows.
    rare = [
        name
        for name, count in conn.execute(
            f"SELECT name, COUNT(DISTINCT file_id) FROM symbols WHERE name IN ({marks}) AND kind != 'variable' "
            "GROUP BY name",
            names,
        )
        if count <= MAX_DEFINING_FILES
    ]
    if rare:
        marks = ",".join("?" * len(rare))
        rows = conn.execute(
            "SELECT name, qualified_name, file_id, line FROM symbols "
            f"WHERE name IN ({marks}) AND kind != 'variable'",
            rare,
        )
        for name, qualified, file_id, line in rows:
            f = files.id_position.get(file_id)
            if f is None or not any(_same_owner(w, qualified or name, files.paths[f]) for w in wanted[name]):
                continue
            definers[name].setdefault(f, (qualified or name, line))
    n_files = max(len(files.paths), 2)
    for where in definers.values():
        weight = DEFINITION_EVIDENCE * math.log(n_files / len(where)) / math.log(n_files)
        for f, (qualified, line) in where.items():
            bonus[f] += weight
            reasons[f].append(f"defines {qualified}")
            symbols[f].append((qualified, line))


def _written_names(analysis: QueryAnalysis) -> dict[str, list[str]]:
    """The names a query uses, by their last part, as written (a part of a dotted name only if also alone)."""
    parts = {part for name in analysis.dotted for part in name.split(".")}
    wanted: dict[str, list[str]] = defaultdict(list)
    for name in analysis.identifiers:
        if name not in parts or written_alone(name, analysis.text):
            wanted[name].append(name)
    for name in analysis.dotted:
        wanted[name.rsplit(".", 1)[-1]].append(name)
    return {last: names for last, names in wanted.items() if len(last) > 2}


def _same_owner(written: str, qualified: str, path: str) -> bool:
    """`Class.name` as written must match the definition's class (or a module-level name's capitalised module,
    `Image.open`); `module.name` or `obj.name` match any."""
    parts = written.split(".")
    if len(parts) < 2 or not parts[-2][:1].isupper():
        return True
    owner = qualified.split(".")[-2:-1]
    return owner == [parts[-2]] or (not owner and path.rsplit("/", 1)[-1].split(".")[0] == parts[-2])


def rank_files(
    lexical: LexicalIndex,
    files: FileMap,
    conn: sqlite3.Connection,
    analysis: QueryAnalysis,
    delta_files: Mapping[int, int],
    limit: int,
    dense: np.ndarray | None = None,
) -> list[tuple[int, float, int | None, list[str], list[tuple[str, int]]]]:
    """(file position, score, best chunk id, reasons, named symbols) of the best `limit` files.

    `dense` (optional) is each file's best chunk cosine to the query; it takes DENSE_SHARE of the text score.
    """
    text, best = text_scores(lexical, files, tokenize(analysis.text), delta_files)
    top = float(text.max()) if len(text) else 0.0
    scores = text / top if top > 0 else text
    if dense is not None and len(dense) == len(scores) and float(dense.max()) > 0:
        scores = (1 - DENSE_SHARE) * scores + DENSE_SHARE * np.clip(dense, 0, None) / float(dense.max())
    short = len(analysis.text.split()) <= SHORT_QUERY_WORDS
    bonus, reasons, symbols = name_evidence(conn, files, analysis, SHORT_PATH_EVIDENCE if short else None)
    defined: dict[int, float] = defaultdict(float)
    _definition_evidence(conn, files, analysis, defined, reasons, symbols)
    for f, b in defined.items():
        scores[f] *= 1 + b
    for f, b in bonus.items():
        if short or not MULTIPLY_PATHS:
            scores[f] += b  # the query is (about) this path: it leads whatever the text says
        else:
            scores[f] *= 1 + b  # a long report mentions paths in passing, frames of callers among them
    scores *= files.kind_factors(analysis)
    k = min(limit, int((scores > 0).sum()))
    if k <= 0:
        return []
    order = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    order = sorted(order.tolist(), key=lambda f: (-scores[f], files.paths[f]))[:k]
    return [(f, float(scores[f]), best.get(f), reasons.get(f, []), symbols.get(f, [])) for f in order]
