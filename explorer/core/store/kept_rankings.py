"""The rankings of a large index's most frequent words and prefixes, kept in the index itself.

FTS5 scores every row a phrase matches, whatever the limit asked. The first keys of any word
typed are a word of a letter or two, then a prefix of three letters or more, then the whole
word, and in a large folder those match much of it: over the kernel's documentation (79,472
passages) ``in`` matches 35,805 rows, ``int*`` 31,574 and ``dev*`` 25,204, 25-35 ms of ranking
at every keystroke that asks one of them. Such phrases are few (523 of at least
:data:`KEPT_ROWS` rows there; none in a folder of a few hundred files), and their ranking
changes only when the keyword table does.

:class:`KeptRankings` keeps, for each of them, the best rows (rowid and score, exactly as the
keyword index ranked them) with the *fingerprint* of the table they were ranked on: FTS5's
averages record (the table's rows and tokens, row 1 of its ``%_data`` shadow table) and its
structure record (its segments, row 10, rewritten by every write that reaches the table). A
search takes a kept ranking only while the fingerprint is the table's own, so the answer is the
one FTS5 would give, to the bit; a write to the table leaves every kept ranking unused until the
writer ranks them again (:meth:`KeptRankings.refresh`, in its idle time).
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from explorer.core.ingest.keyword_text import is_unspaced
from explorer.core.ingest.stemming import word_terms
from explorer.core.store.keyword_statistics import read_varints
from explorer.core.store.sql_script import run_script

KEPT_ROWS = 5000
"""A phrase is kept when it matches at least this many rows (about 5 ms of ranking)."""
PREFIX_FROM = 3
"""A word being typed is asked as a prefix from this many letters on (the query's
``MIN_PREFIX``); shorter ones are asked as words."""
LONGEST_PREFIX = 12
"""Prefixes longer than this are not kept (a word typed that far is rare and narrow)."""
FINGERPRINT_KEY = "kept rankings"
"""Meta key: what the kept rankings were last made for (:func:`_made_for`), even when no phrase
of the index was frequent enough to keep."""
RULES_VERSION = "2"
"""Which phrases are kept, and how: a version that keeps others ranks them all again."""

TABLE = "kept_rankings"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS kept_rankings(
    phrase TEXT PRIMARY KEY,
    fingerprint BLOB NOT NULL,
    matched INTEGER NOT NULL,
    depth INTEGER NOT NULL,
    rowids BLOB NOT NULL,
    scores BLOB NOT NULL
);
"""
_TERMS = "CREATE VIRTUAL TABLE IF NOT EXISTS temp.kept_terms USING fts5vocab(main, chunks_fts, row)"


@dataclass(frozen=True)
class KeptRanking:
    """A phrase's best rows as kept, best first, and how many rows the phrase matches."""

    rowids: np.ndarray
    scores: np.ndarray
    matched: int

    @property
    def floor(self) -> float:
        """What any row the phrase matches beyond those held scores at most: the last score
        held (minus infinity when every row it matches is held)."""
        if self.matched <= len(self.scores):
            return -math.inf
        return float(self.scores[-1])

    def pairs(self) -> list[tuple[int, float]]:
        """(rowid, score) of the rows kept, best first."""
        return list(zip(self.rowids.tolist(), self.scores.tolist(), strict=True))


_WORD = re.compile(r'"([^"\s]+)"')
"""A phrase of one word, not a prefix."""

Ranker = Callable[[sqlite3.Connection, str, int], list[tuple[int, float]]]
"""Ranks one FTS5 expression on a connection: the ``limit`` best (rowid, score), best first."""


def fingerprint(db: sqlite3.Connection) -> bytes:
    """The keyword table's averages and structure records, which every write to it changes."""
    rows = db.execute(
        "SELECT id, block FROM chunks_fts_data WHERE id IN (1, 10) ORDER BY id"
    ).fetchall()
    return b"".join(bytes(block or b"") for _id, block in rows)


