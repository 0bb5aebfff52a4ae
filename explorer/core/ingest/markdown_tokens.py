"""Markdown parsed once: the block tokens of a document, by markdown-it-py (CommonMark, tables).

The chunker reads the headings from these tokens and the reference extractor its links, so a
document is parsed once for both. markdown-it is imported on first use, not with the core.

Two inline rules teach the parser the link forms CommonMark does not know, so that they are
tokens like any link (and, like any link, nothing inside a code span or block):

- Obsidian's wikilinks, ``[[Note]]``, ``[[folder/Note#Heading|text]]``, and embeds
  ``![[picture.png]]``: a ``wikilink`` token whose ``meta`` holds ``target``, ``anchor``,
  ``embed`` and ``markup`` (the link as written, its display text left out);
- Hugo's ``{{< ref "path" >}}`` and ``{{< relref "path" >}}`` shortcodes (also with ``%``
  delimiters): a ``hugo_ref`` token whose ``meta`` holds ``target``, ``anchor`` and ``markup``.
  Hugo expands them before the Markdown is rendered, so ``[text]({{< ref "x" >}})`` (which
  CommonMark cannot read as a link: its destination holds spaces) is found all the same.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline
    from markdown_it.token import Token

_LONE_CR = re.compile(r"\r(?!\n)")
_WIKILINK_INSIDE = re.compile(r"([^\[\]\n]{1,1000})\]\]")
"""What follows ``[[``: up to 1,000 characters without a bracket or a line break, then ``]]``
(a run of brackets fails at once, whatever its length)."""
_HUGO_REF_START = re.compile(r"\{\{[<%]\s*(?:rel)?ref\b")
MAX_SHORTCODE_CHARS = 2_000
"""The same bound for a Hugo shortcode's ``>}}``."""
HUGO_REF_NAMES = frozenset({"ref", "relref"})


@lru_cache(maxsize=1)
def markdown_parser() -> MarkdownIt:
    """The CommonMark parser (with tables) shared by headings and references.

    Its core runs the block rules only: inline content is parsed on demand, where something may
    be found in it (on 8 MB of nginx docs, parsing every paragraph's inlines took more time than
    the blocks). ``inline_definitions`` gives each reference definition a token (with its lines)
    and ``store_labels`` marks the links that use one. Wikilinks and Hugo ``ref`` shortcodes
    are inline rules of their own (see the module's docstring).
    """
    from markdown_it import MarkdownIt

    options = {"inline_definitions": True, "store_labels": True}
    parser = MarkdownIt("commonmark", options).enable("table")
    parser.core.ruler.disable(["inline", "text_join"])
    parser.inline.ruler.before("link", "wikilink", _wikilink_rule)
    parser.inline.ruler.before("link", "hugo_ref", _hugo_ref_rule)
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


_INLINE_MARKUP = re.compile(r"[*_`\[<&\\{]")
"""A character that may begin inline markup (emphasis, a code span, a link or wikilink, HTML,
an entity, an escape, a shortcode): text without one reads as it is written."""
_DROPPED = frozenset({"html_inline", "hugo_ref"})
"""Inline tokens that show nothing of their own: a tag, a shortcode Hugo replaces by a URL."""


def plain_inline(source: str) -> str:
    """Inline Markdown as a reader sees it rendered: ``**5. Karma**`` → ``5. Karma``, a code
    span's text without its backticks, a link's or image's text without its destination, a
    wikilink's display text (else the link as written inside its brackets), escapes and
    entities decoded, HTML tags dropped; line breaks read as a space. A heading's title is
    shown, embedded and compared this way (markup in a breadcrumb is noise)."""
    if not _INLINE_MARKUP.search(source):
        return source
    parser = markdown_parser()
    tokens: list[Token] = []
    parser.inline.parse(source, parser, {}, tokens)
    return "".join(_plain_parts(tokens)).strip()


def _plain_parts(tokens: list[Token]) -> Iterator[str]:
    for token in tokens:
        if token.type in ("softbreak", "hardbreak"):
            yield " "
        elif token.type == "image":
            yield from _plain_parts(token.children or [])
        elif token.type == "wikilink":
            yield token.content.rpartition("|")[2].strip() or token.content
        elif token.type not in _DROPPED:
            yield token.content  # text, a code span's text, an escape, an entity; "" for markers


@dataclass(frozen=True)
class Wikilink:
    """The parts of a wikilink's inside, ``folder/Note#Heading|text``."""

    target: str
    """The note or file named (``folder/Note``); empty for a link to a heading of the same note."""
    anchor: str
    """After ``#``: a heading, or ``^block`` for a block."""


