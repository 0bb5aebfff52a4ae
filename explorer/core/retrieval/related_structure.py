"""What a folder's structure says about two of its files: links, tags and place.

Related files are found by meaning (:mod:`explorer.core.retrieval.related`); the folder's own
structure says more, as a writer put it there:

- **links**: one file links to the other (either way); a third file links to both (*cited
  together*, co-citation); both link to the same files (*links alike*, bibliographic coupling).
  A link from a file of many links, or to a file linked from everywhere (release notes, a site
  map), says less (:func:`hub_damping`).
  A file that links to hundreds (a site map) or one linked from hundreds (a glossary) says
  little about any one pair, so each shared citer or target counts ``1 / log2(1 + degree)``;
- **tags**: the tags both carry, each counted by how rare it is in the folder (its inverse
  document frequency over the indexed files);
- **place**: both in the same folder (a Hugo section, a folder of notes; the root is no
  section), counted by how small the folder is: a folder of five pages says more than one of
  five hundred.

Only resolved references of kind link, embed or definition count (an image or a path written
in backticks is not a citation). The structure is read once per state of the index (the
references and files) and kept as long as the resolved links are. An index whose references
were never extracted has no link signals.
"""

from __future__ import annotations

import functools
import math
import posixpath
import threading
import weakref
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from explorer.core.ingest.references import ReferenceKind
from explorer.core.retrieval.link_resolution import LinkState
from explorer.core.retrieval.links import LinkGraph, LinksUnavailable, link_graph
from explorer.core.store.file_facts import FileField
from explorer.core.store.index import Index
from explorer.core.store.keywords import KeywordIndex

CITING_KINDS = frozenset({ReferenceKind.LINK, ReferenceKind.EMBED, ReferenceKind.DEFINITION})
"""The references that cite a file."""
SECTION_PAGES = frozenset({"_index.md", "index.md", "readme.md"})
"""The names of a folder's landing page (a Hugo section's list page, a README)."""
RELEASE_NOTES_NAMES = frozenset({"changes", "news", "releases"})
"""A file or folder of release notes by its whole name (separators and case aside)."""
RELEASE_NOTES_PREFIXES = ("changelog", "releasenote", "whatsnew")
"""... or by the start of its name (``CHANGELOG.md``, ``release-notes-2.1.md``, Sphinx's
``whatsnew/``)."""
DIRECTORY_SHARE = 0.25
"""A file linking to at least this share of the indexed files is a directory of them (a
table of contents, a general index, a module index)..."""
DIRECTORY_LINKS = 40
"""... when that is at least this many files (a small folder's README may link to all)."""
RELEASE_NOTES_KEPT = 65_536
"""Paths whose answer :func:`is_release_notes` keeps."""


@dataclass(frozen=True)
class Evidence:
    """What the structure says of one candidate file, for one source file."""

    links_to: bool = False
    """The source links to the candidate."""
    linked_from: bool = False
    """The candidate links to the source."""
    link_weight: float = 0.0
    """How much a link either way says: ``hub_damping`` of the linking file's outgoing links
    (the source's for ``links_to``, the candidate's for ``linked_from``; the larger of the two
    when both), times ``hub_damping`` of the candidate's backlinks (for ``linked_from``, of
    the source's or both, as :class:`LinkDamping` says)."""
    cited_together: float = 0.0
    """Files linking to both, each ``1 / log2(1 + its outgoing links)``; times
    ``hub_damping`` of the candidate's backlinks."""
    links_alike: float = 0.0
    """Files both link to, each ``1 / log2(1 + its backlinks)``; times ``hub_damping`` of the
    candidate's outgoing links."""
    tags: tuple[str, ...] = ()
    """Tags both carry, rarest first."""
    tag_weight: float = 0.0
    """The shared tags' inverse document frequencies, summed, 0–1."""
    same_section: float = 0.0
    """Both in one folder: ``1 / log2(1 + files in it)``, else 0."""
    section_page: bool = False
    """The candidate is a folder's landing page (``_index.md``, ``index.md``, ``README.md``)."""
    release_notes: bool = False
    """The candidate is release notes (:func:`is_release_notes`), the source is not, and the
    source does not link to it (a page that sends its reader to the release notes means it;
    release notes link to every page they name)."""
    directory: bool = False
    """The candidate is a directory of the folder (:meth:`FolderStructure.is_directory`: it
    links to a large share of the files), and the source is not."""


