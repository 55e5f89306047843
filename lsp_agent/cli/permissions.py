"""`lsp-agent permissions list|revoke [--repo PATH]`: the remembered "Allow always" / "Reject always" answers."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from lsp_agent.agent.consent.store import PermissionStore


def add_parser(commands: argparse._SubParsersAction) -> None:
    """`permissions list|revoke`."""
    p = commands.add_parser("permissions", help='list or revoke remembered "always" permission answers')
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    listing = actions.add_parser("list", help="show the remembered answers of a workspace")
    listing.add_argument("--repo", default=".", help="workspace root (default: current directory)")
    listing.add_argument("--json", action="store_true", help="print JSON")
    revoke = actions.add_parser("revoke", help="forget a remembered answer (so the agent asks again)")
    revoke.add_argument("rule", nargs="?", help='the rule as `list` shows it, e.g. "run_command: pytest -q"')
    revoke.add_argument("--all", action="store_true", help="forget every remembered answer of the workspace")
    revoke.add_argument("--repo", default=".", help="workspace root (default: current directory)")
    p.set_defaults(handler=run_permissions)


def run_permissions(args: argparse.Namespace) -> int:
    """Handler of `lsp-agent permissions`; returns the exit status."""
    root = Path(getattr(args, "repo", ".") or ".").expanduser().resolve()
    if not root.is_dir():
        print(f"error: --repo {root} is not a directory", file=sys.stderr)
        return 2
    store = PermissionStore(root)
    action = getattr(args, "action", None)
    if action == "revoke":
        return _revoke(store, getattr(args, "rule", None), bool(getattr(args, "all", False)))
    if action != "list":
        print("usage: lsp-agent permissions list|revoke [--repo PATH]", file=sys.stderr)
        return 2
    rules = store.rules()
    if getattr(args, "json", False):
        data = {
            "workspace": str(store.workspace),
            "file": str(store.path),
            "rules": [r.to_dict() for r in rules],
        }
        print(json.dumps(data, indent=1))
        return 0
    if not rules:
        print(f"no remembered permissions for {store.workspace}")
        return 0
    print(f"remembered permissions for {store.workspace} ({store.path}):")
    for rule in rules:
        print(f"  {rule.decision:5}  {rule.key}" + (f"  (since {rule.created})" if rule.created else ""))
    return 0


def _revoke(store: PermissionStore, rule: str | None, everything: bool) -> int:
    """Forget one rule (by the name `list` shows) or all of them."""
    if not everything and not rule:
        print(
            'error: name the rule to revoke as `list` shows it (e.g. "run_command: pytest -q") or pass --all',
            file=sys.stderr,
        )
        return 2
    try:
        gone = store.revoke(None if everything else rule)
    except OSError as exc:
        print(f"error: could not update {store.path}: {exc}", file=sys.stderr)
        return 1
    if not gone and not everything:
        print(
            f"error: no remembered permission {rule!r} for {store.workspace} (see `lsp-agent permissions list`)",
            file=sys.stderr,
        )
        return 1
    for r in gone:
        print(f"revoked: {r.decision} {r.key}")
    if everything and not gone:
        print(f"no remembered permissions for {store.workspace}")
    return 0
