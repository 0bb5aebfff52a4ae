"""One search over several collections: every index's candidates, on one scale, fused once.

Each collection's index answers both legs as a search of it alone would
(:func:`~explorer.core.retrieval.search.leg_hits`, its filters applied before ranking). The
answers are then merged into one :class:`~explorer.core.retrieval.search.Legs`, as one index
holding every collection would have given them, and fused and grouped once, so a score means
the same in every folder:

- chunk ids and paths are qualified with their collection's name (``notes/guides/a.md``), so
  two folders may hold the same path;
- the keyword leg's BM25 is put on the scale of all the open collections together
  (:class:`~explorer.core.retrieval.keyword_scale.KeywordScale`: each index's own statistics
  would rank a word rare in one folder far above the same word in a folder where it is
  common); the whole-file BM25 too;
- cosines need nothing: one model embeds every collection (a collection of another model is
  refused when the collections are opened);
- each leg keeps its ``k`` best over all collections; the measured cosines, the keyword leg's
  coverage of the query, and the file vectors and file BM25 are then read for those, from the
  index that holds each.

The scale is that of every open collection, whatever a search keeps: a filter (a path, a
collection, a scope) narrows what is ranked, never how it is scored, as a filter does in one
index.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from explorer.core.models import SearchMode
from explorer.core.retrieval import scoped_legs
from explorer.core.retrieval.keyword_scale import KeywordScale
from explorer.core.retrieval.search import (
    COVERAGE_DEPTH,
    MEASURED,
    Candidate,
    FileHit,
    Legs,
    SearchRequest,
    file_similarities,
    group_files,
    keyword_coverage,
    keyword_rows_too_narrow,
    lacking_vectors_note,
    leg_hits,
    measured_cosines,
    rank_keywords_ahead,
)
from explorer.core.settings import IndexSettings
from explorer.core.store.index import Index
from explorer.core.store.keyword_statistics import KeywordStatistics, KeywordTable
from explorer.core.store.keywords import LentViews
from explorer.core.store.manifest_records import FileSummary, StoredChunk

MOST_KEYWORD_HITS = 16
"""An index is asked for at most this many times ``k`` keyword hits (see
:meth:`MergedPlan._keyword_hits`)."""
SEPARATOR = "/"
"""Between a collection's name and a chunk id or path it qualifies (names hold no ``/``)."""


def qualified(name: str, value: str) -> str:
    """``value`` (a chunk id or a path) of collection ``name``, unique across collections."""
    return f"{name}{SEPARATOR}{value}"


def unqualified(value: str) -> tuple[str, str]:
    """The collection name and the chunk id or path of a :func:`qualified` value."""
    name, _, rest = value.partition(SEPARATOR)
    return name, rest


_LegAnswer = tuple[list[tuple[str, str, float]], list[tuple[str, float]], str | None]
"""What :func:`~explorer.core.retrieval.search.leg_hits` returns for one collection."""


@dataclass(frozen=True)
class _MergedKeyword:
    """What the collections' legs answered at one depth, and the merged keyword leg."""

    depth: int
    answers: dict[str, _LegAnswer]
    """Each collection's :func:`leg_hits`, by name."""
    keyword: list[tuple[str, str, float]]
    """The ``depth`` best (qualified chunk id, qualified path, BM25 on the shared scale)."""
    expression: str | None
    """The FTS5 expression the collections ran (None: no keyword leg)."""


@dataclass(frozen=True)
class SearchedCollection:
    """A collection a search looks at, and the files its filters allow there."""

    name: str
    index: Index
    allowed: list[str] | None
    """The files the filters allow (None: every file)."""


