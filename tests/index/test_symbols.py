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


def test_references_come_from_unsaved_buffers_and_deep_definitions_are_found(
    shop_index: WorkspaceIndex,
) -> None:
    text = (shop_index.root / "shop/emails.py").read_text()
    text += (
        "\n\nclass Digest:\n    class Section:\n        @staticmethod\n        def render(cart):\n"
        "            def line_for(item):\n                return format_currency(item)\n"
        "            return [line_for(i) for i in cart]\n"
    )
    shop_index.update_file("shop/emails.py", text)  # an editor buffer, not saved
    last = len(text.splitlines())
    refs = [h for h in shop_index.find_symbol("format_currency") if h.role == "reference"]
    assert ("shop/emails.py", last - 1, "return format_currency(item)") in {
        (h.path, h.line, h.snippet) for h in refs
    }
    deep = shop_index.find_symbol("line_for")
    assert [(h.role, h.qualified_name, h.line) for h in deep if h.role == "definition"] == [
        ("definition", "Digest.Section.render.line_for", last - 2)
    ]
    assert any(h.role == "reference" and h.line == last for h in deep)


def test_repo_map_ignores_names_only_defined_in_a_file(tmp_path: Path) -> None:
    # b.py and z.py both define `handle`: that each mentions it in its own definition links neither to the other.
    (tmp_path / "b.py").write_text("def handle(event):\n    pass\n\n\ndef process_order(order):\n    pass\n")
    (tmp_path / "z.py").write_text(
        "class Z:\n    def __init__(self):\n        pass\n\n    def handle(self):\n        pass\n"
    )
    (tmp_path / "c.py").write_text("from b import process_order\n\nprocess_order(None)\n")
    with WorkspaceIndex(tmp_path) as index:
        index.refresh()
        files = [line[:-1] for line in index.repo_map().splitlines() if not line.startswith(" ")]
    assert files == ["b.py", "c.py", "z.py"]  # c.py and z.py tie, so path order


@pytest.mark.filterwarnings("error::RuntimeWarning")  # a 0/0 in PageRank would only warn, then rank by NaN
def test_repo_map_when_every_file_mentions_the_names(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def compute_total(x):\n    return x\n")
    (tmp_path / "b.py").write_text("from a import compute_total\n\nprint(compute_total(1))\n")
    with WorkspaceIndex(tmp_path) as index:
        index.refresh()
        text = index.repo_map()
    assert "a.py:" in text and "def compute_total(x):" in text and "nan" not in text
