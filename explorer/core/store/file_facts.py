"""What the index knows about each file beyond its chunks: front-matter fields and references.

Two tables of the keyword index's SQLite database, written in the same transaction as the
file's chunks and removed with them:

- ``file_fields``: the ``tag`` and ``version`` values of a file's front matter, lowercased, so a
  filter (``--tag backup``) is one indexed lookup;
- ``links``: every reference the file makes to another, as written (see
  :mod:`explorer.core.ingest.references`): its line, kind, syntax and the target it names.
  Which file a reference leads to depends on the other files, so it is resolved when asked
  (:mod:`explorer.core.retrieval.link_resolution`), over the manifest's paths and front matter.

An index made before these tables existed is migrated when it is opened: the fields are read
back from the manifest's stored metadata at once; references need the files' text, so the
next sync extracts them (:meth:`FileFacts.links_complete` says whether that happened). The same
holds for an index whose references were read by an older explorer (:data:`LINKS_VERSION`):
its ``links`` table gains the ``syntax`` column, and the next sync reads every file's
references (wikilinks, Hugo refs), inline tags and link names (aliases, slug, url) again.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping
from enum import StrEnum

from explorer.core.ingest.references import FileReference, LinkSyntax, ReferenceKind
from explorer.core.store.sql_script import run_script

LINKS_COMPLETE = "links_complete"
"""Meta key holding :data:`LINKS_VERSION` once every indexed file's references are in
``links``."""
ROUTE_FIELDS = ("aliases", "slug", "url")
"""Front-matter fields that give a page other names or URLs."""
LINKS_VERSION = "3"
"""1: Markdown links, images, definitions and mentions; 2: wikilinks, embeds, Hugo refs, each
reference's syntax, inline tags, and aliases, slug and url in the metadata; 3: a path stored as
written (its escapes decoded once, when it is read), and links on lines of any length."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS file_fields(
    field TEXT NOT NULL,
    value TEXT NOT NULL,
    path TEXT NOT NULL,
    PRIMARY KEY(field, value, path)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS file_fields_by_path ON file_fields(path);
CREATE TABLE IF NOT EXISTS links(
    source TEXT NOT NULL,
    line INTEGER NOT NULL,
    kind TEXT NOT NULL,
    raw TEXT NOT NULL,
    target TEXT NOT NULL,
    alternative TEXT NOT NULL DEFAULT '',
    syntax TEXT NOT NULL DEFAULT 'path'
);
CREATE INDEX IF NOT EXISTS links_by_source ON links(source, line);
DROP INDEX IF EXISTS links_by_target;
DROP INDEX IF EXISTS links_by_alternative;
"""


class FileField(StrEnum):
    """A front-matter field a search can be filtered by."""

    TAG = "tag"
    VERSION = "version"


def metadata_tags(metadata: Mapping[str, object]) -> list[str]:
    """The tags of a file's metadata: a list, or (an index written before tags were kept as a
    list) one comma-joined string."""
    value = metadata.get("tags")
    if value is None:
        return []
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    return [text for item in items if (text := str(item).strip())]


def field_values(metadata: Mapping[str, object]) -> list[tuple[FileField, str]]:
    """The filterable (field, normalised value) pairs of a file's metadata."""
    pairs = [(FileField.TAG, normalise_value(tag)) for tag in metadata_tags(metadata)]
    version = str(metadata.get("version") or "").strip()
    if version:
        pairs.append((FileField.VERSION, normalise_value(version)))
    return pairs


def normalise_value(value: str) -> str:
    """How tags and versions are compared: trimmed and case-insensitive."""
    return value.strip().casefold()


def name_aliases(metadata: Mapping[str, object]) -> list[str]:
    """The front-matter aliases that are other names of the page (an Obsidian note's), not
    other URLs of it (a Hugo page's ``/old/path/``): searched like its title."""
    value = metadata.get("aliases")
    items = value if isinstance(value, (list, tuple)) else [value] if value else []
    return [text for item in items if (text := str(item).strip()) and "/" not in text]


def search_title(title: str, metadata: Mapping[str, object]) -> str:
    """The title as the keyword index searches it: the title, then the page's other names."""
    return "\n".join([title, *name_aliases(metadata)])


