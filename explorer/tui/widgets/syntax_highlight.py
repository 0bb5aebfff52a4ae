"""Syntax highlighting for the preview: a text split in lines, coloured by Pygments."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content

if TYPE_CHECKING:
    from pygments.token import _TokenType

MAX_HIGHLIGHT_CHARS = 1_000_000
"""Only this much of a file is syntax-highlighted; the rest is shown plain."""


def highlight_lines(text: str, language: str) -> list[Content]:
    """``text`` split in lines, coloured by Pygments with the theme's variables.

    Builds one small Content per line straight from the token stream (much cheaper than
    highlighting the whole text as one Content and splitting it). Past
    :data:`MAX_HIGHLIGHT_CHARS` the lines are left plain.
    """
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound
    from textual.content import Span
    from textual.highlight import HighlightTheme

    head, tail = text[:MAX_HIGHLIGHT_CHARS], text[MAX_HIGHLIGHT_CHARS:]
    if tail:
        cut = head.rfind("\n") + 1
        head, tail = head[:cut], head[cut:] + tail
    try:
        lexer = get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return [Content(line) for line in text.split("\n")]
    styles = HighlightTheme.STYLES
    resolved: dict[_TokenType, str] = {}

    def style_of(token_type: _TokenType) -> str:
        found = resolved.get(token_type)
        if found is None:
            kind: _TokenType | None = token_type
            found = ""
            while kind is not None:
                if kind in styles:
                    found = styles[kind]
                    break
                kind = kind.parent
            resolved[token_type] = found
        return found

    lines: list[Content] = []
    parts: list[str] = []
    spans: list[Span] = []
    position = 0
    for token_type, value in lexer.get_tokens(head):
        style = style_of(token_type)
        pieces = value.split("\n")
        for number, piece in enumerate(pieces):
            if number:
                lines.append(Content("".join(parts), spans))
                parts, spans, position = [], [], 0
            if piece:
                if style:
                    spans.append(Span(position, position + len(piece), style))
                parts.append(piece)
                position += len(piece)
    if parts or not lines:
        lines.append(Content("".join(parts), spans))
    if tail:
        if not lines[-1].plain:
            lines.pop()
        lines.extend(Content(line) for line in tail.split("\n"))
    return lines