@dataclass
class MergedPlan:
    """A search of several collections (a :class:`~explorer.core.retrieval.search.SearchPlan`)."""

    searched: list[SearchedCollection]
    """The collections the search looks at (those its filters leave)."""
    scale: Mapping[str, KeywordStatistics]
    """The keyword statistics of every open collection, by name: the shared BM25 scale."""
    settings: IndexSettings
    embed: Callable[[str], np.ndarray]
    description: str
    matching: int | None
    shared_scale: bool = True
    """Put BM25 on the shared scale (False: each index's own; for measuring what it changes)."""
    _indexes: dict[str, Index] = field(init=False, repr=False)
    _merged_keyword: _MergedKeyword | None = field(default=None, init=False, repr=False)
    """The merged keyword leg :meth:`keyword_leg_too_narrow` made last, for :meth:`gather` at
    the same depth."""

    def __post_init__(self) -> None:
        self._indexes = {searched.name: searched.index for searched in self.searched}

    def describe_filter(self) -> str:
        return self.description

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed(text)

    def vectors_lacking(self) -> str:
        """What each searched collection's store lacks, in one line."""
        said = [(one.name, lacking_vectors_note(one.index)) for one in self.searched]
        return "; ".join(f"{name}: {note}" for name, note in said if note)

    # -- gathering ------------------------------------------------------------------------
    def prepare(self, request: SearchRequest, k: int) -> None:
        for one in self.searched:
            rank_keywords_ahead(one.index, request, k, one.allowed)

    def gather(self, request: SearchRequest, k: int, vector: np.ndarray | None) -> Legs:
        """Both legs of every searched collection, merged into the ``k`` best of each leg."""
        merged, self._merged_keyword = self._merged_keyword, None
        if merged is None or merged.depth != k or vector is not None:
            merged = self._keyword_leg(request, k, vector)
        answers, keyword, expression = merged.answers, merged.keyword, merged.expression
        returned: list[tuple[str, float]] = []
        for name, (_hits, vectors, _expression) in answers.items():
            returned.extend((qualified(name, cid), similarity) for cid, similarity in vectors)
        # Stable sorts: among equal scores, each collection's own order, collections in turn.
        returned = sorted(returned, key=lambda hit: -hit[1])[:k]
        # The places of the rows each leg keeps, read from the index that holds each.
        wanted = [cid for cid, _p, _s in keyword] + [cid for cid, _s in returned]
        places: dict[str, tuple[str, int]] = {}
        for name, ids in _by_collection(dict.fromkeys(wanted)).items():
            for cid, (path, start) in self._indexes[name].keywords.chunk_places(ids).items():
                places[qualified(name, cid)] = (qualified(name, path), start)
        known = [(cid, similarity) for cid, similarity in returned if cid in places]
        legs = Legs(keyword, known, returned, places, lookup=request.parsed.lookup)
        if request.mode == SearchMode.HYBRID and vector is not None and known and keyword:
            legs.measured, legs.pending = self._measured(vector, keyword, {cid for cid, _ in known})
            legs.coverage = max(
                keyword_coverage(self._indexes[name], request, hits)
                for name, hits in _hits_by_collection(keyword[:COVERAGE_DEPTH]).items()
            )
        if vector is not None and known and self.settings.file_weight > 0:
            legs.file_similarity = self._file_similarity(vector, places)
        if expression is not None and keyword and self.settings.file_keyword_weight > 0:
            legs.file_keyword = self._file_keyword(request, expression, places)
        return legs

    def keyword_leg_too_narrow(self, request: SearchRequest, k: int) -> bool:
        """See :meth:`~explorer.core.retrieval.search.SearchPlan.keyword_leg_too_narrow`. The
        merged keyword leg is made here once, and :meth:`gather` at the same depth takes it."""
        if request.parsed.expression is None:
            return False
        self._merged_keyword = merged = self._keyword_leg(request, k, None)
        return keyword_rows_too_narrow([merged.keyword], k, request)

    def _keyword_leg(
        self, request: SearchRequest, k: int, vector: np.ndarray | None
    ) -> _MergedKeyword:
        """What each collection's legs return (:func:`leg_hits`), and the merged keyword leg:
        the ``k`` best of them all."""
        found = _each(
            self.searched, lambda one: leg_hits(one.index, request, k, one.allowed, vector)
        )
        answers = {one.name: answer for one, answer in zip(self.searched, found, strict=True)}
        expression = next((e for _hits, _vectors, e in answers.values() if e is not None), None)
        own_hits = {name: hits for name, (hits, _vectors, _e) in answers.items()}
        if expression is not None:
            own_hits = self._keyword_hits(request, k, expression, own_hits)
        keyword = [
            (qualified(name, cid), qualified(name, path), score)
            for name, hits in own_hits.items()
            for cid, path, score in hits
        ]
        # Stable: among equal scores, each collection's own order, collections in turn.
        return _MergedKeyword(k, answers, sorted(keyword, key=lambda hit: -hit[2])[:k], expression)

    def _keyword_hits(
        self,
        request: SearchRequest,
        k: int,
        expression: str,
        first: dict[str, list[tuple[str, str, float]]],
    ) -> dict[str, list[tuple[str, str, float]]]:
        """Each collection's keyword hits on the shared scale, enough of them that the ``k``
        best of all are among them.

        An index ranks by its own scale, so its ``k`` best are not always its best on the
        shared one: a passage it ranks lower may score higher once its words weigh what they
        weigh in every folder together. Every passage an index did not return scores at most
        :meth:`KeywordScale.bound` of the lowest it returned; while that bound beats the
        ``k``-th best score of all, the index is asked for more (twice as many, up to
        :data:`MOST_KEYWORD_HITS` times ``k``). Not while the query is being typed
        (``prefix_last``): each keystroke's answer is replaced by the next, and asking again
        cost the typed searches of the nginx docs and the vault 13 ms at p95; those ``k`` of
        each index are scored on the shared scale all the same."""
        scale = self._keyword_scale(request, KeywordTable.CHUNKS)
        if scale is None:
            return first
        wanted = dict.fromkeys(first, k)
        rescored = _each(
            list(first.items()),
            lambda item: (
                _rescaled_chunks(self._indexes[item[0]], item[0], item[1], scale) if item[1] else []
            ),
        )
        hits = dict(zip(first, rescored, strict=True))
        if request.prefix_last:
            return hits
        lowest = {name: own[-1][2] if len(own) >= k else None for name, own in first.items()}
        while True:
            scores = sorted((hit[2] for own in hits.values() for hit in own), reverse=True)
            cutoff = scores[k - 1] if len(scores) >= k else 0.0
            more = [
                name
                for name, low in lowest.items()
                if low is not None
                and wanted[name] < MOST_KEYWORD_HITS * k
                and scale.bound(name, low) > cutoff
            ]
            if not more:
                return hits
            for name in more:
                wanted[name] *= 2
                allowed = next(one.allowed for one in self.searched if one.name == name)
                index = self._indexes[name]
                own = scoped_legs.keyword_hits(index, expression, wanted[name], allowed)
                scored = {hit[0] for hit in hits[name]}
                fresh = [hit for hit in own if hit[0] not in scored]  # in their index's order
                hits[name] += _rescaled_chunks(index, name, fresh, scale) if fresh else []
                lowest[name] = own[-1][2] if len(own) >= wanted[name] else None

    def _keyword_scale(self, request: SearchRequest, table: KeywordTable) -> KeywordScale | None:
        """The shared BM25 scale of ``table`` for this query, or None when no rescoring is
        needed (one open collection, or rescoring turned off)."""
        statistics = {name: stats for name, stats in self.scale.items() if stats.has_table(table)}
        if not self.shared_scale or len(statistics) < 2:
            return None
        return KeywordScale(statistics, table, list(request.parsed.phrases))

    def _measured(
        self, vector: np.ndarray, keyword: list[tuple[str, str, float]], seen: set[str]
    ) -> tuple[dict[str, float], set[str]]:
        """The cosines of the best keyword hits the vector leg did not return, read from the
        stored vectors of the index that holds each; and those of them without a vector yet."""
        measured: dict[str, float] = {}
        pending: set[str] = set()
        for name, hits in _hits_by_collection(keyword[:MEASURED]).items():
            own_seen = {unqualified(cid)[1] for cid in seen if unqualified(cid)[0] == name}
            cosines, lacking = measured_cosines(self._indexes[name], vector, hits, own_seen)
            measured.update((qualified(name, cid), value) for cid, value in cosines.items())
            pending.update(qualified(name, cid) for cid in lacking)
        return measured, pending

    def _file_similarity(
        self, vector: np.ndarray, places: dict[str, tuple[str, int]]
    ) -> dict[str, float]:
        similarity: dict[str, float] = {}
        for name, own_places in _places_by_collection(places).items():
            found = file_similarities(self._indexes[name], vector, own_places)
            similarity.update((qualified(name, path), value) for path, value in found.items())
        return similarity

    def _file_keyword(
        self, request: SearchRequest, expression: str, places: dict[str, tuple[str, int]]
    ) -> dict[str, float]:
        """The whole-file BM25 of every candidate file, on the shared scale."""
        scale = self._keyword_scale(request, KeywordTable.FILES)

        def whole_files(item: tuple[str, dict[str, tuple[str, int]]]) -> dict[str, float]:
            name, own_places = item
            index = self._indexes[name]
            files = sorted({path for path, _start in own_places.values()})
            found = index.keywords.file_search(expression, files)
            if scale is not None and found and name in scale.names:
                found = _rescaled_files(index, name, found, scale)
            return {qualified(name, path): value for path, value in found.items()}

        scores: dict[str, float] = {}
        for found in _each(list(_places_by_collection(places).items()), whole_files):
            scores.update(found)
        return scores

    # -- grouping -------------------------------------------------------------------------
    def group(
        self, candidates: list[Candidate], file_scores: dict[str, float], request: SearchRequest
    ) -> list[FileHit]:
        """The shown files, each naming its collection, its path relative to its folder."""
        hits = group_files(candidates, file_scores, request, self._chunks_by_id, self._summaries)
        for hit in hits:
            hit.collection, hit.path = unqualified(hit.path)
            for passage in hit.passages:
                passage.chunk_id = unqualified(passage.chunk_id)[1]
        return hits

    def _chunks_by_id(self, chunk_ids: Sequence[str]) -> dict[str, StoredChunk]:
        chunks: dict[str, StoredChunk] = {}
        for name, ids in _by_collection(chunk_ids).items():
            found = self._indexes[name].keywords.chunks_by_id(ids)
            chunks.update((qualified(name, cid), chunk) for cid, chunk in found.items())
        return chunks

    def _summaries(self, paths: Sequence[str]) -> dict[str, FileSummary]:
        summaries: dict[str, FileSummary] = {}
        for name, own in _by_collection(paths).items():
            found = self._indexes[name].keywords.file_summaries(own)
            summaries.update((qualified(name, path), summary) for path, summary in found.items())
        return summaries


