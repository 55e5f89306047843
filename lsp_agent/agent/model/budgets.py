"""Budgets: per-run and per-day limits on tokens and cost, with the day's spend persisted across runs.

A run asks its RunBudget before every model request (and after every step) whether a limit is reached; the answer
is the message the user sees, naming the limit, what was spent and the setting that raises it. Every check records
the run's new spend in the day's ledger (the user state dir, shared by every lsp-agent process on the machine), so
the per-day limits hold across CLI runs, editor sessions and concurrent runs.
"""

from __future__ import annotations

import fcntl
import json
import logging
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lsp_agent.config import Settings

log = logging.getLogger(__name__)

LEDGER_FILE = "spend.json"
DAYS_KEPT = 31


def ledger_path() -> Path:
    """Where the per-day spend lives (the user state dir, e.g. ~/.local/state/lsp-agent/spend.json)."""
    from lsp_agent.workspace.applied import state_dir

    return state_dir() / LEDGER_FILE


@dataclass
class Spend:
    """Tokens and cost (USD, as litellm prices them) spent in one day."""

    tokens: int = 0
    cost: float = 0.0


class SpendLedger:
    """The per-day spend in a small JSON file, updated under a file lock (several processes may run at once)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or ledger_path()

    def today(self) -> Spend:
        """What was spent today so far."""
        return self._days().get(date.today().isoformat(), Spend())

    def add(self, tokens: int, cost: float) -> Spend:
        """Add to today's spend; returns the new total (the file is left alone when it cannot be written)."""
        day = date.today().isoformat()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a+", encoding="utf-8") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX)
                fh.seek(0)
                days = _parse(fh.read())
                total = days.get(day, Spend())
                days[day] = Spend(total.tokens + tokens, total.cost + cost)
                kept = dict(sorted(days.items())[-DAYS_KEPT:])
                fh.seek(0)
                fh.truncate()
                fh.write(json.dumps({d: vars(s) for d, s in kept.items()}, indent=1) + "\n")
                return days[day]
        except OSError as exc:
            log.warning("could not record the day's spend in %s: %s", self.path, exc)
            return Spend(tokens, cost)

    def _days(self) -> dict[str, Spend]:
        try:
            return _parse(self.path.read_text(encoding="utf-8"))
        except OSError:
            return {}


def _parse(text: str) -> dict[str, Spend]:
    """The ledger's days; a damaged file counts as empty (and is rewritten by the next add)."""
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    days: dict[str, Spend] = {}
    for day, spend in data.items():
        if isinstance(spend, dict):
            try:
                days[str(day)] = Spend(int(spend.get("tokens", 0)), float(spend.get("cost", 0.0)))
            except (TypeError, ValueError):
                continue
    return days


class RunBudget:
    """The limits of one run: tokens and cost per run, tokens and cost per day (each optional)."""

    def __init__(self, settings: Settings, ledger: SpendLedger | None = None) -> None:
        self.settings = settings
        self.ledger = ledger if ledger is not None else SpendLedger()  # every run counts towards the day
        self._recorded = Spend()  # the part of this run's spend already in the ledger

    def exceeded(self, tokens: int, cost: float) -> str | None:
        """The message naming the limit reached, or None; the day's ledger is read (and the run's spend recorded
        in it, so concurrent runs count) only when a daily limit is set: the run's end records it otherwise."""
        s = self.settings
        today = self.record(tokens, cost) if s.daily_token_budget or s.daily_cost_budget else Spend()
        if s.token_budget and tokens >= s.token_budget:
            return (
                f"token budget of {s.token_budget:,} tokens per run reached ({tokens:,} used); "
                "raise lspAgent.tokenBudget (--token-budget) to go on"
            )
        if s.cost_budget and cost >= s.cost_budget:
            return (
                f"cost budget of ${s.cost_budget:.4f} per run reached (${cost:.4f} spent); "
                "raise lspAgent.costBudget (--cost-budget, LSP_AGENT_COST_BUDGET) to go on"
            )
        if s.daily_token_budget and today.tokens >= s.daily_token_budget:
            return (
                f"daily token budget of {s.daily_token_budget:,} tokens reached ({today.tokens:,} used today); "
                "raise lspAgent.dailyTokenBudget (LSP_AGENT_DAILY_TOKEN_BUDGET) or wait until tomorrow"
            )
        if s.daily_cost_budget and today.cost >= s.daily_cost_budget:
            return (
                f"daily cost budget of ${s.daily_cost_budget:.4f} reached (${today.cost:.4f} spent today); "
                "raise lspAgent.dailyCostBudget (LSP_AGENT_DAILY_COST_BUDGET) or wait until tomorrow"
            )
        return None

    def record(self, tokens: int, cost: float) -> Spend:
        """Put the run's new spend (since the last call) in the day's ledger; returns today's total."""
        new_tokens, new_cost = tokens - self._recorded.tokens, cost - self._recorded.cost
        if new_tokens <= 0 and new_cost <= 0:
            return self.ledger.today()
        self._recorded = Spend(tokens, cost)
        return self.ledger.add(new_tokens, new_cost)


def spend_text(usage: dict[str, Any]) -> str:
    """The running spend of a run for a progress line, e.g. '12,345 tokens, $0.0123'."""
    tokens = int(usage.get("totalTokens") or 0)
    cost = float(usage.get("cost") or 0.0)
    estimated = "~" if usage.get("estimated") else ""
    return f"{estimated}{tokens:,} tokens, ${cost:.4f}"
