"""The keyword index and the manifest, in one SQLite database.

The manifest (``files``) is the source of truth for what the index holds: each file's size,
mtime, content hash and state. ``chunks`` holds every passage with its position, and
``chunks_fts`` is an FTS5 table over the same rows (BM25, porter stemming, accents folded), with
the file's title beside each chunk's heading and text, and its front-matter description and tags
beside its first chunk. ``files_fts`` holds each file whole (one row, keyed by its first chunk's
rowid), for the BM25 of the page as a whole. All change in one transaction per file, so the
keyword leg is never out of step with the manifest. The FTS5 tables hold each text as it is
matched (:func:`~explorer.core.ingest.keyword_text.keyword_text`: runs of Chinese, Japanese
and Korean as bigrams); snippets are made from the chunks' own text.

A damaged database (a truncated file, garbage, overwritten pages) is reported as
:class:`KeywordIndexDamaged` wherever SQLite notices it: on opening, in :meth:`KeywordIndex.check`
or in the middle of any read. Opened ``read_only`` (for search and status), the database is
never written, and a read-only index directory can still be read.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast
from urllib.parse import quote

from explorer.core.errors import ExplorerError
from explorer.core.ingest.documents import Chunk
from explorer.core.ingest.front_matter import FileMetadata
from explorer.core.ingest.keyword_text import SOUTHEAST_ASIAN_SPANS, is_unspaced, keyword_text
from explorer.core.ingest.references import FileReference
from explorer.core.models import FileState
from explorer.core.private_files import create_private_file, make_private_dirs
from explorer.core.store.damaged_store import damage_words
from explorer.core.store.embedding_ledger import EmbeddingLedger
from explorer.core.store.file_facts import FileFacts, metadata_tags, search_title
from explorer.core.store.kept_rankings import TABLE as KEPT_RANKINGS_TABLE
from explorer.core.store.kept_rankings import KeptRankings
from explorer.core.store.keyword_statistics import KeywordStatistics, KeywordTable, kept_or_read
from explorer.core.store.manifest_records import (
    FileRecord,
    FileSummary,
    StoredChunk,
    entries_json,
)
from explorer.core.store.phrase_sums import PhraseScores, best_of_sum, or_phrases
from explorer.core.store.sql_script import run_script

if TYPE_CHECKING:
    from sqlite3 import _Parameters

_T = TypeVar("_T")

__all__ = [
    "FileRecord",
    "KeywordIndex",
    "KeywordIndexDamaged",
    "StoredChunk",
]

SCHEMA_VERSION = "5"
"""2: ``chunks_fts`` gained the description and tags columns; 3: ``files_fts``; 4: the keyword
tables hold :func:`keyword_text` (words of Chinese, Japanese and Korean as bigrams); 5: Thai,
Lao, Khmer and Myanmar as bigrams too (an index of schema 4 holding none of their text is
marked 5 as it stands: its tables would come out the same)."""
KEYWORD_TEXT_SQL = "keyword_text"
"""The SQL function every connection has for :func:`keyword_text`."""
_INDEX_TERMS_VOCAB = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.index_terms_vocab"
    " USING fts5vocab(main, chunks_fts, row)"
)
"""The keyword table's terms with their counts, on the connection that asks (a view)."""
UPGRADE_NOTE = (
    "upgraded: the keyword index was rebuilt from its passages so that words of text written"
    " without spaces (Chinese, Japanese, Korean, Thai, Lao, Khmer, Myanmar) are found (no file"
    " read again, vectors kept)"
)
"""What a writer that rebuilt an older index's keyword tables tells the user, in one line."""
SEARCH_DEPTH = 800
"""Rows a whole-index keyword search ranks at least (:meth:`KeywordIndex.search`): four times
a search leg's default depth, so its first widening reads the rows already ranked."""
DERIVED_KEPT = 32
"""Values :meth:`KeywordIndex.derived` keeps (least recently used dropped first)."""
FILE_TERMS_KEPT = 16
"""Files whose terms :meth:`KeywordIndex.distinctive_terms` keeps (the last ones asked)."""
_TERM_DOCUMENTS = "more like this: rows per term"
"""The key :meth:`KeywordIndex.distinctive_terms` keeps its terms' document counts under."""

log = logging.getLogger(__name__)

_NOT_KEPT = object()
"""What :meth:`KeywordIndex._kept` answers when nothing valid is kept (a kept value may be None)."""


def _phrase_key(phrase: str) -> tuple[str, str]:
    """The :meth:`KeywordIndex.derived` key of one phrase's scores (:meth:`KeywordIndex._ranked`
    keeps them, :meth:`KeywordIndex.kept_phrase_scores` reads them)."""
    return ("phrase scores", phrase)


WAL_SWITCH_SECONDS = 10.0
REST_WAIT_MS = 200
"""How long a writer that closes waits to switch the database out of WAL mode (see
:meth:`KeywordIndex._rest`) before leaving it in WAL mode."""