@dataclass
class FolderStructure:
    """The links, tags and folders of one index's files."""

    outgoing: dict[str, frozenset[str]] = field(default_factory=dict)
    incoming: dict[str, frozenset[str]] = field(default_factory=dict)
    tags: dict[str, frozenset[str]] = field(default_factory=dict)
    tag_files: Counter[str] = field(default_factory=Counter)
    folder_files: Counter[str] = field(default_factory=Counter)
    link_lines: dict[str, frozenset[int]] = field(default_factory=dict)
    """The lines of each file holding a citing reference (resolved or not): text read from
    HTML keeps its links' places, not their syntax."""
    link_list_shares: dict[str, float] = field(default_factory=dict)
    """The share of a file's passages that are lists of links, filled as files are asked
    about (:func:`explorer.core.retrieval.related.link_list_share`)."""

    @classmethod
    def build(
        cls,
        paths: Iterable[str],
        links: Iterable[tuple[str, str]],
        tags: dict[str, set[str]],
        link_lines: dict[str, frozenset[int]] | None = None,
    ) -> FolderStructure:
        """The structure of ``paths`` (the indexed files), their ``links`` (source, target:
        both kept when both are indexed and differ), ``tags`` (path → tags) and
        ``link_lines`` (path → the lines holding a link)."""
        known = set(paths)
        outgoing: dict[str, set[str]] = {}
        incoming: dict[str, set[str]] = {}
        for source, target in links:
            if source != target and source in known and target in known:
                outgoing.setdefault(source, set()).add(target)
                incoming.setdefault(target, set()).add(source)
        kept_tags = {path: frozenset(values) for path, values in tags.items() if path in known}
        return cls(
            outgoing={path: frozenset(found) for path, found in outgoing.items()},
            incoming={path: frozenset(found) for path, found in incoming.items()},
            tags=kept_tags,
            tag_files=Counter(tag for values in kept_tags.values() for tag in values),
            folder_files=Counter(posixpath.dirname(path) for path in known),
            link_lines={path: lines for path, lines in (link_lines or {}).items() if path in known},
        )

    def without_links_of(self, source: str) -> FolderStructure:
        """This structure with ``source``'s own outgoing links taken out (a benchmark that
        judges by a page's links must not rank by them)."""
        removed = self.outgoing.get(source, frozenset())
        incoming = dict(self.incoming)
        for target in removed:
            incoming[target] = incoming[target] - {source}
        outgoing = {path: found for path, found in self.outgoing.items() if path != source}
        return FolderStructure(
            outgoing,
            incoming,
            self.tags,
            self.tag_files,
            self.folder_files,
            self.link_lines,
            self.link_list_shares,
        )

    @functools.cached_property
    def files(self) -> int:
        """How many files the structure holds."""
        return sum(self.folder_files.values())

    def is_directory(self, path: str) -> bool:
        """Whether ``path`` links to so many of the files (``DIRECTORY_SHARE`` of them, and at
        least ``DIRECTORY_LINKS``) that it is a directory of the folder, not a page of one
        subject: it shares a link and a line with every page it lists."""
        links = len(self.outgoing.get(path, ()))
        return links >= DIRECTORY_LINKS and links >= DIRECTORY_SHARE * self.files

    def linked(self, source: str) -> frozenset[str]:
        """The files ``source`` links to."""
        return self.outgoing.get(source, frozenset())

    def evidence(self, source: str, candidate: str, damping: LinkDamping | None = None) -> Evidence:
        """What the structure says of ``candidate`` as a neighbour of ``source``; ``damping``
        says how much a link from a file of many links, or to a file of many backlinks, counts
        (:class:`LinkDamping`)."""
        damping = damping if damping is not None else LinkDamping()
        hub = damping.hub_links
        citers = self.incoming.get(source, frozenset()) & self.incoming.get(candidate, frozenset())
        cited = self.outgoing.get(source, frozenset()) & self.outgoing.get(candidate, frozenset())
        shared = self.tags.get(source, frozenset()) & self.tags.get(candidate, frozenset())
        files = max(1, self.files)
        rarity = {
            tag: math.log(files / self.tag_files[tag]) / math.log(files + 1) for tag in shared
        }
        folder = posixpath.dirname(source)
        same = bool(folder) and folder == posixpath.dirname(candidate)
        links_to = candidate in self.outgoing.get(source, frozenset())
        linked_from = source in self.outgoing.get(candidate, frozenset())
        # a page linked from everywhere (release notes) or linking everywhere says little
        popular = hub_damping(len(self.incoming.get(candidate, ())), hub)
        sprawling = hub_damping(len(self.outgoing.get(candidate, ())), hub)
        # a file every page links to (a platform table) is linked from pages of every subject
        source_popular = hub_damping(
            len(self.incoming.get(source, ())), damping.source_hub_links or hub
        )
        backlink = (popular if damping.backlink_by_candidate else 1.0) * (
            source_popular if damping.backlink_by_source else 1.0
        )
        weights = [
            hub_damping(len(self.outgoing[linking]), hub) * target
            for present, linking, target in (
                (links_to, source, popular),
                (linked_from, candidate, backlink),
            )
            if present
        ]
        coupling = sum(damped(len(self.incoming.get(t, ()))) for t in cited)
        return Evidence(
            links_to=links_to,
            linked_from=linked_from,
            link_weight=max(weights, default=0.0),
            cited_together=sum(damped(len(self.outgoing.get(c, ()))) for c in citers)
            * popular
            * (source_popular if damping.cocitation_by_source else 1.0),
            links_alike=coupling * sprawling,
            tags=tuple(sorted(shared, key=lambda tag: (-rarity[tag], tag))),
            tag_weight=min(1.0, sum(rarity.values())),
            same_section=damped(self.folder_files[folder]) if same else 0.0,
            section_page=posixpath.basename(candidate).lower() in SECTION_PAGES,
            release_notes=not links_to
            and is_release_notes(candidate)
            and not is_release_notes(source),
            directory=self.is_directory(candidate) and not self.is_directory(source),
        )


