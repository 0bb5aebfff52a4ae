"""Keyword hits of several indexes on one scale: BM25 as one index holding them all gives it.

Each index's FTS5 table ranks its rows with its own statistics (rows, rows per phrase, mean row
length; see :mod:`explorer.core.store.keyword_statistics`). A word common in one folder and
rare in another weighs little in the first and much in the second, so the raw BM25 of two
indexes is not on one scale: "nginx" is in 82 % of the nginx docs' passages (its weight there
is FTS5's floor, 1e-6) and in two notes of a vault, where it would outweigh every other word of
a query. :class:`KeywordScale` takes the statistics of every index together, as one table
holding all their rows would have them, and scores each index's hits again with those:

- the rows and tokens of all the tables are added up, and so are the rows holding each phrase;
- a hit's score from its own index is split into its phrases (the score of each phrase alone,
  for that row: FTS5's BM25 is a sum over the query's phrases), each phrase's weighted hit
  count ``f`` is recovered from it (``f / K = r / (1 - r)`` with ``r = score / (idf (k1 + 1))``,
  ``K`` the row's length term), and the phrase is scored again with the shared ``idf`` and the
  shared mean length.

The result equals FTS5's own BM25 over one table holding every index's rows (the tests check
it). A single index needs none of this: its scale is its own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from explorer.core.store.keyword_statistics import KeywordStatistics, KeywordTable, TableTotals

K1 = 1.2
"""FTS5's BM25 ``k1``."""
B = 0.75
"""FTS5's BM25 ``b``."""
IDF_FLOOR = 1e-6
"""FTS5's smallest idf (a phrase in more than half of the rows)."""


def idf(rows: int, holding: int) -> float:
    """FTS5's inverse document frequency of a phrase held by ``holding`` of ``rows`` rows."""
    if rows <= 0:
        return IDF_FLOOR
    return max(IDF_FLOOR, math.log((rows - holding + 0.5) / (holding + 0.5)))


def length_term(length: int, mean_length: float) -> float:
    """BM25's ``k1 x (1 - b + b x length / mean length)`` for a row of ``length`` tokens."""
    if mean_length <= 0:
        return K1
    return K1 * (1 - B + B * length / mean_length)


class KeywordScale:
    """The shared statistics of several indexes' ``table`` for the phrases of one query."""

    def __init__(
        self, indexes: Mapping[str, KeywordStatistics], table: KeywordTable, phrases: Sequence[str]
    ) -> None:
        """``indexes``: each collection's statistics, by name; ``phrases``: the query's FTS5
        phrases (:func:`~explorer.core.retrieval.query.fts_phrases`)."""
        self.table = table
        self.phrases = tuple(phrases)
        self._indexes = dict(indexes)
        self._totals = {name: stats.totals(table) for name, stats in self._indexes.items()}
        self._holding = {
            name: {phrase: stats.phrase_rows(table, phrase) for phrase in self.phrases}
            for name, stats in self._indexes.items()
        }
        rows = sum(totals.rows for totals in self._totals.values())
        tokens = sum(totals.tokens for totals in self._totals.values())
        self.shared = TableTotals(rows, tokens)
        """The rows and tokens of every index's table together."""
        self._shared_idf = {
            phrase: idf(rows, sum(holding[phrase] for holding in self._holding.values()))
            for phrase in self.phrases
        }

    @property
    def names(self) -> frozenset[str]:
        """The collections whose statistics make the scale."""
        return frozenset(self._indexes)

    def bound(self, name: str, own_score: float) -> float:
        """The highest shared-scale BM25 a row of index ``name`` may have when its own index
        scores it at most ``own_score``.

        Each phrase's term on the shared scale is at most its own term times the ratio of its
        idfs (shared over own) and of the mean lengths (when the shared one is longer), and at
        most ``idf x (k1 + 1)``; ``own_score`` is shared out among the phrases, the highest
        ratio first, each taking at most its own ``idf x (k1 + 1)``. A phrase held by more
        than half of the index's rows (its own idf at the floor, so its own score says nothing)
        may add its whole shared weight."""
        own = self._totals[name]
        length = max(1.0, self.shared.mean_length / own.mean_length) if own.mean_length else 1.0
        bound, ratios = 0.0, []
        for phrase in self.phrases:
            own_idf = idf(own.rows, self._holding[name][phrase])
            shared_idf = self._shared_idf[phrase]
            if own_idf <= IDF_FLOOR:
                bound += shared_idf * (K1 + 1)
            else:
                ratios.append((shared_idf / own_idf * length, own_idf, shared_idf))
        left = own_score
        for ratio, own_idf, shared_idf in sorted(ratios, reverse=True):
            taken = min(left, own_idf * (K1 + 1))
            bound += min(ratio * taken, shared_idf * (K1 + 1))
            left -= taken
            if left <= 0:
                break
        return bound

    def rescore(
        self, name: str, rowids: Sequence[int], own_scores: Mapping[int, float] | None = None
    ) -> dict[int, float]:
        """The shared-scale BM25 (higher is better) of rows ``rowids`` of index ``name`` (the
        rows that hold none of the phrases are left out). ``own_scores``: the rows' BM25 from
        their own index for the whole query, which a query of one phrase need not ask again."""
        stats = self._indexes[name]
        own = self._totals[name]
        lengths = stats.row_lengths(self.table, rowids)
        scores: dict[int, float] = {}
        for phrase in self.phrases:
            own_idf = idf(own.rows, self._holding[name][phrase])
            shared_idf = self._shared_idf[phrase]
            if own_scores is not None and len(self.phrases) == 1:
                split = {rowid: own_scores[rowid] for rowid in rowids if rowid in own_scores}
            else:
                split = stats.phrase_scores(self.table, phrase, rowids)
            for rowid, score in split.items():
                length = lengths.get(rowid, 0)
                share = min(score / (own_idf * (K1 + 1)), 1 - 1e-12)  # f / (f + K), below 1
                hits = share / (1 - share) * length_term(length, own.mean_length)
                shared_term = length_term(length, self.shared.mean_length)
                scores[rowid] = scores.get(rowid, 0.0) + shared_idf * (K1 + 1) * hits / (
                    hits + shared_term
                )
        return scores
