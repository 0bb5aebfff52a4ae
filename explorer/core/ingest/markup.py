"""Markup documents for the chunker: sections at the headings of Markdown (ATX headings outside
fenced code) and reStructuredText (underlined titles). Front matter is read by
:mod:`explorer.core.ingest.front_matter`.
"""

from __future__ import annotations

import re

from explorer.core.ingest.windows import Chunker, Section

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\r?$")
_MD_CANDIDATE = re.compile(r"^ {0,3}(?:#|`{3}|~{3}).*$", re.M)
_ANCHOR = re.compile(r"\s*\{#[^}]*\}\s*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_RST_ADORNMENT = re.compile(r"([=\-~^\"'`#*+:._])\1{2,}[ \t]*\r?$")


def markdown_headings(text: str, body: int) -> list[tuple[int, int, str, int]]:
    """``(start, level, title, end of line)`` of each ATX heading outside fenced code."""
    headings, fence = [], ""
    for line in _MD_CANDIDATE.finditer(text, body):  # only lines that may open a fence or heading
        opener = _FENCE.match(line.group())
        if fence:
            if (
                opener
                and opener.group(1)[0] == fence[0]
                and len(opener.group(1)) >= len(fence)
                and not line.group()[opener.end() :].strip()
            ):
                fence = ""
        elif opener:
            fence = opener.group(1)
        elif match := _ATX.match(line.group()):
            title = _ANCHOR.sub("", match.group(2) or "").strip()  # drop a `{#id}` attribute
            headings.append((line.start(), len(match.group(1)), title, line.end()))
    return headings


def rst_headings(chunker: Chunker, body: int) -> list[tuple[int, int, str, int]]:
    """Headings of reStructuredText: a line underlined (and maybe overlined) with punctuation."""
    lines, styles, headings = chunker.text.split("\n"), [], []
    for number in range(1, len(lines)):
        title, under = lines[number - 1].strip(), lines[number].rstrip()
        before = lines[number - 2].rstrip() if number >= 2 else ""
        match = _RST_ADORNMENT.match(under)
        if (
            not match
            or not title
            or _RST_ADORNMENT.match(title)
            or len(under) < len(title)
            or before
            and before != under
        ):
            continue  # not a title, or one that does not follow a blank line or its overline
        start = chunker.line_starts[number - 2 if before else number - 1]
        if start >= body and (not headings or start >= headings[-1][3]):
            style = match.group(1) + ("/" if before else "")
            styles += [] if style in styles else [style]
            line_end = chunker.line_range(number + 1, number + 1)[1]
            headings.append((start, styles.index(style), title, line_end))
    return headings


def heading_sections(
    text: str, body: int, title: str, headings: list[tuple[int, int, str, int]]
) -> list[Section]:
    """A section per heading, with the path of enclosing headings; heading-only ones merge on."""
    sections = [Section(body, headings[0][0] if headings else len(text), title)]
    stack: list[tuple[int, str]] = []
    pending = None
    for index, (pos, level, heading, line_end) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        end = headings[index + 1][0] if index + 1 < len(headings) else len(text)
        start = pos if pending is None else pending
        if not text[line_end:end].strip() and index + 1 < len(headings):
            pending = start  # heading only: merge into the next section
            continue
        pending = None
        sections.append(Section(start, end, " > ".join(h for _, h in stack if h)))
    return sections
