"""What the index knows about each file beyond its chunks: front-matter fields and references.

Two tables of the keyword index's SQLite database, written in the same transaction as the
file's chunks and removed with them:

- ``file_fields``: the ``tag`` and ``version`` values of a file's front matter, lowercased, so a
  filter (``--tag backup``) is one indexed lookup;
- ``links``: every reference the file makes to another (see :mod:`explorer.core.ingest.references`),
  so outgoing links, backlinks and missing targets are indexed lookups too.

An index made before these tables existed is migrated when it is opened: the fields are read
back from the manifest's stored metadata at once; references need the files' text, so the
next sync extracts them (:meth:`FileFacts.links_complete` says whether that happened).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping
from enum import StrEnum

from explorer.core.ingest.references import FileReference, ReferenceKind

LINKS_COMPLETE = "links_complete"
"""Meta key set once every indexed file's references are in ``links``."""

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
    alternative TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS links_by_source ON links(source, line);
CREATE INDEX IF NOT EXISTS links_by_target ON links(target);
CREATE INDEX IF NOT EXISTS links_by_alternative ON links(alternative) WHERE alternative != '';
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


class FileFacts:
    """The ``file_fields`` and ``links`` tables, on the keyword index's connection and lock.

    Write methods run inside the caller's transaction (the keyword index replaces a file's
    chunks, fields and links in one); read methods take the lock themselves.
    """

    def __init__(self, db: sqlite3.Connection, lock: threading.RLock) -> None:
        self._db = db
        self._lock = lock

    def create(self) -> None:
        """Create the tables; migrate an index made before them. Call under the lock."""
        existed = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'links'"
        ).fetchone()
        self._db.executescript(_SCHEMA)
        if existed:
            return
        with self._db:
            rows = self._db.execute(
                "SELECT path, metadata FROM files WHERE metadata != '{}'"
            ).fetchall()
            for path, metadata in rows:
                self._write_fields(path, json.loads(metadata))
            if self._db.execute("SELECT 1 FROM files LIMIT 1").fetchone() is None:
                self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, '1')", (LINKS_COMPLETE,))

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
            "INSERT INTO links(source, line, kind, raw, target, alternative)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (path, ref.line, str(ref.kind), ref.raw, ref.target, ref.alternative)
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

    def links_complete(self) -> bool:
        """Whether every indexed file's references have been extracted."""
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (LINKS_COMPLETE,))
            return row.fetchone() is not None

    def set_links_complete(self) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, '1')", (LINKS_COMPLETE,))

    def outgoing(self, path: str) -> list[FileReference]:
        """The references ``path`` makes, in file order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT line, kind, raw, target, alternative FROM links WHERE source = ?"
                " ORDER BY line, rowid",
                (path,),
            ).fetchall()
        return [_reference(row) for row in rows]

    def incoming(self, path: str) -> list[tuple[str, FileReference]]:
        """(source, reference) of every reference that may mean ``path``, by source and line.

        A mention is listed under both of its readings; which it means is for the caller to
        judge against the disk.
        """
        with self._lock:
            rows = self._db.execute(
                "SELECT source, line, kind, raw, target, alternative FROM links"
                " WHERE target = ? UNION ALL"
                " SELECT source, line, kind, raw, target, alternative FROM links"
                " WHERE alternative = ? AND alternative != ''"
                " ORDER BY 1, 2",
                (path, path),
            ).fetchall()
        return [(row[0], _reference(row[1:])) for row in rows]

    def every_link(self) -> Iterator[tuple[str, FileReference]]:
        """(source, reference) of every stored reference, by source and line."""
        with self._lock:
            rows = self._db.execute(
                "SELECT source, line, kind, raw, target, alternative FROM links"
                " ORDER BY source, line, rowid"
            ).fetchall()
        for row in rows:
            yield row[0], _reference(row[1:])


def _reference(row: tuple[int, str, str, str, str]) -> FileReference:
    line, kind, raw, target, alternative = row
    return FileReference(int(line), ReferenceKind(kind), raw, target, alternative)
