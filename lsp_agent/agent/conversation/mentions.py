"""Context mentions in a task: `@path/to/file`, `@symbol`, `@selection` and `#diagnostics`, resolved to context.

A mention that names nothing (no such file or symbol, a secret or binary file, @selection without a selection)
becomes a problem message; the ask still goes on with the rest, since the task text alone still says what the
user wants and the agent can search the workspace itself.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lsp_agent.agent.conversation.diagnostics_context import render_diagnostics
from lsp_agent.workspace.paths import PathError, resolve_in_workspace

FILE_CHARS = 24_000  # one mentioned file or symbol
TOTAL_CHARS = 80_000  # all mentions of one ask
DIR_ENTRIES = 200
SYMBOL_HITS = 3

# `@` at the start or after a space or opening bracket (so mail addresses are not mentions); quoted paths too.
MENTION = re.compile(r"""(?<![\w@])@(?:"([^"\n]+)"|([\w./\\~+-][\w./\\~+:#-]*))""")
DIAGNOSTICS = re.compile(r"(?<![\w#])#diagnostics\b", re.IGNORECASE)
LINES = re.compile(r"^(.*?):(\d+)(?:-(\d+))?$")


@dataclass
class ResolvedMentions:
    """What the mentions of a task attach (context blocks) and what they could not (problems)."""

    blocks: list[str] = field(default_factory=list)
    attached: list[str] = field(default_factory=list)  # "@pkg/calc.py (42 lines)", "#diagnostics (3)"
    problems: list[str] = field(default_factory=list)
    chars: int = 0

    def add(self, label: str, block: str) -> None:
        """Attach one block, cutting it to what is left of the total budget."""
        room = TOTAL_CHARS - self.chars
        if room <= 200:
            self.problems.append(f"{label}: not attached, the mentions already fill {TOTAL_CHARS} characters")
            return
        if len(block) > room:
            block = block[:room] + "\n[cut: the mentions of this ask reached their size limit]"
        self.blocks.append(block)
        self.attached.append(label)
        self.chars += len(block)

    def to_event(self) -> dict[str, Any]:
        """The `context` event payload (what the editor and the CLI show)."""
        return {"what": "mentions", "attached": list(self.attached), "problems": list(self.problems)}


@dataclass
class MentionSources:
    """Where mentions are looked up: file text (open buffers first), the index, secrets, the editor's state."""

    root: Path
    read_text: Callable[[Path], str | None]
    index: Any = None  # WorkspaceIndex (find_symbol) or None
    is_secret: Callable[[str], bool] = lambda rel: False
    redact: Callable[[str], str] = lambda text: text
    selection: str | None = None  # the editor's selection as context text
    diagnostics: list[dict[str, Any]] | None = None  # the current file's diagnostics, as the client sent them
    current_file: str | None = None  # workspace-relative path of the file the ask came from
    focus_line: int | None = None  # 0-based line of the diagnostic to fix ("fix this diagnostic")
    folders: Any = (
        None  # workspace.folders.FolderAccess: `@name/...` of a folder open for reading resolves there
    )
    redact_in: Callable[[Path], Callable[[str], str]] | None = None  # another folder's secret values
    label_prefix: str = ""  # "@name/" while resolving in another folder


def mention_names(task: str) -> list[str]:
    """The mentions of a task as typed (without the @), in order, each once; `#diagnostics` as "#diagnostics"."""
    names: list[str] = []
    for match in MENTION.finditer(task):
        name = match.group(1) or match.group(2).rstrip(".,;:!?)]}'\"")
        if name and name not in names:
            names.append(name)
    if DIAGNOSTICS.search(task):
        names.append("#diagnostics")
    return names


def resolve_mentions(task: str, sources: MentionSources) -> ResolvedMentions:
    """Resolve every mention of `task` to context blocks (and problems for the ones that name nothing)."""
    out = ResolvedMentions()
    for name in mention_names(task):
        if name == "#diagnostics":
            _attach_diagnostics(out, sources, explicit=True)
        elif name.lower() == "selection":
            _attach_selection(out, sources)
        else:
            _attach_file_or_symbol(out, sources, name)
    if sources.diagnostics and "#diagnostics" not in mention_names(task):
        _attach_diagnostics(out, sources, explicit=False)  # sent by "fix this diagnostic"
    return out


