"""Markdown rendered line for line, for the text view (a long page read at a pager's speed).

Textual's ``Markdown`` widget makes a widget per block; on a long page every zoom or resize
styles and lays out thousands of them again. Here each line of the source becomes one line of
styled text, as glow and a pager show Markdown: a heading without its ``#`` marks, bold and
italic without their stars, a link by its text, an inline image as a line naming it, list
bullets as ``•``, quotes behind a bar, code blocks highlighted in their language (never
wrapped inside a word: the view wraps at spaces), tables with their columns lined up. As one source
line stays one line, the lines a search result names are the lines shown, and the view draws
only the rows on screen.

Block structure comes from markdown-it (the parser Textual's widget uses) and each line's inline
markup from its inline parser; nothing is parsed by hand but the block prefixes of a line
(quote bars, a list bullet, a heading's marks), which markdown-it reports per block.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from textual.content import Content

from explorer.tui.widgets.syntax_highlight import highlight_lines

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

HEADING_STYLES = {
    1: "bold underline $text-primary",
    2: "bold $text-primary",
    3: "bold $text-accent",
}
_PREFIX = re.compile(r"^(\s*(?:>\s?)*)(\s*)(?:([-*+]|\d{1,9}[.)])(\s+|$))?")
_HEADING = re.compile(r"^(\s*(?:>\s?)*)\s{0,3}(#{1,6})(\s+|$)(.*)$")
"""An ATX heading; its closing ``#`` run is cut in :func:`_heading` (a lazy title before an
optional closing run was tried at every character of a long run of spaces: 1.7 s for 20,000)."""
_CELL_BAR = re.compile(r"(?<!\\)\|")
"""A table's cell separator (``\\|`` is a bar inside a cell: a wikilink's, in a vault)."""
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_DELIMITER_CELL = re.compile(r"^\s*:?-+:?\s*$")
"""A cell of a table's delimiter row (``---``, ``:--``, ``--:``, ``:-:``)."""
PADDED_WIDTH = 40
"""Most cells a table's column is padded to. A column is as wide as nine in ten of its cells
(at most this): a longer cell is written as it is, past its column, so that one paragraph in a
cell, or a few long names, do not widen every row of the table."""
MOST_COLUMNS = 40
"""A table of more columns is drawn row by row, its bars dimmed (each row would be padded with
every column another row has: a row of thousands of bars would multiply the whole table)."""


def markdown_lines(text: str) -> list[Content]:
    """``text`` (Markdown) as one styled line per source line."""
    from explorer.tui.widgets.markdown_parser import preview_parser

    parser = preview_parser()
    lines = text.split("\n")
    kinds: list[str] = ["text"] * len(lines)
    languages: dict[int, str] = {}
    heading_levels: dict[int, int] = {}
    tables: list[tuple[int, int]] = []
    for token in parser.parse(text):
        if token.map is None:
            continue
        start, end = token.map
        if token.type in ("fence", "code_block"):
            for row in range(start, min(end, len(lines))):
                kinds[row] = "code"
            if token.type == "fence":
                kinds[start] = "fence"
                if end - 1 > start and lines[end - 1].strip().startswith(token.markup):
                    kinds[end - 1] = "fence"
                languages[start] = (token.info.split() or ["text"])[0]
        elif token.type == "heading_open":
            level = int(token.tag[1:])
            for row in range(start, min(end, len(lines))):
                kinds[row] = "heading"
                heading_levels[row] = level
        elif token.type == "hr":
            kinds[start] = "rule"
        elif token.type == "table_open":
            tables.append((start, min(end, len(lines))))
        elif token.type == "html_block":
            for row in range(start, min(end, len(lines))):
                kinds[row] = "html"
    aligned: dict[int, Content] = {}
    for start, end in tables:
        rows = _table(parser, lines[start:end])
        if rows is not None:
            aligned.update(zip(range(start, end), rows, strict=True))
    shown: list[Content] = []
    number = 0
    while number < len(lines):
        kind = kinds[number]
        if kind == "fence" and number in languages:
            body_end = number + 1
            while body_end < len(lines) and kinds[body_end] == "code":
                body_end += 1
            shown.append(Content.styled(lines[number], "dim"))
            code = "\n".join(lines[number + 1 : body_end])
            if body_end > number + 1:
                shown.extend(_code(code, languages[number]))
            number = body_end
            continue
        line = lines[number]
        if kind in ("fence", "html"):
            shown.append(Content.styled(line, "dim"))
        elif kind == "code":
            shown.append(Content(line))
        elif kind == "rule":
            shown.append(Content.styled("─" * 40, "dim"))
        elif kind == "heading":
            shown.append(_heading(parser, line, heading_levels[number]))
        elif number in aligned:
            shown.append(aligned[number])
        else:
            shown.append(_text_line(parser, line))
        number += 1
    return shown


