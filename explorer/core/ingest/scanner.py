"""Find the files under a root that belong in the index, and read them as text.

:class:`ScanRules` decides, for one path at a time, whether the index wants it: the extension must
be known, the path must not be hidden, and neither the built-in excludes, the user's ``exclude``
patterns nor any ``.gitignore`` on the way down may ignore it. :func:`scan` walks a root with those
rules and reports every file it would index plus those it must skip (too large, unreadable, a
link out of the root, a fifo, a device or a socket, a folder that cannot be listed);
:func:`scan_path` does the same for one path. :func:`load_text` reads one
file and tells binary or undecodable content apart from text.

The root is a boundary: a symbolic link to a file outside it is skipped (``outside-root``) unless
the rules allow links out, and links to folders are never followed. Only regular files are ever
opened (a ``.gitignore`` included), never more than a cap. Paths are index keys
(:func:`~explorer.core.ingest.root_paths.path_key`): a name that is not UTF-8 is indexed too.

The scan only stats files; reading their content is left to :func:`load_text`, so that an
unchanged tree can be checked against the index quickly.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from explorer.core.ingest import formats
from explorer.core.ingest.documents import ScannedFile, ScanResult, SkippedFile, SkipReason
from explorer.core.ingest.file_reading import (
    FileRefused,
    decode_text,
    describe_mode,
    human_size,
    read_regular_file,
)
from explorer.core.ingest.ignore_patterns import IgnorePatterns
from explorer.core.ingest.root_paths import (
    OutsideRoot,
    disk_path,
    is_inside,
    path_key,
    resolve_inside_root,
)

__all__ = [
    "DEFAULT_EXCLUDES",
    "DEFAULT_EXTENSIONS",
    "DEFAULT_NAMES",
    "INDEX_MARKS",
    "OutsideRoot",
    "ScanRules",
    "is_index_folder",
    "load_text",
    "resolve_inside_root",
    "scan",
    "scan_path",
]

DEFAULT_EXTENSIONS: frozenset[str] = formats.DEFAULT_EXTENSIONS
"""File extensions indexed by default: lowercase, without the dot; every extension a format of
:mod:`explorer.core.ingest.formats` claims."""

DEFAULT_NAMES: frozenset[str] = formats.DEFAULT_NAMES
"""Files without an extension that are indexed by default (compared case-insensitively)."""

DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".git/",
    "node_modules/",
    "__pycache__/",
    ".venv/",
    "venv/",
    ".tox/",
    ".mypy_cache/",
    ".pytest_cache/",
    "dist/",
    "build/",
    "*.min.js",
    "*.lock",
)
"""Gitignore-style patterns that are always applied, whatever the settings say."""

INDEX_MARKS = ("index.sqlite", "chroma")
"""What an explorer index folder holds: its database (a file) and its vector store (a folder).
A folder under a root holding both is an index (ours or another's) and is never scanned."""

SPHINX_MARK = "searchindex.js"
SPHINX_MADE = frozenset({"_sources", "_static"})
"""A Sphinx HTML build keeps each page twice: the page, and its reStructuredText source copied
into ``_sources/`` beside the build's ``searchindex.js`` (the kernel's documentation: 3,606
pages and 3,604 such copies). The copy of a build is left out, the page indexed: the page is
what the site shows and what its links lead to, and the copy would double every result. The
build's ``_static/`` (the theme's scripts and styles) and its search index are no documents
either."""

_ALLOWED_HIDDEN_DIRS = frozenset({".github"})
GITIGNORE_MAX_BYTES = 1_000_000
"""A ``.gitignore`` larger than this is not read (its folder is then scanned without it)."""
LOAD_TEXT_MAX_BYTES = 2_000_000
"""The default cap of :func:`load_text` (the indexer passes its ``max_file_bytes``)."""


def is_index_folder(path: str) -> bool:
    """True if the folder ``path`` is an explorer index (see :data:`INDEX_MARKS`): it holds the
    full text of other files, and its own files (a tokenizer's JSON, say) are no documents."""
    database, vectors = INDEX_MARKS
    return os.path.isfile(os.path.join(path, database)) and os.path.isdir(
        os.path.join(path, vectors)
    )


def _in_sphinx_build(path: str) -> bool:
    """True if ``path`` sits at the top of a Sphinx HTML build (see :data:`SPHINX_MADE`)."""
    top = os.path.dirname(path)
    return os.path.isfile(os.path.join(top, SPHINX_MARK)) and os.path.isdir(
        os.path.join(top, "_static")
    )


def _normalise(rel_path: str) -> str:
    """``rel_path`` with forward slashes and no leading ``./`` or trailing ``/``."""
    rel = rel_path.replace(os.sep, "/").strip("/")
    while rel.startswith("./"):
        rel = rel[2:]
    return rel


def _with_compressed(extensions: Iterable[str]) -> frozenset[str]:
    """``extensions`` and the compressed forms a format reads of each (``1``: ``1.gz`` too, so
    a folder of manual pages limited to section 1 keeps ``ls.1.gz``)."""
    wanted = set(extensions)
    wanted.update(
        ext for ext in DEFAULT_EXTENSIONS if "." in ext and ext.split(".", 1)[0] in wanted
    )
    return frozenset(wanted)


class ScanRules:
    """Decides whether a path under a root belongs in the index.

    A file must have a known extension (or name), must not be hidden, and must not be ignored by
    the built-in excludes, the ``exclude`` patterns or any ``.gitignore`` down to it, nor lie in
    an explorer index folder.
    """

    def __init__(
        self,
        root: Path,
        extensions: Iterable[str] = DEFAULT_EXTENSIONS,
        exclude: Sequence[str] = (),
        extra_ignored_dirs: Sequence[Path] = (),
        names: Iterable[str] = DEFAULT_NAMES,
        allow_outside_links: bool = False,
    ) -> None:
        """Rules for ``root``.

        ``exclude`` holds gitignore-style patterns relative to the root; ``extra_ignored_dirs``
        are absolute folders (such as the index's own folder, before it exists) that are never
        entered, as is any folder that :func:`is_index_folder` recognises; ``names``
        are extension-less file names to index as well. ``allow_outside_links`` lets symbolic
        links to files outside the root be read (by default they are skipped).
        """
        self.root = Path(root)
        self.allow_outside_links = allow_outside_links
        self.real_root = os.path.realpath(self.root)
        self.problems: dict[str, SkippedFile] = {}
        """``.gitignore`` files that could not be used, by folder (cleared by each scan)."""
        self.extensions = _with_compressed(ext.lower().lstrip(".") for ext in extensions)
        self.names = frozenset(name.lower() for name in names)
        self._always = IgnorePatterns.from_lines([*DEFAULT_EXCLUDES, *exclude])
        self._extra_dirs: set[str] = set()
        roots = {self.root.absolute(), self.root.resolve()}
        for folder in extra_ignored_dirs:
            for candidate in {Path(folder).absolute(), Path(folder).resolve()}:
                for base in roots:
                    try:
                        rel = candidate.relative_to(base).as_posix()
                    except ValueError:
                        continue
                    if rel not in ("", "."):
                        self._extra_dirs.add(rel)
        self._root_str = str(self.root)
        self._specs: dict[str, tuple[tuple[int, int], IgnorePatterns]] = {}
        self._checked: set[str] = set()
        self._walking = False

    # -- public ---------------------------------------------------------------------------------
    def accepts(self, rel_path: str) -> bool:
        """True if the file at ``rel_path`` (relative to the root, forward slashes) is indexed.

        False as well when any folder above it is hidden, excluded or ignored.
        """
        rel = _normalise(rel_path)
        parts = rel.split("/")
        if not rel or any(part in ("", ".", "..") for part in parts):
            return False
        for depth in range(1, len(parts)):
            if self._dir_blocked("/".join(parts[:depth])):
                return False
        return self._file_wanted(rel)

    def prunes_dir(self, rel_dir: str) -> bool:
        """True if a walk should not descend into the folder ``rel_dir`` (relative to the root)."""
        rel = _normalise(rel_dir)
        if not rel:
            return False
        parts = rel.split("/")
        if any(part in ("", ".", "..") for part in parts):
            return True
        return any(self._dir_blocked("/".join(parts[:depth])) for depth in range(1, len(parts) + 1))

    # -- checks of the last path component (the walk has already checked the parents) ------------
    def _dir_blocked(self, rel_dir: str) -> bool:
        name = rel_dir.rsplit("/", 1)[-1]
        if name.startswith(".") and name not in _ALLOWED_HIDDEN_DIRS:
            return True
        if rel_dir in self._extra_dirs or self._ignored(rel_dir, is_dir=True):
            return True
        folder = os.path.join(self._root_str, disk_path(rel_dir))
        return is_index_folder(folder) or (name in SPHINX_MADE and _in_sphinx_build(folder))

    def _file_wanted(self, rel: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        if name.startswith("."):
            return False
        if name == SPHINX_MARK and _in_sphinx_build(os.path.join(self._root_str, disk_path(rel))):
            return False
        ext = formats.extension_of(name)
        if ext:
            if ext not in self.extensions:
                return False
        elif name.lower() not in self.names:
            return False
        return not self._ignored(rel, is_dir=False)

    def unread_type(self, rel: str) -> str | None:
        """The type of a file these rules do not take (``.svg``, or its name when it has no
        extension), when its type is why; None for a hidden or ignored one."""
        name = rel.rsplit("/", 1)[-1]
        if name.startswith(".") or self._ignored(rel, is_dir=False):
            return None
        ext = formats.extension_of(name)
        return f".{ext}" if ext else name

    def _ignored(self, rel: str, is_dir: bool) -> bool:
        """True if the excludes or the ``.gitignore`` files ignore ``rel`` itself (its folders
        are checked by the caller, one level at a time, as git walks)."""
        if self._always.ignores(rel, is_dir):
            return True
        parts = rel.split("/")
        # The deepest .gitignore with a matching pattern decides, as in git.
        for depth in range(len(parts) - 1, -1, -1):
            patterns = self._gitignore("/".join(parts[:depth]))
            if patterns is None:
                continue
            verdict = patterns.verdict("/".join(parts[depth:]), is_dir)
            if verdict is not None:
                return verdict
        return False

    def _gitignore(self, rel_dir: str) -> IgnorePatterns | None:
        """The compiled ``.gitignore`` of a folder; re-read when it changed since last checked.

        Within one :func:`scan` each folder's file is checked once; otherwise on every call.
        """
        if self._walking and rel_dir in self._checked:
            cached = self._specs.get(rel_dir)
            return cached[1] if cached else None
        self._checked.add(rel_dir)
        path = os.path.join(self._root_str, disk_path(rel_dir), ".gitignore")
        rel_file = f"{rel_dir}/.gitignore" if rel_dir else ".gitignore"
        try:
            info = os.stat(path)
            key = (info.st_mtime_ns, info.st_size)
            cached = self._specs.get(rel_dir)
            if cached is not None and cached[0] == key:
                return cached[1]
            if not stat.S_ISREG(info.st_mode):  # checked again on the open descriptor
                raise FileRefused(SkipReason.NOT_REGULAR, describe_mode(info.st_mode))
            if not self.allow_outside_links and not is_inside(
                self.real_root, os.path.realpath(path)
            ):
                raise FileRefused(SkipReason.OUTSIDE_ROOT, "a link to a file outside the root")
            data = read_regular_file(path, GITIGNORE_MAX_BYTES)  # never a fifo or a device
        except FileRefused as refused:
            self.problems[rel_dir] = SkippedFile(rel_file, refused.reason, refused.detail)
            self._specs.pop(rel_dir, None)
            return None
        except OSError:
            self.problems.pop(rel_dir, None)
            self._specs.pop(rel_dir, None)
            return None
        self.problems.pop(rel_dir, None)
        patterns = IgnorePatterns.from_lines(data.decode("utf-8", errors="replace").splitlines())
        self._specs[rel_dir] = (key, patterns)
        return patterns

    def gitignore_problem(self, rel_dir: str) -> SkippedFile | None:
        """Why the ``.gitignore`` of folder ``rel_dir`` cannot be used (checked now), or None."""
        self._gitignore(_normalise(rel_dir))
        return self.problems.get(_normalise(rel_dir))


def _classify(
    rel: str,
    path: str,
    is_link: bool,
    info: os.stat_result,
    rules: ScanRules,
    max_bytes: int,
) -> ScannedFile | SkippedFile | None:
    """A file the rules accept, with the stat of its target: indexable, or skipped with the
    reason (a fifo, a device or a socket is never opened), or None for a link to a folder
    (never followed)."""
    if stat.S_ISDIR(info.st_mode):
        return None
    if not stat.S_ISREG(info.st_mode):
        kind = describe_mode(info.st_mode)
        return SkippedFile(rel, SkipReason.NOT_REGULAR, f"a link to {kind}" if is_link else kind)
    if is_link and not rules.allow_outside_links:
        target = os.path.realpath(path)
        if not is_inside(rules.real_root, target):
            return SkippedFile(rel, SkipReason.OUTSIDE_ROOT, f"a link to {path_key(target)}")
    max_bytes = formats.format_for(rel).limits.max_bytes or max_bytes  # a PDF has its own cap
    if info.st_size > max_bytes:
        detail = f"{human_size(info.st_size)} > {human_size(max_bytes)} cap"
        return SkippedFile(rel, SkipReason.TOO_LARGE, detail)
    if not os.access(path, os.R_OK):
        return SkippedFile(rel, SkipReason.UNREADABLE, "permission denied")
    return ScannedFile(rel, Path(path), info.st_size, info.st_mtime_ns)


def unlistable_folder(rel_dir: str, error: OSError) -> SkippedFile:
    """A folder under the root that cannot be listed (mode 000, say): counted as unreadable."""
    why = (error.strerror or str(error)).lower()
    return SkippedFile(rel_dir, SkipReason.UNREADABLE, f"a folder that cannot be listed ({why})")


def _visit_file(
    entry: os.DirEntry[str], rel: str, rules: ScanRules, max_bytes: int, out: ScanResult
) -> None:
    """Add one accepted directory entry to ``out`` as a scanned or skipped file."""
    try:
        info = entry.stat()  # follows a symlink to its target
    except FileNotFoundError:
        detail = "broken symbolic link" if entry.is_symlink() else "vanished during the scan"
        out.skipped.append(SkippedFile(rel, SkipReason.UNREADABLE, detail))
        return
    except OSError as error:
        out.skipped.append(SkippedFile(rel, SkipReason.UNREADABLE, str(error)))
        return
    found = _classify(rel, entry.path, entry.is_symlink(), info, rules, max_bytes)
    if isinstance(found, ScannedFile):
        out.files.append(found)
    elif found is not None:
        out.skipped.append(found)


def scan_path(
    rules: ScanRules, rel_path: str, max_file_bytes: int
) -> ScannedFile | SkippedFile | None:
    """What a full :func:`scan` would make of the one file ``rel_path`` (an index key).

    None when the rules do not want it, it does not exist, it is a link to a folder, or it lies
    in a folder reached through a symbolic link (a walk never enters one). For a folder: the
    skipped entry a walk would count when it cannot be listed, else None.
    """
    rel = _normalise(rel_path)
    path = os.path.join(rules._root_str, disk_path(rel))
    if rel and os.path.isdir(path) and not os.path.islink(path):
        return _folder_problem(rules, rel, path)
    if not rules.accepts(rel):
        return None
    parent_rel = os.path.dirname(disk_path(rel))
    expected_parent = os.path.join(rules.real_root, parent_rel) if parent_rel else rules.real_root
    try:
        if os.path.realpath(os.path.dirname(path)) != os.path.normpath(expected_parent):
            return None  # under a linked folder
        link = os.lstat(path)
    except OSError:
        return None
    is_link = stat.S_ISLNK(link.st_mode)
    try:
        info = os.stat(path) if is_link else link
    except FileNotFoundError:
        return SkippedFile(rel, SkipReason.UNREADABLE, "broken symbolic link")
    except OSError as error:
        return SkippedFile(rel, SkipReason.UNREADABLE, str(error))
    return _classify(rel, path, is_link, info, rules, max_file_bytes)


def _folder_problem(rules: ScanRules, rel: str, path: str) -> SkippedFile | None:
    """The folder ``rel`` counted as :func:`unlistable_folder` when a walk would enter it and
    cannot list it; else None."""
    if rules.prunes_dir(rel):
        return None
    expected = os.path.join(rules.real_root, disk_path(rel))
    try:
        if os.path.realpath(path) != os.path.normpath(expected):
            return None  # under a linked folder: a walk never gets there
        with os.scandir(path):
            return None
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        return unlistable_folder(rel, error)


def scan(
    root: Path,
    rules: ScanRules,
    max_file_bytes: int,
    cancel: threading.Event | None = None,
    count_other_types: bool = False,
) -> ScanResult:
    """Walk ``root`` and sort every file the rules accept into indexable and skipped ones;
    with ``count_other_types``, count the files left out for their type alone (``explorer
    status`` says what the folder holds that no format reads).

    The walk is deterministic (entries in name order, results sorted by path), never follows
    symbolic links to folders, never opens anything but a regular ``.gitignore``, and never
    raises for a problem with a single file or sub-folder: files larger than
    ``max_file_bytes`` are skipped as ``too-large``, links to files outside the root as
    ``outside-root``, files that cannot be stat'ed or read (or vanish mid-walk, or are dangling
    links) as ``unreadable``, a fifo, a device or a socket with an indexable name (or a link to
    one, or a ``.gitignore`` that is one) as ``not-regular``, a sub-folder that cannot be listed
    as ``unreadable`` (under its own path). Only a root that cannot be listed raises
    ``OSError``. When ``cancel`` is set the walk stops at the next folder and the result says
    ``cancelled`` (its lists are then incomplete).
    """
    root = Path(root).absolute()
    result = ScanResult()
    rules._checked.clear()
    rules.problems.clear()
    rules._walking = True
    try:
        _walk(root, rules, max_file_bytes, result, cancel, count_other_types)
    finally:
        rules._walking = False
    result.skipped.extend(rules.problems.values())
    result.files.sort(key=lambda scanned: scanned.rel_path)
    result.skipped.sort(key=lambda skipped: skipped.rel_path)
    return result


def _walk(
    root: Path,
    rules: ScanRules,
    max_file_bytes: int,
    result: ScanResult,
    cancel: threading.Event | None,
    count_other_types: bool = False,
) -> None:
    """Depth-first walk in name order, adding accepted files to ``result``."""
    pending = [("", str(root))]  # (index key, path on disk) of each folder to list
    while pending:
        if cancel is not None and cancel.is_set():
            result.cancelled = True
            return
        rel_dir, directory = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except (FileNotFoundError, NotADirectoryError):
            if not rel_dir:
                raise
            continue  # gone (or replaced by a file) during the walk
        except OSError as error:
            if not rel_dir:
                raise
            result.skipped.append(unlistable_folder(rel_dir, error))
            continue
        subdirs = []
        for entry in entries:
            name = path_key(entry.name)
            rel = f"{rel_dir}/{name}" if rel_dir else name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if not rules._dir_blocked(rel):
                    subdirs.append((rel, entry.path))
            elif rules._file_wanted(rel):
                _visit_file(entry, rel, rules, max_file_bytes, result)
            elif count_other_types and (kind := rules.unread_type(rel)) is not None:
                result.other_types[kind] = result.other_types.get(kind, 0) + 1
        pending.extend(reversed(subdirs))


def load_text(path: Path, max_bytes: int = LOAD_TEXT_MAX_BYTES) -> str | tuple[str, str]:
    """The text of the file at ``path``, or ``(reason, detail)`` when it is not indexable text.

    Reasons: ``binary`` (a NUL byte in the first 8 KiB), ``undecodable`` (neither UTF-8 nor
    UTF-16/32 with a byte-order mark), ``not-regular`` (a fifo, a device: never opened for
    long), ``too-large`` (more than ``max_bytes``, even if it grew after the scan) and
    ``unreadable`` (any ``OSError``). A byte-order mark is dropped; nothing else is changed (line
    endings stay as on disk), so character offsets match the file as an editor shows it.
    """
    try:
        return decode_text(read_regular_file(path, max_bytes))
    except FileRefused as refused:
        return (refused.reason, refused.detail)
    except OSError as error:
        return (SkipReason.UNREADABLE, str(error))
