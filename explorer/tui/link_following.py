"""Following a link from the preview: where it leads, as ``explorer links`` says (the line its
anchor names is :mod:`explorer.tui.widgets.anchors`').

The preview renders a file's Markdown; a click gives the destination as the page writes it
(``../api/``, ``/docs/collector/``, ``{{< ref "x" >}}``). The index already resolved every stored
link the way the folder's publisher does (a docs site's routes, a vault's notes; see
:mod:`explorer.core.retrieval.link_resolution`), so a click takes that answer: the page a
route serves, or a word on why there is no file to open. A link the index does not hold (the
file is not indexed yet) is read as a path from the file's folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING
from urllib.parse import unquote

from explorer.core.ingest.references import LinkSyntax
from explorer.core.retrieval.links import LinkState, LinksUnavailable, file_links, link_written

if TYPE_CHECKING:
    from explorer.core.store.index import Index


@dataclass(frozen=True)
class Destination:
    """Where a clicked link leads: a file of the folder to open, or a note saying why not."""

    path: str | None = None
    note: str = ""
    label: str = ""
    """For a Sphinx ``:ref:``, the label it names: the line that marks it is where to land."""


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
                label = link.raw if link.syntax is LinkSyntax.SPHINX_REF else ""
                return Destination(link.target, label=label)
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
