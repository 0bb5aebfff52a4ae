"""Where a link's anchor points in its target: the heading (``#install``, ``[[Note#Install]]``,
a Hugo ``ref "page#id"``), the block (``[[Note#^block]]``) or the Sphinx label (``:ref:``) a
followed link lands on."""

from __future__ import annotations

import re
from urllib.parse import unquote

from explorer.core.ingest.references import sphinx_label_key, sphinx_label_marked
from explorer.tui.widgets.preview import markdown_headings


def link_anchor(written: str) -> str:
    """The anchor of a link as written, or ``""``: ``page.md#install`` → ``install``,
    ``[[Note#Heading|x]]`` → ``Heading``, ``[[Note#^block]]`` → ``^block``, a Hugo
    ``ref "page#id"`` → ``id``."""
    text = written.strip().removeprefix("!")
    if text.startswith("[[") and text.endswith("]]"):
        from explorer.core.ingest.markdown_tokens import split_wikilink

        anchor = split_wikilink(text[2:-2]).anchor
    else:
        shortcode = _HUGO_REF.search(text)
        if shortcode is not None:
            text = shortcode.group(1)
        anchor = text.partition("#")[2]
    return unquote(anchor.rsplit("#", 1)[-1]).strip()  # [[Note#Part#Sub]]: the last heading


def anchor_line(text: str, anchor: str) -> int | None:
    """The 1-based line of Markdown ``text`` that ``anchor`` names: a block (``^id`` at the end
    of a line) or a heading whose title, slug or ``{#id}`` reads as the anchor does."""
    lines = text.split("\n")
    if anchor.startswith("^"):
        block = re.compile(rf"(?:^|\s)\^{re.escape(anchor[1:])}\s*$")
        return next((n for n, line in enumerate(lines, 1) if block.search(line)), None)
    skip = _front_matter_lines(lines)
    wanted = _slug(anchor)
    for heading in markdown_headings("\n".join(lines[skip:]), skip):
        custom = _HEADING_ID.search(heading.title)
        title = heading.title[: custom.start()] if custom else heading.title
        if wanted in (_slug(title), _slug(custom.group(1)) if custom else None):
            return heading.line
    return None


def label_line(text: str, label: str) -> int | None:
    """The 1-based line of ``text`` that marks the Sphinx ``label`` (``.. _label:`` in
    reStructuredText, ``(label)=`` in MyST), without case."""
    wanted = sphinx_label_key(label)
    for number, line in enumerate(text.split("\n"), 1):
        marked = sphinx_label_marked(line)
        if marked is not None and sphinx_label_key(marked) == wanted:
            return number
    return None


_HUGO_REF = re.compile(r'ref\s+"([^"]*)"')
_HEADING_ID = re.compile(r"\s*\{#([^}\s]+)\}\s*$")


def _slug(text: str) -> str:
    """A heading or anchor as Hugo, GitHub and Obsidian compare them: lower case, punctuation
    dropped, spaces as hyphens."""
    kept = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return re.sub(r"\s", "-", kept)


def _front_matter_lines(lines: list[str]) -> int:
    """How many lines the front matter (``---`` or ``+++`` fenced) at the top takes."""
    if not lines or lines[0].strip() not in ("---", "+++"):
        return 0
    fence = lines[0].strip()
    return next((n + 1 for n in range(1, len(lines)) if lines[n].strip() == fence), 0)
