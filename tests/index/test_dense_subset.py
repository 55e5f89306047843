"""The dense layer's subset (benchmarks/localization_dense_subset.py): which instances, which half, the tree order,
and the share chosen on the dev halves. Pure Python: no torch, no embedding model, no trees."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.localization_dense_subset import (  # noqa: E402
    CHUNK_RRF,
    LEXICAL,
    choose_share,
    dense_subset,
    figures,
    report,
    share_system,
    tree_order,
)

DATA = Path("/work/shared/bench/swe-lite-localization-dev.jsonl")


def _rows(counts: dict[str, int]) -> list[dict]:
    return [
        {"repo": repo, "id": f"{repo.split('/')[1]}__{repo.split('/')[1]}-{1000 + i}"}
        for repo, n in counts.items()
        for i in range(n)
    ]


def test_subset_is_deterministic_and_independent_of_row_order() -> None:
    rows = _rows({"a/big": 114, "b/small": 23, "c/tiny": 5})
    shuffled = rows[:]
    random.Random(1).shuffle(shuffled)
    assert dense_subset(rows) == dense_subset(shuffled) == dense_subset(rows)
    assert dense_subset(rows, seed=35) != dense_subset(rows)


def test_halves_are_disjoint_and_hold_up_to_thirty_per_repository() -> None:
    rows = _rows({"a/big": 114, "b/small": 23, "c/tiny": 5})
    chosen = dense_subset(rows)
    for repo, n, dev, held in (("a/big", 30, 15, 15), ("b/small", 23, 11, 12), ("c/tiny", 5, 2, 3)):
        halves = [half for r, half in chosen.values() if r == repo]
        assert len(halves) == n
        assert (halves.count("dev"), halves.count("held-out")) == (dev, held)
    assert all(instance in {r["id"] for r in rows} for instance in chosen)


def test_subset_is_the_protocols_sample_then_shuffle() -> None:
    rows = _rows({"a/big": 114})
    ids = sorted(r["id"] for r in rows)
    rng = random.Random(34)
    expected = rng.sample(ids, 30)
    rng.shuffle(expected)
    chosen = dense_subset(rows)
    assert [i for i in expected if chosen[i][1] == "dev"] == expected[:15]
    assert set(chosen) == set(expected)


@pytest.mark.skipif(not DATA.is_file(), reason="the localization data file is not on this machine")
def test_real_data_subset_sizes() -> None:
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    chosen = dense_subset(rows)
    per_repo = {repo: [h for r, h in chosen.values() if r == repo] for repo in {r["repo"] for r in rows}}
    assert sorted(len(halves) for halves in per_repo.values()) == [23, 23, 30]


def test_tree_order_takes_repositories_in_turn_cheapest_first_tree_first() -> None:
    trees = [
        {"name": "d@1", "repo": "d", "instances": 8, "to_embed": 20000},
        {"name": "d@2", "repo": "d", "instances": 2, "to_embed": 20000},
        {"name": "s@1", "repo": "s", "instances": 4, "to_embed": 8000},
        {"name": "s@2", "repo": "s", "instances": 3, "to_embed": 3000},
        {"name": "m@1", "repo": "m", "instances": 5, "to_embed": 9000},
    ]
    assert tree_order(trees) == ["s@2", "m@1", "d@1", "s@1", "d@2"]


def _record(repo: str, half: str, ranks: dict[str, int | None]) -> dict:
    return {"id": f"{repo}-{half}", "repo": repo, "half": half, "tree": f"{repo}@1", "ranks": ranks}


def test_share_is_chosen_on_the_dev_halves_only() -> None:
    hit, miss = 1, None
    records = [
        # dev: share 0.5 finds both repositories' gold files in the top 5, 0.3 only one
        _record("x", "dev", {share_system(0.1): miss, share_system(0.2): miss, share_system(0.3): 2,
                             share_system(0.5): 4, LEXICAL: 3}),
        _record("y", "dev", {share_system(0.1): miss, share_system(0.2): 9, share_system(0.3): 7,
                             share_system(0.5): 5, LEXICAL: 3}),
        # held-out: 0.1 is best here, which must not influence the choice
        _record("x", "held-out", {share_system(0.1): hit, share_system(0.2): miss, share_system(0.3): miss,
                                  share_system(0.5): miss, LEXICAL: hit}),
    ]  # fmt: skip
    figs = figures(records)
    assert choose_share(figs) == 0.5
    assert figs["held-out"][share_system(0.1)]["x"]["acc@1"] == 1.0
    assert figs["dev"][LEXICAL]["all"]["acc@5"] == 1.0
    assert figs["dev"][share_system(0.2)]["y"]["MRR"] == pytest.approx(1 / 9)


def test_equal_dev_figures_keep_the_default_then_grid_order() -> None:
    same = {share_system(s): 2 for s in (0.1, 0.2, 0.3, 0.5)}
    assert choose_share(figures([_record("x", "dev", same), _record("y", "dev", same)])) == 0.3
    # 0.2 and 0.5 tie above the default: one change each from it, so the first in grid order wins
    tie = {share_system(0.1): None, share_system(0.2): 1, share_system(0.3): 6, share_system(0.5): 1}
    assert choose_share(figures([_record("x", "dev", tie)])) == 0.2
    late = {share_system(0.1): 1, share_system(0.2): 1, share_system(0.3): 6, share_system(0.5): 1}
    assert choose_share(figures([_record("x", "dev", late)])) == 0.1
    assert choose_share(figures([_record("x", "held-out", same)])) is None


def test_report_writes_tables_and_figures(tmp_path: Path) -> None:
    ranks = {LEXICAL: 1, CHUNK_RRF: None, **{share_system(s): 2 for s in (0.1, 0.2, 0.3, 0.5)}}
    lines = [_record("x", "dev", ranks), _record("x", "held-out", ranks)]
    (tmp_path / "ranks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    result = report(tmp_path)
    assert result["chosen_share"] == 0.3 and result["trees"] == ["x@1"]
    saved = json.loads((tmp_path / "figures.json").read_text())
    assert saved["figures"]["held-out"][CHUNK_RRF]["x"]["acc@10"] == 0.0
    assert "held-out half, x (1 instances)" in (tmp_path / "tables.txt").read_text()
