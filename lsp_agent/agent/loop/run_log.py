"""The log as a sink of a run's events: what the run did, at info; the model's and tools' words, at debug."""

from __future__ import annotations

import logging

from lsp_agent.agent.events import AgentEvent

log = logging.getLogger("lsp_agent.agent.loop.run")


class RunLog:
    """The log sink of one run (it remembers the iteration limit the start event named)."""

    def __init__(self) -> None:
        self.max_iterations = 0

    def __call__(self, event: AgentEvent) -> None:
        """Write the log lines of one event (nothing for kinds the log does not follow)."""
        if event.kind == "start":
            self.max_iterations = event.data["maxIterations"]
        elif event.kind == "done" and event.data["stopReason"] == "max_iterations":
            log.warning("run %s: reached the iteration limit of %d", event.run_id, self.max_iterations)
        log_event(event)


def log_event(event: AgentEvent) -> None:
    """Write the log lines of one event that need nothing from earlier events."""
    d, kind, run_id = event.data, event.kind, event.run_id
    if kind == "start":
        log.info(
            "run %s: model %s, %s tool calling, %d tools, context window %d, iteration limit %d",
            run_id,
            d["model"],
            d["toolCalling"],
            d["tools"],
            d["contextWindow"],
            d["maxIterations"],
        )
    elif kind == "request":
        if d.get("step"):
            log.info(
                "run %s: iteration %d of %d, %d messages", run_id, d["step"], d["steps"], len(d["messages"])
            )
        log.info("run %s: model request %d (%d messages)", run_id, d["number"], len(d["messages"]))
        if log.isEnabledFor(logging.DEBUG):
            log.debug("request messages (last two): %s", d["messages"][-2:])
    elif kind == "usage" and event.detail and log.isEnabledFor(logging.DEBUG):
        reply = event.detail
        log.debug(
            "reply in %.3fs (%d attempts): %r tool_calls=%s",
            reply["seconds"],
            reply["attempts"],
            reply["content"],
            reply["tool_calls"],
        )
    elif kind == "tool_result" and log.isEnabledFor(logging.INFO):
        arguments = event.detail.get("arguments")
        log.info("tool %s(%s) %s in %.3fs", d["name"], arguments, "ok" if d["ok"] else "failed", d["seconds"])
        log.debug("tool output: %s", event.detail.get("output", d["output"]))
    elif kind == "model_error":
        log.info("run %s: model request failed (%s): %s", run_id, d["kind"], d["message"])
