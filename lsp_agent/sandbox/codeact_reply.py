"""Seed 003's CodeAct reply schema: parse a model reply into thought/action/code/final_answer, or say what is wrong."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

ACTIONS = ("execute_code", "debug_error", "provide_answer")
ACTION_ALIASES = {"continue_debugging": "debug_error", "debug": "debug_error", "answer": "provide_answer"}
SCHEMA_TEXT = (
    '{"thought": "your reasoning", "action": "execute_code" | "debug_error" | "provide_answer", '
    '"code": "Python source (for execute_code and debug_error)", "final_answer": "the answer (for provide_answer)"}'
)
_FENCE = re.compile(r"^\s*```[\w-]*\s*\n(.*?)\n?```\s*$", re.S)


class ReplyError(ValueError):
    """A reply that does not follow the schema; the message says what to fix."""


@dataclass(frozen=True)
class CodeActReply:
    """One validated CodeAct step."""

    thought: str
    action: str
    code: str | None = None
    final_answer: str | None = None

    @property
    def runs_code(self) -> bool:
        """True for execute_code and debug_error."""
        return self.action in ("execute_code", "debug_error")


def _json_objects(text: str) -> list[Any]:
    """Every JSON value that starts at a '{' in text (newlines inside strings tolerated)."""
    decoder = json.JSONDecoder(strict=False)
    found = []
    for match in re.finditer(r"\{", text):
        try:
            value, _end = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        found.append(value)
        if isinstance(value, dict) and "action" in value:
            break
    return found


def _strip_fence(code: str) -> str:
    """Code wrapped in a ``` fence, unwrapped."""
    match = _FENCE.match(code)
    return match.group(1) if match else code


def parse_codeact_reply(text: str) -> CodeActReply:
    """The validated reply, or ReplyError naming the problem."""
    if not text or not text.strip():
        raise ReplyError("the reply was empty")
    candidates = [v for v in _json_objects(text) if isinstance(v, dict)]
    if not candidates:
        raise ReplyError("the reply holds no JSON object")
    data = next((c for c in candidates if "action" in c), candidates[0])
    action = data.get("action")
    if not isinstance(action, str) or not action.strip():
        raise ReplyError('the JSON object has no "action"')
    action = action.strip().lower()
    action = ACTION_ALIASES.get(action, action)
    if action not in ACTIONS:
        raise ReplyError(f'"action" must be one of {", ".join(ACTIONS)}, not {data.get("action")!r}')
    thought = data.get("thought")
    thought = thought.strip() if isinstance(thought, str) else ""
    if action == "provide_answer":
        answer = data.get("final_answer")
        if not isinstance(answer, str) or not answer.strip():
            raise ReplyError('action "provide_answer" needs a non-empty string "final_answer"')
        return CodeActReply(thought, action, None, answer.strip())
    code = data.get("code")
    if not isinstance(code, str) or not code.strip():
        raise ReplyError(f'action "{action}" needs the Python source to run in a non-empty string "code"')
    return CodeActReply(thought, action, _strip_fence(code), None)
