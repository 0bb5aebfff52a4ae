"""A keyword ranking of several OR-ed phrases, summed from each phrase's own scores.

FTS5's ``bm25()`` is a sum over the query's phrases: each phrase adds its IDF (counted over the
whole table) times the saturated frequency of its hits in the row, and a phrase a row lacks adds
nothing. A row's score for ``"device" OR "tre" *`` is therefore its score for ``"device"`` plus
its score for ``"tre" *``, to the bit (FTS5 adds the same terms in the same order, from 0).

While somebody types, the words before the last one stay the same from one keystroke to the
next; only the last phrase changes. Ranked as one expression, every keystroke scores every row
of every phrase again (on the kernel's docs, ``"device"`` alone matches 20,280 of 79,472
passages: 26 ms a time). Kept per phrase, a keystroke scores only its new phrase and adds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: the window's first frame comes before any search
    import numpy as np

_PHRASE = r'"(?:[^"]|"")*"(?: \*)?'
_OR_OF_PHRASES = re.compile(rf"({_PHRASE})(?: OR ({_PHRASE}))*")
_ONE_PHRASE = re.compile(_PHRASE)


def or_phrases(match: str) -> tuple[str, ...] | None:
    """The phrases of an FTS5 expression that is only quoted phrases (each perhaps a prefix)
    joined by ``OR``, as :attr:`~explorer.core.retrieval.query.Query.expression` writes them;
    None for any other expression (its score is not a plain sum of phrases)."""
    if _OR_OF_PHRASES.fullmatch(match) is None:
        return None
    return tuple(found.group(0) for found in _ONE_PHRASE.finditer(match))


@dataclass(frozen=True)
class PhraseScores:
    """Every row one phrase matches (in rowid order) and the row's score for it (higher is
    better)."""

    rowids: np.ndarray
    scores: np.ndarray

    @classmethod
    def of_rows(cls, rows: Sequence[tuple[int, float]]) -> PhraseScores:
        import numpy as np

        if not rows:
            return cls(np.empty(0, np.int64), np.empty(0, np.float64))
        rowids, scores = zip(*rows, strict=True)
        ids = np.fromiter(rowids, np.int64, len(rows))
        values = np.fromiter(scores, np.float64, len(rows))
        if len(ids) > 1 and not bool(np.all(ids[1:] > ids[:-1])):  # FTS5 gives rowid order
            order = np.argsort(ids, kind="stable")
            ids, values = ids[order], values[order]
        return cls(ids, values)

    def scores_of(self, rowids: Sequence[int]) -> dict[int, float]:
        """The score of each of ``rowids`` the phrase matches (the others are left out)."""
        import numpy as np

        wanted = np.asarray(rowids, dtype=np.int64)
        places = np.searchsorted(self.rowids, wanted)
        inside = places < len(self.rowids)
        found = np.zeros(len(wanted), dtype=bool)
        found[inside] = self.rowids[places[inside]] == wanted[inside]
        return {
            int(rowid): float(score)
            for rowid, score in zip(wanted[found], self.scores[places[found]], strict=True)
        }


def best_of_sum(phrases: Sequence[PhraseScores], depth: int) -> list[tuple[int, float]]:
    """The ``depth`` rows of the highest summed score, best first (ties by rowid), each with
    its sum: the ranking FTS5 gives the phrases OR-ed together."""
    import numpy as np

    if not phrases or depth < 1:
        return []
    rowids = np.concatenate([phrase.rowids for phrase in phrases])
    scores = np.concatenate([phrase.scores for phrase in phrases])
    if not len(rowids):
        return []
    rows, where = np.unique(rowids, return_inverse=True)
    # bincount adds each row's weights in the order given, phrase after phrase from 0.0, as
    # FTS5 does: the sums are FTS5's own, not merely close to them.
    totals = np.bincount(where, weights=scores, minlength=len(rows))
    if len(rows) > depth:
        # The depth-th best sum, and every row above it, then the rows tied with it by rowid
        # (np.unique sorted them): which tied rows make the cut does not depend on chance.
        threshold = np.partition(totals, len(totals) - depth)[len(totals) - depth]
        above = np.flatnonzero(totals > threshold)
        tied = np.flatnonzero(totals == threshold)[: depth - len(above)]
        kept = np.concatenate([above, tied])
        rows, totals = rows[kept], totals[kept]
    order = np.lexsort((rows, -totals))
    return [(int(rows[i]), float(totals[i])) for i in order]
