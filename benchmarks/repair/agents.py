"""The two agents under test, each run as a user would in a fresh task copy, with a harness-enforced time limit.

lsp-agent: `lsp-agent ask TASK --repo COPY --apply ... --tool-calling prompt --allow-exec --transcript FILE`.
mini-swe-agent: its DefaultAgent with its own text-based config (mini_textbased.yaml) in mini_runner.py.
Both get the same model, endpoint, step limit and time limit, and the same environment: the test environment's
bin/ first on PATH (so `python` and `pytest` are the test venv's) and the project on PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.repair.projects import Project

LSP_EDIT_TOOLS = ("edit_file", "write_file", "delete_file")


def _lsp_format_error_prefixes() -> tuple[str, ...]:
    """How lsp-agent's corrections for unparsable tool calls begin, taken from its own prompts module."""
    try:
        from lsp_agent.agent.prompts import format_correction
    except ImportError:
        return ("Error: your reply could not be parsed", "Error: your tool call could not be understood")
    marker = "\x00problem\x00"
    return tuple(format_correction(marker, mode, []).split(marker)[0] for mode in ("prompt", "native"))


LSP_FORMAT_ERRORS = _lsp_format_error_prefixes()


@dataclass
class Budget:
    """What every agent gets per task: the model endpoint, a step limit and a wall-clock limit."""

    model: str
    api_base: str
    api_key: str
    max_steps: int
    time_limit: float
    lsp_profile: str = "auto"  # lsp-agent's --profile (mini-swe-agent has one prompt)
    lsp_infill: str = ""  # lsp-agent's infillTemplate for the model (empty: off)
    coverage: bool = True  # the agents' test environment can import coverage.py (False: --without-coverage)


@dataclass
class AgentOutcome:
    """How one agent's run went, from its own log: steps (model calls), tokens, format errors, why it stopped."""

    agent: str
    seconds: float
    timed_out: bool
    exit_code: int | None
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    format_errors: int = 0
    stop_reason: str = ""
    edit_calls: int = 0  # successful edit tool calls (lsp-agent); mini-swe-agent edits through bash
    log: str = ""


HIDDEN_COVERAGE = "coverage is hidden from the agents (the benchmark's --without-coverage)"


def agent_environment(
    python: Path, tree: Path, project: Project, scratch: Path, *, coverage: bool = True
) -> dict[str, str]:
    """The environment both agents run in; caches and configs go to `scratch`, not the user's home. Without
    `coverage`, coverage.py cannot be imported there (as in most projects' environments) and pytest-cov is off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "VIRTUAL_ENV", "LSP_AGENT_"))}
    env["PATH"] = os.pathsep.join([str(python.parent), env.get("PATH", "")])
    env["VIRTUAL_ENV"] = str(python.parent.parent)
    env["LSP_AGENT_PYTHON"] = str(python)
    env.update(project.environment(tree))
    env["XDG_CACHE_HOME"] = str(scratch / "cache")
    env["MSWEA_GLOBAL_CONFIG_DIR"] = str(scratch / "mini-config")
    env["MSWEA_SILENT_STARTUP"] = "1"
    env["MSWEA_COST_TRACKING"] = "ignore_errors"
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env["NO_COLOR"] = "1"
    if not coverage:  # a stand-in that refuses to import, in the venv (the sandbox shows it; /tmp is its own)
        hidden = python.parent.parent / "lsp-agent-no-coverage" / "coverage"
        hidden.mkdir(parents=True, exist_ok=True)
        (hidden / "__init__.py").write_text(f"raise ImportError({HIDDEN_COVERAGE!r})\n")
        env["PYTHONPATH"] = os.pathsep.join([str(hidden.parent), env["PYTHONPATH"]])
        env["PYTEST_ADDOPTS"] = " ".join([env.get("PYTEST_ADDOPTS", ""), "-p no:pytest_cov"]).strip()
    return env


def run_limited(
    cmd: list[str], cwd: Path, env: dict[str, str], limit: float, log: Path
) -> tuple[int | None, bool, float]:
    """Run `cmd` with output to `log`; kill its process group at `limit` seconds. (exit code, timed out, secs)."""
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            code: int | None = proc.wait(timeout=limit)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code, timed_out = None, True
    return code, timed_out, time.monotonic() - started


def lsp_agent_command() -> list[str]:
    """The `lsp-agent` console script of this interpreter's environment (or `python -m lsp_agent`)."""
    script = Path(sys.executable).with_name("lsp-agent")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "lsp_agent"]