_LATER_CHUNK_COLUMNS = (("page", "INTEGER"), ("entries", "TEXT NOT NULL DEFAULT ''"))
"""Columns of ``chunks`` an index made before them is given when a writer opens it."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL DEFAULT '',
    metadata TEXT NOT NULL DEFAULT '{}',
    chunk_count INTEGER NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks(
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    path TEXT NOT NULL,
    ord INTEGER NOT NULL,
    heading TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    start_char INTEGER NOT NULL,
    end_char INTEGER NOT NULL,
    text TEXT NOT NULL,
    embedded INTEGER NOT NULL DEFAULT 0,
    page INTEGER,
    entries TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS chunks_by_path ON chunks(path);
DROP INDEX IF EXISTS chunks_to_embed;
CREATE INDEX IF NOT EXISTS chunks_unembedded ON chunks(path, ord) WHERE embedded = 0;
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    title, heading, body, description, tags, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS files_fts USING fts5(
    title, heading, body, description, tags, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""
_FTS_COLUMNS = ("title", "heading", "body", "description", "tags")
_FTS_REBUILD = """
DROP TABLE IF EXISTS chunks_fts;
CREATE VIRTUAL TABLE chunks_fts USING fts5(
    title, heading, body, description, tags, tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO chunks_fts(rowid, title, heading, body, description, tags)
    SELECT c.rowid, keyword_text(f.title || COALESCE((SELECT char(10) || group_concat(value,
            char(10)) FROM json_each(f.metadata, '$.aliases') WHERE instr(value, '/') = 0), '')),
        keyword_text(c.heading), keyword_text(c.text),
        CASE c.ord WHEN 0 THEN keyword_text(COALESCE(json_extract(f.metadata, '$.description'),
            '')) ELSE '' END,
        CASE c.ord WHEN 0 THEN keyword_text(COALESCE((SELECT group_concat(value, ', ')
            FROM json_each(f.metadata, '$.tags')), '')) ELSE '' END
    FROM chunks c JOIN files f ON f.path = c.path;
DROP TABLE IF EXISTS files_fts;
CREATE VIRTUAL TABLE files_fts USING fts5(
    title, heading, body, description, tags, tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO files_fts(rowid, title, heading, body, description, tags)
    SELECT MIN(c.rowid), keyword_text(f.title || COALESCE((SELECT char(10) || group_concat(value,
            char(10)) FROM json_each(f.metadata, '$.aliases') WHERE instr(value, '/') = 0), '')),
        keyword_text(group_concat(c.heading, char(10))), keyword_text(group_concat(c.text,
            char(10))),
        keyword_text(COALESCE(json_extract(f.metadata, '$.description'), '')),
        keyword_text(COALESCE((SELECT group_concat(value, ', ')
            FROM json_each(f.metadata, '$.tags')), ''))
    FROM (SELECT * FROM chunks ORDER BY path, ord) c JOIN files f ON f.path = c.path
    GROUP BY c.path;
"""
"""Rebuild the keyword tables from the chunks and the manifest (an index made before the
description and tags columns, before ``files_fts``, or before CJK bigrams): no file is read
again and no vector changes. The title column holds the title and the page's other names
(front-matter aliases that are not URLs; see :func:`~explorer.core.store.file_facts.search_title`).

A file's description and tags go with its first chunk only: FTS5's BM25 normalises by the length
of the whole row, so repeating them in every chunk would rank every passage of a described file
below an equal passage of a file without a description."""

BM25_WEIGHTS = (2.0, 2.0, 1.0, 1.5, 2.0)
"""FTS5 column weights for (title, heading, body, description, tags). An index made before the
description and tags columns ignores the last two until it is next opened for writing."""
_BM25_SCORE = f"-bm25(chunks_fts, {', '.join(map(str, BM25_WEIGHTS))}) AS score"
"""A chunk's keyword score, higher is better (FTS5's bm25 is lower-is-better)."""
_FILE_BM25_SCORE = f"-bm25(files_fts, {', '.join(map(str, BM25_WEIGHTS))})"
"""A whole file's keyword score, higher is better."""
_TOP_ROWS = (
    f"(SELECT rowid, {_BM25_SCORE} FROM chunks_fts WHERE chunks_fts MATCH ?"
    " ORDER BY score DESC LIMIT ?) AS top JOIN chunks c ON c.rowid = top.rowid"
)
"""The best rows of one expression (its MATCH, then the limit), joined to their chunks."""


DAMAGE_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
"""SQLite's primary result codes for a damaged file ("malformed", "not a database")."""
UNREADABLE_IN_PLACE = frozenset({sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN})
"""Codes a read-only connection meets in a read-only directory: the WAL files cannot be made."""


_THREAD_VIEWS = threading.local()
"""The views (:meth:`KeywordIndex.one_view`) each thread reads in, by index."""


@dataclass(frozen=True)
class _View:
    """One :meth:`KeywordIndex.one_view`: its connection, and the index's versions when it
    began (its commit is that one, or a later one if a write came between)."""

    db: sqlite3.Connection
    manifest_version: tuple[int, int]
    keyword_version: tuple[int, int]


def _open_views() -> dict[KeywordIndex, _View]:
    """This thread's views: the connection each index's reads use on it."""
    views: dict[KeywordIndex, _View] | None = getattr(_THREAD_VIEWS, "by_index", None)
    if views is None:
        views = _THREAD_VIEWS.by_index = {}
    return views


class LentViews:
    """The views open on the thread that makes this (:meth:`KeywordIndex.one_view`), for
    threads that work for it while it waits for them: a search of several folders ranks each
    folder on a thread of a pool, then reads the passages ranked on its own, all at one commit
    of each index. One connection serves one thread at a time: each worker reads the index of
    its own folder, and the lender reads none while they run."""

    def __init__(self) -> None:
        self._views = dict(_open_views())

    @contextmanager
    def used(self) -> Iterator[None]:
        """The reads of the block, on this thread, in the lent views."""
        views = _open_views()
        kept = dict(views)
        views.update(self._views)
        try:
            yield
        finally:
            views.clear()
            views.update(kept)


class KeywordIndexDamaged(ExplorerError):
    """The database file is damaged; the message names it and the command that repairs it."""

    def __init__(self, path: Path, reason: str, repair_command: str) -> None:
        self.path = path
        self.reason = damage_words(reason)
        super().__init__(
            f"the keyword index {path} is damaged ({self.reason}); "
            f"run `{repair_command}` to repair it"
        )


def _chunks_at(db: sqlite3.Connection, rowids: list[int]) -> dict[int, tuple[str, str]]:
    """(chunk id, path) of each of ``rowids`` that still holds a chunk."""
    rows = db.execute(
        "SELECT rowid, id, path FROM chunks WHERE rowid IN (SELECT value FROM json_each(?))",
        (json.dumps(rowids),),
    )
    return {row[0]: (row[1], row[2]) for row in rows}


def _keyword_text_or_null(
    text: str | bytes | int | float | None,
) -> str | bytes | int | float | None:
    """:func:`keyword_text` as an SQL function (NULL and numbers as they are)."""
    return keyword_text(text) if isinstance(text, str) else text


def _damage_reason(error: sqlite3.DatabaseError) -> str | None:
    """SQLite's words when ``error`` says the file is damaged, else None."""
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    return str(error) if code in DAMAGE_CODES else None


class _CheckedCursor(sqlite3.Cursor):
    """A cursor that reports a damaged file as :class:`KeywordIndexDamaged`, whichever call
    (execute or a fetch) meets it."""

    connection: _CheckedConnection

    def _checked(self, call: Callable[..., _T], *args: object) -> _T:
        try:
            return call(*args)
        except sqlite3.DatabaseError as error:
            self.connection.raise_if_damaged(error)
            raise

    def execute(self, sql: str, parameters: _Parameters = (), /) -> Self:
        return self._checked(super().execute, sql, parameters)

    def executemany(self, sql: str, seq_of_parameters: Iterable[_Parameters], /) -> Self:
        return self._checked(super().executemany, sql, seq_of_parameters)

    def fetchone(self) -> Any:  # a row whose column types SQLite decides
        return self._checked(super().fetchone)

    def fetchall(self) -> list[Any]:
        return self._checked(super().fetchall)

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        return self._checked(super().fetchmany, size)


class _CheckedConnection(sqlite3.Connection):
    """A connection whose every statement runs on a :class:`_CheckedCursor`."""

    damage: tuple[Path, str] = (Path(), "explorer index")
    """The database's path and the command that repairs it, for the error message."""

    def checked_cursor(self) -> _CheckedCursor:
        return super().cursor(_CheckedCursor)

    def execute(self, sql: str, parameters: _Parameters = (), /) -> _CheckedCursor:
        return self.checked_cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[_Parameters], /) -> _CheckedCursor:
        return self.checked_cursor().executemany(sql, parameters)

    def executescript(self, sql_script: str, /) -> sqlite3.Cursor:
        try:
            return super().executescript(sql_script)
        except sqlite3.DatabaseError as error:
            self.raise_if_damaged(error)
            raise

    def raise_if_damaged(self, error: sqlite3.DatabaseError) -> None:
        reason = _damage_reason(error)
        if reason is not None:
            path, command = self.damage
            raise KeywordIndexDamaged(path, reason, command) from error


def _telling_term(term: str) -> bool:
    """Whether an index term may tell a file apart: a word of three characters or more with a
    letter in it, or a CJK bigram (a CJK character alone is a piece of many words)."""
    if len(term) == 2 and is_unspaced(term):
        return True
    return len(term) > 2 and any(char.isalpha() for char in term)


