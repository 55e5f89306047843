"""Search tools: search_text (regex or literal over the run's view), search_code and find_symbol (the index)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp_agent.tools.common import number_lines, refuse_secret, split_lines
from lsp_agent.tools.listing import visible_files
from lsp_agent.tools.patterns import SearchPattern, Span, compile_search
from lsp_agent.tools.registry import ToolContext, ToolError
from lsp_agent.tools.rg import literal_candidates
from lsp_agent.workspace.overlay import FileTooLargeError, NotTextError
from lsp_agent.workspace.paths import PathError, require_regular_file

if TYPE_CHECKING:
    from lsp_agent.index import SymbolHit

NO_INDEX = (
    "{tool} is unavailable: no workspace index is loaded in this session. "
    "Use search_text (exact text or regex) and list_files instead."
)
RG_AFTER_FILES = 100  # search this many files in Python before asking rg to narrow the rest
_REGEX_HINT = re.compile(r"\\[bdswBDSW.()\[\]|]|\.\*|\.\+|\|")


def search_text(
    ctx: ToolContext,
    pattern: str,
    path: str | None = None,
    regex: bool = False,
    case_sensitive: bool | None = None,
) -> str:
    """`path:line:snippet` for every line matching `pattern` under `path`, up to the result limit."""
    if pattern == "":
        raise ToolError("pattern is empty; give the text or regular expression to search for")
    sensitive = case_sensitive if case_sensitive is not None else pattern != pattern.lower()
    compiled = compile_search(pattern, is_regex=regex, case_sensitive=sensitive)
    overlay = ctx.overlay
    base = overlay.normalize(path or ".")
    if path:
        refuse_secret(ctx, path, base, is_dir=overlay.is_dir(base))
    if overlay.is_file(base):
        files = [base]
    elif overlay.is_dir(base):
        files = visible_files(ctx, base)
    else:
        if os.path.lexists(overlay.abspath(base)):
            require_regular_file(overlay.abspath(base), base)  # names FIFOs, devices, ... precisely
        raise ToolError(f"{base}: not found; give a directory or file relative to the workspace root")
    limit = ctx.limits.search_max_results
    width = ctx.limits.snippet_chars
    results: list[str] = []
    truncated = False
    overrides = overlay.overrides()
    candidates: set[str] | None = None
    use_rg = not regex and overlay.reads_disk_directly
    for position, rel in enumerate(files):
        if use_rg and position == RG_AFTER_FILES:
            # Most searches end within the first files; only a long walk is worth narrowing with rg.
            use_rg = False
            rest = [f for f in files[position:] if f not in overrides]
            candidates = literal_candidates(Path(ctx.root), rest, pattern, case_sensitive=sensitive)
        if candidates is not None and rel not in candidates and rel not in overrides:
            continue  # rg found no occurrence of the literal in this file's bytes
        if ctx.cancelled():
            raise ToolError("search cancelled")
        text = _searchable_text(ctx, rel, overrides, explicit=len(files) == 1)
        if text is None:
            continue
        for number, line, match in compiled.matching_lines(text):
            if len(results) == limit:
                truncated = True  # a further match exists: the search stopped before the walk finished
                break
            results.append(f"{rel}:{number}:{_shown_snippet(ctx, compiled, line, match, width)}")
        if truncated:
            break
    if not results:
        return _no_match_message(pattern, base, regex, sensitive)
    if truncated:
        results.append(f"[TRUNCATED: reached limit {limit} before completing search]")
    return "\n".join(results)


def _shown_snippet(ctx: ToolContext, compiled: SearchPattern, line: str, match: Any, width: int) -> str:
    """The snippet of a matching line with secret values redacted before the line is cut (no piece survives)."""
    shown = ctx.redact(line)
    if shown != line:
        match = compiled.search_line(shown) or Span(0, 0)
    return snippet(shown, match, width)


def snippet(line: str, match: Any, width: int = 100) -> str:
    """The stripped line cut to `width` chars, keeping the match visible (… marks cut ends)."""
    lead = len(line) - len(line.lstrip())
    text = line.strip()
    if len(text) <= width:
        return text
    start = max(0, match.start() - lead)
    begin = 0 if match.end() - lead <= width - 1 else max(0, min(start - 20, len(text) - width))
    piece = text[begin : begin + width]
    if begin > 0:
        piece = "…" + piece[1:]
    if begin + width < len(text):
        piece = piece[:-1] + "…"
    return piece


def _searchable_text(
    ctx: ToolContext, rel: str, overrides: dict[str, str | None], *, explicit: bool
) -> str | None:
    """The file's text in this run's view, or None for files a search skips (binary, huge, unreadable)."""
    if rel in overrides:
        return overrides[rel]
    try:
        size = os.stat(os.path.join(ctx.root, rel)).st_size
        if size > ctx.max_file_size:
            raise FileTooLargeError(f"{rel}: is {size:,} bytes, over the {ctx.max_file_size:,}-byte limit")
        return ctx.overlay.view_text(rel)
    except (NotTextError, FileTooLargeError, PathError, OSError) as exc:
        if explicit:
            raise ToolError(f"cannot search {rel}: {exc}") from None
        return None


def _no_match_message(pattern: str, base: str, regex: bool, sensitive: bool) -> str:
    """'No matches' plus the most likely fix."""
    where = "the workspace" if base == "." else base
    message = f"No matches for {pattern!r} in {where}."
    if not regex and _REGEX_HINT.search(pattern):
        message += (
            " The pattern was searched as literal text; pass regex=true to use it as a regular expression."
        )
    elif sensitive:
        message += " The search was case-sensitive; pass case_sensitive=false to ignore case."
    return message


def search_code(ctx: ToolContext, query: str, top_k: int = 10) -> str:
    """The code chunks most relevant to a natural-language or identifier query (the workspace index)."""
    if ctx.index is None:
        raise ToolError(NO_INDEX.format(tool="search_code"))
    if not query.strip():
        raise ToolError("query is empty; describe the code you are looking for")
    try:
        hits = ctx.index.search(query, top_k=top_k, overrides=ctx.overlay.overrides())
    except Exception as exc:  # the index is another component: its failure is an observation, not a crash
        raise ToolError(f"search_code failed: {type(exc).__name__}: {exc}") from None
    secrets = ctx.secret_files
    # An index built before secretFiles changed may still hold a secret file.
    hits = [hit for hit in hits if not secrets.is_secret(hit.path)]
    if not hits:
        return f"No code found for {query!r}; try search_text with a distinctive identifier."
    max_lines = ctx.limits.search_code_max_lines
    blocks = []
    for rank, hit in enumerate(hits, start=1):
        label = " ".join(part for part in (hit.kind, hit.symbol) if part)
        header = f"{rank}. {hit.path}:{hit.start}-{hit.end} {label} (score {hit.score:.3f})".replace(
            "  ", " "
        )
        lines = split_lines(hit.text)
        body = number_lines(lines[:max_lines], hit.start, ctx.limits.read_max_line_chars)
        if len(lines) > max_lines:
            body += f"\n... ({len(lines) - max_lines} more lines; read_file {hit.path} to see them)"
        blocks.append(f"{header}\n{body}")
    return "\n\n".join(blocks)


def find_symbol(ctx: ToolContext, name: str) -> str:
    """Definitions and references of a symbol (plain or qualified name) from the index."""
    if ctx.index is None:
        raise ToolError(NO_INDEX.format(tool="find_symbol"))
    name = name.strip()
    if not name:
        raise ToolError("name is empty; give a function, class, method or variable name")
    try:
        hits = ctx.index.find_symbol(name, limit=ctx.limits.find_symbol_max)
    except Exception as exc:
        raise ToolError(f"find_symbol failed: {type(exc).__name__}: {exc}") from None
    overlay = ctx.overlay
    changed = {path: overlay.change_kind(path) for path in overlay.changed_paths()}
    secrets = ctx.secret_files
    hits = [h for h in hits if changed.get(h.path) != "deleted" and not secrets.is_secret(h.path)]
    if not hits:
        return f"No symbol named {name!r} in the index; try search_text with pattern {name!r}."
    located = [_locate(ctx, h, changed) for h in hits]
    definitions = [(h, line, note) for h, line, note in located if h.role == "definition"]
    references = [(h, line, note) for h, line, note in located if h.role != "definition"]
    width = ctx.limits.snippet_chars
    out: list[str] = []
    if definitions:
        out.append(f"Definitions of {name} ({len(definitions)}):")
        for h, line, note in definitions:
            label = " ".join(part for part in (h.kind, h.qualified_name or h.name) if part)
            end = line + max(0, h.end_line - h.line)
            out.append(f"  {h.path}:{line}-{end} {label}{note}")
            if h.snippet:
                out.append(f"      {h.snippet.strip()[:width]}")
    else:
        out.append(f"No definition of {name} in the index.")
    if references:
        out.append(f"References ({len(references)}):")
        for h, line, note in references:
            out.append(f"  {h.path}:{line}: {h.snippet.strip()[:width]}{note}")
    if len(hits) >= ctx.limits.find_symbol_max:
        out.append(f"(showing the first {ctx.limits.find_symbol_max}; use search_text for the rest)")
    return "\n".join(out)


def _locate(ctx: ToolContext, hit: SymbolHit, changed: dict[str, str | None]) -> tuple[SymbolHit, int, str]:
    """(hit, line in this run's view, note): hits in files changed in this run are found again in their new text."""
    if not changed.get(hit.path):
        return hit, hit.line, ""
    wanted = hit.snippet.strip()
    try:
        lines = split_lines(ctx.overlay.view_text(hit.path))
    except (OSError, ValueError):
        lines = []
    if wanted:
        matches = [i for i, line in enumerate(lines, start=1) if line.strip() == wanted]
        if matches:
            return hit, min(matches, key=lambda i: abs(i - hit.line)), "  [line as edited in this run]"
    return hit, hit.line, "  [file changed in this run; this line may have moved or gone]"
