"""Following a link from the preview: where it leads, as ``explorer links`` says, and the line
its anchor names (a heading, a block).

The preview renders a file's Markdown; a click gives the destination as the page writes it
(``../api/``, ``/docs/collector/``, ``{{< ref "x" >}}``). The index already resolved every stored
link the way the folder's publisher does (a docs site's routes, a vault's notes; see
:mod:`explorer.core.retrieval.link_resolution`), so a click takes that answer: the page a
route serves, or a word on why there is no file to open. A link the index does not hold (the
file is not indexed yet) is read as a path from the file's folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING
from urllib.parse import unquote

from explorer.core.retrieval.links import LinkState, LinksUnavailable, file_links, link_written

if TYPE_CHECKING:
    from explorer.core.store.index import Index


@dataclass(frozen=True)
class Destination:
    """Where a clicked link leads: a file of the folder to open, or a note saying why not."""

    path: str | None = None
    note: str = ""


def destination(index: Index | None, root: Path, source: str, href: str) -> Destination:
    """Where the link written ``href`` in ``source`` (root-relative) leads."""
    if "://" in href or href.startswith(("mailto:", "tel:")):
        return Destination(note=f"a link out of this folder: {href}")
    if not href.split("#", 1)[0]:
        return Destination()  # a heading of this page
    if index is not None:
        try:
            link = link_written(file_links(index, source), href)
        except LinksUnavailable:
            link = None
        if link is not None:
            if link.state is LinkState.MISSING:
                return Destination(note=f"this link leads nowhere: {link.raw}")
            if link.state is LinkState.OUTSIDE_ROOT:
                return Destination(note=f"outside this folder: {link.target}")
            if (root / link.target).is_file():
                return Destination(link.target)
            return Destination(note=f"a folder: {link.target}")
    return _as_path(root, source, href)


def _as_path(root: Path, source: str, href: str) -> Destination:
    """``href`` read as a path from ``source``'s folder (``..`` stops at the root)."""
    parts: list[str] = []
    for part in (PurePosixPath(source).parent / unquote(href.split("#", 1)[0])).parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part not in (".", "", "/"):
            parts.append(part)
    path = "/".join(parts)
    if path and (root / path).is_file():
        return Destination(path)
    return Destination(note=f"no such file in this folder: {path or href}")


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
    from explorer.tui.widgets.preview import markdown_headings

    skip = _front_matter_lines(lines)
    wanted = _slug(anchor)
    for heading in markdown_headings("\n".join(lines[skip:]), skip):
        custom = _HEADING_ID.search(heading.title)
        title = heading.title[: custom.start()] if custom else heading.title
        if wanted in (_slug(title), _slug(custom.group(1)) if custom else None):
            return heading.line
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