class KeptRankings:
    """The kept rankings of one keyword index (see the module docstring).

    Held by :class:`~explorer.core.store.keywords.KeywordIndex` as ``keywords.rankings``, on its
    connection and lock; a search reads on a connection of its own.
    """

    def __init__(self, db: sqlite3.Connection, lock: threading.RLock) -> None:
        self._db = db
        self._lock = lock
        self.changes = 0
        """Rows written on the connection (of its ``total_changes``): the keyword tables' own
        version leaves them out, as it does the embedding ledger's."""

    def create(self) -> None:
        """Make the table (a writer, in the transaction that sets up the index's tables)."""
        with self._lock:
            run_script(self._db, _SCHEMA)

    # -- reading ------------------------------------------------------------------------------
    @staticmethod
    def ranking(db: sqlite3.Connection, phrase: str, limit: int) -> KeptRanking | None:
        """The ``limit`` best rows kept for ``phrase`` on the table as ``db`` sees it (in one
        read transaction with what is read next); None when none is kept for it, or it was
        ranked to fewer rows than asked and matches more."""
        row = db.execute(
            "SELECT matched, depth, rowids, scores FROM kept_rankings"
            " WHERE phrase = ? AND fingerprint = ?",
            (stored_phrase(phrase), fingerprint(db)),
        ).fetchone()
        if row is None:
            return None
        matched, depth = int(row[0]), int(row[1])
        if limit > depth and matched > depth:
            return None  # the phrase matches rows beyond those ranked
        rowids = np.frombuffer(row[2], np.int64)[:limit]
        scores = np.frombuffer(row[3], np.float64)[:limit]
        return KeptRanking(rowids, scores, matched)

    def current(self) -> bool:
        """Whether the kept rankings were made for the keyword table as it is now."""
        with self._lock:
            made = self._db.execute(
                "SELECT value FROM meta WHERE key = ?", (FINGERPRINT_KEY,)
            ).fetchone()
            return made is not None and made[0] == _made_for(fingerprint(self._db))

    # -- writing ------------------------------------------------------------------------------
    def refresh(
        self,
        rank: Ranker,
        db: sqlite3.Connection,
        depth: int,
        stop: threading.Event | None = None,
        min_rows: int | None = None,
    ) -> int | None:
        """Rank every frequent phrase again (:func:`frequent_phrases`) to ``depth`` rows with
        ``rank`` on ``db`` (a connection of its own: searches go on meanwhile), and keep the
        rankings in place of the old ones, in one transaction. Returns how many were kept;
        None when ``stop`` was set first or the table changed meanwhile (nothing is written
        then). ``min_rows``: the rows a phrase must match to be kept (:data:`KEPT_ROWS`)."""
        if self.current():
            return 0
        wanted = KEPT_ROWS if min_rows is None else min_rows
        made_for = fingerprint(db)
        kept: list[tuple[str, int, int, bytes, bytes]] = []
        for phrase, matched in frequent_phrases(db, wanted):
            if stop is not None and stop.is_set():
                return None
            rows = rank(db, phrase, depth)
            rowids = np.fromiter((r for r, _s in rows), np.int64, len(rows))
            scores = np.fromiter((s for _r, s in rows), np.float64, len(rows))
            kept.append((phrase, matched, depth, rowids.tobytes(), scores.tobytes()))
        with self._lock, self._db:
            if fingerprint(self._db) != made_for:
                return None  # a write came between: the next idle time ranks again
            before = self._db.total_changes
            try:
                self._db.execute("DELETE FROM kept_rankings")
                self._db.executemany(
                    "INSERT INTO kept_rankings VALUES (?, ?, ?, ?, ?, ?)",
                    [(phrase, made_for, *ranked) for phrase, *ranked in kept],
                )
                self._db.execute(
                    "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                    (FINGERPRINT_KEY, _made_for(made_for)),
                )
            finally:
                self.changes += self._db.total_changes - before
        return len(kept)


def frequent_phrases(db: sqlite3.Connection, min_rows: int = KEPT_ROWS) -> list[tuple[str, int]]:
    """The FTS5 phrases a word being typed asks that match at least ``min_rows`` rows, with
    the rows each matches, most first: a word shorter than :data:`PREFIX_FROM` letters
    (``"in"``), a prefix of :data:`PREFIX_FROM` to :data:`LONGEST_PREFIX` letters (``"int" *``),
    a whole word as the term stored for it (``"devic"``, see :func:`stored_phrase`).

    The table's vocabulary gives each term's rows; a prefix's rows are at most the sum of its
    terms', so only prefixes whose sum reaches ``min_rows`` are counted exactly.
    """
    averages = db.execute("SELECT block FROM chunks_fts_data WHERE id = 1").fetchone()
    if averages is None or not averages[0] or read_varints(bytes(averages[0]))[0] < min_rows:
        return []  # fewer rows in all than a phrase must match
    db.execute(_TERMS)
    bound: Counter[str] = Counter()
    for term, rows in db.execute("SELECT term, doc FROM temp.kept_terms"):
        if not isinstance(term, str) or not _plain(term):
            continue
        if len(term) < PREFIX_FROM or (rows >= min_rows and _stem_of_itself(term)):
            bound[_phrase(term, prefix=False)] += rows  # a word, or a whole word's stem
        for length in range(PREFIX_FROM, min(len(term), LONGEST_PREFIX) + 1):
            bound[_phrase(term[:length], prefix=True)] += rows
    counted = []
    for phrase, most in bound.items():
        if most < min_rows:
            continue
        rows = db.execute(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (phrase,)
        ).fetchone()[0]
        if rows >= min_rows:
            counted.append((rows, phrase))
    counted.sort(key=lambda pair: (-pair[0], pair[1]))
    return [(phrase, rows) for rows, phrase in counted]


def _made_for(table: bytes) -> str:
    """The meta value of rankings made by these rules for the table of fingerprint ``table``."""
    return f"{RULES_VERSION}:{table.hex()}"


def stored_phrase(phrase: str) -> str:
    """The phrase a ranking of ``phrase`` is kept under: a whole word as the term the index
    stores for it (``"device"`` as ``"devic"``: FTS5 asks the same rows of both, and scores them
    alike); any other phrase as it is."""
    word = _WORD.fullmatch(phrase)
    if word is None:
        return phrase
    stemmed = word_terms(word.group(1)).stemmed
    return _phrase(stemmed[0], prefix=False) if len(stemmed) == 1 else phrase


def _stem_of_itself(term: str) -> bool:
    """Whether the stemmer leaves a stored term as it is, so that asking for it as a word asks
    for the same term (true of most: ``devic``, ``memori``)."""
    return word_terms(term).stemmed == (term,)


def _plain(term: str) -> bool:
    """A term a typed word asks as it is: letters and digits, not of a script written without
    spaces (such a run is asked by its bigrams, never as a prefix)."""
    return term.isalnum() and not is_unspaced(term)


def _phrase(text: str, prefix: bool) -> str:
    """The FTS5 phrase the query writes for ``text`` (see ``PhraseTokens.fts``)."""
    return f'"{text}"' + (" *" if prefix else "")
