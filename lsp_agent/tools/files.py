"""File tools: list_files, read_file, get_file_info, write_file, edit_file, delete_file (all through the overlay)."""

from __future__ import annotations

import datetime as dt
import os

from lsp_agent.tools.candidates import closest_candidates, looks_line_numbered
from lsp_agent.tools.common import language_of, load_text, number_lines, refuse_secret, split_lines
from lsp_agent.tools.listing import glob_regex, visible_entries
from lsp_agent.tools.registry import ToolContext, ToolError
from lsp_agent.tools.syntax_check import introduced_errors
from lsp_agent.workspace.paths import PathError, describe_mode
from lsp_agent.workspace.walk import is_binary_file

SECRET_MARK = "  [secret file (secretFiles): contents never shown]"
EDIT_CONTEXT_LINES = 2
EDIT_SNIPPET_MAX_LINES = 30


def list_files(ctx: ToolContext, pattern: str | None = None, path: str | None = None) -> str:
    """Sorted files and directories under `path` (default: the root), filtered by a glob `pattern`."""
    overlay = ctx.overlay
    base = overlay.normalize(path or ".")
    if pattern and not any(c in pattern for c in "*?[{"):
        named = f"{base}/{pattern.strip()}"
        if overlay.is_dir(named):  # a plain directory name as the pattern: list that directory
            base, pattern = overlay.normalize(named), None
    if not overlay.is_dir(base):
        if overlay.is_file(base):
            raise ToolError(f"{base}: is a file, not a directory; use read_file or get_file_info on it")
        raise ToolError(f"{base}: directory not found; call list_files without a path to see the workspace")
    entries = visible_entries(ctx, base, secrets=None)
    prefix = "" if base == "." else base + "/"
    if pattern and pattern.strip() not in ("", ".", "./"):
        regex = glob_regex(pattern.strip().removeprefix("./"))
        selected = [(rel, d) for rel, d in entries.items() if regex.fullmatch(rel[len(prefix) :])]
    else:
        selected = [(rel, d) for rel, d in entries.items() if "/" not in rel[len(prefix) :]]
    if not selected:
        where = "the workspace root" if base == "." else base
        if pattern:
            hint = ""
            if "/" not in pattern and "**" not in pattern:
                hint = f"; '{pattern}' only matches directly inside {where}, use '**/{pattern}' to include subdirectories"
            return f"No files match {pattern!r} in {where}{hint}."
        return f"{where} is empty (or all its files are ignored)."
    limit = ctx.limits.list_max_items
    lines = [
        (rel + "/" if is_dir else rel) + (SECRET_MARK if _is_secret_entry(ctx, rel, is_dir) else "")
        for rel, is_dir in selected[:limit]
    ]
    if len(selected) > limit:
        lines.append(f"[TRUNCATED: first {limit} items]")
    return "\n".join(lines)


def _is_secret_entry(ctx: ToolContext, rel: str, is_dir: bool) -> bool:
    """True when a listed entry is a secret file by its name or by where its symlink leads."""
    secrets = ctx.secret_files
    if secrets.is_secret(rel, is_dir):
        return True
    try:
        key = ctx.overlay.normalize(rel)
    except PathError:
        return False
    return key != rel and secrets.is_secret(key, is_dir)


