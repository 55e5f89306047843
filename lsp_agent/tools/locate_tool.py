"""The `locate` tool: the files most likely relevant to a task, from the workspace index (read-only)."""

from __future__ import annotations

from lsp_agent.tools.registry import ToolContext, ToolError

NO_INDEX = (
    "locate is unavailable: no workspace index is loaded in this session. "
    "Use search_text (exact text or regex) and list_files instead."
)


def locate(ctx: ToolContext, task: str, limit: int = 10) -> str:
    """Files ranked for a task or issue report, with the symbols that matched and why, best first."""
    if ctx.index is None:
        raise ToolError(NO_INDEX)
    if not task.strip():
        raise ToolError("task is empty; paste the task, issue report or error message to locate")
    try:
        files = ctx.index.locate(task, limit=max(1, min(int(limit), 50)) + 10)
    except Exception as exc:  # the index is another component: its failure is an observation, not a crash
        raise ToolError(f"locate failed: {type(exc).__name__}: {exc}") from None
    overlay = ctx.overlay
    deleted = {p for p in overlay.changed_paths() if overlay.change_kind(p) == "deleted"}
    files = [f for f in files if f.path not in deleted][: max(1, int(limit))]
    if not files:
        return f"No files match {task[:80]!r}; try search_text with a distinctive identifier."
    lines = ["Files most likely relevant, best first (read them with read_file; search_code finds chunks):"]
    for rank, hit in enumerate(files, start=1):
        lines.append(f"{rank}. {hit.path} (score {hit.score:.3f})")
        if hit.symbols:
            lines.append("   symbols: " + ", ".join(f"{name} (line {line})" for name, line in hit.symbols))
        if hit.reasons:
            lines.append("   why: " + "; ".join(dict.fromkeys(hit.reasons)))
    changed = [p for p in overlay.changed_paths() if p not in deleted]
    if changed:
        lines.append(f"(ranked as indexed; changed in this run and not re-ranked: {', '.join(changed[:10])})")
    return "\n".join(lines)
