"""Monitor-guided decoding (Agrawal et al., 2023): a suggestion's `self.name`, `module.name` or `param.name` that
the workspace says does not exist is asked again, constrained to the names that do.

The model's suggestion is read for `receiver.name` where `members.py` vouches for the receiver's complete member set
(`self`/`cls` in a method, an imported workspace module, a parameter annotated with a workspace class or a builtin
type, unless the function narrows it with isinstance);
for the first name outside it, the model is asked again from the prompt plus the suggestion up to the name, with a
GBNF grammar allowing only the known members (llama.cpp and llama-cpp-python take `grammar` in /v1/completions),
so it picks the member it rates most likely; then the suggestion is continued unconstrained from there. At most
`completionMonitorCorrections` names per suggestion. A server that refuses the grammar, or answers outside it, turns
the monitor off for that model (one log line). The extra requests run inside the suggestion's own request: a
keystroke or an edit cancels them with it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from lsp_agent.completion.fim_client import CompletionModelError, FimClient, FimRequest, FimResult
from lsp_agent.completion.members import Members, MemberSets, Workspace, parse
from lsp_agent.completion.members import text as node_text
from lsp_agent.completion.postprocess import Cursor, finish
from lsp_agent.completion.syntax import kept_tree

log = logging.getLogger(__name__)

ATTRIBUTE = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\.([A-Za-z_]\w*)")
LITERAL = re.compile(r"\"(?:\\.|[^\"\\\n])*\"?|'(?:\\.|[^'\\\n])*'?|#[^\n]*")
# after a name: it is being assigned (`self.x = `, `self.a, self.b = `, `self.x: int = `), so it need not exist
ASSIGNED = re.compile(r"\s*(?:,\s*[\w.]+\s*)*(?::[^=\n]*)?=(?!=)|\s*:\s*[\w\[\], .|]+\s*(?:\n|$)")
DEFINED = re.compile(
    r"\b(?:def|class)\s+([A-Za-z_]\w*)|(?<![\w.])(?:self|cls)\.([A-Za-z_]\w*)\s*(?::[^=\n]*)?=(?!=)"
)
REJECTED = (400, 404, 405, 415, 422, 501)  # HTTP statuses of a server that does not take the grammar field
LOOSE_TYPES = ("object", "Any", "typing.Any", "type")  # annotations that promise no members
PREFIX_TAIL = 120
NAME_END = "root ::= [^a-zA-Z0-9_]"  # GBNF: one character that cannot continue a Python name
NAME_CHAR = re.compile(r"\w")
IMPORT_LINE = re.compile(
    r"^[ \t]*(?:import|from)[ \t].*$", re.M
)  # characters of the cursor's line before it that may hold a name's receiver


@dataclass(frozen=True)
class Slip:
    """A name the suggestion writes that the receiver does not have: where it starts and what may stand there."""

    at: int  # index into the suggestion
    written: str
    choices: tuple[str, ...]  # the members (without the part the user typed before the cursor)


def masked(text: str) -> str:
    """The text with string literals and comments blanked out (same length)."""
    return LITERAL.sub(lambda m: " " * len(m.group()), text)


def first_slip(
    cursor: Cursor, suggestion: str, receivers: dict[str, Members], start: int = 0, cut_short: bool = False
) -> Slip | None:
    """The first `receiver.name` at or after `start` in the suggestion whose name its receiver lacks."""
    tail = cursor.line_prefix[-PREFIX_TAIL:]
    joined = tail + suggestion
    plain = masked(joined)
    defined = {a or b for a, b in DEFINED.findall(plain)}
    cursor_at = len(tail)
    for match in ATTRIBUTE.finditer(plain):
        receiver, name = match.group(1), match.group(2)
        straddles = start == 0 and match.start(2) < cursor_at < match.end(2)
        if receiver not in receivers or not (straddles or match.start(2) >= cursor_at + start):
            continue
        members = receivers[receiver] | defined
        if name in members or (name.startswith("__") and name.endswith("__")):
            continue
        if ASSIGNED.match(plain, match.end(2)) or (cut_short and match.end(2) == len(joined)):
            continue  # a new attribute being assigned, or a name the token limit may have cut
        typed = joined[match.start(2) : cursor_at] if straddles else ""
        if typed in members:
            continue  # the user may have finished the name and be writing another
        choices = sorted(
            m[len(typed) :]
            for m in members
            if m.startswith(typed) and len(m) > len(typed) and not (m.startswith("__") and m.endswith("__"))
        )
        if choices:
            return Slip(max(0, match.start(2) - cursor_at), name[len(typed) :], tuple(choices))
    return None


def grammar_for(choices: tuple[str, ...]) -> str:
    """A GBNF grammar of exactly one of the choices."""
    return "root ::= " + " | ".join(json.dumps(c) for c in choices)


def enclosing_functions(tree: Any, source: bytes, at: int) -> list[Any]:
    """The functions whose bodies hold byte offset `at`, innermost first (by the cursor line's indentation, so a
    cursor on a blank line after a body is not in it)."""
    line_start = source.rfind(b"\n", 0, at) + 1
    before = source[line_start:at]
    indent = len(before) - len(before.lstrip()) if before.strip() else len(before)
    last = len(source[:at].rstrip())
    node = tree.root_node.descendant_for_byte_range(max(0, last - 1), max(0, last - 1))
    found = []
    while node is not None:
        if node.type == "function_definition" and node.start_point[1] < indent:
            found.append(node)
        node = node.parent
    return found


def class_of(function: Any) -> Any:
    """The class a function is a method of (None for others)."""
    holder = (
        function.parent if function.parent and function.parent.type == "decorated_definition" else function
    )
    block = holder.parent
    return (
        block.parent
        if block is not None and block.type == "block" and block.parent.type == "class_definition"
        else None
    )


def parameters(function: Any) -> list[tuple[str, Any]]:
    """(name, annotation or None) of a function's parameters."""
    params = function.child_by_field_name("parameters")
    out = []
    for param in params.named_children if params is not None else []:
        name = param if param.type == "identifier" else param.child_by_field_name("name")
        if name is None or name.type != "identifier":
            name = next((c for c in param.named_children if c.type == "identifier"), None)
        if name is not None:
            annotation = param.child_by_field_name("type")
            out.append(
                (
                    node_text(name),
                    annotation.named_children[0] if annotation and annotation.named_children else None,
                )
            )
    return out


