"""locate: files ranked for a task from an issue report (text, traceback frames, names that exist)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_agent.index import IndexConfig, WorkspaceIndex
from lsp_agent.index.locate import file_kind, module_paths

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m lsp_agent ARGS` in a subprocess, with this checkout importable."""
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": path},
    )


ISSUE = """Refunds fail with KeyError for partial amounts

When I refund part of a payment the gateway call crashes:

Traceback (most recent call last):
  File "/srv/app/views.py", line 88, in refund
    gateway.refund_payment(charge, Decimal("5.00"))
  File "/srv/app/.venv/lib/python3.11/site-packages/shop/payments.py", line 41, in refund_payment
    body["amount"] = str(amount)
KeyError: 'amount'
"""


def test_a_traceback_into_the_project_puts_its_file_first(shop_index: WorkspaceIndex) -> None:
    files = shop_index.locate(ISSUE, limit=3)
    top = files[0]
    assert top.path == "shop/payments.py"
    assert "traceback line 41" in top.reasons
    assert ("PaymentGateway.refund_payment", 38) in top.symbols
    assert [f.score for f in files] == sorted((f.score for f in files), reverse=True)


def test_prose_alone_finds_the_file(shop_index: WorkspaceIndex) -> None:
    files = shop_index.locate("the low stock report lists items that still have plenty left", limit=3)
    assert files[0].path == "shop/inventory.py"
    assert files[0].symbols[0] == ("Inventory", 13)  # a small class is one chunk, methods and all


def test_a_named_path_or_module_counts(shop_index: WorkspaceIndex) -> None:
    assert shop_index.locate("something is off in shop/emails.py")[0].path == "shop/emails.py"
    top = shop_index.locate("shop.cart.format_currency prints two minus signs")[0]
    assert top.path == "shop/cart.py" and "module shop.cart.format_currency" in top.reasons


def test_tests_and_docs_come_after_code_unless_asked(shop_repo: Path, shop_index: WorkspaceIndex) -> None:
    tests = shop_repo / "tests"
    tests.mkdir()
    (tests / "test_cart.py").write_text(
        "from shop.cart import ShoppingCart\n\n\ndef test_apply_discount_code_twice():\n"
        "    cart = ShoppingCart()\n    assert cart.apply_discount_code('SAVE10')\n"
        "    assert not cart.apply_discount_code('SAVE10')  # apply_discount_code once\n"
    )
    shop_index.refresh()
    assert shop_index.locate("apply_discount_code applies the same code twice")[0].path == "shop/cart.py"
    assert shop_index.locate("tests for apply_discount_code")[0].path == "tests/test_cart.py"


def test_unsaved_edits_are_located(shop_index: WorkspaceIndex) -> None:
    shop_index.update_file("shop/loyalty.py", "def award_loyalty_points(customer, order):\n    return 1\n")
    top = shop_index.locate("customers get no loyalty points for an order")[0]
    assert (top.path, top.symbols[0]) == ("shop/loyalty.py", ("award_loyalty_points", 1))


def test_empty_query_is_an_error(shop_index: WorkspaceIndex) -> None:
    with pytest.raises(ValueError, match="empty query"):
        shop_index.locate("  ")
    assert shop_index.locate("zzzqqq nothing matches") == []


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("tests/test_cart.py", "test"),
        ("sklearn/linear_model/tests/test_ridge.py", "test"),
        ("lib/matplotlib/testing/compare.py", "test"),
        ("src/conftest.py", "test"),
        ("docs/ref/models.txt", "doc"),
        ("README.md", "doc"),
        ("examples/plot_ridge.py", "example"),
        ("django/test/utils.py", "test"),
        ("django/db/models/query.py", "code"),
        ("src/click/testing_utils.py", "code"),
    ],
)
def test_file_kinds_from_paths(path: str, kind: str) -> None:
    assert file_kind(path) == kind


def test_module_paths() -> None:
    assert module_paths("a.b.C") == ["a/b/C.py", "a/b/C/__init__.py", "a/b.py", "a/b/__init__.py"]