def split_wikilink(inside: str) -> Wikilink:
    """``target#anchor|text`` into its target and anchor (the display text is dropped).

    In a table Obsidian writes the bar escaped, ``[[Note\\|text]]``: the escape is dropped too.
    """
    target = inside.split("|", 1)[0]
    target = target.removesuffix("\\")
    target, _hash, anchor = target.partition("#")
    return Wikilink(target.strip(), anchor.strip())


@dataclass(frozen=True)
class WikilinkMatch:
    """A wikilink found in a line of Markdown source."""

    link: Wikilink
    embed: bool
    """``![[...]]``: the file is shown in place."""
    inside: str
    """What the brackets hold, as written (``folder/Note#Heading|text``)."""
    end: int
    """Where the source continues after the closing ``]]``."""

    @property
    def markup(self) -> str:
        """The link as written, its display text left out (``[[folder/Note#Heading]]``): the
        form references are stored in."""
        shown = self.link.target + (f"#{self.link.anchor}" if self.link.anchor else "")
        return f"{'!' if self.embed else ''}[[{shown}]]"

    @property
    def text(self) -> str:
        """What Obsidian shows for it: the display text, else the note and heading."""
        _target, bar, shown = self.inside.partition("|")
        return shown.strip() if bar and shown.strip() else self.markup.strip("![]")


def match_wikilink(source: str, start: int, stop: int) -> WikilinkMatch | None:
    """The wikilink (or embed) at ``source[start:]`` on one line, holding no bracket, ending
    by ``stop``; None when there is none."""
    embed = source.startswith("![[", start)
    if not embed and not source.startswith("[[", start):
        return None
    opened = start + (3 if embed else 2)
    found = _WIKILINK_INSIDE.match(source, opened, stop)
    if found is None or source.startswith("(", found.end()):
        return None  # [[1]](url) is a CommonMark link whose text is "[1]"
    inside = found.group(1)
    if not inside.strip():
        return None
    return WikilinkMatch(split_wikilink(inside), embed, inside, found.end())


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """``[[...]]`` and ``![[...]]``: a ``wikilink`` token (see the module's docstring)."""
    found = match_wikilink(state.src, state.pos, state.posMax)
    if found is None:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.content = found.inside
        token.meta = {
            "target": found.link.target,
            "anchor": found.link.anchor,
            "embed": found.embed,
            "markup": found.markup,
        }
    state.pos = found.end
    return True


@dataclass(frozen=True)
class HugoRef:
    """A ``ref`` or ``relref`` shortcode's target."""

    name: str
    target: str
    """The content path, anchor cut off (``/waf/policies/configuration.md``)."""
    anchor: str
    markup: str
    """The shortcode as written, spaces normalised: ``{{< ref "/waf" >}}``."""


_SHORTCODE_OPEN = {"{{<": ">}}", "{{%": "%}}"}


def parse_hugo_ref(text: str) -> HugoRef | None:
    """The ``ref``/``relref`` shortcode that ``text`` is (whole), or None.

    Its arguments are read as Hugo reads them: quoted or bare, positional (``ref "path"``) or
    named (``ref path="x" lang="en"``).
    """
    text = text.strip()
    closing = _SHORTCODE_OPEN.get(text[:3])
    if closing is None or not text.endswith(closing) or len(text) < 6:
        return None
    try:
        words = shlex.split(text[3:-3], posix=True)
    except ValueError:  # an unclosed quote
        return None
    if not words or words[0] not in HUGO_REF_NAMES:
        return None
    named = dict(word.split("=", 1) for word in words[1:] if "=" in word)
    positional = [word for word in words[1:] if "=" not in word]
    path = named.get("path") or (positional[0] if positional else "")
    if not path.strip():
        return None
    target, _hash, anchor = path.strip().partition("#")
    markup = f'{text[:3]} {words[0]} "{path.strip()}" {closing}'
    return HugoRef(words[0], target, anchor, markup)


def _hugo_ref_rule(state: StateInline, silent: bool) -> bool:
    """``{{< ref "path" >}}``: a reference; any other shortcode is left as text."""
    start = state.pos
    closing = _SHORTCODE_OPEN.get(state.src[start : start + 3])
    if closing is None or not _HUGO_REF_START.match(state.src, start):
        return False
    end = state.src.find(closing, start + 3, min(state.posMax, start + MAX_SHORTCODE_CHARS))
    if end < 0:
        return False
    ref = parse_hugo_ref(state.src[start : end + 3])
    if ref is None:
        return False
    if not silent:
        token = state.push("hugo_ref", "", 0)
        token.content = state.src[start : end + 3]
        token.meta = {"target": ref.target, "anchor": ref.anchor, "markup": ref.markup}
    state.pos = end + 3
    return True