def rebound(name: str, text: str) -> bool:
    """Whether a module's name is also assigned or taken as a parameter in the file (then it is not the module)."""
    word = re.escape(name)
    text = IMPORT_LINE.sub("", text)  # `import x as name` binds the module itself
    return bool(
        re.search(rf"(?<![\w.]){word}\s*(?::[^=\n]*)?=(?!=)|\bfor\s+{word}\b|\bas\s+{word}\b", text)
        or re.search(rf"\bdef\s+\w+\s*\([^)]*(?<![\w.=]){word}\b", text)
    )


def receivers_at(
    workspace: Workspace, rel: str, text: str, offset: int, tree: Any = None, wanted: set[str] | None = None
) -> dict[str, Members]:
    """The receivers whose complete member sets the workspace knows at a cursor of a Python file (call in a worker
    thread): the names of imported workspace modules, `self`/`cls` of the enclosing method, and parameters annotated
    with a workspace class or a builtin type; only those in `wanted`, when given."""
    if workspace.is_secret(rel):
        return {}  # a secret file is never completed; its own classes are not offered either
    source = text.encode("utf-8", "surrogatepass")
    tree = tree or parse(rel, source)
    if tree is None:
        return {}
    at = len(text[:offset].encode("utf-8", "surrogatepass"))
    sets = MemberSets(workspace)
    try:
        found: dict[str, Members] = {}
        modules = sets.imported_modules(tree, rel, wanted)
        for name, path in modules.items():
            members = None if rebound(name, text) else sets.module_members(path)
            if members is not None:
                found[name] = members
        for function in reversed(enclosing_functions(tree, source, at)):  # an inner function's names win
            body = function.text.decode("utf-8", "replace")
            for position, (name, annotation) in enumerate(parameters(function)):
                found.pop(name, None)
                if wanted is not None and name not in wanted:
                    continue
                klass = class_of(function) if position == 0 and name in ("self", "cls") else None
                if klass is not None:
                    members = sets.class_members(klass, rel, tree)
                elif (
                    annotation is None
                    or node_text(annotation) in LOOSE_TYPES
                    or f"isinstance({name}," in body
                ):
                    continue  # no type, or one a check may narrow to a subclass
                else:
                    members = sets.base_members(annotation, rel, tree, 1)
                if members is not None:
                    found[name] = members
        return found
    finally:
        sets.close()


