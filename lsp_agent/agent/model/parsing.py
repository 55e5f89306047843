"""Lenient parsing of tool calls written as text (prompt-injected tool calling).

Accepted forms, first match wins:
  <THOUGHT>..</THOUGHT><ACTION>{"name": .., "arguments": {..}}</ACTION>   (or <tool_name>/<parameters> inside ACTION)
  <tool_call>{"name": .., "arguments": {..}}</tool_call>
  ```tool_call {"name": .., "arguments": {..}} ```
  {"thought": .., "action": "read_file", "action_input": {..}}            (or "action": {"name", "arguments"})
  {"name": .., "arguments": {..}}
  <function=read_file>{..}</function>                                       (Llama 3.1 style)
  Thought: .. / Action: read_file / Action Input: {..}                       (classic ReAct text)

The tags and quotes may come HTML-escaped (&lt;ACTION&gt;, &#34;name&#34;, &quot;), and the closing tag may be
missing where a stop sequence ended the reply.
"""

from __future__ import annotations

import ast
import html
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

from lsp_agent.agent.model.json_text import balanced_object, python_literal_form
from lsp_agent.agent.model.sanitize import MAX_ARGUMENT_DEPTH, clean_text, clean_value, too_deep

NAME_KEYS = ("name", "tool", "tool_name", "function", "action")
ARG_KEYS = ("arguments", "parameters", "args", "action_input", "input", "params")
FINAL_ACTIONS = ("provide_answer", "final_answer", "finish", "answer", "respond")
# Prompt tool calling: the server stops right after the first action (the stop string itself is not sent back).
ACTION_STOP_SEQUENCES = ("</ACTION>", "&lt;/ACTION&gt;")
# The end of a SEARCH/REPLACE edit block (agent/model/edit_blocks.py), the small profile's other kind of action.
BLOCK_STOP_SEQUENCE = ">>>>>>> REPLACE"

