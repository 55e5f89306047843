"""Tool results to observations: text verbatim, other blocks summarised, long output cut with a marker."""

from __future__ import annotations

import base64

from mcp_types import (
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from lsp_agent.mcp.results import render_result, truncate


def _result(*blocks, structured=None, is_error=False) -> CallToolResult:
    return CallToolResult(content=list(blocks), structured_content=structured, is_error=is_error)


def test_text_blocks_are_joined_verbatim():
    out = render_result(_result(TextContent(type="text", text="one"), TextContent(type="text", text="two")))
    assert out == "one\ntwo"


def test_images_and_binary_resources_are_summarised_not_dumped():
    png = base64.b64encode(b"x" * 300).decode()
    out = render_result(
        _result(
            ImageContent(type="image", data=png, mime_type="image/png"),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(uri="file:///a.bin", mime_type="application/zip", blob=png),
            ),
        )
    )
    assert out.splitlines() == [
        "[image: image/png, 300 bytes, not shown]",
        "[resource file:///a.bin: application/zip, 300 bytes, not shown]",
    ]
    assert png not in out


def test_text_resources_and_links_keep_their_uri():
    out = render_result(
        _result(
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(
                    uri="file:///notes.md", mime_type="text/markdown", text="# Notes"
                ),
            ),
            ResourceLink(type="resource_link", uri="file:///big.log", name="big.log", description="the log"),
        )
    )
    assert (
        out
        == "[resource file:///notes.md (text/markdown)]\n# Notes\n[resource link: file:///big.log (big.log)] the log"
    )


def test_structured_content_is_used_when_there_are_no_blocks():
    assert render_result(_result(structured={"count": 3})) == '{\n  "count": 3\n}'
    assert render_result(_result()) == "(the tool returned no content)"


def test_long_output_is_cut_with_a_marker_naming_the_sizes():
    text = "x" * 50
    assert truncate(text, 100) == text
    out = render_result(_result(TextContent(type="text", text="y" * 1234)), max_chars=100)
    assert out.startswith("y" * 100 + "\n")
    assert "[output truncated: showing the first 100 of 1,234 characters;" in out