def _code(code: str, language: str) -> list[Content]:
    """A code block's lines highlighted in its language, exactly as many as it has."""
    plain = code.split("\n")
    try:
        lines = highlight_lines(code, language)
    except Exception:  # noqa: BLE001 - an odd lexer costs the colours, never the text
        return [Content(line) for line in plain]
    if [line.plain for line in lines] != plain:
        return [Content(line) for line in plain]
    return lines


def _heading(parser: MarkdownIt, line: str, level: int) -> Content:
    style = HEADING_STYLES.get(level, "bold")
    found = _HEADING.match(line)
    if found is None:
        if _SETEXT.match(line):
            return Content.styled(line, "dim")
        return _inline(parser, line, style)
    quote, marks, _space, title = found.groups()
    title = title.rstrip()
    opened = title.rstrip("#")
    if opened != title and opened[-1:].isspace():  # a closing run: "## Title ##"
        title = opened.rstrip()
    prefix = _quote_bar(quote) if quote else Content("")
    return Content.assemble(prefix, _inline(parser, title, style))


def _text_line(parser: MarkdownIt, line: str) -> Content:
    """A line of a paragraph, a list, a quote or a table."""
    if not line.strip():
        return Content("")
    found = _PREFIX.match(line)
    quote = found.group(1) if found is not None and ">" in found.group(1) else ""
    body = line[len(quote) :]  # a table row inside a quote is drawn behind the quote's bar
    if body.lstrip().startswith("|") or (body.count("|") >= 2 and "-|-" in body.replace(" ", "")):
        row = _table_row(parser, body)
        return Content.assemble(_quote_bar(quote), row) if quote else row
    prefix = Content("")
    rest = line
    if found is not None and (found.group(1) or found.group(3)):
        quote, indent, bullet, space = found.groups()
        quote = quote or ""
        parts = []
        if quote:
            parts.append(_quote_bar(quote))
        parts.append(Content(indent or ""))
        if bullet:
            shown = "•" if bullet in "-*+" else bullet
            parts.append(Content.styled(shown, "bold $text-accent"))
            parts.append(Content(space or ""))
        else:
            parts.append(Content(space or ""))
        prefix = Content.assemble(*parts)
        rest = line[found.end() :]
    return Content.assemble(prefix, _inline(parser, rest))


def _quote_bar(quote: str) -> Content:
    """A line's quote marks (``> >``) drawn as the quote's bars."""
    return Content.styled(quote.replace(">", "▌"), "$text-muted")