def _attach_selection(out: ResolvedMentions, sources: MentionSources) -> None:
    """@selection: the editor's selection (it already travels as the ask's editor context)."""
    if sources.selection:
        out.attached.append("@selection")
    else:
        out.problems.append("@selection: nothing is selected in the editor; select code and ask again")


def _attach_diagnostics(out: ResolvedMentions, sources: MentionSources, *, explicit: bool) -> None:
    """#diagnostics: the diagnostics the client collected from every language server for the current file."""
    diagnostics = sources.diagnostics or []
    if not diagnostics:
        if explicit:
            where = sources.current_file or "the current file"
            out.problems.append(
                f"#diagnostics: the editor sent no diagnostics for {where} (none reported, or no file open)"
            )
        return
    focus = None if explicit else sources.focus_line
    text, count = render_diagnostics(diagnostics, sources.root, sources.current_file, focus)
    out.add(f"#diagnostics ({count})", sources.redact(text))


def _attach_file_or_symbol(out: ResolvedMentions, sources: MentionSources, name: str) -> None:
    """@path (a file, a line range `path:10-20` or a directory), else @symbol from the index."""
    other = _other_folder(sources, name)
    if other is not None:
        sources, name = other
    path_part, first, last = _split_lines(name)
    try:
        path = resolve_in_workspace(sources.root, path_part)
    except PathError as exc:
        out.problems.append(f"@{name}: {exc}")
        return
    rel = _rel(sources.root, path)
    shown = sources.label_prefix + rel if rel != "." else sources.label_prefix.rstrip("/") or "."
    name = sources.label_prefix + name if name != "." else shown
    if os.path.lexists(path):
        if sources.is_secret(rel):
            out.problems.append(
                f"{_at(name)}: {shown} is a secret file (secretFiles); its contents are never attached"
            )
        elif path.is_dir():
            block = _directory_block(path, rel, sources.is_secret)
            out.add(f"{_at(shown)}/", sources.label_prefix + block if rel != "." else f"{shown}{block[1:]}")
        else:
            _attach_file(out, sources, name, path, shown, first, last)
        return
    if first is None and not sources.label_prefix and _attach_symbol(out, sources, name):
        return
    looks_like_path = "/" in name or "\\" in name or re.search(r"\.\w{1,5}$", name) is not None
    what = "no file" if looks_like_path else "no file or symbol"
    where = sources.label_prefix.rstrip("/") or "the workspace"
    out.problems.append(
        f"{_at(name)}: {what} named {name!r} in {where}; the ask goes on without it{_folder_hint(sources, name)}"
    )


def _other_folder(sources: MentionSources, name: str) -> tuple[MentionSources, str] | None:
    """(the sources of another folder open for reading, the path inside it) for `@api/src/x.py`, else None."""
    access = sources.folders
    head, _, rest = name.replace("\\", "/").partition("/")
    if access is None or head not in access.readable or os.path.lexists(sources.root / head):
        return None  # a file or directory of the run's own folder wins over a folder of the same name
    root = access.others[head]
    redact = sources.redact_in(root) if sources.redact_in is not None else sources.redact
    return replace(
        sources, root=root, index=None, redact=redact, folders=None, label_prefix=f"@{head}/"
    ), rest or "."


def _at(text: str) -> str:
    """A mention as typed: `@` before a path of the run's folder (another folder's paths carry theirs)."""
    return text if text.startswith("@") else f"@{text}"


def _folder_hint(sources: MentionSources, name: str) -> str:
    """For `@x/...` naming no file: that no workspace folder is called x either, and which folders there are."""
    access = sources.folders
    head = name.replace("\\", "/").partition("/")[0]
    if access is None or "/" not in name or sources.label_prefix or os.path.lexists(sources.root / head):
        return ""
    names = ", ".join(f"@{n}" for n in [access.own_name, *access.others])
    if not access.others:
        return f" (and no other workspace folder is open: {names} is the only one)"
    return f" (and no workspace folder is named {head!r}: the folders are {names})"


