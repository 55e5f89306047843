"""Every relative link in README.md and docs/*.md leads to a file that exists (and its #anchor to a heading), and the
README shows the test command CI runs."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(```|~~~)")
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, mailto:, ...


def prose_lines(text: str) -> list[str]:
    """The lines of a Markdown text outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor the headings of a Markdown page define (repeats get -1, -2, ... as on GitHub)."""
    seen: dict[str, int] = {}
    found = set()
    for line in prose_lines(page.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(page: Path) -> list[str]:
    """The link targets of a page's prose (not in code blocks or inline code)."""
    targets = []
    for line in prose_lines(page.read_text(encoding="utf-8")):
        targets += LINK.findall(INLINE_CODE.sub("", line))
    return targets


def broken_links(page: Path) -> list[str]:
    """The relative links of a page whose file, or whose anchor in a Markdown file, does not exist."""
    problems = []
    for target in links(page):
        if EXTERNAL.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / unquote(path_part)).resolve() if path_part else page
        shown = dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest
        if not dest.exists():
            problems.append(f"{target}: no such file {shown}")
        elif anchor and dest.suffix == ".md" and unquote(anchor).lower() not in anchors(dest):
            problems.append(f"{target}: no heading with the anchor #{anchor} in {shown}")
    return problems


def test_the_readme_shows_the_test_command_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    command = ci[ci.index("# The README's test command:") + 1].replace(
        "pip install -q ", "pip install "
    )  # quiet in CI
    assert f"```bash\n{command}\n```" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_pages_are_found() -> None:
    names = {page.name for page in PAGES}
    assert {"README.md", "configuration.md", "getting-started.md", "security.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_every_relative_link_points_to_an_existing_file_and_anchor(page: Path) -> None:
    assert not broken_links(page), "\n".join(broken_links(page))


def test_the_checker_catches_a_missing_file_and_a_missing_anchor(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text(
        "# A `code` title: with punctuation\n\n## Twice\n\n## Twice\n", encoding="utf-8"
    )
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md#a-code-title-with-punctuation) [ok2](there.md#twice-1) [web](https://example.com/x)\n"
        "[gone](missing.md) [bad anchor](there.md#nowhere) `[in code](nope.md)`\n"
        "```\n[in a fence](nope2.md)\n```\n",
        encoding="utf-8",
    )
    problems = broken_links(page)
    assert len(problems) == 2, problems
    assert problems[0].startswith("missing.md: no such file")
    assert problems[1].startswith("there.md#nowhere: no heading with the anchor #nowhere")


def test_the_tests_security_md_names_exist() -> None:
    named = set(
        re.findall(r"`([a-z_]+/test_\w+\.py)`", (ROOT / "docs" / "security.md").read_text(encoding="utf-8"))
    )
    assert len(named) >= 10, named
    assert not [name for name in sorted(named) if not (ROOT / "tests" / name).exists()]
