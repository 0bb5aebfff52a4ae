"""Links as data: a file's outgoing links and backlinks, and references to missing files.

The index stores what each file refers to (:mod:`explorer.core.store.file_facts`); whether a target
exists is judged here, against the disk at the time of asking, so a link to a file deleted
since is missing at once, and a link to a file on disk that is not indexed (an image, a PDF, a
folder) is not missing.

A Markdown link, image or reference definition is missing when nothing exists at its path. A
backtick mention (```src/app.py```) may mean a path relative to the file or to the root: it
means the first of the two that exists. When neither does, it is missing only if the folder of
one of them exists (``guides/gone.md`` in a tree with ``guides/``); a mention whose folders
exist in neither place (```/etc/nginx/nginx.conf```, a path in another project) is prose
about something else, not a reference into this tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from explorer.core.errors import ExplorerError
from explorer.core.ingest.references import FileReference, ReferenceKind
from explorer.core.ingest.root_paths import OutsideRoot, resolve_inside_root
from explorer.core.store.index import Index


class LinksUnavailable(ExplorerError):
    """The index was made before references were stored, and has not been synced since."""


@dataclass(frozen=True)
class Link:
    """One reference from ``source`` to ``target`` (both root-relative), judged on disk."""

    source: str
    line: int
    kind: ReferenceKind
    raw: str
    """The target as written in ``source``."""
    target: str
    exists: bool

    def as_json(self) -> dict[str, object]:
        return {
            "source": self.source,
            "line": self.line,
            "kind": str(self.kind),
            "raw": self.raw,
            "target": self.target,
            "exists": self.exists,
        }


@dataclass
class FileLinks:
    """What a file links to, and what links to it."""

    path: str
    exists: bool
    outgoing: list[Link] = field(default_factory=list)
    backlinks: list[Link] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {
            "file": self.path,
            "exists": self.exists,
            "links": [link.as_json() for link in self.outgoing],
            "backlinks": [link.as_json() for link in self.backlinks],
        }


@dataclass
class ReferenceCheck:
    """Every reference to a file that does not exist, and how much was checked."""

    missing: list[Link]
    references: int
    """References into the tree that were checked."""
    files: int
    """Files that make any reference."""

    def as_json(self) -> dict[str, object]:
        return {
            "missing": [link.as_json() for link in self.missing],
            "references": self.references,
            "files": self.files,
        }


class _Disk:
    """Existence of root-relative paths, asked once each."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._exists: dict[str, bool] = {}

    def exists(self, path: str) -> bool:
        """Whether ``path`` names a file or folder of the tree. A path that a symbolic link
        leads out of the root is not of the tree: it counts as missing whether or not
        something exists out there, so a link never tells what lies outside the root."""
        if path not in self._exists:
            if path == ".":
                self._exists[path] = True
            else:
                try:
                    self._exists[path] = resolve_inside_root(self.root, path).exists()
                except OutsideRoot:
                    self._exists[path] = False
        return self._exists[path]

    def folder_exists(self, path: str) -> bool:
        folder = path.rsplit("/", 1)[0] if "/" in path else "."
        return self.exists(folder)


def _judge(source: str, reference: FileReference, disk: _Disk) -> Link | None:
    """The link ``reference`` makes, with the target it means; None when it means no file of
    the tree (a mention whose folders do not exist)."""
    if reference.kind is not ReferenceKind.MENTION:
        exists = disk.exists(reference.target)
        return Link(source, reference.line, reference.kind, reference.raw, reference.target, exists)
    candidates = [c for c in (reference.target, reference.alternative) if c]
    for candidate in candidates:
        if disk.exists(candidate):
            return Link(source, reference.line, reference.kind, reference.raw, candidate, True)
    for candidate in candidates:
        if disk.folder_exists(candidate):
            return Link(source, reference.line, reference.kind, reference.raw, candidate, False)
    return None


def _require_links(index: Index) -> None:
    if not index.keywords.facts.links_complete():
        raise LinksUnavailable(
            f"the index of {index.settings.root} was made before links were stored; "
            f"run: {index.settings.repair_command}"
        )


def file_links(index: Index, rel_path: str) -> FileLinks:
    """The links of ``rel_path`` (root-relative) and its backlinks, each judged on disk.

    Raises :class:`LinksUnavailable` for an index whose references were never extracted.
    """
    _require_links(index)
    disk = _Disk(index.settings.root)
    facts = index.keywords.facts
    result = FileLinks(rel_path, disk.exists(rel_path))
    for reference in facts.outgoing(rel_path):
        link = _judge(rel_path, reference, disk)
        if link is not None:
            result.outgoing.append(link)
    seen: set[tuple[str, int, str]] = set()
    for source, reference in facts.incoming(rel_path):
        link = _judge(source, reference, disk)
        key = (source, reference.line, reference.raw)
        if link is not None and link.target == rel_path and key not in seen:
            seen.add(key)
            result.backlinks.append(link)
    return result


def missing_references(index: Index) -> ReferenceCheck:
    """Every stored reference whose target does not exist on disk, by file and line.

    Raises :class:`LinksUnavailable` for an index whose references were never extracted.
    """
    _require_links(index)
    disk = _Disk(index.settings.root)
    missing: list[Link] = []
    checked = 0
    sources: set[str] = set()
    for source, reference in index.keywords.facts.every_link():
        link = _judge(source, reference, disk)
        if link is None:
            continue
        checked += 1
        sources.add(source)
        if not link.exists:
            missing.append(link)
    return ReferenceCheck(missing, checked, len(sources))