_THOUGHT_RE = re.compile(r"<THOUGHT>(.*?)(?:</THOUGHT>|(?=<ACTION>)|$)", re.S | re.I)
_ACTION_RE = re.compile(r"<ACTION>(.*?)(?:</ACTION>|$)", re.S | re.I)
_TOOL_CALL_RE = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.S | re.I)
_FENCE_RE = re.compile(r"```[ \t]*tool_call[ \t]*\n?(.*?)(?:```|$)", re.S | re.I)
_ANY_FENCE_RE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n?(.*?)```", re.S)
_FUNCTION_TAG_RE = re.compile(r"<function=([\w.-]+)>(.*?)(?:</function>|$)", re.S)
_REACT_TEXT_RE = re.compile(r"^\s*Action:\s*`?([\w.-]+)`?\s*$\s*^\s*Action Input:\s*(.*)", re.S | re.M | re.I)
_TAG_RE = re.compile(r"<(tool_name|name|tool)>(.*?)</\1>", re.S | re.I)
_PARAMS_RE = re.compile(r"<(parameters|arguments|args)>(.*?)(?:</\1>|$)", re.S | re.I)
_ESCAPED_TAG_RE = re.compile(r"&lt;/?(ACTION|THOUGHT|tool_call|function=)", re.I)
_LITERAL_TAG_RE = re.compile(r"</?(ACTION|THOUGHT|tool_call|function=)", re.I)
_ESCAPED_QUOTE_RE = re.compile(r"\{\s*&(quot|#34|#x22|apos|#39|#x27);", re.I)  # {&#34;name&#34;: ...}
_OPEN_ACTION_RE = re.compile(r"<ACTION>|&lt;ACTION&gt;", re.I)
_ACTION_END_RE = re.compile(r"</ACTION>|&lt;/ACTION&gt;|^[ \t]*>{5,9}[ \t]*REPLACE\b[^\n]*$", re.I | re.M)


@dataclass
class ToolCall:
    """One requested tool call; arguments are a dict, or the raw string when they could not be decoded."""

    name: str
    arguments: dict[str, Any] | str
    id: str = ""
    problem: str | None = None  # why the call cannot run as sent (e.g. arguments nested too deep)


@dataclass
class ParsedReply:
    """What a text reply asks for: tool calls, a final answer, or an error explaining the expected format."""

    thought: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    final: str | None = None
    error: str | None = None


class ParseError(ValueError):
    """The reply tried to call a tool but could not be understood."""


def parse_reply(text: str, *, tags_only: bool = False) -> ParsedReply:
    """Find one tool call in a model reply; tags_only limits the search to <tool_call> and ```tool_call forms."""
    parsed = _parse(unescape_markup(clean_text(text or "")), tags_only)
    # JSON escapes such as "\ud800" decode to lone surrogates: clean what the parse produced as well
    parsed.thought = clean_text(parsed.thought)
    parsed.final = clean_text(parsed.final) if parsed.final is not None else None
    for call in parsed.calls:
        call.name = clean_text(call.name)
        call.arguments = clean_value(call.arguments)
    return parsed


def _parse(text: str, tags_only: bool) -> ParsedReply:
    """parse_reply on text already free of lone surrogates."""
    try:
        if not tags_only:
            parsed = _parse_thought_action(text)
            if parsed is not None:
                return parsed
        for regex in (_TOOL_CALL_RE, _FENCE_RE):
            match = regex.search(text)
            if match:
                thought = _strip_tags(text[: match.start()])
                call = _call_from_object(load_json_object(match.group(1)), thought=thought)
                if isinstance(call, ParsedReply):  # <tool_call>{"name": "final_answer", ...}</tool_call>
                    return call
                return ParsedReply(thought=thought, calls=[call])
        match = _FUNCTION_TAG_RE.search(text)
        if match:
            raw = match.group(2).strip()
            args = load_json_object(raw) if raw else {}
            return ParsedReply(
                thought=_strip_tags(text[: match.start()]), calls=[ToolCall(match.group(1), args)]
            )
        if tags_only:
            return ParsedReply(thought=text.strip(), final=text.strip())
        match = _REACT_TEXT_RE.search(text)
        if match:
            raw = match.group(2).strip()
            args = load_json_object(raw) if raw.startswith(("{", "```")) else {}
            thought = re.sub(r"^\s*Thought:\s*", "", text[: match.start()], flags=re.I).strip()
            return _final_or_call(thought, match.group(1), args)
        parsed = _parse_json_reply(text)
        if parsed.final is not None and parsed.final == text.strip() and looks_like_tool_attempt(text):
            raise ParseError("no tool name and arguments were found")
        return parsed
    except ParseError as exc:
        return ParsedReply(thought=_strip_tags(text), error=str(exc))
    except (
        RecursionError,
        MemoryError,
        ValueError,
        TypeError,
    ) as exc:  # pathological input must not crash a run
        return ParsedReply(thought="", error=f"the reply could not be parsed ({type(exc).__name__})")


def unescape_markup(text: str) -> str:
    """The reply with HTML entities decoded when its tool-call tags came escaped (&lt;ACTION&gt;) and none literal."""
    if _ESCAPED_TAG_RE.search(text) and not _LITERAL_TAG_RE.search(text):
        return html.unescape(text)
    return text


def close_cut_action(text: str) -> str:
    """A reply that a stop sequence ended inside its action, with the action's closing tag put back."""
    opened = list(_OPEN_ACTION_RE.finditer(text))
    if not opened:
        return text
    last = opened[-1]
    if re.search(r"</ACTION>|&lt;/ACTION&gt;", text[last.end() :], re.I):
        return text
    escaped = last.group(0).startswith("&")
    return text.rstrip() + ("&lt;/ACTION&gt;" if escaped else "</ACTION>")