_Item = TypeVar("_Item")
_Result = TypeVar("_Result")
_POOL: list[ThreadPoolExecutor] = []
"""The threads that search several collections at once (made on first use)."""
_POOL_LOCK = threading.Lock()


def _each(items: Sequence[_Item], work: Callable[[_Item], _Result]) -> list[_Result]:
    """``work`` on each of ``items`` (one per collection), in order; several at once, since
    SQLite and Chroma leave Python's lock while they search. Each reads in the views of the
    calling thread (:class:`LentViews`): the search's one commit of each index."""
    if len(items) < 2:
        return [work(item) for item in items]
    with _POOL_LOCK:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(max_workers=4, thread_name_prefix="collections"))
    lent = LentViews()

    def in_views(item: _Item) -> _Result:
        with lent.used():
            return work(item)

    return list(_POOL[0].map(in_views, items))


def _hits_by_collection(
    hits: Iterable[tuple[str, str, float]],
) -> dict[str, list[tuple[str, str, float]]]:
    """Qualified keyword hits by collection, made unqualified, in order."""
    grouped: dict[str, list[tuple[str, str, float]]] = {}
    for cid, path, score in hits:
        name, own_id = unqualified(cid)
        grouped.setdefault(name, []).append((own_id, unqualified(path)[1], score))
    return grouped


