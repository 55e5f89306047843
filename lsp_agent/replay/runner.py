"""`lsp-agent replay TRANSCRIPT`: the run again against its recorded model replies, and where it now diverges.

The recorded replies are served by the scripted OpenAI-compatible server on 127.0.0.1, so the replay goes through
litellm's real path, the real loop and the real tools, with no model. The run works in the recorded workspace (or
another one given) and writes its own transcript, which is compared with the recording: a request whose messages
changed (a prompt or an observation), a tool result that differs, a run that ends differently.
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsp_agent.agent.conversation.transcript import REPLAY_SETTINGS
from lsp_agent.replay.compare import Divergence, Normalizer, compare
from lsp_agent.replay.recording import Recording, RecordingError, load_recording

REPLAY_API_KEY = "replay"


@dataclass
class ReplayReport:
    """What a replay found: the divergences (none when the run did what the recording did) and its size."""

    transcript: Path
    root: Path
    requests: int
    tools: int
    divergences: list[Divergence] = field(default_factory=list)
    partial: bool = False  # the recorded run was stopped before its end: compared up to its last request

    @property
    def identical(self) -> bool:
        """True when the replay did exactly what the recording did."""
        return not self.divergences

    def render(self) -> str:
        """The report for a terminal."""
        head = f"replayed {self.transcript} in {self.root}: {self.requests} model requests, {self.tools} tool calls"
        if self.partial:
            head += " (the recorded run was stopped before its end: compared up to its last request)"
        if self.identical:
            return f"{head}; identical to the recording"
        lines = [f"{head}; {len(self.divergences)} divergence(s) from the recording:"]
        lines += [divergence.render() for divergence in self.divergences]
        return "\n".join(lines)


async def replay(
    transcript: Path, root: Path | None = None, *, run: int = -1, allow_exec: bool = False
) -> ReplayReport:
    """Replay one run of `transcript` in `root` (default: the recorded workspace) and compare it with the recording."""
    recording = load_recording(transcript, run)
    root = _workspace(recording, root)
    with tempfile.TemporaryDirectory(prefix="lsp-agent-replay-") as scratch:
        replayed_path = Path(scratch) / "replay.jsonl"
        await _run_again(recording, root, replayed_path, allow_exec)
        replayed = load_recording(replayed_path)
    divergences = compare(recording, replayed, Normalizer(recording.root, root))
    return ReplayReport(
        Path(transcript),
        root,
        len(replayed.requests),
        len(replayed.tools),
        divergences,
        partial=not recording.finished,
    )


def _workspace(recording: Recording, root: Path | None) -> Path:
    """The workspace to replay in: the one given, else the recorded one; RecordingError when there is none."""
    if root is None:
        root = recording.root
        if root is None:
            raise RecordingError("the transcript does not name its workspace: pass --repo PATH")
    root = Path(root).expanduser().resolve()
    if not root.is_dir():
        raise RecordingError(f"workspace {root} is not a directory: pass --repo PATH")
    return root


async def _run_again(recording: Recording, root: Path, transcript: Path, allow_exec: bool) -> None:
    """The run of the recording's task in `root`, its model replaced by the recorded replies."""
    from lsp_agent.agent.model.client import ModelClient, get_litellm
    from lsp_agent.assembly import build_run
    from lsp_agent.testing.scripted_model import ScriptedModelServer

    await asyncio.to_thread(get_litellm)
    with ScriptedModelServer(recording.script()) as server:
        settings = _settings(recording, root, server.base_url, transcript)
        client = ModelClient(settings, max_retries=0)
        index = await asyncio.to_thread(_open_index, root, settings)
        try:
            run = await build_run(
                recording.start.get("task") or "",
                settings,
                root,
                sink=None,
                asker=_allow_all if allow_exec else None,
                index=index,
                model_client=client,
            )
            await run.run()
        finally:
            if index is not None:
                index.close()


def _settings(recording: Recording, root: Path, api_base: str, transcript: Path) -> Any:
    """The workspace's settings (not the environment's or the user file's) with the recorded run's, pointed at the
    replay server."""
    from lsp_agent.agent.model.client import context_window
    from lsp_agent.settings_sources import load_settings

    model = str(recording.start.get("model") or "replay")
    recorded = {name: recording.start[name] for name in REPLAY_SETTINGS if name in recording.start}
    flags = {
        **recorded,
        # the recorded model's name behind an OpenAI-compatible endpoint, with the recorded model's window
        "model": "openai/" + model.split("/", 1)[-1],
        "api_base": api_base,
        "api_key": REPLAY_API_KEY,
        "tool_calling": recording.start.get("mode") or "auto",
        "context_window": context_window(model),
        "transcript": str(transcript),
        "stream": False,
        # the profile the run resolved (recordings from before profiles ran the full one)
        "profile": recording.start.get("profile") or "full",
    }
    settings, errors = load_settings(root, flags=flags, environ={}, user_file=False)
    if errors:
        raise RecordingError("the recorded settings do not load: " + "; ".join(errors))
    return settings


def _open_index(root: Path, settings: Any) -> Any:
    """The workspace index as `ask` opens it (its repo map is part of the system prompt); None without one."""
    try:
        from lsp_agent.index import IndexConfig, WorkspaceIndex
        from lsp_agent.workspace.secrets import secret_files_of
    except ImportError:
        return None
    config = IndexConfig(
        max_file_size=settings.max_file_size,
        exclude=list(settings.index_exclude) + secret_files_of(settings).index_excludes(),
        embeddings=settings.embeddings,
    )
    index = WorkspaceIndex(root, config)
    index.refresh()
    return index


async def _allow_all(tool: str, arguments: dict, reason: str) -> str:
    """The permission answer of `--allow-exec`."""
    return "allow_once"