def test_cli_files_json(shop_repo: Path) -> None:
    out = _run("search", "--files", "--json", "--top-k", "2", "credit card checksum is wrong", cwd=shop_repo)
    assert out.returncode == 0, out.stderr
    files = json.loads(out.stdout)
    assert files[0]["path"] == "shop/payments.py" and set(files[0]) == {"path", "score", "symbols", "reasons"}
    assert files[0]["symbols"][0] == {"name": "validate_card_number", "line": 8}


def test_cli_reads_a_pasted_issue_from_stdin(shop_repo: Path) -> None:
    out = _run("search", "--files", "-", "--top-k", "3", cwd=shop_repo, stdin=ISSUE)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith(" 1. shop/payments.py  score ")
    assert "PaymentGateway.refund_payment (line 38)" in lines[1]
    assert "traceback line 41" in lines[2]


@pytest.mark.slow
def test_dense_vectors_join_the_file_ranking(shop_repo: Path) -> None:
    """With an embedding model (litellm's real HTTP path to the scripted server) locate finds a synonym's file."""
    import re

    from lsp_agent.index import IndexConfig
    from lsp_agent.testing.scripted_model import ScriptedModelServer, hashed_embedding

    synonyms = {"automobile": "car", "motorcar": "car"}

    def embed(text: str) -> list[float]:
        words = re.findall(r"[a-z]+", text.lower())
        return hashed_embedding(" ".join(synonyms.get(w, w) for w in words), dim=512)

    (shop_repo / "shop" / "garage.py").write_text("def park_motorcar(spot):\n    return spot\n")
    with ScriptedModelServer([], embed=embed) as server:
        config = IndexConfig(embeddings="openai/test-embed", api_base=server.base_url, api_key="test")
        with WorkspaceIndex(shop_repo, config) as index:
            index.refresh()
            # The query's word does not occur in garage.py: only the vectors connect them.
            assert index.locate("automobile", limit=3)[0].path == "shop/garage.py"
        with WorkspaceIndex(
            shop_repo, IndexConfig(embeddings="none"), db_path=shop_repo / "lexical.db"
        ) as lexical:
            lexical.refresh()
            assert "shop/garage.py" not in [f.path for f in lexical.locate("automobile")]


def test_a_qualified_name_credits_only_its_own_definition(tmp_path: Path) -> None:
    """`Settings.load_config` is evidence for the file defining that method, not for a module-level
    `load_config` elsewhere (nor for the class alone); written alone, the bare name credits its definers."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "settings.py").write_text(
        "class Settings:\n    def load_config(self, path):\n        return open(path).read()\n"
    )
    (tmp_path / "app" / "loader.py").write_text("def load_config(path):\n    return path\n")
    (tmp_path / "app" / "Registry.py").write_text("def load_config(path):\n    return {}\n")
    (tmp_path / "app" / "other.py").write_text("class Settings2:\n    pass\n")
    report = "Reading the file fails. `Settings.load_config` returns the wrong text for paths with spaces."
    with WorkspaceIndex(tmp_path, IndexConfig()) as index:
        index.refresh()
        reasons = {f.path: f.reasons for f in index.locate(report, limit=10)}
        assert "defines Settings.load_config" in reasons["app/settings.py"]
        assert not any(r.startswith("defines") for r in reasons.get("app/loader.py", []))
        assert not any(r.startswith("defines") for r in reasons.get("app/Registry.py", []))
        both = index.locate(report + " The plain load_config helper does the same.", limit=10)
        reasons = {f.path: f.reasons for f in both}
        assert "defines load_config" in reasons["app/loader.py"]
        # A capitalised owner may be a module: `Registry.load_config` is the function of app/Registry.py.
        module = {f.path: f.reasons for f in index.locate("`Registry.load_config` drops the path", limit=10)}
        assert "defines load_config" in module["app/Registry.py"]
        assert not any(r.startswith("defines") for r in module.get("app/loader.py", []))
