"""Links as data: a file's outgoing links and backlinks, and references that lead nowhere.

One model serves every front end (the sidebar, ``explorer links``, ``explorer check-refs`` and
the MCP ``links`` tool): a :class:`Link` is a stored reference
(:mod:`explorer.core.store.file_facts`) resolved by the folder's publisher's rules
(:mod:`explorer.core.retrieval.link_resolution`) to a typed :class:`LinkState`.

The index's references are resolved together, once per state of the index (a new, changed or
removed file can change where another file's links lead), and kept until the index changes.
Whether a resolved target exists is judged on disk at the time of asking, so a link to a file
deleted since the last sync is missing at once, and a link to a file on disk that is not
indexed (an image, a PDF, a folder) is not missing.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import unquote

from explorer.core.errors import ExplorerError
from explorer.core.ingest.references import FileReference, LinkSyntax, ReferenceKind
from explorer.core.ingest.site_layout import Mount, SiteLayout, detect_layout, linked_bases
from explorer.core.retrieval.link_resolution import (
    DiskPaths,
    LinkResolver,
    LinkState,
    Resolution,
    SiteRoutes,
)

if TYPE_CHECKING:  # the window imports this module before its first frame; the index after it
    from explorer.core.store.index import Index
    from explorer.core.store.keywords import KeywordIndex

__all__ = [
    "FileLinks",
    "Link",
    "LinkState",
    "LinksUnavailable",
    "ReferenceCheck",
    "file_links",
    "link_written",
    "missing_references",
]


class LinksUnavailable(ExplorerError):
    """The index was made before references were stored (or stored as this version reads
    them), and has not been synced since."""


@dataclass(frozen=True)
class Link:
    """One reference from ``source`` to ``target`` (both root-relative), resolved."""

    source: str
    line: int
    kind: ReferenceKind
    raw: str
    """The target as written in ``source`` (``../api/``, ``[[Note#Heading]]``), a path's
    ``%xx`` escapes decoded (:attr:`FileReference.shown`)."""
    target: str
    """The file it leads to; when missing, the path nothing is at; when outside the root, the
    URL or path it reads as."""
    state: LinkState
    syntax: LinkSyntax = LinkSyntax.PATH

    @property
    def exists(self) -> bool:
        """Whether the target is a file or folder of the tree."""
        return self.state is LinkState.RESOLVED


@dataclass
class FileLinks:
    """What a file links to, and what links to it."""

    path: str
    exists: bool
    outgoing: list[Link] = field(default_factory=list)
    backlinks: list[Link] = field(default_factory=list)


@dataclass
class ReferenceCheck:
    """Every reference that leads nowhere, those that lead outside the root, and counts."""

    missing: list[Link]
    references: int
    """References into the tree (or the site around it) that were checked."""
    files: int
    """Files that make any reference."""
    outside_root: list[Link] = field(default_factory=list)
    """References to the site or folders around the root, which the index does not hold."""
    layout: str = ""
    """How links were resolved (``hugo site: / is content/``)."""

    @property
    def resolved(self) -> int:
        return self.references - len(self.missing) - len(self.outside_root)


@dataclass(frozen=True)
class _Resolved:
    """A stored reference and where it leads (before the disk is asked whether it is there)."""

    source: str
    reference: FileReference
    resolution: Resolution


@dataclass
class LinkGraph:
    """Every reference of an index, resolved; by source and by target."""

    layout: SiteLayout
    mounts: tuple[Mount, ...]
    by_source: dict[str, list[_Resolved]] = field(default_factory=dict)
    by_target: dict[str, list[_Resolved]] = field(default_factory=dict)

    def add(self, item: _Resolved) -> None:
        self.by_source.setdefault(item.source, []).append(item)
        self.by_target.setdefault(item.resolution.target, []).append(item)

    def describe(self) -> str:
        described = SiteLayout(
            self.layout.kind,
            (self.mounts,),
            self.layout.vault,
            self.layout.site_root,
            self.layout.from_setting,
            self.layout.detached,
        )
        return described.describe()


_graphs: weakref.WeakKeyDictionary[KeywordIndex, tuple[tuple[object, ...], LinkGraph]] = (
    weakref.WeakKeyDictionary()
)
_graphs_lock = threading.Lock()
_FINGERPRINT = "links: fingerprint"
"""The key :func:`link_graph` keeps the references' fingerprint under (``derived``)."""


def link_graph(index: Index) -> LinkGraph:
    """The index's references resolved, kept until a file or reference changes.

    Raises :class:`LinksUnavailable` for an index whose references were never extracted.
    """
    _require_links(index)
    keywords = index.keywords
    # Counting a manual's 80,000 references took 5 ms a call: the count is kept while the
    # database is unchanged (vectors written meanwhile change no file or reference).
    counted = keywords.derived(_FINGERPRINT, keywords.facts.fingerprint, keyword_tables=True)
    fingerprint = (*counted, index.settings.link_base)
    with _graphs_lock:
        kept = _graphs.get(keywords)
    if kept is not None and kept[0] == fingerprint:
        return kept[1]
    graph = _build_graph(index)
    with _graphs_lock:
        _graphs[keywords] = (fingerprint, graph)
    return graph


def _build_graph(index: Index) -> LinkGraph:
    settings = index.settings
    layout = detect_layout(settings.root, settings.link_base)
    pages = index.keywords.facts.pages()
    references = list(index.keywords.facts.every_link())
    disk = DiskPaths(settings.root)
    mounts = _best_reading(layout, pages, references, disk)
    labels: dict[str, str] = {}
    for source, reference in references:
        if reference.syntax is LinkSyntax.SPHINX_LABEL:
            labels.setdefault(reference.target, source)
    resolver = LinkResolver(SiteRoutes(layout, mounts, pages), disk, labels)
    graph = LinkGraph(layout, mounts)
    for source, reference in references:
        resolution = resolver.resolve(source, reference)
        if resolution is not None:
            graph.add(_Resolved(source, reference, resolution))
    return graph


def _best_reading(
    layout: SiteLayout,
    pages: Mapping[str, Mapping[str, object]],
    references: list[tuple[str, FileReference]],
    disk: DiskPaths,
) -> tuple[Mount, ...]:
    """The reading of the root's URL under which most of its site-absolute links resolve (for
    a detached Hugo folder, among them the URLs those links lead under most often)."""
    if len(layout.readings) == 1:
        return layout.mounts
    absolute = [
        (source, reference, _written(reference).lstrip())
        for source, reference in references
        if reference.kind is not ReferenceKind.MENTION
        and reference.syntax is not LinkSyntax.WIKILINK
        and _written(reference).lstrip().startswith("/")
    ]
    readings = list(layout.readings)
    if layout.detached:
        linked = [(Mount(url, ""),) for url in linked_bases(url for _s, _r, url in absolute)]
        readings[1:1] = [reading for reading in linked if reading not in readings]
    best, best_count = layout.mounts, -1
    for mounts in readings:
        resolver = LinkResolver(SiteRoutes(layout, mounts, pages), disk)
        count = 0
        for source, reference, _url in absolute:
            found = resolver.resolve(source, reference)
            count += found is not None and found.state is LinkState.RESOLVED
        if count > best_count:
            best, best_count = mounts, count
    return best


def _written(reference: FileReference) -> str:
    """A path or Hugo ref's target as written (a site-absolute one starts with ``/``)."""
    return reference.target if reference.syntax is LinkSyntax.HUGO_REF else reference.raw


def _require_links(index: Index) -> None:
    if not index.keywords.facts.links_complete():
        raise LinksUnavailable(
            f"the links of {index.settings.root} were read by an older explorer (or never);"
            f" run: {index.settings.repair_command}"
        )


def _judged(item: _Resolved, disk: DiskPaths) -> Link:
    """The link ``item`` makes, its target checked on disk now: a file deleted since is
    missing, one created since (at the path a link names) is there."""
    state, target = item.resolution.state, item.resolution.target
    if state is not LinkState.OUTSIDE_ROOT:
        state = LinkState.RESOLVED if disk.exists(target) else LinkState.MISSING
    ref = item.reference
    return Link(item.source, ref.line, ref.kind, ref.shown, target, state, ref.syntax)


def file_links(index: Index, rel_path: str) -> FileLinks:
    """The links of ``rel_path`` (root-relative) and its backlinks, each judged on disk.

    For a file that does not exist, the backlinks are the links that lead where it would be.
    Raises :class:`LinksUnavailable` for an index whose references were never extracted.
    """
    graph = link_graph(index)
    disk = DiskPaths(index.settings.root)
    result = FileLinks(rel_path, disk.exists(rel_path))
    result.outgoing = [_judged(item, disk) for item in graph.by_source.get(rel_path, [])]
    backlinks = [_judged(item, disk) for item in graph.by_target.get(rel_path, [])]
    result.backlinks = sorted(
        (link for link in backlinks if link.state is not LinkState.OUTSIDE_ROOT),
        key=lambda link: (link.source, link.line),
    )
    return result


def link_written(links: FileLinks, href: str) -> Link | None:
    """The outgoing link of ``links`` written ``href``: the destination of a link followed in
    the rendered file, percent-encoded or not. A link to the same file with another
    ``#fragment`` will do; None when no stored link is written so."""
    written = {href, unquote(href)}
    for link in links.outgoing:
        if link.raw in written:
            return link
    bare = {text.split("#", 1)[0] for text in written} - {""}
    return next((link for link in links.outgoing if link.raw.split("#", 1)[0] in bare), None)


def missing_references(index: Index) -> ReferenceCheck:
    """Every stored reference that leads to nothing, by file and line; and those that lead
    outside the root.

    Raises :class:`LinksUnavailable` for an index whose references were never extracted.
    """
    graph = link_graph(index)
    disk = DiskPaths(index.settings.root)
    check = ReferenceCheck([], 0, len(graph.by_source), layout=graph.describe())
    for items in graph.by_source.values():
        for item in items:
            link = _judged(item, disk)
            check.references += 1
            if link.state is LinkState.MISSING:
                check.missing.append(link)
            elif link.state is LinkState.OUTSIDE_ROOT:
                check.outside_root.append(link)
    check.missing.sort(key=_place)
    check.outside_root.sort(key=_place)
    return check


def _place(link: Link) -> tuple[str, int, str]:
    return (link.source, link.line, link.raw)