def _by_collection(values: Iterable[str]) -> dict[str, list[str]]:
    """Qualified chunk ids or paths by collection, made unqualified, in order."""
    grouped: dict[str, list[str]] = {}
    for value in values:
        name, own = unqualified(value)
        grouped.setdefault(name, []).append(own)
    return grouped


def _places_by_collection(
    places: dict[str, tuple[str, int]],
) -> dict[str, dict[str, tuple[str, int]]]:
    grouped: dict[str, dict[str, tuple[str, int]]] = {}
    for cid, (path, start) in places.items():
        name, own_id = unqualified(cid)
        grouped.setdefault(name, {})[own_id] = (unqualified(path)[1], start)
    return grouped


def _rescaled_chunks(
    index: Index, name: str, hits: list[tuple[str, str, float]], scale: KeywordScale
) -> list[tuple[str, str, float]]:
    """One collection's keyword hits with their BM25 on the shared scale."""
    rowids = index.keywords.statistics.chunk_rowids([cid for cid, _p, _s in hits])
    own = {rowids[cid]: score for cid, _p, score in hits if cid in rowids}
    scores = scale.rescore(name, list(rowids.values()), own)
    return [(cid, path, scores.get(rowids[cid], 0.0)) for cid, path, _s in hits if cid in rowids]


def _rescaled_files(
    index: Index, name: str, found: dict[str, float], scale: KeywordScale
) -> dict[str, float]:
    """One collection's whole-file BM25 on the shared scale."""
    rowids = index.keywords.statistics.file_rowids(sorted(found))
    own = {rowid: found[path] for path, rowid in rowids.items()}
    scores = scale.rescore(name, list(rowids.values()), own)
    return {path: scores.get(rowid, 0.0) for path, rowid in rowids.items()}