def first_action_only(text: str) -> str:
    """The reply up to the end of its first action (</ACTION> or a block's REPLACE marker): whatever a model
    writes after it (an invented result, a second action) must not enter the conversation."""
    match = _ACTION_END_RE.search(text)
    return text[: match.end()] if match else text


def looks_like_tool_attempt(text: str) -> bool:
    """True when the text seems to try a tool call (so a parse failure deserves a correction)."""
    lowered = text.lower()
    tags = ("<tool_call", "```tool_call", "<action>", "</action>", "<function=", "&lt;action&gt;")
    if any(tag in lowered for tag in tags):
        return True
    stripped = _unfence(text).strip()
    return stripped.startswith("{") and bool(
        re.search(r'["\'](name|tool|action|arguments)["\']\s*:', stripped)
    )


def _parse_thought_action(text: str) -> ParsedReply | None:
    """The seed's <THOUGHT>/<ACTION> XML; None when there is no ACTION element."""
    if not re.search(r"<ACTION>", text, re.I):
        return None
    thought, action = _xml_parts(text)
    if thought is None and action is None:
        t = _THOUGHT_RE.search(text)
        a = _ACTION_RE.search(text)
        thought = t.group(1).strip() if t else ""
        action = a.group(1) if a else ""
    thought = thought or ""
    action = (action or "").strip()
    if not action:
        raise ParseError("the <ACTION> element is empty")
    name_match = _TAG_RE.search(action)
    if name_match:
        name = name_match.group(2).strip()
        params_match = _PARAMS_RE.search(action)
        if params_match:
            raw = params_match.group(2).strip()
            args: dict[str, Any] | str = load_json_object(raw) if raw else {}
        else:
            args = _child_elements(action, exclude=name_match.group(1))
        return _final_or_call(thought, name, args)
    if re.fullmatch(r"[A-Za-z_][\w.-]*", action):
        return _final_or_call(thought, action, {})
    call = _call_from_object(load_json_object(action), thought=thought)
    if isinstance(call, ParsedReply):
        return call
    return ParsedReply(thought=thought, calls=[call])


def _xml_parts(text: str) -> tuple[str | None, str | None]:
    """THOUGHT text and ACTION inner text via a real XML parse of the reply wrapped in a root element."""
    start = re.search(r"<THOUGHT>|<ACTION>", text, re.I)
    fragment = text[start.start() :] if start else text
    if (
        "&" in fragment
    ):  # an XML parse would decode entities the model meant literally (an HTML file's &lt;p&gt;)
        return None, None
    try:
        root = ET.fromstring(f"<root>{fragment}</root>")
    except ET.ParseError:
        return None, None
    thought = root.find("THOUGHT")
    action = root.find("ACTION")
    if action is None:
        return None, None
    inner = (action.text or "") + "".join(ET.tostring(child, encoding="unicode") for child in action)
    return (thought.text or "").strip() if thought is not None else "", inner


def _child_elements(action: str, exclude: str) -> dict[str, Any]:
    """<ACTION><tool_name>x</tool_name><path>a.py</path></ACTION>: the other children become arguments."""
    args: dict[str, Any] = {}
    for tag, value in re.findall(r"<([A-Za-z_][\w-]*)>(.*?)</\1>", action, re.S):
        if tag.lower() != exclude.lower():
            args[tag] = _scalar(value.strip())
    return args


def _scalar(value: str) -> Any:
    """A JSON scalar or structure when the text is one, else the text."""
    try:
        return json.loads(value)
    except ValueError:
        return value


def _parse_json_reply(text: str) -> ParsedReply:
    """A JSON object with thought/action fields, or a bare {"name", "arguments"} object; else a final answer."""
    body = _unfence(text)
    start = body.find("{")
    if start < 0:
        return ParsedReply(thought=text.strip(), final=text.strip())
    try:
        obj = load_json_object(body[start:])
    except ParseError:
        if looks_like_tool_attempt(text):
            raise
        return ParsedReply(thought=text.strip(), final=text.strip())
    keys = set(obj)
    if not keys & set(NAME_KEYS):
        return ParsedReply(thought=text.strip(), final=text.strip())
    result = _call_from_object(obj, thought=str(obj.get("thought") or obj.get("reasoning") or ""))
    if isinstance(result, ParsedReply):
        return result
    return ParsedReply(thought=str(obj.get("thought") or ""), calls=[result])


