"""A JSONL transcript of a run, written as a sink of its events: model requests and replies, tools, the end."""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from lsp_agent.agent.events import AgentEvent

log = logging.getLogger(__name__)


# Settings a replay of the run needs to take the same path (the start record carries them).
REPLAY_SETTINGS = (
    "max_iterations",
    "style",
    "plan",
    "max_tokens",
    "permissions",
    "test_before_finish",
    "edit_diagnostics",
    "repair_lines",
    "infill_template",
)


def replay_settings(settings: Any) -> dict[str, Any]:
    """The settings in REPLAY_SETTINGS, by name."""
    return {name: getattr(settings, name) for name in REPLAY_SETTINGS if hasattr(settings, name)}


class Transcript:
    """Appends one JSON object per line; requests carry only the messages added since the previous one."""

    def __init__(self, path: str | Path | None, run_fields: dict[str, Any] | None = None) -> None:
        self.path = Path(path) if path else None
        self.run_fields = dict(run_fields or {})  # added to the "start" record (what a replay needs)
        self._file: TextIO | None = None
        # conversation (id of its first message) -> (that message, kept so the id is not reused; messages logged)
        self._sent: dict[int, tuple[dict, int]] = {}
        self._lock = threading.Lock()
        if self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = self.path.open("a", encoding="utf-8")
            except OSError as exc:
                log.warning("cannot write transcript %s: %s", self.path, exc)

    @classmethod
    def of_run(cls, settings: Any, root: Path) -> Transcript:
        """The transcript a run's settings ask for; its start record names the root and the settings a replay needs."""
        return cls(settings.transcript, run_fields={"root": str(root), **replay_settings(settings)})

    @property
    def enabled(self) -> bool:
        """True when a file is open."""
        return self._file is not None

    def record(self, event: AgentEvent) -> None:
        """The sink: one event becomes its record (start, request, reply, model_error, retry, compaction, tool, done)."""
        if self._file is None:
            return
        d = event.data
        kind = event.kind
        if kind == "start":
            profile = d.get("profile", "full")  # a replay resolves the same profile
            self.write(
                "start",
                run_id=event.run_id,
                task=d["task"],
                model=d["model"],
                mode=d["toolCalling"],
                profile=profile,
            )
        elif kind == "request":
            self.request(d["model"], d["messages"], d["tools"])
        elif kind == "usage" and event.detail:
            self.write("reply", **event.detail)
        elif kind == "tool_result":
            output = event.detail.get("output", d["output"])
            arguments = event.detail.get("arguments")
            seconds = round(d["seconds"], 4)
            self.write(
                "tool", name=d["name"], arguments=arguments, ok=d["ok"], output=output, seconds=seconds
            )
        elif kind == "model_error":
            self.write("model_error", message=d["message"], kind=d["kind"])
        elif kind == "error" and d.get("retrying"):
            self.write("retry", attempt=d["attempt"], delay=d["delay"], message=d["reason"])
        elif kind == "error" and d.get("kind") == "tools_unsupported":
            self.reset()  # the system prompt was rewritten: log each conversation whole again
        elif kind == "compaction":
            self.write("compaction", **d)
            self.reset()
        elif kind == "done":
            self._write_done(d)

    def _write_done(self, d: dict[str, Any]) -> None:
        """The run's last record."""
        self.write(
            "done",
            success=d["success"],
            stop_reason=d["stopReason"],
            answer=d["answer"],
            iterations=d["iterations"],
            prompt_tokens=d["promptTokens"],
            completion_tokens=d["completionTokens"],
            cost=d["cost"],
            error=d["error"],
            checks_failed=d.get("checksFailed") or [],
        )

    def write(self, record_type: str, **data: Any) -> None:
        """Append one record."""
        if self._file is None:
            return
        if record_type == "start":
            data = {**self.run_fields, **data}
        line = json.dumps(
            {"type": record_type, "time": round(time.time(), 3), **data}, ensure_ascii=False, default=str
        )
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def request(self, model: str, messages: list[dict], tools: list[str], **params: Any) -> None:
        """A model request: the messages added since this conversation's previous request (all, the first time).

        Conversations (the task, each subtask, plan and summary requests) are told apart by their first message.
        """
        if self._file is None:
            return
        first = messages[0] if messages else {}
        known = self._sent.get(id(first))
        start = known[1] if known is not None and known[0] is first and known[1] <= len(messages) else 0
        self.write(
            "request",
            model=model,
            message_count=len(messages),
            first_index=start,
            messages=messages[start:],
            tools=tools,
            **params,
        )
        self._sent[id(first)] = (first, len(messages))

    def reset(self) -> None:
        """The next request of every conversation logs it whole again (after compaction)."""
        self._sent.clear()

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
