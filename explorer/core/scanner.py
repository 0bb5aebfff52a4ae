"""Find the files under a root that belong in the index, and read them as text.

:class:`ScanRules` decides, for one path at a time, whether the index wants it: the extension must
be known, the path must not be hidden, and neither the built-in excludes, the user's ``exclude``
patterns nor any ``.gitignore`` on the way down may ignore it. :func:`scan` walks a root with those
rules and reports every file it would index plus those it must skip (too large, unreadable).
:func:`load_text` reads one file and tells binary or non-UTF-8 content apart from text.

The scan only stats files; reading their content is left to :func:`load_text`, so that an
unchanged tree can be checked against the index quickly.
"""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

import pathspec

from explorer.core.documents import ScannedFile, ScanResult, SkippedFile

DEFAULT_EXTENSIONS: frozenset[str] = frozenset(
    "md markdown mdx txt rst adoc org py pyi js jsx ts tsx mjs go rs java kt c h cpp hpp cs rb php "
    "swift scala sh bash zsh sql toml yaml yml json ini cfg conf html css xml".split()
)
"""File extensions indexed by default: lowercase, without the dot."""

DEFAULT_NAMES: frozenset[str] = frozenset({"makefile", "dockerfile", "readme", "license"})
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

_ALLOWED_HIDDEN_DIRS = frozenset({".github"})
_BINARY_PROBE_BYTES = 8192


def _compile(lines: Iterable[str]) -> pathspec.GitIgnoreSpec:
    """A gitignore spec from ``lines``, dropping any single pattern that cannot be compiled."""
    lines = list(lines)
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # noqa: BLE001 - one bad pattern must not disable the whole file
        good = []
        for line in lines:
            try:
                pathspec.GitIgnoreSpec.from_lines([line])
            except Exception:  # noqa: BLE001
                continue
            good.append(line)
        return pathspec.GitIgnoreSpec.from_lines(good)


def _normalise(rel_path: str) -> str:
    """``rel_path`` with forward slashes and no leading ``./`` or trailing ``/``."""
    rel = rel_path.replace(os.sep, "/").strip("/")
    while rel.startswith("./"):
        rel = rel[2:]
    return rel


