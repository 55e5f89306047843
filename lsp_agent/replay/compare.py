"""Where a replayed run differs from its recording: a request whose messages changed, a tool result, the ending."""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsp_agent.replay.recording import Recording

DIFF_LINES = 24  # lines of a diff shown per divergence
# Parts of a tool's output that change from run to run: durations ("in 0.12s", "1.5 ms") and scratch directories.
_VOLATILE = (
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|ms|sec|seconds)\b"), "<time>"),
    (re.compile(r"/tmp/[\w.-]*lsp[\w.-]*(?:/[\w.-]+)*"), "<scratch>"),
)


@dataclass
class Divergence:
    """One place where the replay did not do what the recording did."""

    where: str  # "request 3", "tool call 2 (read_file)", "end of the run"
    what: str  # one line saying what differs
    diff: str = ""  # a short unified diff, recorded (-) against replayed (+)

    def render(self) -> str:
        """The divergence as text for a terminal."""
        text = f"{self.where}: {self.what}"
        return f"{text}\n{self.diff}" if self.diff else text


class Normalizer:
    """Makes recorded and replayed text comparable: each run's root becomes <root>, volatile figures are masked."""

    def __init__(self, recorded_root: Path | None, replay_root: Path) -> None:
        self.roots = sorted(
            {str(r) for r in (recorded_root, replay_root) if r is not None}, key=len, reverse=True
        )

    def text(self, value: Any) -> str:
        """A value as comparable text."""
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
        for root in self.roots:
            text = text.replace(root, "<root>")
        for pattern, mask in _VOLATILE:
            text = pattern.sub(mask, text)
        return text


def compare(recorded: Recording, replayed: Recording, normalize: Normalizer) -> list[Divergence]:
    """Every divergence of the replayed run from the recorded one: requests first, then tool calls, then the end."""
    found = _requests(recorded, replayed, normalize)
    found += _tools(recorded, replayed, normalize)
    found += _ending(recorded, replayed)
    return found


def _requests(recorded: Recording, replayed: Recording, normalize: Normalizer) -> list[Divergence]:
    """Requests whose messages differ; a difference carried into later requests (a changed prompt) shows once."""
    found: list[Divergence] = []
    seen: set[tuple[int, str, str]] = set()
    for number, (old, new) in enumerate(zip(recorded.requests, replayed.requests, strict=False), 1):
        for index, (a, b) in enumerate(zip(old.messages, new.messages, strict=False)):
            old_text, new_text = _message_text(a, normalize), _message_text(b, normalize)
            if old_text == new_text or (index, old_text, new_text) in seen:
                continue
            seen.add((index, old_text, new_text))
            role = b.get("role") or a.get("role")
            found.append(
                Divergence(
                    f"request {number}", f"message {index + 1} ({role}) differs", unified(old_text, new_text)
                )
            )
            break
        if len(old.messages) != len(new.messages):
            found.append(
                Divergence(
                    f"request {number}",
                    f"{len(new.messages)} messages where the recording sent {len(old.messages)}",
                )
            )
    if len(recorded.requests) != len(replayed.requests):
        found.append(
            Divergence(
                "model requests",
                f"the replay made {len(replayed.requests)} where the recording made {len(recorded.requests)}",
            )
        )
    return found


def _tools(recorded: Recording, replayed: Recording, normalize: Normalizer) -> list[Divergence]:
    """Tool calls whose name, arguments, success or output differ."""
    found: list[Divergence] = []
    for number, (old, new) in enumerate(zip(recorded.tools, replayed.tools, strict=False), 1):
        where = f"tool call {number} ({old.get('name')})"
        if (old.get("name"), normalize.text(old.get("arguments"))) != (
            new.get("name"),
            normalize.text(new.get("arguments")),
        ):
            found.append(
                Divergence(
                    where,
                    "a different call",
                    unified(_call_text(old, normalize), _call_text(new, normalize)),
                )
            )
            continue
        old_out, new_out = normalize.text(old.get("output") or ""), normalize.text(new.get("output") or "")
        if old.get("ok") != new.get("ok") or old_out != new_out:
            status = f"ok {old.get('ok')} -> {new.get('ok')}; " if old.get("ok") != new.get("ok") else ""
            found.append(Divergence(where, f"{status}the result differs", unified(old_out, new_out)))
    if len(recorded.tools) != len(replayed.tools):
        found.append(
            Divergence(
                "tool calls",
                f"the replay made {len(replayed.tools)} where the recording made {len(recorded.tools)}",
            )
        )
    return found


def _ending(recorded: Recording, replayed: Recording) -> list[Divergence]:
    """A run that ended differently (stop reason or success)."""
    if not recorded.finished:
        return []  # the recorded run was stopped before its end: there is no ending to compare
    old, new = recorded.done or {}, replayed.done or {}
    keys = ("stop_reason", "success")
    if all(old.get(k) == new.get(k) for k in keys):
        return []
    was = ", ".join(f"{k} {old.get(k)}" for k in keys)
    now = ", ".join(f"{k} {new.get(k)}" for k in keys)
    return [Divergence("end of the run", f"{now} where the recording had {was}")]


def _message_text(message: dict[str, Any], normalize: Normalizer) -> str:
    """A message as comparable text: role, content and tool calls."""
    parts = [f"[{message.get('role')}]", normalize.text(message.get("content") or "")]
    if message.get("tool_calls"):
        calls = [
            {
                "name": (c.get("function") or {}).get("name"),
                "arguments": (c.get("function") or {}).get("arguments"),
            }
            for c in message["tool_calls"]
        ]
        parts.append(normalize.text(calls))
    return "\n".join(parts)


def _call_text(record: dict[str, Any], normalize: Normalizer) -> str:
    """A tool record's call as text."""
    return f"{record.get('name')} {normalize.text(record.get('arguments'))}"


def unified(old: str, new: str, limit: int = DIFF_LINES) -> str:
    """A unified diff of two texts (recorded -, replayed +), cut to `limit` lines."""
    lines = list(
        difflib.unified_diff(old.splitlines(), new.splitlines(), "recorded", "replayed", lineterm="", n=1)
    )
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more diff lines)"]
    return "\n".join(lines)