@functools.lru_cache(maxsize=RELEASE_NOTES_KEPT)
def is_release_notes(path: str) -> bool:
    """Whether ``path`` names release notes (a changelog, a "what's new", a folder of
    them): pages that name, each in passing, most things a project has. Asked of every
    candidate of every related-files call (4 us a path), so the answers are kept."""
    for part in path.lower().split("/"):
        name = "".join(ch for ch in part.split(".", 1)[0] if ch.isalnum())
        if name in RELEASE_NOTES_NAMES or name.startswith(RELEASE_NOTES_PREFIXES):
            return True
    return False


HUB_LINKS = 7
"""A file with at most this many outgoing links gives each its full weight."""


@dataclass(frozen=True)
class LinkDamping:
    """How much a link says, by how many links its two ends have."""

    hub_links: int = HUB_LINKS
    """Links from a file with at most this many, or to one with at most this many backlinks,
    count fully (:func:`hub_damping`)."""
    backlink_by_candidate: bool = True
    """A backlink (the candidate links to the source) counts less when the candidate has many
    backlinks of its own."""
    backlink_by_source: bool = False
    """A backlink counts less when the source has many backlinks: the page it links to is one
    every page links to (a platform table, a caching guide each deployment guide links for one
    step), so any one link to it says little of the linking page's subject."""
    source_hub_links: int = 0
    """The ``hub_links`` of the source's backlinks when it damps a backlink or co-citation;
    0: ``hub_links``."""
    cocitation_by_source: bool = False
    """Co-citation counts less when the source has many backlinks (so many co-citations)."""


def hub_damping(degree: int, hub_links: int = HUB_LINKS) -> float:
    """How much one of a file's ``degree`` outgoing links says: 1 up to ``hub_links``,
    then less (a release-notes page linking to 300 pages: a third)."""
    return min(1.0, math.log2(1 + hub_links) / math.log2(1 + max(1, degree)))


def damped(degree: int) -> float:
    """How much one shared citer, target or folder says, by how many it holds."""
    return 1.0 / math.log2(1 + max(1, degree))


_kept: weakref.WeakKeyDictionary[KeywordIndex, tuple[LinkGraph, FolderStructure]] = (
    weakref.WeakKeyDictionary()
)
_kept_lock = threading.Lock()


def folder_structure(index: Index) -> FolderStructure:
    """The structure of ``index``'s files, kept as long as its resolved links are (until a
    file or reference changes: :func:`~explorer.core.retrieval.links.link_graph`)."""
    keywords = index.keywords
    try:
        graph: LinkGraph | None = link_graph(index)
    except LinksUnavailable:
        graph = None  # an index whose links were never read: no link signals, nothing kept
    with _kept_lock:
        kept = _kept.get(keywords)
    if graph is not None and kept is not None and kept[0] is graph:
        return kept[1]
    links = [] if graph is None else _resolved_links(graph)
    lines = {} if graph is None else _link_lines(graph)
    tags = keywords.facts.values_by_path(FileField.TAG)
    structure = FolderStructure.build(keywords.paths(), links, tags, lines)
    if graph is not None:
        with _kept_lock:
            _kept[keywords] = (graph, structure)
    return structure


def _resolved_links(graph: LinkGraph) -> list[tuple[str, str]]:
    """(source, target) of every resolved citing reference."""
    return [
        (item.source, item.resolution.target)
        for items in graph.by_source.values()
        for item in items
        if item.resolution.state is LinkState.RESOLVED and item.reference.kind in CITING_KINDS
    ]


def _link_lines(graph: LinkGraph) -> dict[str, frozenset[int]]:
    """The lines of each source holding a citing reference, resolved or not."""
    return {
        source: frozenset(
            item.reference.line for item in items if item.reference.kind in CITING_KINDS
        )
        for source, items in graph.by_source.items()
    }