def _call_from_object(obj: dict[str, Any], thought: str = "") -> Any:
    """A ToolCall from {"name": .., "arguments": ..} and its variants; a ParsedReply for final answers."""
    name: Any = None
    for key in NAME_KEYS:
        if key in obj:
            name = obj[key]
            break
    if isinstance(name, dict):  # {"action": {"name": .., "arguments": ..}} or {"function": {...}}
        return _call_from_object(name, thought)
    if not isinstance(name, str) or not name.strip():
        raise ParseError('the tool call has no tool name (expected a string field "name")')
    args: Any = {}
    for key in ARG_KEYS:
        if key in obj:
            args = obj[key]
            break
    else:
        rest = {
            k: v for k, v in obj.items() if k not in NAME_KEYS and k not in ("thought", "reasoning", "id")
        }
        if rest and name.strip() not in FINAL_ACTIONS:
            args = rest
    if isinstance(args, str):
        try:
            args = load_json_object(args)
        except ParseError:
            if args.strip().startswith("{"):
                raise
    if args is None:
        args = {}
    if name.strip() in FINAL_ACTIONS:
        final = obj.get("final_answer") or obj.get("answer") or obj.get("content")
        if final is None and isinstance(args, dict):
            final = args.get("final_answer") or args.get("answer") or args.get("text")
        return ParsedReply(thought=thought, final=_final_text(final if final is not None else thought))
    if too_deep(args):
        raise ParseError(
            f"the arguments nest more than {MAX_ARGUMENT_DEPTH} levels deep; send a flat JSON object of the "
            "tool's parameters"
        )
    return ToolCall(name=name.strip(), arguments=args if isinstance(args, dict | str) else {"value": args})


def _final_text(value: Any) -> str:
    """A final answer as text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return str(value)[:2000]


def _final_or_call(thought: str, name: str, args: dict[str, Any] | str) -> ParsedReply:
    if name in FINAL_ACTIONS:
        final = args.get("final_answer") or args.get("answer") if isinstance(args, dict) else args
        return ParsedReply(thought=thought, final=str(final or thought))
    return ParsedReply(thought=thought, calls=[ToolCall(name=name, arguments=args)])


def _unfence(text: str) -> str:
    """The body of the first code fence, or the text itself."""
    match = _ANY_FENCE_RE.search(text)
    return match.group(1) if match else text


def _strip_tags(text: str) -> str:
    """Text with <THOUGHT> tags removed, for showing as the thought."""
    return re.sub(r"</?THOUGHT>", "", text, flags=re.I).strip()


def load_json_object(raw: str) -> dict[str, Any]:
    """Decode the first JSON object in `raw`, tolerating fences, trailing text, single quotes, trailing commas."""
    body = _unfence(raw).strip() if "```" in raw else raw.strip()
    start = body.find("{")
    if start < 0:
        raise ParseError('expected a JSON object like {"name": "read_file", "arguments": {"path": "a.py"}}')
    body = body[start:]
    if _ESCAPED_QUOTE_RE.match(body):
        body = html.unescape(body)
    candidate = balanced_object(body)
    for attempt in (candidate, python_literal_form(candidate)):
        if attempt is None:
            continue
        try:
            obj = json.loads(attempt, strict=False)
        except (ValueError, RecursionError):
            obj = None
        if obj is None:
            try:
                obj = ast.literal_eval(attempt)
            except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
                obj = None
        if isinstance(obj, dict):
            return obj
    raise ParseError(f"the tool call is not valid JSON: {candidate[:200]!r}")
