"""Counts of what inline completion did, for lspAgent.status and the latency benchmark."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class CompletionStats:
    """Counts for lspAgent.status and the latency benchmark."""

    requests: int = 0
    model_requests: int = 0
    cancelled: int = 0  # model requests closed because a newer keystroke came
    cache_hits: int = 0
    suggestions: int = 0
    skipped_in_string_or_comment: int = 0
    failures: int = 0
    # per request, as the model server reports them (llama.cpp's timings, else usage)
    prompt_tokens_evaluated: list[int] = field(default_factory=list)
    server_timings: list[dict[str, Any]] = field(default_factory=list)
    # per answered model request: ms from sending it to the end of its stream (waiting for a busy server included)
    model_ms: list[int] = field(default_factory=list)
    # the monitor: suggestions it read (a receiver with known members), corrected, names replaced, and the extra
    # ms its requests took per corrected suggestion
    monitor_checked: int = 0
    monitor_corrected: int = 0
    monitor_corrections: int = 0
    monitor_ms: list[int] = field(default_factory=list)

    def note_answer(self, seconds: float, timings: dict[str, Any], usage: dict[str, Any]) -> None:
        """Count an answered model request: its time and the prompt tokens the server evaluated."""
        self.model_ms.append(round(1000 * seconds))
        evaluated = timings.get("prompt_n", usage.get("prompt_tokens"))
        if isinstance(evaluated, int):
            self.prompt_tokens_evaluated.append(evaluated)
        if timings:
            self.server_timings.append(timings)

    def to_dict(self) -> dict[str, Any]:
        """camelCase counts for a JSON status."""
        return {
            "requests": self.requests,
            "modelRequests": self.model_requests,
            "cancelled": self.cancelled,
            "cacheHits": self.cache_hits,
            "suggestions": self.suggestions,
            "skippedInStringOrComment": self.skipped_in_string_or_comment,
            "failures": self.failures,
            "promptTokensEvaluated": self.prompt_tokens_evaluated[-200:],
            "serverTimings": self.server_timings[-200:],
            "modelMs": self.model_ms[-200:],
            "monitorChecked": self.monitor_checked,
            "monitorCorrected": self.monitor_corrected,
            "monitorCorrections": self.monitor_corrections,
            "monitorMs": self.monitor_ms[-200:],
        }