class Monitor:
    """Corrects suggestions' names against the workspace's member sets; remembers which models take no grammar."""

    def __init__(self, stats: Any) -> None:
        self.stats = stats
        self.unsupported: set[str] = set()

    def usable(self, client: FimClient, template: str | None) -> bool:
        """Whether this model's suggestions can be guided (a prompt we format, sent to /v1/completions)."""
        return (
            template not in (None, "chat", "server")
            and client.direct
            and client.model not in self.unsupported
        )

    async def receivers(
        self, workspace: Workspace, rel: str, request: Any, cursor: Cursor, suggestion: str
    ) -> dict[str, Members]:
        """The receivers with known members at a request's cursor ({} when the suggestion names no `x.y`)."""
        wanted = {
            m.group(1) for m in ATTRIBUTE.finditer(masked(cursor.line_prefix[-PREFIX_TAIL:] + suggestion))
        }
        if not wanted:
            return {}
        lines = request.text.split("\n")
        offset = sum(len(line) + 1 for line in lines[: request.line]) + request.character
        tree = kept_tree(request.key, request.text)
        return await asyncio.to_thread(receivers_at, workspace, rel, request.text, offset, tree, wanted)

    async def guide(
        self,
        text: str,
        cursor: Cursor,
        fim: FimRequest,
        receivers: dict[str, Members],
        client: FimClient,
        continue_from: Callable[[FimRequest, str], Awaitable[FimResult | None]],
        limit: int,
    ) -> str:
        """The suggestion with up to `limit` names corrected; `continue_from(request, lead)` streams the rest after
        the corrected name (None when the model failed: the suggestion is kept as it was)."""
        started, corrections, start, cut_short = time.perf_counter(), 0, 0, False
        self.stats.monitor_checked += 1
        while corrections < limit:
            slip = first_slip(cursor, text, receivers, start, cut_short)
            if slip is None:
                break
            head = text[: slip.at]
            member = await self._choose(client, fim, head, slip)
            if member is None:
                break
            lead = head + member
            result = await continue_from(dataclasses.replace(fim, prompt=fim.prompt + lead), lead)
            if result is not None and NAME_CHAR.match(result.text):
                # the rest lengthened the member into another name: end the name first (rare: one more request)
                end = await self._constrained(client, fim.prompt + lead, NAME_END, 1)
                if end is None or len(end) != 1 or NAME_CHAR.match(end):
                    break
                lead += end
                result = await continue_from(dataclasses.replace(fim, prompt=fim.prompt + lead), lead)
            if result is None:
                break
            log.debug("monitor: %r -> %r", slip.written, member)
            text = finish(lead + result.text, cursor, cut_short=result.finish_reason == "length")
            start, corrections = len(head) + len(member), corrections + 1
        if corrections:
            self.stats.monitor_corrected += 1
            self.stats.monitor_corrections += corrections
            self.stats.monitor_ms.append(round(1000 * (time.perf_counter() - started)))
        return text

    async def _choose(self, client: FimClient, fim: FimRequest, head: str, slip: Slip) -> str | None:
        """The member the model rates most likely in place of the slip (None: not asked or not answered)."""
        longest = max(len(c) for c in slip.choices)
        member = await self._constrained(client, fim.prompt + head, grammar_for(slip.choices), longest + 1)
        if member is not None and member not in slip.choices:
            self._turn_off(client.model, f"it answered {member[:40]!r} outside the grammar")
            return None
        return member

    async def _constrained(self, client: FimClient, prompt: str, grammar: str, max_tokens: int) -> str | None:
        """The model's text under a grammar (None when it failed, or refused the grammar: then the monitor is off
        for this model)."""
        self.stats.model_requests += 1
        request = FimRequest(prompt, max_tokens=max_tokens, grammar=grammar)
        try:
            result = await client.stream(request, lambda _: False)
        except CompletionModelError as exc:
            if exc.status in REJECTED:
                self._turn_off(client.model, f"it refused the grammar ({exc})")
            else:
                log.info("monitor: the constrained request failed: %s", exc)
            return None
        return result.text

    def _turn_off(self, model: str, why: str) -> None:
        self.unsupported.add(model)
        log.info("inline completion monitor off for %s: %s", model, why)
