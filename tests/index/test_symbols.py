"""find_symbol and the ranked repo map."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.index import WorkspaceIndex


def test_find_definition_by_name_and_qualified_name(shop_index: WorkspaceIndex) -> None:
    by_name = shop_index.find_symbol("reserve_stock")
    by_qualified = shop_index.find_symbol("Inventory.reserve_stock")
    for hits in (by_name, by_qualified):
        definition = hits[0]
        assert (definition.role, definition.kind, definition.qualified_name) == (
            "definition",
            "method",
            "Inventory.reserve_stock",
        )
        assert (definition.path, definition.line) == ("shop/inventory.py", 20)
        assert definition.end_line == 24
        assert definition.snippet == "def reserve_stock(self, sku: str, quantity: int) -> None:"


def test_references_follow_definitions_with_snippets(shop_index: WorkspaceIndex) -> None:
    hits = shop_index.find_symbol("format_currency")
    roles = [h.role for h in hits]
    assert roles == sorted(roles, key=lambda r: r != "definition")
    refs = {(h.path, h.line, h.kind, h.snippet) for h in hits if h.role == "reference"}
    assert ("shop/emails.py", 7, "import", "from shop.cart import ShoppingCart, format_currency") in refs
    assert any(path == "shop/emails.py" and kind == "call" for path, _, kind, _ in refs)
    assert len(shop_index.find_symbol("format_currency", limit=1)) == 1


def test_unknown_and_empty_names(shop_index: WorkspaceIndex) -> None:
    assert shop_index.find_symbol("NoSuchThing") == []
    assert shop_index.find_symbol("Inventory.no_such_method") == []
    with pytest.raises(ValueError):
        shop_index.find_symbol("  ")


def test_repo_map_ranks_referenced_files_first(shop_index: WorkspaceIndex) -> None:
    text = shop_index.repo_map(max_chars=4000)
    files = [line[:-1] for line in text.splitlines() if not line.startswith(" ")]
    # cart.py and inventory.py are used by the other modules; emails.py by nobody.
    assert set(files[:2]) == {"shop/cart.py", "shop/inventory.py"}
    assert files.index("shop/emails.py") > 1
    assert '  13: def format_currency(amount: Decimal, symbol: str = "$") -> str:' in text
    assert "class Inventory:" in text


def test_repo_map_respects_max_chars(shop_index: WorkspaceIndex) -> None:
    short = shop_index.repo_map(max_chars=200)
    assert 0 < len(short) <= 200
    assert shop_index.repo_map(max_chars=200) == short  # cached until the index changes


def test_repo_map_of_empty_workspace(tmp_path: Path) -> None:
    with WorkspaceIndex(tmp_path) as index:
        index.refresh()
        assert index.repo_map() == ""
        assert index.stats().files == 0
