"""A run's transcript read back: its settings, the whole messages of each model request, replies, tool results."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class RecordingError(ValueError):
    """A transcript that cannot be replayed; the message says what is wrong with it."""


@dataclass
class RecordedRequest:
    """One model request: every message it sent, and how many of them were new since the conversation's last one."""

    messages: list[dict[str, Any]]
    first_index: int


@dataclass
class Recording:
    """One run of a transcript (a file may hold several runs, appended one after the other)."""

    start: dict[str, Any]
    requests: list[RecordedRequest] = field(default_factory=list)
    replies: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    answers: list[dict[str, Any]] = field(default_factory=list)  # reply and model_error records, in order
    done: dict[str, Any] | None = None

    @property
    def root(self) -> Path | None:
        """The workspace the run worked in (transcripts written before it was recorded have none)."""
        root = self.start.get("root")
        return Path(root) if root else None

    def script(self) -> list[dict[str, Any]]:
        """Scripted-model steps answering the run's requests with its recorded replies, in order."""
        # a model error (a permanent one, not retried) where the run met one: the error that ended it, or a failed
        # fill-in-the-middle request that it went on from
        steps = [
            _step_of(answer)
            if answer.get("type") == "reply"
            else {"status": 400, "error": str(answer.get("message") or "model error")}
            for answer in self.answers
        ]
        if not self.finished and not (self.answers and self.answers[-1].get("type") == "model_error"):
            steps.append(
                {"status": 400, "error": "the recording ends here (its run was stopped before it finished)"}
            )
        return steps

    @property
    def finished(self) -> bool:
        """False for the transcript of a run that was stopped before its end (killed: no "done" record)."""
        return self.done is not None


def load_recording(path: Path, run: int = -1) -> Recording:
    """The `run`-th run (default the last) of a JSONL transcript; RecordingError says why one cannot be replayed."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordingError(f"cannot read transcript {path}: {exc}") from None
    runs: list[list[dict[str, Any]]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise RecordingError(f"{path}:{number}: not a JSON line ({exc})") from None
        if not isinstance(record, dict):
            raise RecordingError(f"{path}:{number}: expected a JSON object per line")
        if record.get("type") == "start":
            runs.append([])
        if runs:
            runs[-1].append(record)
    if not runs:
        raise RecordingError(
            f"{path} holds no run (no 'start' record): write one with `lsp-agent ask --transcript FILE`"
        )
    try:
        records = runs[run]
    except IndexError:
        raise RecordingError(f"{path} holds {len(runs)} run(s); there is no run {run}") from None
    return _recording_of(records)


def _recording_of(records: list[dict[str, Any]]) -> Recording:
    """A Recording from one run's records, with each request's messages made whole again."""
    recording = Recording(start=records[0])
    conversations: list[list[dict[str, Any]]] = []
    for record in records[1:]:
        kind = record.get("type")
        if kind == "request":
            messages = _whole_messages(record, conversations)
            recording.requests.append(RecordedRequest(messages, int(record.get("first_index") or 0)))
        elif kind == "reply":
            recording.replies.append(record)
            recording.answers.append(record)
        elif kind == "tool":
            recording.tools.append(record)
        elif kind == "model_error":
            recording.answers.append(record)
        elif kind == "done":
            recording.done = record
    return recording


def _whole_messages(
    record: dict[str, Any], conversations: list[list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """All messages of a request logged as a delta: appended to the conversation it continues (the latest whose
    length is where the delta starts), or a new conversation when it starts at 0."""
    delta = list(record.get("messages") or [])
    start = int(record.get("first_index") or 0)
    if start == 0:
        conversations.append(delta)
        return list(delta)
    for conversation in reversed(conversations):
        if len(conversation) >= start:
            whole = conversation[:start] + delta
            conversation[:] = whole
            return list(whole)
    raise RecordingError(
        f"a request continues a conversation of {start} messages that the transcript never logged"
    )


def _step_of(reply: dict[str, Any]) -> dict[str, Any]:
    """The scripted-model step that sends a recorded reply again (its text, tool calls and usage)."""
    step: dict[str, Any] = {"content": reply.get("content") or ""}
    calls = []
    for call in reply.get("tool_calls") or []:
        function = call.get("function") or {}
        calls.append(
            {"id": call.get("id"), "name": function.get("name", ""), "arguments": function.get("arguments")}
        )
    if calls:
        step["tool_calls"] = calls
        step["content"] = reply.get("content") or None
    step["usage"] = {
        "prompt_tokens": int(reply.get("prompt_tokens") or 0),
        "completion_tokens": int(reply.get("completion_tokens") or 0),
    }
    return step