def _table(parser: MarkdownIt, rows: list[str]) -> list[Content] | None:
    """A table's rows, one per source line, its columns lined up: each cell's text padded to its
    column's width (see :data:`PADDED_WIDTH`) and aligned as the delimiter row says, the
    bars dimmed, the delimiter row a rule. None for a table in a quote (its rows are drawn one
    by one, behind the quote's bar) or of more than :data:`MOST_COLUMNS` columns."""
    if not rows or any(row.lstrip().startswith(">") for row in rows):
        return None
    # Each row's lead: its indentation, and on a list item's first line its bullet (a table
    # that opens an item), drawn as a list's bullet is; the cells are what follows.
    leads: list[Content | str] = [row[: len(row) - len(row.lstrip())] for row in rows]
    bodies = [row.lstrip() for row in rows]
    found = _PREFIX.match(rows[0])
    if found is not None and found.group(3):
        bullet = "•" if found.group(3) in "-*+" else found.group(3)
        leads[0] = Content.assemble(
            found.group(1) + (found.group(2) or ""),
            Content.styled(bullet, "bold $text-accent"),
            found.group(4) or "",
        )
        bodies[0] = rows[0][found.end() :]
    cells = [_cells(body) for body in bodies]
    second = cells[1] if len(cells) > 1 else []
    delimiter = 1 if second and all(_DELIMITER_CELL.match(cell) for cell in second) else None
    shown = [
        [] if n == delimiter else [_inline(parser, c.strip()) for c in row]
        for n, row in enumerate(cells)
    ]
    columns = max(len(row) for row in cells)
    if columns > MOST_COLUMNS:
        return None
    widths = [
        _column_width([row[c].cell_length for row in shown if c < len(row)]) for c in range(columns)
    ]
    aligns = ["left"] * columns
    if delimiter is not None:
        for c, marks in enumerate(cells[delimiter][:columns]):
            marks = marks.strip()
            if marks.endswith(":"):
                aligns[c] = "center" if marks.startswith(":") else "right"
    bar = Content.styled("│", "dim")
    lined: list[Content] = []
    for n, row in enumerate(shown):
        if n == delimiter:
            rule = "├" + "┼".join("─" * (width + 2) for width in widths) + "┤"
            lined.append(Content.assemble(leads[n], Content.styled(rule, "dim")))
            continue
        parts: list[Content | str] = [leads[n], bar]
        for c, width in enumerate(widths):
            text = row[c] if c < len(row) else Content("")
            room = max(0, width - text.cell_length)
            before = room if aligns[c] == "right" else room // 2 if aligns[c] == "center" else 0
            parts.extend([" " * (1 + before), text, " " * (1 + room - before), bar])
        lined.append(Content.assemble(*parts))
    return lined


def _column_width(cells: list[int]) -> int:
    """A column's width: what nine in ten of its cells (``cells``: their widths) fit in, at most
    :data:`PADDED_WIDTH`."""
    if not cells:
        return 0
    ordered = sorted(cells)
    return min(PADDED_WIDTH, ordered[math.ceil(len(ordered) * 0.9) - 1])


def _cells(row: str) -> list[str]:
    """A table row's cells: its text between the bars (the outer bars optional)."""
    inner = row.strip()
    if inner.startswith("|"):
        inner = inner[1:]
    if inner.endswith("|") and not inner.endswith("\\|"):
        inner = inner[:-1]
    return _CELL_BAR.split(inner)


def _table_row(parser: MarkdownIt, line: str) -> Content:
    if set(line.strip()) <= set("|-: "):
        return Content.styled(line, "dim")
    cells = _CELL_BAR.split(line)
    parts: list[Content | str] = []
    for number, cell in enumerate(cells):
        if number:
            parts.append(Content.styled("│", "dim"))
        parts.append(_inline(parser, cell))
    return Content.assemble(*parts)


def _inline(parser: MarkdownIt, source: str, style: str = "") -> Content:
    """One line's inline markup rendered: the text as a reader sees it, styled."""
    if not any(mark in source for mark in "*_`[<!\\&"):
        return Content.styled(source, style) if style else Content(source)
    try:
        tokens = parser.parseInline(source)
    except Exception:  # noqa: BLE001 - markup that trips the parser shows as written
        return Content(source)
    children: list[Token] = tokens[0].children or [] if tokens else []
    parts: list[tuple[str, str]] = []
    stack: list[str] = [style] if style else []
    for token in children:
        current = " ".join(stack)
        if token.type == "text":
            parts.append((token.content, current))
        elif token.type == "code_inline":
            parts.append((token.content, f"{current} $text-warning".strip()))
        elif token.type in ("softbreak", "hardbreak"):
            parts.append((" ", current))
        elif token.type == "strong_open":
            stack.append("bold")
        elif token.type == "em_open":
            stack.append("italic")
        elif token.type == "s_open":
            stack.append("strike")
        elif token.type == "link_open":
            stack.append("underline $text-accent")
        elif token.type in ("strong_close", "em_close", "s_close", "link_close"):
            if stack:
                stack.pop()
        elif token.type == "image":
            parts.append((f"🖼 {token.content or token.attrGet('src') or ''}", current))
        elif token.type == "html_inline":
            parts.append((token.content, f"{current} dim".strip()))
        else:
            parts.append((token.content, current))
    return Content.assemble(*[(text, part_style) for text, part_style in parts if text])
