"""Turn MCP tool results (content blocks) into the text observation the model reads."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

DEFAULT_MAX_CHARS = 20_000


def render_result(result: Any, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """The text of a CallToolResult: text blocks verbatim, other blocks summarised, cut when long."""
    parts = [render_block(block) for block in (getattr(result, "content", None) or [])]
    parts = [p for p in parts if p]
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, indent=2, default=str))
    text = "\n".join(parts)
    if not text:
        text = "(the tool returned no content)"
    return truncate(text, max_chars)


def render_block(block: Any) -> str:
    """One content block as text (images, audio and binary resources become a one-line summary)."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind in ("image", "audio"):
        mime = getattr(block, "mime_type", None) or "unknown type"
        return f"[{kind}: {mime}, {_decoded_size(getattr(block, 'data', ''))} bytes, not shown]"
    if kind == "resource_link":
        name = getattr(block, "title", None) or getattr(block, "name", None) or ""
        desc = getattr(block, "description", None)
        line = f"[resource link: {getattr(block, 'uri', '')}" + (f" ({name})" if name else "") + "]"
        return line + (f" {desc}" if desc else "")
    if kind == "resource":
        res = getattr(block, "resource", None)
        uri = getattr(res, "uri", "")
        mime = getattr(res, "mime_type", None)
        text = getattr(res, "text", None)
        if text is not None:
            return f"[resource {uri}{f' ({mime})' if mime else ''}]\n{text}"
        size = _decoded_size(getattr(res, "blob", "") or "")
        return f"[resource {uri}: {mime or 'binary'}, {size} bytes, not shown]"
    try:
        return json.dumps(block.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
    except Exception:  # noqa: BLE001 - an unknown block must never break the observation
        return str(block)


def truncate(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """`text` cut to `max_chars` characters with a marker saying how much was left out."""
    if len(text) <= max_chars:
        return text
    return (
        text[:max_chars]
        + f"\n… [output truncated: showing the first {max_chars:,} of {len(text):,} characters;"
        " ask the tool for less (a narrower query or a smaller range) to see the rest]"
    )


def _decoded_size(data: str) -> int:
    """Size in bytes of base64 data (its length when it is not valid base64)."""
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return len(data)