class FileFacts:
    """The ``file_fields`` and ``links`` tables, on the keyword index's connection and lock.

    Write methods run inside the caller's transaction (the keyword index replaces a file's
    chunks, fields and links in one); read methods take the lock themselves.
    """

    def __init__(self, db: sqlite3.Connection, lock: threading.RLock) -> None:
        self._db = db
        self._lock = lock

    def create(self) -> None:
        """Create the tables; migrate an index made before them. Call under the lock, in the
        write transaction that sets up the keyword index's tables."""
        existed = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'links'"
        ).fetchone()
        if existed and not self._has_syntax_column():
            self._db.execute("ALTER TABLE links ADD COLUMN syntax TEXT NOT NULL DEFAULT 'path'")
        run_script(self._db, _SCHEMA)
        if existed:
            return
        rows = self._db.execute(
            "SELECT path, metadata FROM files WHERE metadata != '{}'"
        ).fetchall()
        for path, metadata in rows:
            self._write_fields(path, json.loads(metadata))
        if self._db.execute("SELECT 1 FROM files LIMIT 1").fetchone() is None:
            self._db.execute(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)", (LINKS_COMPLETE, LINKS_VERSION)
            )

    def _has_syntax_column(self) -> bool:
        columns = self._db.execute("PRAGMA table_info(links)").fetchall()
        return any(column[1] == "syntax" for column in columns)

    # -- writing (inside the caller's transaction) ---------------------------------------------
    def replace(
        self, path: str, metadata: Mapping[str, object], references: Iterable[FileReference]
    ) -> None:
        """Swap ``path``'s fields and references for these."""
        self.delete(path)
        self._write_fields(path, metadata)
        self.write_links(path, references)

    def write_links(self, path: str, references: Iterable[FileReference]) -> None:
        self._db.execute("DELETE FROM links WHERE source = ?", (path,))
        self._db.executemany(
            "INSERT INTO links(source, line, kind, raw, target, alternative, syntax)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    path,
                    ref.line,
                    str(ref.kind),
                    ref.raw,
                    ref.target,
                    ref.alternative,
                    str(ref.syntax),
                )
                for ref in references
            ],
        )

    def delete(self, path: str) -> None:
        """Forget ``path``'s fields and references (it is gone, skipped or replaced)."""
        self._db.execute("DELETE FROM file_fields WHERE path = ?", (path,))
        self._db.execute("DELETE FROM links WHERE source = ?", (path,))

    def _write_fields(self, path: str, metadata: Mapping[str, object]) -> None:
        self._db.executemany(
            "INSERT OR IGNORE INTO file_fields(field, value, path) VALUES (?, ?, ?)",
            [(str(field), value, path) for field, value in field_values(metadata)],
        )

    # -- reading ------------------------------------------------------------------------------
    def paths_with(self, field: FileField, values: Iterable[str]) -> set[str]:
        """Files whose ``field`` holds any of ``values`` (compared case-insensitively)."""
        wanted = sorted({normalise_value(value) for value in values})
        if not wanted:
            return set()
        marks = ",".join("?" * len(wanted))
        with self._lock:
            rows = self._db.execute(
                f"SELECT DISTINCT path FROM file_fields WHERE field = ? AND value IN ({marks})",
                [str(field), *wanted],
            ).fetchall()
        return {row[0] for row in rows}

    def values_by_path(self, field: FileField) -> dict[str, set[str]]:
        """Every file's values of ``field`` (lowercased), for the files that have any."""
        with self._lock:
            rows = self._db.execute(
                "SELECT path, value FROM file_fields WHERE field = ?", (str(field),)
            ).fetchall()
        found: dict[str, set[str]] = {}
        for path, value in rows:
            found.setdefault(path, set()).add(value)
        return found

    def links_complete(self) -> bool:
        """Whether every indexed file's references have been extracted by this version."""
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (LINKS_COMPLETE,))
            found = row.fetchone()
        return found is not None and found[0] == LINKS_VERSION

    def set_links_complete(self) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)", (LINKS_COMPLETE, LINKS_VERSION)
            )

    def fingerprint(self) -> tuple[object, ...]:
        """A value that changes whenever a file or a reference is added, removed or
        replaced (not when vectors are written): what resolved links are kept by."""
        with self._lock:
            links = self._db.execute("SELECT COUNT(*), MAX(rowid) FROM links").fetchone()
            files = self._db.execute(
                "SELECT COUNT(*), MAX(updated_at), TOTAL(size), TOTAL(mtime_ns) FROM files"
            ).fetchone()
        return (*links, *files)

    def pages(self) -> dict[str, dict[str, object]]:
        """Every file of the manifest (indexed or skipped: it is on disk either way) and the
        front matter that gives it other names and URLs (``aliases``, ``slug``, ``url``)."""
        with self._lock:
            rows = self._db.execute("SELECT path, metadata FROM files").fetchall()
        pages: dict[str, dict[str, object]] = {}
        for path, metadata in rows:
            fields = json.loads(metadata) if metadata != "{}" else {}
            pages[path] = {key: fields[key] for key in ROUTE_FIELDS if fields.get(key)}
        return pages

    def metadata(self, path: str) -> dict[str, object]:
        """The stored metadata of ``path`` (empty for a file the manifest lacks)."""
        with self._lock:
            row = self._db.execute("SELECT metadata FROM files WHERE path = ?", (path,)).fetchone()
        return dict(json.loads(row[0])) if row else {}

    def every_link(self) -> Iterator[tuple[str, FileReference]]:
        """(source, reference) of every stored reference, by source and line."""
        with self._lock:
            rows = self._db.execute(
                "SELECT source, line, kind, raw, target, alternative, syntax FROM links"
                " ORDER BY source, line, rowid"
            ).fetchall()
        for row in rows:
            yield row[0], _reference(row[1:])


def _reference(row: tuple[int, str, str, str, str, str]) -> FileReference:
    line, kind, raw, target, alternative, syntax = row
    return FileReference(
        int(line), ReferenceKind(kind), raw, target, alternative, LinkSyntax(syntax)
    )