def _attach_file(
    out: ResolvedMentions,
    sources: MentionSources,
    name: str,
    path: Path,
    rel: str,
    first: int | None,
    last: int | None,
) -> None:
    """One file's text (or a line range of it), numbered, cut at FILE_CHARS."""
    text = sources.read_text(path)
    if text is None:
        out.problems.append(f"{_at(name)}: {rel} could not be read as text (binary, too large or unreadable)")
        return
    lines = text.splitlines()
    start = max(1, first or 1)
    end = min(len(lines), last or (first if first else len(lines)))
    if first is not None and start > len(lines):
        out.problems.append(f"{_at(name)}: {rel} has only {len(lines)} lines")
        return
    body = "\n".join(f"{n:>5}  {lines[n - 1]}" for n in range(start, end + 1))
    if len(body) > FILE_CHARS:
        body = body[:FILE_CHARS] + f"\n[cut at {FILE_CHARS} characters; read_file {rel} for the rest]"
    span = f"lines {start}-{end} of " if first is not None else ""
    label = _at(rel) + (f":{start}-{end}" if first is not None else "")
    out.add(
        f"{label} ({end - start + 1} lines)", sources.redact(f"{span}{rel} (mentioned):\n```\n{body}\n```")
    )


def _attach_symbol(out: ResolvedMentions, sources: MentionSources, name: str) -> bool:
    """The definitions of a symbol the index knows; False when it knows none."""
    if sources.index is None:
        return False
    try:
        hits = [h for h in sources.index.find_symbol(name, limit=10) if h.role == "definition"]
    except Exception:  # noqa: BLE001 - a busy or closed index: the mention is reported as not found
        return False
    if not hits:
        return False
    for hit in hits[:SYMBOL_HITS]:
        if sources.is_secret(hit.path):
            continue
        text = sources.read_text(sources.root / hit.path)
        if text is None:
            continue
        lines = text.splitlines()[hit.line - 1 : max(hit.end_line, hit.line)]
        body = "\n".join(f"{hit.line + i:>5}  {line}" for i, line in enumerate(lines))[:FILE_CHARS]
        head = f"{hit.kind} {hit.qualified_name or hit.name} in {hit.path}, lines {hit.line}-{hit.end_line}"
        out.add(f"@{name} ({hit.path}:{hit.line})", sources.redact(f"{head} (mentioned):\n```\n{body}\n```"))
    more = len(hits) - SYMBOL_HITS
    if more > 0:
        out.problems.append(f"@{name}: {len(hits)} definitions; attached the first {SYMBOL_HITS}")
    return True


def _directory_block(path: Path, rel: str, is_secret: Callable[[str], bool]) -> str:
    """A directory's entries (names only; secret files are marked, never read)."""
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError as exc:
        return f"{rel}/ (mentioned): cannot list it ({exc.strerror})"
    names = []
    for entry in entries[:DIR_ENTRIES]:
        child = f"{rel}/{entry.name}" if rel != "." else entry.name
        mark = "/" if entry.is_dir(follow_symlinks=False) else (" [secret file]" if is_secret(child) else "")
        names.append(entry.name + mark)
    more = f"\n... and {len(entries) - DIR_ENTRIES} more" if len(entries) > DIR_ENTRIES else ""
    return f"{rel}/ (mentioned directory):\n" + "\n".join(names) + more


def _split_lines(name: str) -> tuple[str, int | None, int | None]:
    """`path:10-20` -> (path, 10, 20); `path:7` -> (path, 7, 7); anything else -> (name, None, None)."""
    match = LINES.match(name)
    if not match:
        return name, None, None
    first = int(match.group(2))
    return match.group(1), first, int(match.group(3)) if match.group(3) else first


def _rel(root: Path, path: Path) -> str:
    """A workspace-relative POSIX path (the real root, as resolve_in_workspace returns real paths)."""
    try:
        return path.relative_to(Path(os.path.realpath(root))).as_posix() or "."
    except ValueError:
        return path.as_posix()


def read_text_file(path: Path, max_bytes: int = 1_000_000) -> str | None:
    """A file's text for a mention; None for a missing, special, binary, non-UTF-8 or oversized file."""
    try:
        if not path.is_file() or path.stat().st_size > max_bytes:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