class ScanRules:
    """Decides whether a path under a root belongs in the index.

    A file must have a known extension (or name), must not be hidden, and must not be ignored by
    the built-in excludes, the ``exclude`` patterns or any ``.gitignore`` down to it.
    """

    def __init__(
        self,
        root: Path,
        extensions: Iterable[str] = DEFAULT_EXTENSIONS,
        exclude: Sequence[str] = (),
        extra_ignored_dirs: Sequence[Path] = (),
        names: Iterable[str] = DEFAULT_NAMES,
    ) -> None:
        """Rules for ``root``.

        ``exclude`` holds gitignore-style patterns relative to the root; ``extra_ignored_dirs``
        are absolute folders (such as the index's own folder) that are never entered; ``names``
        are extension-less file names to index as well.
        """
        self.root = Path(root)
        self.extensions = frozenset(ext.lower().lstrip(".") for ext in extensions)
        self.names = frozenset(name.lower() for name in names)
        self._always = _compile([*DEFAULT_EXCLUDES, *exclude])
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
        self._specs: dict[str, tuple[tuple[int, int], pathspec.GitIgnoreSpec]] = {}
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
        return rel_dir in self._extra_dirs or self._ignored(rel_dir, is_dir=True)

    def _file_wanted(self, rel: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        if name.startswith("."):
            return False
        stem, dot, ext = name.rpartition(".")
        if dot and stem:
            if ext.lower() not in self.extensions:
                return False
        elif name.lower() not in self.names:
            return False
        return not self._ignored(rel, is_dir=False)

    def _ignored(self, rel: str, is_dir: bool) -> bool:
        slash = "/" if is_dir else ""
        if self._always.match_file(rel + slash):
            return True
        parts = rel.split("/")
        # The deepest .gitignore with a matching pattern decides, as in git.
        for depth in range(len(parts) - 1, -1, -1):
            spec = self._gitignore("/".join(parts[:depth]))
            if spec is None:
                continue
            verdict = spec.check_file("/".join(parts[depth:]) + slash).include
            if verdict is not None:
                return bool(verdict)
        return False

    def _gitignore(self, rel_dir: str) -> pathspec.GitIgnoreSpec | None:
        """The compiled ``.gitignore`` of a folder; re-read when it changed since last checked.

        Within one :func:`scan` each folder's file is checked once; otherwise on every call.
        """
        if self._walking and rel_dir in self._checked:
            cached = self._specs.get(rel_dir)
            return cached[1] if cached else None
        self._checked.add(rel_dir)
        path = os.path.join(self._root_str, rel_dir, ".gitignore")
        try:
            info = os.stat(path)
            key = (info.st_mtime_ns, info.st_size)
            cached = self._specs.get(rel_dir)
            if cached is not None and cached[0] == key:
                return cached[1]
            with open(path, encoding="utf-8", errors="replace") as handle:
                lines = handle.read().splitlines()
        except OSError:
            self._specs.pop(rel_dir, None)
            return None
        spec = _compile(lines)
        self._specs[rel_dir] = (key, spec)
        return spec


def _human_size(size: float) -> str:
    """``2100000`` -> ``2.1 MB`` (decimal units)."""
    if size < 1000:
        return f"{int(size)} B"
    for unit in ("KB", "MB", "GB"):
        size /= 1000
        if size < 999.95 or unit == "GB":
            return f"{size:.1f} {unit}"
    raise AssertionError("unreachable")


def _visit_file(
    entry: os.DirEntry[str], rel: str, root: Path, max_bytes: int, out: ScanResult
) -> None:
    """Add one accepted directory entry to ``out`` as a scanned or skipped file."""
    try:
        info = entry.stat()  # follows a symlink to its target
    except FileNotFoundError:
        detail = "broken symbolic link" if entry.is_symlink() else "vanished during the scan"
        out.skipped.append(SkippedFile(rel, "unreadable", detail))
        return
    except OSError as error:
        out.skipped.append(SkippedFile(rel, "unreadable", str(error)))
        return
    if not stat.S_ISREG(info.st_mode):
        return  # a symlink to a folder, a socket, a fifo...
    if info.st_size > max_bytes:
        detail = f"{_human_size(info.st_size)} > {_human_size(max_bytes)} cap"
        out.skipped.append(SkippedFile(rel, "too-large", detail))
        return
    if not os.access(entry.path, os.R_OK):
        out.skipped.append(SkippedFile(rel, "unreadable", "permission denied"))
        return
    out.files.append(ScannedFile(rel, root / rel, info.st_size, info.st_mtime_ns))


def scan(root: Path, rules: ScanRules, max_file_bytes: int) -> ScanResult:
    """Walk ``root`` and sort every file the rules accept into indexable and skipped ones.

    The walk is deterministic (entries in name order, results sorted by path), never follows
    symbolic links to folders, and never raises for a problem with a single file or sub-folder:
    files larger than ``max_file_bytes`` are skipped as ``too-large``, files that cannot be
    stat'ed or read (or vanish mid-walk, or are dangling links) as ``unreadable``. Sub-folders
    that cannot be listed are left out. Only a root that cannot be listed raises ``OSError``.
    """
    root = Path(root).absolute()
    result = ScanResult()
    rules._checked.clear()
    rules._walking = True
    try:
        _walk(root, rules, max_file_bytes, result)
    finally:
        rules._walking = False
    result.files.sort(key=lambda scanned: scanned.rel_path)
    result.skipped.sort(key=lambda skipped: skipped.rel_path)
    return result


def _walk(root: Path, rules: ScanRules, max_file_bytes: int, result: ScanResult) -> None:
    """Depth-first walk in name order, adding accepted files to ``result``."""
    pending = [""]
    while pending:
        rel_dir = pending.pop()
        try:
            with os.scandir(root / rel_dir if rel_dir else root) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            if not rel_dir:
                raise
            continue
        subdirs = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if not rules._dir_blocked(rel):
                    subdirs.append(rel)
            elif rules._file_wanted(rel):
                _visit_file(entry, rel, root, max_file_bytes, result)
        pending.extend(reversed(subdirs))


def load_text(path: Path) -> str | tuple[str, str]:
    """The text of the file at ``path``, or ``(reason, detail)`` when it is not indexable text.

    Reasons: ``binary`` (a NUL byte in the first 8 KiB), ``undecodable`` (not UTF-8) and
    ``unreadable`` (any ``OSError``). A UTF-8 byte-order mark is dropped; nothing else is changed
    (line endings stay as on disk), so character offsets match the file as an editor shows it.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        return ("unreadable", str(error))
    nul = data.find(b"\0", 0, _BINARY_PROBE_BYTES)
    if nul >= 0:
        return ("binary", f"NUL byte at offset {nul}")
    skip = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as error:
        return ("undecodable", f"not UTF-8 at byte {error.start + skip}")
