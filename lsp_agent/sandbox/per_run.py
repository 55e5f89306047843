"""The sandbox of one run: one per overlay, shared by its exec tools and CodeAct, closed when the run ends."""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lsp_agent.sandbox.session import Sandbox
    from lsp_agent.tools.registry import ToolContext
    from lsp_agent.workspace.overlay import Overlay

_SANDBOXES: weakref.WeakKeyDictionary[Overlay, Sandbox] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def sandbox_for(ctx: ToolContext) -> Sandbox:
    """The run's sandbox (one per overlay, removed when the run's overlay is gone or the process exits)."""
    from lsp_agent.sandbox.session import Sandbox

    existing = ctx.extras.get("sandbox")
    if isinstance(existing, Sandbox):
        return existing
    with _LOCK:
        sandbox = _SANDBOXES.get(ctx.overlay)
        if sandbox is None:
            sandbox = Sandbox(
                ctx.root,
                exclude=ctx.exclude,
                python=getattr(ctx.settings, "python", None),
                allow_unisolated=bool(getattr(ctx.settings, "allow_unisolated_exec", False)),
                hide=_secret_files(ctx),
            )
            _SANDBOXES[ctx.overlay] = sandbox
            weakref.finalize(ctx.overlay, sandbox.close)
        weakref.finalize(ctx, sandbox.close)  # a context dropped without close(): drop the scratch copy
    ctx.extras["sandbox"] = sandbox
    # The run closes its context when it ends: stop the sandbox's processes and remove the scratch copy then,
    # not whenever the garbage collector gets to the run. (No reference to ctx: that would be a cycle.)
    ctx.on_close(functools.partial(_release, ctx.extras, ctx.overlay, sandbox))
    return sandbox


def _secret_files(ctx: ToolContext) -> Callable[[str], bool]:
    """The predicate naming the workspace's secret files (.env, keys), which the sandbox shows as empty files."""
    from lsp_agent.workspace.secrets import secret_files_of

    return secret_files_of(ctx.settings).is_secret


def _release(extras: dict[str, Any], overlay: Overlay, sandbox: Sandbox) -> None:
    """Forget `sandbox` for this context and overlay, and close it."""
    with _LOCK:
        if extras.get("sandbox") is sandbox:
            del extras["sandbox"]
        if _SANDBOXES.get(overlay) is sandbox:
            del _SANDBOXES[overlay]
    sandbox.close()


def close_sandbox(ctx: ToolContext) -> None:
    """Stop the run's sandbox processes and remove its scratch copy (its changes are already in the overlay)."""
    with _LOCK:
        sandbox = ctx.extras.pop("sandbox", None) or _SANDBOXES.pop(ctx.overlay, None)
        _SANDBOXES.pop(ctx.overlay, None)
    if sandbox is not None:
        sandbox.close()
