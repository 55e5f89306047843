"""Ranking on the shop fixture: natural-language and identifier queries, overrides, dense fusion."""

from __future__ import annotations

import pytest

from lsp_agent.index import SearchHit, WorkspaceIndex


def _top(hits: list[SearchHit], n: int = 1) -> list[str | None]:
    return [h.symbol for h in hits[:n]]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("check whether a credit card number is valid", "validate_card_number"),
        ("give the money back to the customer", "PaymentGateway.refund_payment"),
        ("which products are running out of stock", "Inventory.low_stock_items"),
        ("read stock levels from a csv spreadsheet", "load_inventory_from_csv"),
        ("email a receipt after checkout", "send_order_confirmation"),
        ("apply_discount_code", "ShoppingCart.apply_discount_code"),
        ("formatCurrency", "format_currency"),
    ],
)
def test_queries_find_the_function(shop_index: WorkspaceIndex, query: str, expected: str) -> None:
    target = next(s for s in shop_index.find_symbol(expected) if s.role == "definition")
    hits = shop_index.search(query, top_k=5)
    # The answer is the chunk holding the definition (a method's own chunk, or its small class's).
    found = [h.path == target.path and h.start <= target.line <= h.end for h in hits[:2]]
    assert any(found), [(h.symbol, h.score) for h in hits]


def test_hits_carry_location_kind_and_text(shop_index: WorkspaceIndex) -> None:
    hit = shop_index.search("Luhn checksum", top_k=1)[0]
    assert hit.path == "shop/payments.py"
    assert (hit.start, hit.symbol, hit.kind) == (8, "validate_card_number", "function")
    assert hit.text.splitlines()[0] == "def validate_card_number(number: str) -> bool:"
    assert hit.end == hit.start + len(hit.text.splitlines()) - 1
    scores = [h.score for h in shop_index.search("stock", top_k=10)]
    assert scores == sorted(scores, reverse=True)


def test_non_python_files_are_searchable(shop_index: WorkspaceIndex) -> None:
    hit = shop_index.search("tiny example shop used by the index tests", top_k=1)[0]
    assert (hit.path, hit.kind, hit.symbol) == ("README.md", "lines", None)


def test_empty_query_is_an_error(shop_index: WorkspaceIndex) -> None:
    with pytest.raises(ValueError, match="empty query"):
        shop_index.search("   ")
    assert shop_index.search("zzzqqq nothing matches this") == []


def test_overrides_rank_in_memory_versions(shop_index: WorkspaceIndex) -> None:
    new_text = (
        '"""Card payments."""\n\n\ndef issue_gift_voucher(customer, amount):\n'
        '    """Send the customer a voucher worth amount instead of cash."""\n    return (customer, amount)\n'
    )
    hits = shop_index.search("voucher for the customer", overrides={"shop/payments.py": new_text})
    assert hits[0].symbol == "issue_gift_voucher" and hits[0].path == "shop/payments.py"
    assert hits[0].start == 4
    # The disk version of the overridden file is hidden for that query only.
    assert "validate_card_number" not in _top(
        shop_index.search("credit card number valid", overrides={"shop/payments.py": new_text}), 10
    )
    assert _top(shop_index.search("credit card number valid"))[0] == "validate_card_number"
    # None deletes a file for the query; new paths are added.
    hits = shop_index.search("refund", overrides={"shop/payments.py": None})
    assert all(h.path != "shop/payments.py" for h in hits)
    hits = shop_index.search("voucher", overrides={"shop/vouchers.py": new_text})
    assert hits[0].path == "shop/vouchers.py"


def test_update_file_and_remove_file(shop_index: WorkspaceIndex) -> None:
    shop_index.update_file("shop/emails.py", "def send_sms_notification(phone):\n    return phone\n")
    assert _top(shop_index.search("sms notification"))[0] == "send_sms_notification"
    assert "send_order_confirmation" not in _top(shop_index.search("order confirmation receipt"), 10)
    shop_index.remove_file(shop_index.root / "shop" / "emails.py")
    assert shop_index.search("sms notification") == []
    with pytest.raises(ValueError, match="outside the workspace"):
        shop_index.update_file("/elsewhere/x.py", "x = 1\n")
