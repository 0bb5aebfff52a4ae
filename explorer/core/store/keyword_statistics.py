"""The statistics behind one keyword index's BM25, read back so that the keyword hits of several
indexes can be scored on one scale.

FTS5's ``bm25()`` scores a row, for each phrase of the query, by
``idf x f x (k1 + 1) / (f + k1 x (1 - b + b x length / mean length))`` and adds the phrases up:
``idf = ln((N - n + 0.5) / (n + 0.5))`` (at least 1e-6), ``N`` the rows of the table, ``n`` the
rows that hold the phrase, ``f`` the phrase's hits in the row weighted by column, ``length`` the
row's tokens and ``mean length`` the table's. ``N``, ``n`` and the mean length are the table's
own, so a passage scores one thing in a folder's index and another in an index of that folder
and others together. :class:`KeywordStatistics` reads what it takes to score it as the
combined table would (``explorer.core.retrieval.keyword_scale`` does the sums):

- a table's rows and tokens: FTS5's *averages* record (row 1 of its ``%_data`` shadow table:
  SQLite varints, the row count then each column's token total);
- the rows that hold a phrase (``count(*)`` of the phrase alone);
- a row's tokens: its ``%_docsize`` row (a varint per column);
- one phrase's own ``bm25()`` for chosen rows: the phrase alone, with the rows chosen after the
  match (``+rowid``): a ``rowid IN`` that FTS5 sees runs the match once per row, and counts the
  phrase's rows every time (80 ms instead of 2 ms for "nginx" over the nginx docs).

The shadow tables and their record format are FTS5's documented on-disk format; the tests check
that these numbers give back FTS5's own ``bm25()`` to the last digit.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Hashable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from explorer.core.store.phrase_sums import PhraseScores

_Key = TypeVar("_Key", bound=Hashable)
_Value = TypeVar("_Value")

Derived = Callable[[Hashable, Callable[[], Any]], Any]
""":meth:`KeywordIndex.derived`: a value kept until the database changes."""
KeptPhrase = Callable[["KeywordTable", str], "PhraseScores | None"]
"""Every row's score for a phrase, when the keyword index keeps them for the tables as they are
(:meth:`KeywordIndex.kept_phrase_scores`), else None."""


class KeywordTable(StrEnum):
    """The two FTS5 tables of a keyword index."""

    CHUNKS = "chunks_fts"
    """One row per passage."""
    FILES = "files_fts"
    """One row per file (keyed by its first passage's rowid)."""


@dataclass(frozen=True)
class TableTotals:
    """How many rows a keyword table holds and how many tokens they have in all."""

    rows: int
    tokens: int

    @property
    def mean_length(self) -> float:
        """Tokens per row (FTS5's ``avgdl``); 0 for an empty table."""
        return self.tokens / self.rows if self.rows else 0.0


ROWS_KEPT = 10_000
"""Rows whose facts :func:`kept_or_read` keeps per kind (a search of the kernel's docs scores up to
800 rows a phrase); past this it forgets them all and starts over (100-250 bytes a row)."""


@dataclass
class _RowFacts:
    """Rows per phrase, and the lengths and rows of the rows searches scored, kept while the
    database does not change: a query being typed scores mostly the same best rows at every
    key, and reading their lengths and rows again cost about a quarter of a search of two
    folders."""

    rows: dict[tuple[KeywordTable, str], int] = field(default_factory=dict)
    lengths: dict[KeywordTable, dict[int, int]] = field(default_factory=dict)
    chunk_rows: dict[str, int] = field(default_factory=dict)
    file_rows: dict[str, int] = field(default_factory=dict)


def kept_or_read(
    kept: dict[_Key, _Value],
    keys: Sequence[_Key],
    read: Callable[[list[_Key]], dict[_Key, _Value]],
) -> dict[_Key, _Value]:
    """The value of each of ``keys`` that has one: from ``kept``, the rest by ``read`` (given
    the keys ``kept`` lacks), then kept too. ``kept`` starts over when it would pass
    :data:`ROWS_KEPT`; each key is looked at once, so another thread starting it over between
    a look and a read costs a row read again, not an error."""
    known = {key: value for key in keys if (value := kept.get(key)) is not None}
    missing = [key for key in keys if key not in known]
    if not missing:
        return known
    found = read(missing)
    if len(kept) + len(found) > ROWS_KEPT:
        kept.clear()
    kept.update(found)
    return known | found


def read_varints(blob: bytes) -> list[int]:
    """The SQLite varints ``blob`` holds, one after the other (1 to 9 bytes each, 7 bits per
    byte, high bit set when more follow; a ninth byte gives all its 8 bits)."""
    values: list[int] = []
    position = 0
    while position < len(blob):
        value = 0
        for place in range(9):
            byte = blob[position]
            position += 1
            if place == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    return values


def _total(blob: bytes) -> int:
    """The sum of the varints of ``blob`` (every byte is a whole varint when none is 128 or
    more: columns of fewer than 128 tokens, most rows)."""
    return sum(blob) if max(blob, default=0) < 0x80 else sum(read_varints(blob))


class KeywordStatistics:
    """BM25's statistics of one keyword index (see the module docstring)."""

    def __init__(
        self,
        reading: Callable[[], AbstractContextManager[sqlite3.Connection]],
        derived: Derived,
        weights: Sequence[float],
        kept: KeptPhrase | None = None,
    ) -> None:
        """``reading``: a connection of the keyword index to read on, as its own reads take
        one (the view of a search that reads one commit, when one is open)."""
        self._reading = reading
        self._derived = derived
        self._kept = kept
        self.weights = tuple(weights)
        """The column weights the keyword index scores with."""

    def has_table(self, table: KeywordTable) -> bool:
        """Whether the index has ``table`` (an index made before ``files_fts`` lacks it)."""

        def look() -> bool:
            with self._reading() as db:
                row = db.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
                ).fetchone()
            return row is not None

        return bool(self._derived(("has table", table), look))

    def totals(self, table: KeywordTable) -> TableTotals:
        """Rows and tokens of ``table``, from FTS5's averages record."""

        def read() -> TableTotals:
            with self._reading() as db:
                row = db.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
            values = read_varints(bytes(row[0])) if row and row[0] is not None else []
            return TableTotals(values[0], sum(values[1:])) if values else TableTotals(0, 0)

        totals: TableTotals = self._derived(("table totals", table), read)
        return totals

    def phrase_rows(self, table: KeywordTable, phrase: str) -> int:
        """Rows of ``table`` that hold ``phrase`` (an FTS5 phrase: ``"proxy cache"``)."""
        counts = self._facts()
        key = (table, phrase)
        if key not in counts.rows and (kept := self._kept_scores(table, phrase)) is not None:
            counts.rows[key] = len(kept.rowids)  # every row the phrase matches, scored
        if key not in counts.rows:
            with self._reading() as db:
                row = db.execute(
                    f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (phrase,)
                ).fetchone()
            counts.rows[key] = int(row[0])
        return counts.rows[key]

    def phrase_scores(
        self, table: KeywordTable, phrase: str, rowids: Sequence[int]
    ) -> dict[int, float]:
        """FTS5's ``bm25()`` (higher is better) of ``phrase`` alone for each of ``rowids`` that
        holds it."""
        if not rowids:
            return {}
        kept = self._kept_scores(table, phrase)
        if kept is not None:  # the same bm25() of the phrase alone, asked before
            return kept.scores_of(rowids)
        weights = ", ".join(map(str, self.weights))
        with self._reading() as db:
            rows = db.execute(
                f"SELECT rowid, -bm25({table}, {weights}) FROM {table} WHERE {table} MATCH ?"
                " AND +rowid IN (SELECT value FROM json_each(?))",
                (phrase, json.dumps(list(rowids))),
            ).fetchall()
        return {int(rowid): float(score) for rowid, score in rows}

    def _kept_scores(self, table: KeywordTable, phrase: str) -> PhraseScores | None:
        return self._kept(table, phrase) if self._kept is not None else None

    def row_lengths(self, table: KeywordTable, rowids: Sequence[int]) -> dict[int, int]:
        """Tokens of each of ``rowids`` (all columns), from FTS5's docsize table."""

        def read(missing: list[int]) -> dict[int, int]:
            with self._reading() as db:
                rows = db.execute(
                    f"SELECT id, sz FROM {table}_docsize"
                    " WHERE id IN (SELECT value FROM json_each(?))",
                    (json.dumps(missing),),
                ).fetchall()
            return {int(rowid): _total(bytes(size)) for rowid, size in rows}

        return kept_or_read(self._facts().lengths.setdefault(table, {}), rowids, read)

    def chunk_rowids(self, chunk_ids: Sequence[str]) -> dict[str, int]:
        """The row of each chunk id (its row in ``chunks_fts`` too)."""
        return self._rows_of(
            self._facts().chunk_rows,
            "SELECT id, rowid FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
            chunk_ids,
        )

    def file_rowids(self, paths: Sequence[str]) -> dict[str, int]:
        """The row of each file in ``files_fts``: its first passage's rowid."""
        return self._rows_of(
            self._facts().file_rows,
            "SELECT path, MIN(rowid) FROM chunks WHERE path IN"
            " (SELECT value FROM json_each(?)) GROUP BY path",
            paths,
        )

    def _rows_of(self, kept: dict[str, int], sql: str, names: Sequence[str]) -> dict[str, int]:
        """The row of each of ``names`` (chunk ids or paths) that has one: from ``kept``, the
        rest by ``sql`` (one JSON array of names, answering (name, rowid) pairs)."""

        def read(missing: list[str]) -> dict[str, int]:
            with self._reading() as db:
                rows = db.execute(sql, (json.dumps(missing),)).fetchall()
            return {str(name): int(rowid) for name, rowid in rows}

        return kept_or_read(kept, names, read)

    def _facts(self) -> _RowFacts:
        facts: _RowFacts = self._derived("rows' facts", _RowFacts)
        return facts
