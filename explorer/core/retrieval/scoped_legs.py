"""Both legs of a search restricted to a set of files, at a cost that follows the set's share.

A path filter is resolved first to the files it allows, and each leg must return its best
candidates *among those files* (never a global top-k cut afterwards). Two ways give that answer:

- **over-fetch**: rank over every file, keep the allowed candidates, and ask for more until ``k``
  are kept or the leg has nothing more. Cheap when the filter allows most files: a 90 % filter
  needs about 1.1 x ``k`` candidates.
- **restrict**: make the leg search only the allowed files' chunks: the keyword leg joins the
  allowed paths before ranking, the vector leg names the allowed chunk ids. Cheap when the filter
  allows few files.

Chroma's metadata filter (``where={"path": {"$in": ...}}``) is never used: at 100,000 chunks it
cost 0.3–0.4 s for any filter, even one path, and 2.5 s for 10,000 paths, where naming the
chunk ids costs 60–80 ms for 10,000 chunks (``benchmarks/scale.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from explorer.core.store.index import Index

Hit = TypeVar("Hit")

OVERFETCH_SHARE = 0.25
"""With a filter allowing at least this share of the indexed files, a leg over-fetches."""
OVERFETCH_MARGIN = 1.5
"""Candidates asked for, beyond ``k / share``, for files whose chunks are more than average."""
OVERFETCH_LIMIT = 8
"""Give up over-fetching past ``OVERFETCH_LIMIT x k / share`` candidates; restrict instead."""


def _share(index: Index, allowed: Sequence[str]) -> float:
    keywords = index.keywords
    return len(allowed) / max(1, keywords.derived("indexed files", keywords.indexed_file_count))


def _overfetched(
    share: float,
    k: int,
    fetch_best: Callable[[int], list[Hit]],
    keep_allowed: Callable[[list[Hit]], list[Hit]],
) -> list[Hit] | None:
    """The ``k`` best allowed candidates by over-fetching, or None when the share is too small
    for it or the limit was reached first (the caller then restricts the leg instead)."""
    if share < OVERFETCH_SHARE:
        return None
    fetch = math.ceil(k / share * OVERFETCH_MARGIN)
    while fetch <= OVERFETCH_LIMIT * k / share:
        found = fetch_best(fetch)
        kept = keep_allowed(found)
        if len(kept) >= k or len(found) < fetch:
            return kept[:k]
        fetch *= 2
    return None


def keyword_hits(
    index: Index, expression: str, k: int, allowed: Sequence[str] | None
) -> list[tuple[str, str, float]]:
    """The keyword leg's ``k`` best (chunk id, path, BM25) among ``allowed`` files (None: all)."""
    if allowed is None:
        return index.keywords.search(expression, k)
    if not allowed:
        return []
    wanted = set(allowed)
    kept = _overfetched(
        _share(index, allowed),
        k,
        lambda fetch: index.keywords.search(expression, fetch),
        lambda found: [hit for hit in found if hit[1] in wanted],
    )
    return kept if kept is not None else index.keywords.search(expression, k, allowed)


def vector_hits(
    index: Index, vector: np.ndarray, k: int, allowed: Sequence[str] | None
) -> list[tuple[str, float]]:
    """The vector leg's ``k`` nearest (chunk id, cosine) among ``allowed`` files (None: all)."""
    if allowed is None:
        return index.vectors.query_chunks(vector, k)
    if not allowed:
        return []
    wanted = set(allowed)

    def keep(found: list[tuple[str, float]]) -> list[tuple[str, float]]:
        places = index.keywords.chunk_places([cid for cid, _sim in found])
        return [(cid, sim) for cid, sim in found if cid in places and places[cid][0] in wanted]

    kept = _overfetched(
        _share(index, allowed), k, lambda fetch: index.vectors.query_chunks(vector, fetch), keep
    )
    if kept is not None:
        return kept
    return index.vectors.query_chunks_among(vector, k, index.keywords.chunk_ids_of(allowed))
