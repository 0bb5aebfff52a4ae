"""Markdown parsed once: the block tokens of a document, by markdown-it-py (CommonMark, tables).

The chunker reads the headings from these tokens and the reference extractor its links, so a
document is parsed once for both. markdown-it is imported on first use, not with the core.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_LONE_CR = re.compile(r"\r(?!\n)")


@lru_cache(maxsize=1)
def markdown_parser() -> MarkdownIt:
    """The CommonMark parser (with tables) shared by headings and references.

    Its core runs the block rules only: inline content is parsed on demand, where something may
    be found in it (on 8 MB of nginx docs, parsing every paragraph's inlines took more time than
    the blocks). ``inline_definitions`` gives each reference definition a token (with its lines)
    and ``store_labels`` marks the links that use one.
    """
    from markdown_it import MarkdownIt

    options = {"inline_definitions": True, "store_labels": True}
    parser = MarkdownIt("commonmark", options).enable("table")
    parser.core.ruler.disable(["inline", "text_join"])
    return parser


@dataclass(frozen=True)
class MarkdownBlocks:
    """The block tokens of one Markdown document, and what parsing them defined."""

    tokens: list[Token]
    """Block tokens; their ``map`` lines count from where the parse started."""
    env: dict[str, object]
    """The parser's environment: the reference definitions that inline links resolve against."""


def markdown_blocks(text: str, body: int) -> MarkdownBlocks:
    """The block tokens of the Markdown in ``text[body:]``; their lines count from ``body``.

    A carriage return that ends no ``\\r\\n`` is read as a space: CommonMark would count it as a
    line break where the rest of the index (split at ``\\n``) does not, and every line number
    after it would be off.
    """
    source = text[body:]
    if "\r" in source:
        source = _LONE_CR.sub(" ", source)
    env: dict[str, object] = {}
    return MarkdownBlocks(markdown_parser().parse(source, env), env)