def run_lsp_agent(
    task_text: str, copy: Path, env: dict[str, str], budget: Budget, logs: Path
) -> AgentOutcome:
    """`lsp-agent ask --apply-failing` on the copy; steps, tokens and format errors from its JSONL transcript."""
    transcript = logs / "lsp-agent.transcript.jsonl"
    if budget.lsp_infill:
        env = {**env, "LSP_AGENT_INFILL_TEMPLATE": budget.lsp_infill}
    cmd = [
        *lsp_agent_command(),
        "ask",
        task_text,
        "--repo",
        str(copy),
        "--apply-failing",  # the proposal is written even when its own checks fail: the benchmark judges it
        "--model",
        budget.model,
        "--api-base",
        budget.api_base,
        "--api-key",
        budget.api_key,
        "--tool-calling",
        "prompt",
        "--allow-exec",
        "--max-iterations",
        str(budget.max_steps),
        "--profile",
        budget.lsp_profile,
        # the wall-clock limit bounds the run; a shorter per-request limit only makes a slow, busy local server
        # compute the same prompt twice (it finishes an abandoned request before the retry)
        "--request-timeout",
        str(int(budget.time_limit)),
        "--transcript",
        str(transcript),
        "--no-color",
    ]
    log = logs / "lsp-agent.log"
    code, timed_out, seconds = run_limited(cmd, copy, env, budget.time_limit, log)
    outcome = AgentOutcome("lsp-agent", seconds, timed_out, code, log=str(log))
    read_lsp_transcript(transcript, outcome)
    if timed_out:
        outcome.stop_reason = "timeout"
    return outcome


def read_lsp_transcript(path: Path, outcome: AgentOutcome) -> None:
    """Fill steps, tokens, format errors, edit calls and the stop reason from an lsp-agent transcript."""
    for record in _jsonl(path):
        kind = record.get("type")
        if kind == "reply":
            outcome.steps += 1
            outcome.prompt_tokens += record.get("prompt_tokens") or 0
            outcome.completion_tokens += record.get("completion_tokens") or 0
        elif kind == "request":
            for message in record.get("messages") or []:
                content = message.get("content")
                if isinstance(content, str) and content.startswith(LSP_FORMAT_ERRORS):
                    outcome.format_errors += 1
        elif kind == "tool" and record.get("ok") and record.get("name") in LSP_EDIT_TOOLS:
            outcome.edit_calls += 1
        elif kind == "done":
            outcome.stop_reason = record.get("stop_reason") or ""


def run_mini_swe_agent(
    task_text: str, copy: Path, env: dict[str, str], budget: Budget, logs: Path
) -> AgentOutcome:
    """mini-swe-agent's DefaultAgent on the copy; steps, tokens and format errors from its trajectory."""
    trajectory = logs / "mini-swe-agent.traj.json"
    cmd = [
        sys.executable,
        str(Path(__file__).with_name("mini_runner.py")),
        "--task",
        task_text,
        "--cwd",
        str(copy),
        "--model",
        budget.model,
        "--api-base",
        budget.api_base,
        "--api-key",
        budget.api_key,
        "--step-limit",
        str(budget.max_steps),
        "--time-limit",
        str(int(budget.time_limit)),
        "--output",
        str(trajectory),
    ]
    log = logs / "mini-swe-agent.log"
    # the same hard limit as lsp-agent's; its own wall-time limit (checked between steps) usually ends it first
    code, timed_out, seconds = run_limited(cmd, copy, env, budget.time_limit, log)
    outcome = AgentOutcome("mini-swe-agent", seconds, timed_out, code, log=str(log))
    read_mini_trajectory(trajectory, outcome)
    if timed_out or outcome.stop_reason == "TimeExceeded":
        outcome.timed_out = True
        outcome.stop_reason = "timeout"
    return outcome


def read_mini_trajectory(path: Path, outcome: AgentOutcome) -> None:
    """Fill steps, tokens, format errors and the exit status from a mini-swe-agent trajectory file."""
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    info = data.get("info", {})
    outcome.steps = info.get("model_stats", {}).get("api_calls", 0)
    outcome.stop_reason = info.get("exit_status", "")
    for message in data.get("messages", []):
        extra = message.get("extra") or {}
        if extra.get("interrupt_type") == "FormatError":
            outcome.format_errors += 1
        response = extra.get("response")
        usage = response.get("usage") if isinstance(response, dict) else None
        if isinstance(usage, dict):
            outcome.prompt_tokens += usage.get("prompt_tokens") or 0
            outcome.completion_tokens += usage.get("completion_tokens") or 0


def _jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSONL file (none if it is missing; a torn last line is skipped)."""
    records = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return records
    for line in lines:
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records