def read_file(ctx: ToolContext, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
    """The file's lines numbered from 1, optionally only start_line..end_line (inclusive)."""
    key, text = load_text(ctx, path)
    lines = split_lines(text)
    total = len(lines)
    start = 1 if start_line is None else start_line
    end = total if end_line is None or end_line == -1 else end_line
    if start < 1:
        raise ToolError(f"start_line must be 1 or more (lines are numbered from 1), got {start}")
    if end_line is not None and end_line != -1 and end_line < 1:
        raise ToolError(f"end_line must be 1 or more (or -1 for the end of the file), got {end_line}")
    if total == 0:
        if start_line not in (None, 1):
            raise ToolError(f"start_line {start} is past the end of {key}, which is empty")
        return f"({key} is empty)"
    if start > total:
        raise ToolError(f"start_line {start} is past the end of {key}, which has {total} lines")
    if end < start:
        raise ToolError(f"end_line {end} is before start_line {start}; give start_line <= end_line")
    end = min(end, total)
    selected = [ctx.redact(line) for line in lines[start - 1 : end]]  # before long lines are cut
    limit = ctx.limits.read_max_lines
    body = number_lines(selected[:limit], start, ctx.limits.read_max_line_chars)
    if len(selected) > limit:
        body += f"\n[TRUNCATED: showing first {limit} lines, {len(selected) - limit} more available]"
    return body


def get_file_info(ctx: ToolContext, path: str) -> str:
    """Size, line count, type, language and overlay state of a file or directory."""
    overlay = ctx.overlay
    key = overlay.normalize(path)
    refuse_secret(ctx, path, key, is_dir=overlay.is_dir(key))
    change = overlay.change_kind(key) if key != "." else None
    info: dict[str, str] = {"path": key}
    if change == "deleted":
        info.update(type="file", state="deleted in this run (the file still exists on disk until applied)")
        return _format_info(info)
    if overlay.is_dir(key):
        entries = visible_entries(ctx, key)
        prefix = "" if key == "." else key + "/"
        children = [r for r in entries if "/" not in r[len(prefix) :]]
        files = sum(1 for d in entries.values() if not d)
        info.update(type="directory", entries=str(len(children)), files_below=str(files))
        return _format_info(info)
    absolute = overlay.abspath(key)
    if change is None:
        try:
            st = absolute.stat()
        except FileNotFoundError:
            raise ToolError(f"{key}: not found; use list_files to see which files exist") from None
        except OSError as exc:
            raise PathError(f"{key}: cannot be read ({exc.strerror or exc})") from None
        if not os.path.isfile(absolute):
            raise PathError(f"{key}: is {describe_mode(st.st_mode)}, not a regular file")
        info.update(type="file", size=f"{st.st_size} bytes", language=language_of(key))
        if is_binary_file(absolute):
            info.update(binary="yes")
        elif st.st_size > ctx.max_file_size:
            info.update(binary="no", lines=f"unknown (over the {ctx.max_file_size:,}-byte read limit)")
        else:
            _, text = load_text(ctx, key)
            info.update(binary="no", lines=str(len(split_lines(text))))
        info["modified_on_disk"] = dt.datetime.fromtimestamp(st.st_mtime, dt.UTC).strftime(
            "%Y-%m-%d %H:%M:%S UTC"
        )
        info["state"] = "unchanged in this run"
        return _format_info(info)
    text = overlay.read_text(key)
    info.update(
        type="file",
        size=f"{len(text.encode('utf-8'))} bytes",
        language=language_of(key),
        binary="no",
        lines=str(len(split_lines(text))),
        state=f"{change} in this run (not yet on disk)",
    )
    return _format_info(info)


def _lines(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"


def _format_info(info: dict[str, str]) -> str:
    return "\n".join(f"{k}: {v}" for k, v in info.items())


def write_file(ctx: ToolContext, path: str, content: str) -> str:
    """Create or overwrite a file in the overlay (parent directories are implied)."""
    overlay = ctx.overlay
    key = overlay.normalize(path)
    refuse_secret(ctx, path, key)
    old: str | None = None
    if overlay.is_file(key):
        _, old = load_text(ctx, key)  # refuses binary, huge and special files: nothing is lost
    elif overlay.is_dir(key):
        raise ToolError(f"{key}: is a directory; give a file path")
    content = _match_newlines(old, content)
    overlay.write_text(key, content)
    n = len(split_lines(content))
    if old is None:
        message = f"Created {key} ({_lines(n)})."
    elif old == content:
        message = f"{key} already had exactly this content; nothing changed."
    else:
        message = f"Wrote {key} ({_lines(n)}, previously {_lines(len(split_lines(old)))})."
    return message + _syntax_note(key, old, content)


def edit_file(ctx: ToolContext, path: str, old_text: str, new_text: str) -> str:
    """Replace old_text (which must occur exactly once) with new_text."""
    key, text = load_text(ctx, path)
    if old_text == "":
        raise ToolError(
            "old_text is empty; give the exact text to replace, or use write_file to rewrite the file"
        )
    if old_text == new_text:
        raise ToolError("old_text and new_text are identical; nothing would change")
    old, new = old_text, new_text
    positions = _occurrences(text, old)
    if not positions:
        variant = _newline_variant(text, old_text, new_text)
        if variant is not None:
            old, new = variant
            positions = _occurrences(text, old)
    if not positions:
        raise ToolError(_not_found_message(key, text, old_text))
    if len(positions) > 1:
        lines = [text.count("\n", 0, p) + 1 for p in positions]
        shown = ", ".join(str(n) for n in lines[:10]) + (", ..." if len(lines) > 10 else "")
        raise ToolError(
            f"old_text matches {len(positions)} places in {key} (starting at lines {shown}); "
            "include more surrounding lines so that it matches exactly once"
        )
    pos = positions[0]
    updated = text[:pos] + new + text[pos + len(old) :]
    overlay = ctx.overlay
    overlay.write_text(key, updated)
    first = text.count("\n", 0, pos) + 1
    old_n = max(1, len(split_lines(old)))
    new_n = len(split_lines(new))
    lines = split_lines(updated)
    lo = max(1, first - EDIT_CONTEXT_LINES)
    hi = min(len(lines), first + max(new_n, 1) - 1 + EDIT_CONTEXT_LINES, lo + EDIT_SNIPPET_MAX_LINES - 1)
    snippet = number_lines(lines[lo - 1 : hi], lo, ctx.limits.read_max_line_chars) if lines else ""
    message = f"Edited {key}: replaced {_lines(old_n)} at line {first} with {_lines(new_n)}."
    if snippet:
        message += f"\nLines {lo}-{hi} now:\n{snippet}"
    return message + _syntax_note(key, text, updated)


def delete_file(ctx: ToolContext, path: str) -> str:
    """Delete a file in the overlay."""
    overlay = ctx.overlay
    key = overlay.normalize(path)
    refuse_secret(ctx, path, key)
    if overlay.is_dir(key):
        raise ToolError(f"{key}: is a directory; delete_file deletes single files")
    load_text(ctx, key)  # refuses binary, huge and special files, and reports a missing one
    overlay.delete(key)
    return f"Deleted {key}."


def task_complete(ctx: ToolContext, summary: str) -> str:
    """Finish the run with a summary of what was done (the loop stops on this tool)."""
    return summary.strip() or "Task complete."


def _occurrences(text: str, needle: str) -> list[int]:
    """Start offsets of every occurrence of needle, overlapping ones included."""
    found: list[int] = []
    pos = text.find(needle)
    while pos != -1:
        found.append(pos)
        pos = text.find(needle, pos + 1)
    return found


def _newline_variant(text: str, old: str, new: str) -> tuple[str, str] | None:
    """(old, new) rewritten to the file's line endings when only LF vs CRLF keeps old from matching."""
    if "\r\n" in text and "\n" in old and "\r\n" not in old:
        return old.replace("\n", "\r\n"), new.replace("\r\n", "\n").replace("\n", "\r\n")
    if "\r\n" not in text and "\r\n" in old:
        return old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    return None


def _match_newlines(old: str | None, content: str) -> str:
    """Keep a CRLF file CRLF when the model writes it back with LF line ends."""
    if old and "\r\n" in old and old.count("\n") == old.count("\r\n") and "\r" not in content:
        return content.replace("\n", "\r\n")
    return content


def _not_found_message(key: str, text: str, old_text: str) -> str:
    """Why old_text did not match and the closest candidate regions, so the model can retry."""
    message = f"old_text was not found in {key}."
    if looks_line_numbered(old_text):
        message += " It seems to include line-number prefixes from read_file; leave those out."
    candidates = closest_candidates(text, old_text)
    if not candidates:
        return message + " No similar lines were found; read_file the file to see its current text."
    message += (
        " The closest candidate" + ("s are" if len(candidates) > 1 else " is") + " below; copy the text"
    )
    message += " exactly (including indentation) from them, without the line-number prefixes:"
    for cand in candidates:
        message += f"\n\nLines {cand.start}-{cand.end} ({cand.similarity:.0%} similar"
        message += ", differs only in whitespace)" if cand.whitespace_only else ")"
        message += f":\n{cand.numbered}"
    return message


def _syntax_note(key: str, old: str | None, text: str) -> str:
    """A warning line when the change left the file unparsable (the run must fix it before finishing)."""
    errors = introduced_errors(key, old, text)
    return f"\nWarning: syntax error: {errors[0]}" if errors else ""


__all__ = [
    "delete_file",
    "edit_file",
    "get_file_info",
    "list_files",
    "read_file",
    "task_complete",
    "write_file",
]