class KeywordIndex:
    """The SQLite database of one index directory; safe to share between threads."""

    def __init__(
        self,
        path: Path,
        read_only: bool = False,
        repair_command: str = "explorer index",
        check_first: bool = False,
    ) -> None:
        """Open (or create) the database at ``path``.

        ``read_only`` opens an existing database without ever writing it; ``repair_command``
        is what a :class:`KeywordIndexDamaged` message tells the user to run. A writer that
        will ``check_first`` runs :meth:`check` before it writes anything (switching to WAL
        mode writes the file's header), so a damaged database is kept as it was.
        """
        self.path = path
        self.read_only = read_only
        self._lock = threading.RLock()
        self._readers: list[sqlite3.Connection] = []
        """Idle connections of a writer's reads (see :meth:`_reading`) and of views (see
        :meth:`one_view`)."""
        self._readers_lock = threading.Lock()
        self._closed = False
        self._repair_command = repair_command
        self._derived: OrderedDict[Hashable, tuple[tuple[int, int], Any]] = OrderedDict()
        self._file_terms_kept: OrderedDict[Hashable, list[tuple[str, int]]] = OrderedDict()
        self._scratch_changes = 0
        """Rows this connection wrote to its temporary tables (a file's terms counted for
        "more like this"): not a change of the database, so not of :meth:`manifest_version`."""
        self.found_empty = False
        """The database file was there but empty (zero bytes) when this writer opened it:
        whatever it held is lost, and it now holds a fresh index."""
        self.upgraded = False
        """This writer rebuilt the keyword tables of an index made by an older explorer (from
        the chunks: no file read again, no vector changed)."""
        if read_only:
            self._db = self._connect_read_only()
            try:
                self._require_index_tables()
            except BaseException:
                self._db.close()
                raise
            self.facts = FileFacts(self._db, self._lock)
            self.ledger = EmbeddingLedger(self._db, self._lock)
            self.rankings = KeptRankings(self._db, self._lock)
            return
        make_private_dirs(path.parent)
        existed = not create_private_file(path)  # SQLite's -wal and -shm take its mode
        self._db = self._connect(str(path), uri=False)
        try:
            if existed and not self._has_index_tables():
                # An empty file is a database with no tables: fill it. Anything else is not
                # an index, and is not written to. Only a file cut to zero bytes lost
                # something (a database with no table yet is one another writer is making).
                zero_bytes = path.stat().st_size == 0
                self._require_index_tables(empty_is_damage=False)
                self.found_empty = zero_bytes
            if check_first:
                self.check()
            with self._lock:
                self._use_wal()
                self._db.execute("PRAGMA synchronous=NORMAL")
                self.facts = FileFacts(self._db, self._lock)
                """Front-matter fields and references, replaced with each file's chunks."""
                self.ledger = EmbeddingLedger(self._db, self._lock)
                """Which chunks have vectors; which pending files are finished."""
                self.rankings = KeptRankings(self._db, self._lock)
                """The rankings of the most frequent words and prefixes, kept."""
                self._set_up_tables()
        except BaseException:
            self._db.close()
            raise

    def _connect(self, target: str, uri: bool) -> sqlite3.Connection:
        db = sqlite3.connect(
            target, check_same_thread=False, timeout=30.0, uri=uri, factory=_CheckedConnection
        )
        db.damage = (self.path, self._repair_command)
        db.create_function(KEYWORD_TEXT_SQL, 1, _keyword_text_or_null, deterministic=True)
        return db

    def _location(self) -> str:
        """The database as an SQLite URI, without its query."""
        return "file:" + quote(os.path.abspath(self.path))

    def _connect_read_only(self) -> sqlite3.Connection:
        """Open without writing. A database in WAL mode needs its ``-shm`` and ``-wal`` files;
        in a read-only directory that lacks them it is read as immutable (no writer can be
        at work there: a writer must create those files)."""
        for query in ("?mode=ro", "?mode=ro&immutable=1"):
            db = self._connect(self._location() + query, uri=True)
            try:
                db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.OperationalError as error:
                db.close()
                if getattr(error, "sqlite_errorcode", 0) & 0xFF not in UNREADABLE_IN_PLACE:
                    raise
                continue
            except BaseException:
                db.close()
                raise
            return db
        raise sqlite3.OperationalError(f"cannot read {self.path}: the directory is read-only")

    def _has_index_tables(self) -> bool:
        return "meta" in self._table_names()

    def _require_index_tables(self, empty_is_damage: bool = True) -> None:
        """Raise :class:`KeywordIndexDamaged` unless the database holds an index: a file cut
        to zero bytes opens as an empty database, which is no index (``empty_is_damage``)."""
        # One look at the tables: another writer may be creating them at this moment, one
        # statement at a time, ``meta`` first. Looked at twice (the index's table, then any
        # table), a database filled between the two looks read as "no index tables".
        tables = self._table_names()
        if "meta" in tables:
            return
        try:
            empty = self.path.stat().st_size == 0
        except OSError:
            empty = False
        # A database with no table at all holds nothing either: another writer may have
        # created the file a moment ago and not yet its tables (its journal mode is set
        # first), so it is filled like an empty file, never reported as damage.
        empty = empty or not tables
        if empty and not empty_is_damage:
            return
        reason = "the file is empty" if empty else "it holds no index tables"
        raise KeywordIndexDamaged(self.path, reason, self._repair_command)

    def _table_names(self) -> set[str]:
        with self._lock:
            rows = self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            return {str(row[0]) for row in rows.fetchall()}

    def check(self) -> None:
        """Raise :class:`KeywordIndexDamaged` unless SQLite's ``quick_check`` finds the file
        sound (it reads every page: about 0.1 s for a 70 MB database)."""
        with self._lock:
            rows = self._db.execute("PRAGMA quick_check(1)").fetchall()
        if rows != [("ok",)]:
            reason = str(rows[0][0]) if rows else "quick_check gave no answer"
            raise KeywordIndexDamaged(self.path, reason, self._repair_command)

    def _use_wal(self) -> None:
        """Switch to WAL (once per database). Two processes creating the database at the same
        moment may both try; SQLite answers "locked" at once rather than waiting, so retry."""
        deadline = time.monotonic() + WAL_SWITCH_SECONDS
        while True:
            try:
                mode = self._db.execute("PRAGMA journal_mode").fetchone()[0]
                if str(mode).lower() != "wal":
                    self._db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def _set_up_tables(self) -> None:
        """Create the tables, or bring an older index's up to this schema, in one write
        transaction: two writers opening one index at the same moment take turns, and the
        second finds the tables whole. (Were each statement a transaction of its own, one
        process could change the schema while the other reads it, and SQLite then fails to
        open the keyword table: "vtable constructor failed".)"""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            run_script(self._db, _SCHEMA)
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
            self._upgrade_keyword_table()
            self._add_chunk_columns()
            self.facts.create()
            self.rankings.create()
            self._db.commit()
        except BaseException:
            self._db.rollback()
            raise

    def _upgrade_keyword_table(self) -> None:
        """Give an older index the keyword tables of this schema: the description and tags
        columns, the whole-file table, CJK bigrams (a few seconds for 18k chunks; once, by
        whichever process gets there first). In :meth:`_set_up_tables`'s transaction."""
        if not self._keyword_table_is_old():
            return
        run_script(self._db, _FTS_REBUILD)
        self._db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        self.upgraded = True

    def _add_chunk_columns(self) -> None:
        """Give an index made before them the chunks' later columns: ``page`` (NULL for every
        chunk it holds: none came from a PDF) and ``entries`` (empty until the files of a
        reference format are read again). Adding a column rewrites nothing. In
        :meth:`_set_up_tables`'s transaction."""
        for column, declared in _LATER_CHUNK_COLUMNS:
            if column not in self._chunk_columns():
                self._db.execute(f"ALTER TABLE chunks ADD COLUMN {column} {declared}")

    def _chunk_columns(self) -> frozenset[str]:
        return frozenset(str(row[1]) for row in self._db.execute("PRAGMA table_info(chunks)"))

    def _keyword_table_is_old(self) -> bool:
        columns = tuple(row[1] for row in self._db.execute("PRAGMA table_info(chunks_fts)"))
        if columns != _FTS_COLUMNS:
            return True
        schema = self.get_meta("schema")
        if schema == "4" and not self._holds_southeast_asian_text():
            # Schema 5 reads only Thai, Lao, Khmer and Myanmar otherwise: without them, the
            # tables of 4 are those of 5 (a scan in SQLite, not a rebuild through Python).
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
            return False
        return schema != SCHEMA_VERSION

    def _holds_southeast_asian_text(self) -> bool:
        """Whether the keyword tables hold a word of Thai, Lao, Khmer or Myanmar: a term that
        starts with one of their letters (a look at the tables' sorted terms, not a scan of
        the text: 10 s on the kernel's docs). A run glued to a Latin word (``Pythonภาษา``) is
        a term of its own that this misses; it is found once its file is read again."""
        self._db.execute(_INDEX_TERMS_VOCAB)
        return any(
            self._db.execute(
                "SELECT EXISTS(SELECT 1 FROM temp.index_terms_vocab WHERE term >= ? AND term < ?)",
                (chr(first), chr(last + 1)),
            ).fetchone()[0]
            for first, last in SOUTHEAST_ASIAN_SPANS
        )

    @contextmanager
    def _reading(self, snapshot: bool = False) -> Iterator[sqlite3.Connection]:
        """A connection for one long read: a writer's own read-only connection from a pool,
        so that ranking a search (up to 100 ms on a kernel-sized tree), listing the manifest
        and writing never wait for one another (the database is in WAL mode: a reader sees
        the last commit); a reader's one connection, under its lock. With ``snapshot``, the
        statements run in one read transaction: they all see the same commit. Inside
        :meth:`one_view`, on its thread, the view's connection."""
        view = _open_views().get(self)
        if view is not None:
            yield view.db
            return
        if self.read_only:
            with self._lock, self._snapshot(self._db, snapshot):
                yield self._db
            return
        db = self._take_reader()
        try:
            with self._snapshot(db, snapshot):
                yield db
        finally:
            self._give_back(db)

    def _take_reader(self) -> sqlite3.Connection:
        """An idle read-only connection of the pool, or a new one (for :meth:`_reading`, a
        writer's; for :meth:`one_view`, a writer's or a reader's)."""
        with self._readers_lock:
            if self._readers:
                return self._readers.pop()
        if self.read_only:
            return self._connect_read_only()
        return self._connect(self._location() + "?mode=ro", uri=True)

    def _give_back(self, db: sqlite3.Connection) -> None:
        """Return a connection of :meth:`_take_reader` to the pool (closed if the index is)."""
        with self._readers_lock:
            if self._closed:
                db.close()
            else:
                self._readers.append(db)

    @contextmanager
    def one_view(self) -> Iterator[None]:
        """Every read of the block on this thread (those of :meth:`_reading`: a search's
        ranking, its passages, the files' titles) sees one commit of the database, so a file
        replaced meanwhile is read as it was or as it is, never half of each (its chunks ranked,
        then gone when their text is read). Nested blocks share the outer one's view; threads
        that work for this one while it waits read in it too (:class:`LentViews`)."""
        views = _open_views()
        if self in views:
            yield
            return
        # A connection of the thread's own: a reader's one connection is shared under its lock
        # by every thread, and the view must not hold that lock while its search waits for
        # another thread (the query's embedding, a pool searching several folders).
        db = self._take_reader()
        try:
            with self._snapshot(db, True):
                began = _View(db, self.manifest_version(), self.keyword_version())
                db.execute("SELECT 1 FROM meta LIMIT 1").fetchone()  # its commit: from now on
                views[self] = began
                try:
                    yield
                finally:
                    views.pop(self, None)
        finally:
            self._give_back(db)

    @staticmethod
    @contextmanager
    def _snapshot(db: sqlite3.Connection, wanted: bool) -> Iterator[None]:
        """One read transaction on ``db`` around the block, if ``wanted`` (and none is open)."""
        began = wanted and not db.in_transaction
        if began:
            db.execute("BEGIN")
        try:
            yield
        finally:
            if began:
                db.rollback()  # nothing was written: the read transaction ends

    def close(self, rest: bool = True) -> None:
        """Close; a writer first leaves WAL mode when no other connection is open (see
        :meth:`_rest`), unless not to ``rest``: a damaged database is kept as it is."""
        with self._readers_lock:
            self._closed = True
            for reader in self._readers:
                reader.close()
            self._readers.clear()
        with self._lock:
            if rest and not self.read_only:
                self._rest()
            self._db.close()

    def _rest(self) -> None:
        """Switch the database back to a rollback journal, if no other connection has it open.

        A reader of a database in WAL mode writes: it creates the ``-wal`` and ``-shm`` files
        when they are missing and marks what it reads in ``-shm``. In rollback mode a reader
        only takes a shared lock, so `search`, `status` and the resident reader leave the index
        directory as they found it. The next writer switches to WAL again (:meth:`_use_wal`).
        While another connection is open (a reader at work, a live index) the switch is
        refused at once, and the database stays in WAL mode: that reader touches the files
        anyway.
        """
        try:
            self._db.execute(f"PRAGMA busy_timeout={REST_WAIT_MS}")
            self._db.execute("PRAGMA journal_mode=DELETE").fetchone()
        except (sqlite3.Error, KeywordIndexDamaged):
            log.debug("the keyword index stays in WAL mode", exc_info=True)

    # -- meta ---------------------------------------------------------------------------------
    # -- values derived from the manifest --------------------------------------------------------
    def manifest_version(self) -> tuple[int, int]:
        """A value that changes whenever the database does: another connection's commit moves
        ``PRAGMA data_version``, this connection's own writes move its ``total_changes`` (those
        to its temporary tables aside)."""
        with self._lock:
            other = int(self._db.execute("PRAGMA data_version").fetchone()[0])
            return (other, self._db.total_changes - self._scratch_changes)

    def keyword_version(self) -> tuple[int, int]:
        """Like :meth:`manifest_version`, blind to the embedding ledger's own writes on this
        connection (which chunks have vectors) and to the rankings it keeps: it changes when
        the text the keyword tables match can have changed, not with every batch of vectors."""
        with self._lock:  # the ledger's count and the connection's total read together
            other, total = self.manifest_version()
            return (other, total - self.ledger.changes - self.rankings.changes)

    def derived(self, key: Hashable, compute: Callable[[], _T], keyword_tables: bool = False) -> _T:
        """``compute()``, kept under ``key`` until the database changes: for what every
        keystroke would otherwise recompute from the manifest (the files a filter allows).
        A value computed from the keyword tables alone (``keyword_tables``) is kept while
        only vectors are recorded (:meth:`keyword_version`)."""
        version = self.keyword_version() if keyword_tables else self.manifest_version()
        kept = self._kept(key, version)
        if kept is not _NOT_KEPT:
            return cast(_T, kept)
        value = compute()
        view = _open_views().get(self)
        if view is not None:
            began = view.keyword_version if keyword_tables else view.manifest_version
            if began != version:
                return value  # read on an older commit than ``version``: not kept for it
        with self._lock:
            self._derived[key] = (version, value)
            while len(self._derived) > DERIVED_KEPT:
                self._derived.popitem(last=False)
        return value

    def _kept(self, key: Hashable, version: tuple[int, int]) -> object:
        """What :meth:`derived` keeps under ``key`` for ``version``, or :data:`_NOT_KEPT`."""
        with self._lock:
            kept = self._derived.get(key)
            if kept is None or kept[0] != version:
                return _NOT_KEPT
            self._derived.move_to_end(key)
            return kept[1]

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- manifest -----------------------------------------------------------------------------
    def files(self) -> dict[str, FileRecord]:
        """Every manifest row, by path."""
        with self._reading() as db:
            rows = db.execute(
                "SELECT path, size, mtime_ns, hash, state, reason, title, chunk_count, updated_at"
                " FROM files"
            ).fetchall()
        return {row[0]: FileRecord.from_row(row) for row in rows}

    def file(self, path: str) -> FileRecord | None:
        with self._lock:
            row = self._db.execute(
                "SELECT path, size, mtime_ns, hash, state, reason, title, chunk_count, updated_at"
                " FROM files WHERE path = ?",
                (path,),
            ).fetchone()
        return FileRecord.from_row(row) if row else None

    def files_by_path(self, paths: Sequence[str]) -> dict[str, FileRecord]:
        """The manifest rows of those ``paths`` that exist."""
        rows = self._rows_by_id(
            "SELECT path, size, mtime_ns, hash, state, reason, title, chunk_count, updated_at"
            " FROM files WHERE path IN ({})",
            paths,
        )
        return {row[0]: FileRecord.from_row(row) for row in rows}

    def paths(self) -> list[str]:
        """Every path in the manifest that has chunks, sorted."""
        with self._lock:
            rows = self._db.execute(
                "SELECT path FROM files WHERE chunk_count > 0 ORDER BY path"
            ).fetchall()
        return [row[0] for row in rows]

    def indexed_file_count(self) -> int:
        """How many files have chunks (what :meth:`paths` would list), without listing them."""
        with self._lock:
            return int(
                self._db.execute("SELECT COUNT(*) FROM files WHERE chunk_count > 0").fetchone()[0]
            )

    def titles(self, paths: Sequence[str]) -> dict[str, str]:
        if not paths:
            return {}
        marks = ",".join("?" * len(paths))
        with self._lock:
            rows = self._db.execute(
                f"SELECT path, title FROM files WHERE path IN ({marks})", list(paths)
            ).fetchall()
        return dict(rows)

    def file_summaries(self, paths: Sequence[str]) -> dict[str, FileSummary]:
        """Title, description and tags of those ``paths`` that the manifest holds."""
        rows = self._rows_by_id(
            "SELECT path, title, metadata FROM files WHERE path IN ({})", list(paths)
        )
        summaries = {}
        for path, title, metadata in rows:
            fields = json.loads(metadata)
            description = str(fields.get("description") or "")
            summaries[path] = FileSummary(title, description, metadata_tags(fields))
        return summaries

    def replace_file(
        self,
        path: str,
        size: int,
        mtime_ns: int,
        content_hash: str,
        chunks: Sequence[tuple[str, Chunk]],
        metadata: FileMetadata,
        title: str,
        references: Sequence[FileReference] = (),
    ) -> list[str]:
        """Swap a file's chunks, fields and references for new ones (state pending); returns
        the old chunk ids. A chunk kept under its id (a file read again whose passages came
        out the same) keeps its mark of being embedded: its vector stays, and the status does
        not count it as waiting for the model."""
        now = time.time()
        description = keyword_text(metadata.get("description", ""))
        tags = keyword_text(", ".join(metadata.get("tags", [])))
        # the title and the page's aliases
        searched_title = keyword_text(search_title(title, metadata))
        headings = [keyword_text(chunk.heading_path) for _id, chunk in chunks]
        texts = [keyword_text(chunk.text) for _id, chunk in chunks]
        with self._lock, self._db:
            embedded = {
                row[0]
                for row in self._db.execute(
                    "SELECT id FROM chunks WHERE path = ? AND embedded = 1", (path,)
                )
            }
            old_ids = self._delete_chunks_of(path)
            first_rowid: int | None = None
            for ordinal, (chunk_id, chunk) in enumerate(chunks):
                cursor = self._db.execute(
                    "INSERT INTO chunks(id, path, ord, heading, start_line, end_line, start_char,"
                    " end_char, text, page, entries, embedded)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        chunk_id,
                        path,
                        ordinal,
                        chunk.heading_path,
                        chunk.start_line,
                        chunk.end_line,
                        chunk.start_char,
                        chunk.end_char,
                        chunk.text,
                        chunk.page,
                        entries_json(chunk.entries),
                        int(chunk_id in embedded),
                    ),
                )
                self._db.execute(
                    "INSERT INTO chunks_fts(rowid, title, heading, body, description, tags)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        cursor.lastrowid,
                        searched_title,
                        headings[ordinal],
                        texts[ordinal],
                        "" if ordinal else description,
                        "" if ordinal else tags,
                    ),
                )
                first_rowid = first_rowid or cursor.lastrowid
            if chunks:  # OR REPLACE: a row left by a writer of an older schema cannot block it
                self._db.execute(
                    "INSERT OR REPLACE INTO files_fts(rowid, title, heading, body, description,"
                    " tags)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        first_rowid,
                        searched_title,
                        "\n".join(headings),
                        "\n".join(texts),
                        description,
                        tags,
                    ),
                )
            self._db.execute(
                "INSERT OR REPLACE INTO files(path, size, mtime_ns, hash, state, reason, title,"
                " metadata, chunk_count, updated_at) VALUES (?, ?, ?, ?, ?, '', ?, ?, ?, ?)",
                (
                    path,
                    size,
                    mtime_ns,
                    content_hash,
                    FileState.PENDING if chunks else FileState.FRESH,
                    title,
                    json.dumps(metadata),
                    len(chunks),
                    now,
                ),
            )
            self.facts.replace(path, metadata, references)
        return old_ids

    def replace_links(self, path: str, references: Sequence[FileReference]) -> None:
        """Swap just the references of ``path`` (its chunks stay)."""
        with self._lock, self._db:
            self.facts.write_links(path, references)

    def replace_link_facts(
        self, path: str, metadata: FileMetadata, references: Sequence[FileReference]
    ) -> None:
        """Swap the references of ``path`` and its metadata (new link names and inline tags)
        with its chunks kept: how an index made by an older explorer learns what it did not
        read. The keyword index's title (with the aliases) and tags follow."""
        with self._lock, self._db:
            row = self._db.execute("SELECT title FROM files WHERE path = ?", (path,)).fetchone()
            if row is None:
                return
            self._db.execute(
                "UPDATE files SET metadata = ? WHERE path = ?", (json.dumps(metadata), path)
            )
            self.facts.replace(path, metadata, references)
            searched_title = keyword_text(search_title(row[0], metadata))
            tags = keyword_text(", ".join(metadata.get("tags", [])))
            rowids = [
                rowid
                for (rowid,) in self._db.execute(
                    "SELECT rowid FROM chunks WHERE path = ? ORDER BY ord", (path,)
                ).fetchall()
            ]
            for ordinal, rowid in enumerate(rowids):
                self._db.execute(
                    "UPDATE chunks_fts SET title = ?, tags = ? WHERE rowid = ?",
                    (searched_title, "" if ordinal else tags, rowid),
                )
            if rowids:
                self._db.execute(
                    "UPDATE files_fts SET title = ?, tags = ? WHERE rowid = ?",
                    (searched_title, tags, rowids[0]),
                )

    def mark_skipped(
        self, path: str, size: int, mtime_ns: int, state: str, reason: str
    ) -> list[str]:
        """Record a file that is skipped or failed (no chunks); returns its old chunk ids."""
        with self._lock, self._db:
            old_ids = self._delete_chunks_of(path)
            self.facts.delete(path)
            self._db.execute(
                "INSERT OR REPLACE INTO files(path, size, mtime_ns, state, reason, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (path, size, mtime_ns, state, reason, time.time()),
            )
        return old_ids

    def remove_file(self, path: str) -> list[str]:
        """Forget a file; returns its old chunk ids."""
        with self._lock, self._db:
            old_ids = self._delete_chunks_of(path)
            self.facts.delete(path)
            self._db.execute("DELETE FROM files WHERE path = ?", (path,))
        return old_ids

    def touch(self, path: str, size: int, mtime_ns: int) -> None:
        """Note a new mtime for a file whose content did not change."""
        with self._lock, self._db:
            self._db.execute(
                "UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path)
            )

    def _delete_chunks_of(self, path: str) -> list[str]:
        rows = self._db.execute(
            "SELECT rowid, id FROM chunks WHERE path = ? ORDER BY rowid", (path,)
        ).fetchall()
        if rows:
            self._db.executemany("DELETE FROM chunks_fts WHERE rowid = ?", [(r[0],) for r in rows])
            self._db.execute("DELETE FROM files_fts WHERE rowid = ?", (rows[0][0],))
            self._db.execute("DELETE FROM chunks WHERE path = ?", (path,))
        return [row[1] for row in rows]

    def chunk_ids(self, path: str | None = None) -> list[str]:
        """Ids of every chunk, or of one file's chunks in order (on a connection of
        :meth:`_reading`: all 79k ids of the kernel tree took 240 ms)."""
        with self._reading() as db:
            if path is None:
                rows = db.execute("SELECT id FROM chunks").fetchall()
            else:
                rows = db.execute(
                    "SELECT id FROM chunks WHERE path = ? ORDER BY ord", (path,)
                ).fetchall()
        return [row[0] for row in rows]

    def chunk_ids_of(self, paths: Sequence[str]) -> list[str]:
        """Ids of every chunk of the files ``paths``."""
        return [
            row[0] for row in self._rows_by_id("SELECT id FROM chunks WHERE path IN ({})", paths)
        ]

    def chunk_places(self, chunk_ids: Sequence[str]) -> dict[str, tuple[str, int]]:
        """(path, start char) of each chunk id that exists; lighter than :meth:`chunks_by_id`.
        Kept while the keyword tables stay the same: each key of a query being typed asks
        for mostly the same best passages."""

        def read(missing: list[str]) -> dict[str, tuple[str, int]]:
            rows = self._rows_by_id(
                "SELECT id, path, start_char FROM chunks WHERE id IN ({})", missing
            )
            return {row[0]: (row[1], row[2]) for row in rows}

        kept: dict[str, tuple[str, int]] = self.derived("chunk places", dict, keyword_tables=True)
        places = kept_or_read(kept, chunk_ids, read)
        return {cid: places[cid] for cid in chunk_ids if cid in places}

    def _rows_by_id(self, sql: str, chunk_ids: Sequence[str]) -> list[tuple[Any, ...]]:
        """Run ``sql`` (one ``{}`` for the id placeholders) over the ids, 500 at a time (on a
        connection of :meth:`_reading`: a search reads its passages while the writer writes)."""
        rows: list[tuple[Any, ...]] = []
        with self._reading(snapshot=len(chunk_ids) > 500) as db:  # the batches see one commit
            for start in range(0, len(chunk_ids), 500):
                batch = list(chunk_ids[start : start + 500])
                marks = ",".join("?" * len(batch))
                rows.extend(db.execute(sql.format(marks), batch).fetchall())
        return rows

    def chunks_by_id(self, chunk_ids: Sequence[str]) -> dict[str, StoredChunk]:
        # An index opened read-only may predate the later columns (a writer adds them).
        with self._lock:
            columns = self.derived("chunk columns", self._chunk_columns)
        page = "c.page" if "page" in columns else "NULL"
        entries = "c.entries" if "entries" in columns else "''"
        rows = self._rows_by_id(
            "SELECT c.id, c.path, c.ord, c.heading, c.start_line, c.end_line, c.start_char,"
            f" c.end_char, c.text, f.title, {page}, {entries}"
            " FROM chunks c JOIN files f ON f.path = c.path WHERE c.id IN ({})",
            chunk_ids,
        )
        return {row[0]: StoredChunk.from_row(row) for row in rows}

    # -- keyword search -----------------------------------------------------------------------
    def search(
        self, match: str, limit: int, paths: Sequence[str] | None = None
    ) -> list[tuple[str, str, float]]:
        """(chunk id, path, BM25 score: higher is better) for an FTS5 MATCH expression.

        ``paths`` restricts the search to those files before ranking.
        """
        if paths is None:
            # FTS5 scores every match whatever the limit (12k rows for a three-letter prefix
            # on nginx, 30k on the kernel's docs), so the rows are ranked once to a depth that
            # covers a search's first widening, and kept until the keyword tables change (not
            # with each batch of vectors recorded): a search that widens, or the same words
            # asked again (the screen asks again as vectors come), slices them.
            depth = max(limit, SEARCH_DEPTH)
            ranked = self.derived(
                ("ranked", match, depth), lambda: self._ranked(match, depth), keyword_tables=True
            )
            return list(ranked[:limit])
        with self._reading() as db:  # the filter applies before ranking: the join comes first
            # The paths go in as one JSON array: no table written per query (a search
            # changes nothing, so what :meth:`derived` keeps stays valid).
            rows = db.execute(
                f"SELECT c.id, c.path, {_BM25_SCORE} FROM chunks_fts"
                " JOIN chunks c ON c.rowid = chunks_fts.rowid WHERE chunks_fts MATCH ?"
                " AND c.path IN (SELECT value FROM json_each(?)) ORDER BY score DESC LIMIT ?",
                (match, json.dumps(list(paths)), limit),
            ).fetchall()
        return [(row[0], row[1], float(row[2])) for row in rows]

    def _ranked(self, match: str, limit: int) -> tuple[tuple[str, str, float], ...]:
        """The ``limit`` best (chunk id, path, BM25) of the whole index for ``match``."""
        phrases = or_phrases(match)
        if phrases is not None and len(phrases) > 1:
            summed = self._ranked_by_phrase(phrases, limit)
            if summed is not None:
                return summed
        kept = self._kept_ranking(match, limit)
        if kept is not None:
            return kept
        with self._reading() as db:
            # Rank inside FTS5 first, then join only the top rows: joined before the sort,
            # every match's chunk row (text included) is read, 6 ms of a 19 ms query for a
            # short prefix that matches 12k of nginx's 18k chunks.
            rows = db.execute(
                f"SELECT c.id, c.path, top.score FROM {_TOP_ROWS} ORDER BY top.score DESC, c.rowid",
                (match, limit),
            ).fetchall()
        return tuple((row[0], row[1], float(row[2])) for row in rows)

    @staticmethod
    def _top_rows(db: sqlite3.Connection, match: str, limit: int) -> list[tuple[int, float]]:
        """:meth:`_ranked`'s rows as (rowid, BM25), for :attr:`rankings` to keep."""
        rows = db.execute(
            f"SELECT c.rowid, top.score FROM {_TOP_ROWS} ORDER BY top.score DESC, c.rowid",
            (match, limit),
        ).fetchall()
        return [(int(row[0]), float(row[1])) for row in rows]

    def _kept_ranking(self, match: str, limit: int) -> tuple[tuple[str, str, float], ...] | None:
        """:meth:`_ranked` read from :attr:`rankings`, when they keep ``match`` for the table
        as it is; None otherwise."""
        if not self.derived("kept rankings table", self._has_kept_rankings):
            return None  # an index a writer of this version has not opened yet
        with self._reading(snapshot=True) as db:  # the table and the rankings of one commit
            best = self.rankings.ranking(db, match, limit)
            return None if best is None else self._chunks_of_rows(db, best.pairs())

    def _chunks_of_rows(
        self, db: sqlite3.Connection, best: Sequence[tuple[int, float]]
    ) -> tuple[tuple[str, str, float], ...] | None:
        """(chunk id, path, score) of ranked (rowid, score) pairs, in their order; None when a
        row is gone (a write came after they were ranked). Each row's chunk is kept while the
        keyword tables stay the same: the keys of a query being typed rank mostly the same
        best rows, and reading 800 of them took 2.3 ms a key on the kernel's docs."""
        kept: dict[int, tuple[str, str]] = self.derived("chunks of rows", dict, keyword_tables=True)
        rowids = [rowid for rowid, _score in best]
        known = kept_or_read(kept, rowids, lambda missing: _chunks_at(db, missing))
        if len(known) != len(rowids):
            return None
        return tuple((*known[rowid], score) for rowid, score in best)

    def _has_kept_rankings(self) -> bool:
        """Whether the index has the kept rankings' table (a writer of this version made it)."""
        return KEPT_RANKINGS_TABLE in self._table_names()

    def keep_rankings(
        self, stop: threading.Event | None = None, min_rows: int | None = None
    ) -> int | None:
        """Rank the index's most frequent words and prefixes again and keep them, unless they
        are kept for the table as it is (see :mod:`~explorer.core.store.kept_rankings`): how
        many were ranked; None if ``stop`` was set or the table changed first. A reader keeps
        nothing (0): it never writes."""
        if self.read_only:
            return 0
        with self._reading() as db:
            return self.rankings.refresh(self._top_rows, db, SEARCH_DEPTH, stop, min_rows)

    def _ranked_by_phrase(
        self, phrases: Sequence[str], limit: int
    ) -> tuple[tuple[str, str, float], ...] | None:
        """:meth:`_ranked` for phrases OR-ed, from each phrase's scores (kept while the keyword
        tables stay the same: the words typed before the last one are not scored again, see
        :mod:`~explorer.core.store.phrase_sums`); None when the tables changed meanwhile."""
        version = self.keyword_version()
        *before, last = phrases
        scored = [self._kept_phrase(phrase) for phrase in before]
        best = self._best_with_kept_last(scored, last, limit)
        if best is None:
            best = best_of_sum([*scored, self._kept_phrase(last)], limit)
        with self._reading() as db:
            ranked = self._chunks_of_rows(db, best)
        if self.keyword_version() != version:
            return None  # a write came between two of the reads: rank the expression whole
        return ranked

    def _best_with_kept_last(
        self, scored: Sequence[PhraseScores], last: str, limit: int
    ) -> list[tuple[int, float]] | None:
        """:func:`best_of_sum` of the phrases, the ``last`` one read from its kept ranking
        (see :attr:`rankings`) instead of scored over every row it matches: the rows of the
        other phrases that ranking does not hold are scored alone. Any other row of the last
        phrase scores at most the ranking's floor, so the answer is the full sum's whenever
        the ``limit``-th best stands above that floor; None when it does not, or when nothing
        is kept for ``last`` (the caller sums every row then)."""
        if self.kept_phrase_scores(KeywordTable.CHUNKS, last) is not None or not scored:
            return None  # every row's score is at hand already
        if not self.derived("kept rankings table", self._has_kept_rankings):
            return None
        import numpy as np

        with self._reading(snapshot=True) as db:
            kept = self.rankings.ranking(db, last, SEARCH_DEPTH)
        if kept is None or limit > len(kept.rowids):
            return None
        others = np.unique(np.concatenate([phrase.rowids for phrase in scored]))
        outside = np.setdiff1d(others, kept.rowids, assume_unique=True)
        if 2 * len(outside) > kept.matched:
            return None  # scoring those costs about what scoring every row does
        alone = self.statistics.phrase_scores(KeywordTable.CHUNKS, last, outside.tolist())
        held = PhraseScores.of_rows([*kept.pairs(), *alone.items()])
        best = best_of_sum([*scored, held], limit)
        if len(best) < limit or best[-1][1] <= kept.floor:
            return None  # a row beyond the kept ones could tie or pass the last of these
        return best

    def keep_phrase_scores(self, match: str) -> None:
        """Score each phrase of ``match`` alone over every row it matches, and keep the scores
        (those kept already are not scored again): what :meth:`_ranked_by_phrase` sums once
        another phrase is OR-ed to them. Nothing for an expression that is not phrases OR-ed."""
        for phrase in or_phrases(match) or ():
            self._kept_phrase(phrase)

    def _kept_phrase(self, phrase: str) -> PhraseScores:
        """:meth:`_phrase_scores`, kept until the keyword tables change."""
        return self.derived(
            _phrase_key(phrase), partial(self._phrase_scores, phrase), keyword_tables=True
        )

    def kept_phrase_scores(self, table: KeywordTable, phrase: str) -> PhraseScores | None:
        """Every row's BM25 for ``phrase`` alone in ``table``, when a ranking of several phrases
        has kept them for the keyword tables as they are now (nothing is computed here)."""
        if table is not KeywordTable.CHUNKS:
            return None
        kept = self._kept(_phrase_key(phrase), self.keyword_version())
        return None if kept is _NOT_KEPT else cast(PhraseScores, kept)

    def _phrase_scores(self, phrase: str) -> PhraseScores:
        """Every row ``phrase`` matches, with its BM25 for that phrase alone."""
        with self._reading() as db:
            rows = db.execute(
                f"SELECT rowid, {_BM25_SCORE} FROM chunks_fts WHERE chunks_fts MATCH ?", (phrase,)
            ).fetchall()
        return PhraseScores.of_rows(rows)

    def file_search(self, match: str, paths: Sequence[str]) -> dict[str, float]:
        """The BM25 score (higher is better) of each of ``paths`` that matches ``match`` as a
        whole file: all its passages, headings and title in one row, so a page about the query
        outscores one whose single passage happens to hold the same words. BM25's statistics
        are the whole index's; only the scores of ``paths`` are read. Empty for an index made
        before the file table (until it is next opened for writing)."""
        if not paths:
            return {}
        if not self.derived("file table", self._has_file_table):
            return {}
        with self._reading() as db:
            # The paths' rows are found once and FTS5's matches kept by rowid (``+rowid``: not a
            # constraint FTS5 sees, which would run the match once per row). Each match joined
            # to its passages instead costs a lookup per file the words are in: "device tre*"
            # for 28 of the kernel's files took 3.4 ms joined, 1.5 ms with the rows first.
            rows = db.execute(
                f"SELECT c.path, found.score FROM (SELECT rowid, {_FILE_BM25_SCORE} AS score"
                " FROM files_fts WHERE files_fts MATCH ? AND +rowid IN (SELECT MIN(rowid)"
                " FROM chunks WHERE path IN (SELECT value FROM json_each(?)) GROUP BY path))"
                " AS found JOIN chunks c ON c.rowid = found.rowid",
                (match, json.dumps(list(paths))),
            ).fetchall()
        return {row[0]: float(row[1]) for row in rows}

    def _has_file_table(self) -> bool:
        # :meth:`_table_names` reads under the lock: :meth:`derived` computes outside it, and
        # this is the shared connection. A fetch here while another thread's statement on it
        # waits for the GIL in keyword_text() (distinctive_terms) held the GIL while waiting for
        # SQLite's mutex: the two threads, and with them the process, waited for each other for
        # good.
        return "files_fts" in self._table_names()

    @property
    def statistics(self) -> KeywordStatistics:
        """BM25's statistics of this index, to score hits of several indexes on one scale."""
        return KeywordStatistics(self._reading, self.derived, BM25_WEIGHTS, self.kept_phrase_scores)

    # -- more like this -----------------------------------------------------------------------
    def distinctive_terms(self, path: str, limit: int, candidates: int = 64) -> list[str]:
        """The ``limit`` index terms that best tell ``path`` apart from the rest, best first.

        The file's chunks go into a scratch FTS5 table declared like ``chunks_fts`` (in the
        connection's temporary schema, so the database file is untouched) to get its terms
        exactly as the index stems them, with their counts. The ``candidates`` most frequent
        ones are weighed by tf-idf, ``(1 + ln tf) x ln(N / df)``, with each term's document
        frequency from an ``fts5vocab`` view of the index. Asking for every term's frequency
        would walk the longest posting lists in the index; the frequent few hold the words a
        file is about.
        """
        with self._lock, self._db:  # commits (or rolls back) the scratch table's transaction
            db = self._db
            counted = self._file_terms(path)[:candidates]
            total = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            # The frequent terms of one file are frequent in the next: kept while the keyword
            # tables stay as they are (each costs a walk of its posting list).
            kept: dict[str, int] = self.derived(_TERM_DOCUMENTS, dict, keyword_tables=True)
            documents = kept_or_read(kept, [term for term, _count in counted], self._term_documents)
            weighed = []
            for term, count in counted:
                frequency = documents.get(term, 0)
                if 0 < frequency < total:
                    weight = (1.0 + math.log(count)) * math.log(total / frequency)
                    weighed.append((weight, term))
        weighed.sort(key=lambda pair: (-pair[0], pair[1]))
        return [term for _weight, term in weighed[:limit]]

    def _term_documents(self, terms: list[str]) -> dict[str, int]:
        """The rows of the index holding each of ``terms`` (those it holds). Under the lock."""
        found = {}
        for term in terms:
            row = self._db.execute(
                "SELECT doc FROM temp.index_terms_vocab WHERE term = ?", (term,)
            ).fetchone()
            if row is not None:
                found[term] = int(row[0])
        return found

    def _file_terms(self, path: str) -> list[tuple[str, int]]:
        """``path``'s telling terms and their counts, most frequent first, as the index stems
        them (see :meth:`distinctive_terms`). Kept for the file's version in the index: the
        stemming costs tens of milliseconds on a long file (70 ms for a 345-page PDF), and
        going back to a file asks again. Called under the lock."""
        version = self._db.execute(  # updated_at: every write of the file's row sets it
            "SELECT size, mtime_ns, hash, chunk_count, updated_at FROM files WHERE path = ?",
            (path,),
        ).fetchone()
        key = (path, tuple(version) if version is not None else None)
        kept = self._file_terms_kept.get(key)
        if kept is not None:
            self._file_terms_kept.move_to_end(key)
            return kept
        db = self._db
        before = db.total_changes
        self._more_like_this_tables()  # creating them writes their shadow tables' rows
        db.execute("DELETE FROM temp.file_terms")
        db.execute(
            "INSERT INTO temp.file_terms(title, heading, body) SELECT keyword_text(f.title),"
            " keyword_text(c.heading), keyword_text(c.text) FROM chunks c"
            " JOIN files f ON f.path = c.path WHERE c.path = ?",
            (path,),
        )
        counted = sorted(
            (
                (term, count)
                for term, count in db.execute("SELECT term, cnt FROM temp.file_terms_vocab")
                if _telling_term(term)
            ),
            key=lambda pair: (-pair[1], -len(pair[0]), pair[0]),
        )
        db.execute("DELETE FROM temp.file_terms")
        self._scratch_changes += db.total_changes - before
        self._file_terms_kept[key] = counted
        while len(self._file_terms_kept) > FILE_TERMS_KEPT:
            self._file_terms_kept.popitem(last=False)
        return counted

    def _more_like_this_tables(self) -> None:
        """Create (once per connection) the temporary tables of :meth:`distinctive_terms`."""
        if getattr(self, "_more_like_this_ready", False):
            return
        declared = self._db.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'chunks_fts'"
        ).fetchone()[0]
        scratch = re.sub(
            r"^CREATE VIRTUAL TABLE\s+chunks_fts\b",
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.file_terms",
            declared,
            flags=re.I,
        )
        self._db.execute(scratch)
        self._db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.file_terms_vocab"
            " USING fts5vocab(temp, file_terms, row)"
        )
        self._db.execute(_INDEX_TERMS_VOCAB)
        self._more_like_this_ready = True

    def more_like_this(
        self, terms: Sequence[str], limit: int, exclude_path: str
    ) -> list[tuple[str, str, float]]:
        """(chunk id, path, BM25 score) of the chunks that best match any of ``terms`` (index
        terms, as :meth:`distinctive_terms` gives them), best first, leaving out one file."""
        if not terms:
            return []
        match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
        with self._lock:
            # the file's own chunks match best: rank past them rather than join before the sort
            own = self._db.execute(
                "SELECT COUNT(*) FROM chunks WHERE path = ?", (exclude_path,)
            ).fetchone()[0]
            rows = self._db.execute(
                f"SELECT c.id, c.path, top.score FROM (SELECT rowid, {_BM25_SCORE}"
                " FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY score DESC LIMIT ?) AS top"
                " JOIN chunks c ON c.rowid = top.rowid WHERE c.path != ?"
                " ORDER BY top.score DESC, c.rowid",
                (match, limit + own, exclude_path),
            ).fetchall()
        return [(row[0], row[1], float(row[2])) for row in rows[:limit]]

    def text_lengths(self, paths: Sequence[str]) -> dict[str, int]:
        """Characters of text (front matter aside) in each of ``paths`` that has chunks."""
        rows = self._rows_by_id(
            "SELECT path, SUM(end_char - start_char) FROM chunks WHERE path IN ({}) GROUP BY path",
            paths,
        )
        return {row[0]: int(row[1]) for row in rows}

    # -- status -------------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Files by state, plus chunk totals."""
        # The status bar asks while the index is written: files and chunks of one commit.
        with self._reading(snapshot=True) as db:
            by_state = dict(
                db.execute("SELECT state, COUNT(*) FROM files GROUP BY state").fetchall()
            )
            # Both chunk counts from indexes: summing a column read every chunk's row, text
            # and all (80-225 ms on the kernel tree's 79k chunks).
            chunks, unembedded = db.execute(
                "SELECT (SELECT COUNT(*) FROM chunks),"
                " (SELECT COUNT(*) FROM chunks WHERE embedded = 0)"
            ).fetchone()
            embedded = chunks - unembedded
        return {
            FileState.FRESH: by_state.get(FileState.FRESH, 0),
            FileState.PENDING: by_state.get(FileState.PENDING, 0),
            FileState.SKIPPED: by_state.get(FileState.SKIPPED, 0),
            FileState.FAILED: by_state.get(FileState.FAILED, 0),
            "chunks": chunks,
            "embedded": embedded,
        }

    def skipped_files(self, limit: int) -> list[tuple[str, str]]:
        """``(path, reason)`` of the first ``limit`` skipped or failed files, by path."""
        with self._lock:
            rows = self._db.execute(
                "SELECT path, reason FROM files WHERE state IN (?, ?) ORDER BY path LIMIT ?",
                (FileState.SKIPPED, FileState.FAILED, limit),
            ).fetchall()
        return [(str(path), str(reason)) for path, reason in rows]

    def skip_reasons(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute(
                "SELECT reason, COUNT(*) FROM files WHERE state IN (?, ?) GROUP BY reason",
                (FileState.SKIPPED, FileState.FAILED),
            ).fetchall()
        reasons: dict[str, int] = {}
        for reason, count in rows:
            kind = reason.split(":")[0]
            reasons[kind] = reasons.get(kind, 0) + count
        return reasons

    # -- consistency --------------------------------------------------------------------------
    def files_missing_chunks(self) -> list[str]:
        """Files the manifest holds as indexed (fresh or pending) whose chunks are not all in
        the database: rows deleted behind explorer's back. Such a file is in no search until
        it is indexed again."""
        with self._lock:
            rows = self._db.execute(
                "SELECT f.path FROM files f WHERE f.state IN (?, ?) AND f.chunk_count !="
                " (SELECT COUNT(*) FROM chunks c WHERE c.path = f.path) ORDER BY f.path",
                (FileState.FRESH, FileState.PENDING),
            ).fetchall()
        return [row[0] for row in rows]

    def drop_orphan_keyword_rows(self) -> None:
        """Delete keyword rows whose chunk is gone (left when chunks were deleted behind
        explorer's back): they would skew every file's BM25 statistics."""
        with self._lock, self._db:
            self._db.execute("DELETE FROM chunks_fts WHERE rowid NOT IN (SELECT rowid FROM chunks)")
            if self._has_file_table():
                self._db.execute(
                    "DELETE FROM files_fts WHERE rowid NOT IN (SELECT rowid FROM chunks)"
                )
