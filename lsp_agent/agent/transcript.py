"""A JSONL transcript of a run: model requests and replies, tool calls with timings, events."""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from typing import Any, TextIO

log = logging.getLogger(__name__)


# Settings a replay of the run needs to take the same path (the start record carries them).
REPLAY_SETTINGS = ("max_iterations", "style", "plan", "max_tokens", "permissions")


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
