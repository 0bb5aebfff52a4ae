"""Hybrid search: a keyword leg (SQLite FTS5, BM25) and a vector leg (Chroma), fused.

The filters (path globs, front-matter tags and versions) are resolved first, to the set of
indexed files they allow, and both legs search only that set, so a filter never shrinks a
global top-k after the fact. Results are grouped by file, best file first and each file's best
passages first.

Scores shown (0–1), by mode:

- ``hybrid``: the fusion of ``explorer.core.retrieval.fusion`` the settings name (default
  ``calibrated``:
  ``1 / (1 + e^-f)``, ``f = 0.5 x z(cosine) + 0.5 x max(coverage^3, agreement) x z(BM25)``,
  standard scores over this query's candidates; 0.5 is an average candidate). The keyword leg's
  weight follows its coverage of the query (the share of the query's topic words its best
  passages hold), unless the legs agree (the keyword leg's 3 best passages are, by cosine, close
  to the vector leg's 3 best), and a query made only of identifiers gives the vector leg 0.2.
  A passage the vector leg did not
  return counts its measured cosine; one the keyword leg did not return counts BM25 0. Chosen
  with benchmarks/ranking.py; ``convex`` and ``rrf`` (k=60) are the alternatives.
- ``semantic``: the cosine similarity of query and passage (clipped to 0–1).
- ``keyword``: BM25 relative to the best BM25 of the query (the top passage has 1.0).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property, partial
from typing import NamedTuple, Protocol

import numpy as np

from explorer.core.ingest.documents import EntrySpan, entry_at
from explorer.core.models import FusionKind, SearchMode
from explorer.core.retrieval import scoped_legs
from explorer.core.retrieval.file_filter import FileFilter
from explorer.core.retrieval.fusion import (
    AGREEMENT_RAMP,
    FusionRule,
    LegScores,
    fuse,
    keyword_relative,
)
from explorer.core.retrieval.passage_order import content_first
from explorer.core.retrieval.query import (
    Query,
    QueryError,
    coverage,
    densest_start,
    snippet_and_matches,
)
from explorer.core.safe_text import quoted
from explorer.core.settings import IndexSettings
from explorer.core.store.index import Index
from explorer.core.store.manifest_records import FileSummary, StoredChunk
from explorer.core.store.vectors import (
    VectorStoreDamaged,
    VectorStoreUnavailable,
    file_vector_id,
)

MEASURED = 100
"""Keyword hits (best first) whose cosine is measured when the vector leg did not return them."""
COVERAGE_DEPTH = 10
"""Keyword hits (best first) looked at for the keyword leg's coverage of the query."""
PASSAGES_WEIGHED = 3
"""Passages of a result file read beyond those shown, to put its own text before a link list."""


@dataclass
class Passage:
    """One matching chunk, with every number that explains its place."""

    chunk_id: str
    heading: str
    start_line: int
    end_line: int
    start_char: int
    end_char: int
    score: float
    snippet: str
    highlights: list[tuple[int, int]]
    keyword_rank: int | None = None
    keyword_score: float | None = None
    vector_rank: int | None = None
    vector_similarity: float | None = None
    file_similarity: float | None = None
    """Cosine similarity of the passage's whole file (its stored file vector)."""
    file_keyword_score: float | None = None
    """BM25 of the passage's whole file (all its passages as one row)."""
    fused: float | None = None
    page: int | None = None
    """1-based page of a passage of a paged document (PDF); None elsewhere."""
    entry: str = ""
    """The reference entry its matching words stand in (``os.walk`` in a manual's page of
    functions), or the one it starts in; empty outside an API manual's entries."""
    entry_line: int | None = None
    """The line of that entry's term (its signature) when it stands in the passage."""
    match_line: int | None = None
    """The line of the query's words the snippet shows (their densest run in the passage);
    None when no word of the query is in it (a passage found by meaning alone)."""

    @property
    def opens_at(self) -> int:
        """The line a reader is taken to: the named entry's signature when the passage holds
        it, else the passage's first line."""
        return self.start_line if self.entry_line is None else self.entry_line

    @property
    def label(self) -> str:
        """Where the passage is, as a reader names it: its heading path, ending with the entry
        its words stand in (``Files and Directories > os.walk``)."""
        if not self.entry:
            return self.heading
        return f"{self.heading} > {self.entry}" if self.heading else self.entry


@dataclass
class FileHit:
    """A file and its best passages."""

    path: str
    title: str
    score: float
    passages: list[Passage]
    description: str = ""
    """The front matter's ``description``, if any."""
    tags: list[str] = field(default_factory=list)
    """The front matter's ``tags``, as written."""
    collection: str = ""
    """The collection the file belongs to (its ``path`` is relative to that folder); empty
    for a search of one index."""


class VectorLeg(StrEnum):
    """What the vector leg of a search gave, so a front end need not read the notes."""

    NOT_ASKED = "not_asked"
    """Keyword mode, or no file matched the filters."""
    ANSWERED = "answered"
    EMPTY = "empty"
    """Hybrid: no chunk has a vector yet, so the keyword leg answered alone."""
    UNAVAILABLE = "unavailable"
    """Hybrid: the vector store could not be reached (or is damaged); keywords answered."""


@dataclass
class SearchResponse:
    """Results plus what a user needs to trust them: the mode that answered, filters, notes."""

    query: str
    mode: SearchMode
    results: list[FileHit]
    filters: dict[str, str] = field(default_factory=dict)
    """Per leg, the set of files it searched."""
    fusion: str = ""
    """How the legs were combined (hybrid mode)."""
    notes: list[str] = field(default_factory=list)
    vector_leg: VectorLeg = VectorLeg.NOT_ASKED
    """What the vector leg gave (not part of the JSON answer: the notes say it in words)."""

    @property
    def answered_by(self) -> SearchMode:
        """The legs whose results these are: keyword when hybrid lost its vector leg."""
        if self.mode == SearchMode.HYBRID and self.vector_leg in (
            VectorLeg.EMPTY,
            VectorLeg.UNAVAILABLE,
        ):
            return SearchMode.KEYWORD
        return self.mode


@dataclass(frozen=True)
class SearchRequest:
    """What to search for and how."""

    query: str
    mode: SearchMode = SearchMode.HYBRID
    paths: tuple[str, ...] = ()
    collections: tuple[str, ...] = ()
    """Only these collections (any of them; a search over collections, see
    :class:`~explorer.core.retrieval.collections.Collections`)."""
    scopes: tuple[str, ...] = ()
    """Only the files of these named scopes (any of them; a search over collections)."""
    limit: int = 10
    per_file: int = 3
    min_score: float = 0.0
    offset: int = 0
    """Files to pass over before the ``limit`` shown ones (paging)."""
    prefix_last: bool = False
    """Treat the last word as a prefix (results while typing)."""
    tags: tuple[str, ...] = ()
    """Only files whose front matter carries any of these tags."""
    versions: tuple[str, ...] = ()
    """Only files whose front matter ``version`` is one of these."""
    exclude: tuple[str, ...] = ()
    """Leave out files under these prefixes or matching these globs (as ``paths``)."""

    @property
    def file_filter(self) -> FileFilter:
        return FileFilter(self.paths, self.tags, self.versions, self.exclude)

    @cached_property
    def parsed(self) -> Query:
        """The query parsed once, for every stage of the search."""
        return Query.parse(self.query, self.prefix_last)


class SearchPlan(Protocol):
    """One search's way through its index (or indexes): what :func:`run_search` asks of it."""

    @property
    def settings(self) -> IndexSettings:
        """The settings that rank: the fusion rule and the number of candidates."""
        ...

    @property
    def matching(self) -> int | None:
        """How many files the filters allow (None: every file, no filter)."""
        ...

    def describe_filter(self) -> str:
        """The filters in words (``guides/ and tag backup``)."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """The query's vector."""
        ...

    def prepare(self, request: SearchRequest, k: int) -> None:
        """Work :meth:`gather` will ask for that needs no query vector, done ahead while the
        query is embedded: the keyword leg's ranking, which the keyword index keeps (see
        :meth:`~explorer.core.store.keywords.KeywordIndex.search`)."""
        ...

    def gather(self, request: SearchRequest, k: int, vector: np.ndarray | None) -> Legs:
        """Both legs' ``k`` best candidates among the allowed files."""
        ...

    def keyword_leg_too_narrow(self, request: SearchRequest, k: int) -> bool:
        """Whether the keyword leg's ``k`` best rows are sure to hold fewer files than
        ``request`` shows while more rows are left (see :func:`keyword_rows_too_narrow`):
        :func:`run_search` would fuse them only to widen. It may answer False when finding
        out would cost a ranking that :meth:`gather` then makes again (one index's filtered
        leg, which is not kept)."""
        ...

    def group(
        self, candidates: list[Candidate], file_scores: dict[str, float], request: SearchRequest
    ) -> list[FileHit]:
        """The shown files with their passages (see :func:`group_files`)."""
        ...

    def vectors_lacking(self) -> str:
        """Why the vector leg found nothing although vectors were recorded (the store lacks
        them: ``N chunks recorded as embedded have no vector; run …``), else ``""``."""
        ...


class SearchSource(Protocol):
    """What :func:`run_search` searches: one index, or several collections."""

    def plan(self, request: SearchRequest) -> SearchPlan:
        """Resolve ``request``'s filters to the files allowed; ready to gather."""
        ...


@dataclass(frozen=True)
class _OneIndex:
    """One index as a :class:`SearchSource`."""

    index: Index

    def plan(self, request: SearchRequest) -> SearchPlan:
        if request.collections or request.scopes:
            raise QueryError("collection: and scope: filters need a search over collections")
        file_filter = request.file_filter
        return _OneIndexPlan(self.index, file_filter, file_filter.select(self.index.keywords))


@dataclass(frozen=True)
class _OneIndexPlan:
    """A search of one index: the files its filter allows."""

    index: Index
    file_filter: FileFilter
    allowed: list[str] | None

    @property
    def settings(self) -> IndexSettings:
        return self.index.settings

    @property
    def matching(self) -> int | None:
        return None if self.allowed is None else len(self.allowed)

    def describe_filter(self) -> str:
        return self.file_filter.describe()

    def embed_query(self, text: str) -> np.ndarray:
        return self.index.embedder.embed_query(text)

    def prepare(self, request: SearchRequest, k: int) -> None:
        rank_keywords_ahead(self.index, request, k, self.allowed)

    def gather(self, request: SearchRequest, k: int, vector: np.ndarray | None) -> Legs:
        return _gather(self.index, request, k, self.allowed, vector)

    def keyword_leg_too_narrow(self, request: SearchRequest, k: int) -> bool:
        expression = request.parsed.expression
        if self.allowed is not None or expression is None:
            return False
        hits = scoped_legs.keyword_hits(self.index, expression, k, None)
        return keyword_rows_too_narrow([hits], k, request)

    def group(
        self, candidates: list[Candidate], file_scores: dict[str, float], request: SearchRequest
    ) -> list[FileHit]:
        return _group(self.index, candidates, file_scores, request)

    def vectors_lacking(self) -> str:
        return lacking_vectors_note(self.index)


def search(index: Index, request: SearchRequest) -> SearchResponse:
    """Run a search; raises :class:`QueryError` for a query that cannot be run. Its keyword
    ranking and the passages it reads see one commit of the keyword index, whatever a live
    update writes meanwhile."""
    with index.keywords.one_view():
        return run_search(_OneIndex(index), request)


def run_search(source: SearchSource, request: SearchRequest) -> SearchResponse:
    """Run a search of ``source`` (one index, or several collections' indexes fused once);
    raises :class:`QueryError` for a query that cannot be run."""
    if request.mode not in list(SearchMode):
        modes = ", ".join(SearchMode)
        raise QueryError(f"unknown mode {quoted(request.mode)}; use one of {modes}")
    if not request.query.strip():
        raise QueryError("empty query: give some words to search for")
    if not request.parsed.terms:
        raise QueryError("the query has no words to match (only punctuation?)")
    if request.limit < 1 or request.per_file < 1:
        raise QueryError("{0} and {1} must be at least 1", fields=("limit", "per_file"))
    if request.offset < 0:
        raise QueryError("{0} must be 0 or more", fields=("offset",))
    if not 0.0 <= request.min_score <= 1.0:
        raise QueryError("{0} must be between 0 and 1", fields=("min_score",))
    plan = source.plan(request)
    matching = plan.matching
    response = SearchResponse(query=request.query, mode=SearchMode(request.mode), results=[])
    scope = (
        f"{matching} files matching {plan.describe_filter()}"
        if matching is not None
        else "all files"
    )
    if matching is not None and not matching:
        response.notes.append(f"no indexed file matches {plan.describe_filter()}")
        return response

    settings = plan.settings
    rule = fusion_rule(settings)
    k = settings.candidates
    deepest = 8 * settings.candidates
    if request.mode == SearchMode.KEYWORD:
        # A word whose best rows crowd into a few files ("c" over the kernel's docs: its 800
        # best passages lie in 4 files) widens twice below; the passes it would throw away
        # are skipped, with the same answer.
        while k < deepest and plan.keyword_leg_too_narrow(request, k):
            k *= 4
    vector = None
    vectors_lost = ""
    while True:
        if (
            request.mode in (SearchMode.HYBRID, SearchMode.SEMANTIC)
            and not vectors_lost
            and vector is None
        ):
            ahead = partial(plan.prepare, request, k) if request.mode == SearchMode.HYBRID else None
            vector = embedded_while(plan.embed_query, request.parsed.meaning_text, ahead)
        try:
            legs = plan.gather(request, k, None if vectors_lost else vector)
        except (VectorStoreUnavailable, VectorStoreDamaged) as error:
            if request.mode == SearchMode.SEMANTIC:
                raise
            vectors_lost = str(error)  # hybrid goes on with its keyword leg alone
            continue
        keyword_hits, vector_hits = legs.keyword, legs.vector
        if request.mode in (SearchMode.HYBRID, SearchMode.KEYWORD):
            response.filters["keyword"] = f"FTS5 BM25 over {scope}"
        if request.mode in (SearchMode.HYBRID, SearchMode.SEMANTIC) and not vectors_lost:
            response.filters["vector"] = f"Chroma cosine over {scope}"
        candidates, file_scores, description = _fuse(legs, request, rule)
        if request.mode == SearchMode.HYBRID:
            response.fusion = description
        files = {candidate.path for candidate in candidates}
        exhausted = len(keyword_hits) < k and len(legs.returned_vectors) < k
        wanted = request.offset + request.limit
        if len(files) >= wanted or exhausted or k >= deepest:
            break
        k *= 4

    if request.mode != SearchMode.KEYWORD:
        response.vector_leg = VectorLeg.ANSWERED
    if vectors_lost:
        response.vector_leg = VectorLeg.UNAVAILABLE
        response.notes.append(f"vectors unavailable: keyword results only; {vectors_lost}")
    elif request.mode == SearchMode.HYBRID and not keyword_hits and vector_hits:
        response.notes.append("no keyword matches: results are by meaning only")
    elif (
        request.mode != SearchMode.KEYWORD
        and not vector_hits
        and (lacking := plan.vectors_lacking())
    ):
        hybrid = request.mode == SearchMode.HYBRID  # the store lost what the index recorded
        if hybrid:
            response.vector_leg = VectorLeg.EMPTY
        by = "results are by keyword only" if hybrid else "no vectors"
        response.notes.append(f"{by}: {lacking}")
    elif request.mode == SearchMode.HYBRID and keyword_hits and not vector_hits:
        response.vector_leg = VectorLeg.EMPTY
        response.notes.append("no vectors yet: results are by keyword only")
    response.results = plan.group(candidates, file_scores, request)
    return response


def keyword_rows_too_narrow(
    legs: Sequence[Sequence[tuple[str, str, float]]], k: int, request: SearchRequest
) -> bool:
    """Whether keyword legs (each index's ``k`` best (chunk id, path, BM25), of one or several
    indexes) hold fewer files together than ``request`` shows, and at least ``k`` rows. The
    files :func:`run_search` shows are among those of its keyword leg's best ``k`` rows, so at
    that depth a keyword search shows too few and, with rows left, widens."""
    files = {(leg, path) for leg, hits in enumerate(legs) for _cid, path, _score in hits}
    rows = sum(len(hits) for hits in legs)
    return rows >= k and len(files) < request.offset + request.limit


def embedded_while(
    embed: Callable[[str], np.ndarray], text: str, work: Callable[[], None] | None
) -> np.ndarray:
    """``text``'s vector; with ``work``, embedded on a thread of its own while ``work`` runs on
    this one. The query encoder (ONNX) and the keyword ranking (SQLite) both let go of the GIL,
    so on two cores a hybrid search waits for the longer of the two, not their sum (about 7 ms
    of a 50 ms search on the kernel's docs). An error of either is raised here, ``work``'s
    first (a thread stopped by anything else embeds again here)."""
    if work is None:
        return embed(text)
    embedded: list[np.ndarray] = []
    failed: list[Exception] = []

    def run() -> None:
        try:
            embedded.append(embed(text))
        except Exception as error:  # noqa: BLE001 - raised again on the caller's thread
            failed.append(error)

    thread = threading.Thread(target=run, name="query-embedding", daemon=True)
    thread.start()
    try:
        work()
    finally:
        thread.join()
    if failed:
        raise failed[0]
    return embedded[0] if embedded else embed(text)


def rank_keywords_ahead(
    index: Index, request: SearchRequest, k: int, allowed: Sequence[str] | None
) -> None:
    """Rank the keyword leg of a search of the whole index now, so that the keyword index
    keeps the ranking for :func:`leg_hits` (a filtered leg is not kept: nothing is done)."""
    expression = request.parsed.expression
    if allowed is None and expression is not None:
        scoped_legs.keyword_hits(index, expression, k, None)


def rank_words_ahead(index: Index, request: SearchRequest) -> None:
    """For the pause before the next key: score each whole word of ``request`` alone over the
    index and keep the scores. The next word typed then ranks by adding its own phrase to them
    (:mod:`~explorer.core.store.phrase_sums`) instead of scoring every row of every word again:
    on the kernel's docs, "device tre" took 48 ms with "device" to score, 14 ms with it kept.

    Nothing while the last word is still being typed (the next key changes it), for a search
    that does not rank keywords, or for one restricted to some files (ranked among those files,
    it does not use whole-index scores)."""
    parsed = request.parsed
    expression = parsed.expression
    if (
        expression is None
        or not parsed.words_whole
        or request.mode not in (SearchMode.HYBRID, SearchMode.KEYWORD)
        or request.file_filter.active
        or request.collections
        or request.scopes
    ):
        return
    index.keywords.keep_phrase_scores(expression)


def lacking_vectors_note(index: Index) -> str:
    """What :meth:`SearchPlan.vectors_lacking` says of one index."""
    lacking = index.vectors_lacking()
    if not lacking:
        return ""
    return (
        f"{lacking} chunks recorded as embedded have no vector in the store; "
        f"run `{index.settings.repair_command}` to embed them again"
    )


@dataclass
class Legs:
    """What the two legs of one search returned, before fusion (kept by benchmarks to compare
    fusion rules on the same lists)."""

    keyword: list[tuple[str, str, float]]
    """(chunk id, path, BM25: higher is better), best first."""
    vector: list[tuple[str, float]]
    """(chunk id, cosine similarity) of chunks this index holds, best first."""
    returned_vectors: list[tuple[str, float]]
    """Everything the vector leg returned (a shared store may hold other checkouts' chunks)."""
    places: dict[str, tuple[str, int]]
    """(path, start char) of every candidate chunk."""
    measured: dict[str, float] = field(default_factory=dict)
    """Cosine similarity of the keyword leg's chunks that the vector leg did not return."""
    pending: set[str] = field(default_factory=set)
    """Chunks among the keyword leg's best that have no vector yet (being embedded)."""
    coverage: float = 1.0
    """The largest share of the query's topic words that one of the keyword leg's best
    passages holds: how well the keyword leg answers this query at all."""
    lookup: bool = False
    """The query names only identifiers (``proxy_cache_valid``, ``X-Tern-Signature``)."""
    file_similarity: dict[str, float] = field(default_factory=dict)
    """Cosine similarity of each candidate file's stored file vector (files without one are
    left out)."""
    file_keyword: dict[str, float] = field(default_factory=dict)
    """BM25 of each candidate file as a whole (files the query's words miss are left out)."""

    @property
    def embedded_share(self) -> float:
        """The share of the keyword leg's best passages (as many as are measured) that have a
        vector: below 1 while their files wait to be embedded."""
        checked = min(len(self.keyword), MEASURED)
        return 1.0 - len(self.pending) / checked if checked else 1.0


def fusion_rule(settings: IndexSettings) -> FusionRule:
    """The fusion rule the settings ask for."""
    try:
        kind = FusionKind(settings.fusion)
    except ValueError:
        choices = ", ".join(kind.value for kind in FusionKind)
        raise QueryError(f"unknown fusion {settings.fusion!r}; use one of {choices}") from None
    lookup = settings.lookup_weight if settings.lookup_weight >= 0 else None
    return FusionRule(
        kind,
        settings.semantic_weight,
        settings.rrf_k,
        keyword_confidence=settings.keyword_confidence,
        lookup_weight=lookup,
        agreement=AGREEMENT_RAMP,
        file_weight=settings.file_weight,
        file_keyword_weight=settings.file_keyword_weight,
    )


def gather_legs(index: Index, request: SearchRequest) -> Legs:
    """Both legs of a hybrid search for ``request``, as :func:`search` fetches them (no path
    filter, no widening)."""
    vector = index.embedder.embed_query(request.parsed.meaning_text)
    return _gather(index, request, index.settings.candidates, None, vector)


def _gather(
    index: Index,
    request: SearchRequest,
    k: int,
    allowed: Sequence[str] | None,
    vector: np.ndarray | None,
) -> Legs:
    keyword_hits, returned, expression = leg_hits(index, request, k, allowed, vector)
    ids = [cid for cid, _p, _s in keyword_hits] + [cid for cid, _sim in returned]
    places = index.keywords.chunk_places(list(dict.fromkeys(ids)))
    # Vectors of chunks this index does not hold (on a shared server: other checkouts'; on
    # any store: chunks replaced a moment ago) are dropped before ranks are given.
    known = [(cid, sim) for cid, sim in returned if cid in places]
    legs = Legs(keyword_hits, known, returned, places, lookup=request.parsed.lookup)
    if request.mode == SearchMode.HYBRID and vector is not None and known and keyword_hits:
        legs.measured, legs.pending = measured_cosines(
            index, vector, keyword_hits, {cid for cid, _ in known}
        )
        legs.coverage = keyword_coverage(index, request, keyword_hits)
    if vector is not None and known and index.settings.file_weight > 0:
        legs.file_similarity = file_similarities(index, vector, places)
    if expression is not None and keyword_hits and index.settings.file_keyword_weight > 0:
        candidate_files = sorted({path for path, _start in places.values()})
        legs.file_keyword = index.keywords.file_search(expression, candidate_files)
    return legs


def leg_hits(
    index: Index,
    request: SearchRequest,
    k: int,
    allowed: Sequence[str] | None,
    vector: np.ndarray | None,
) -> tuple[list[tuple[str, str, float]], list[tuple[str, float]], str | None]:
    """What each leg of one index returns for ``request``: the keyword leg's ``k`` best (chunk
    id, path, BM25), the vector leg's ``k`` nearest (chunk id, cosine), both among the
    ``allowed`` files (None: all), and the keyword leg's FTS5 expression (None: not asked)."""
    keyword_hits: list[tuple[str, str, float]] = []
    returned: list[tuple[str, float]] = []
    expression = None
    if request.mode in (SearchMode.HYBRID, SearchMode.KEYWORD):
        expression = request.parsed.expression
        if expression is None:
            if request.mode == SearchMode.KEYWORD:
                raise QueryError("the query has no words to match (only punctuation?)")
        else:
            keyword_hits = scoped_legs.keyword_hits(index, expression, k, allowed)
    if request.mode in (SearchMode.HYBRID, SearchMode.SEMANTIC) and vector is not None:
        returned = scoped_legs.vector_hits(index, vector, k, allowed)
    return keyword_hits, returned, expression


def file_similarities(
    index: Index, vector: np.ndarray, places: dict[str, tuple[str, int]]
) -> dict[str, float]:
    """The cosine similarity of each candidate file's stored file vector (the normalised mean of
    its chunks' vectors): how well the file as a whole means what the query means."""
    records = index.keywords.files_by_path(sorted({path for path, _start in places.values()}))
    ids = {file_vector_id(path, record.hash): path for path, record in records.items()}
    try:
        stored = index.vectors.file_vectors(list(ids))
    except (VectorStoreUnavailable, VectorStoreDamaged):
        return {}
    query = np.asarray(vector, dtype=np.float32)
    return {ids[fid]: float(np.dot(np.asarray(v, np.float32), query)) for fid, v in stored.items()}


def keyword_coverage(
    index: Index, request: SearchRequest, keyword_hits: Sequence[tuple[str, str, float]]
) -> float:
    matchers = request.parsed.coverage_matchers()
    chunks = index.keywords.chunks_by_id([cid for cid, _p, _s in keyword_hits[:COVERAGE_DEPTH]])
    return max(
        (
            coverage(f"{chunk.title}\n{chunk.heading}\n{chunk.text}", matchers)
            for chunk in chunks.values()
        ),
        default=0.0,
    )


def measured_cosines(
    index: Index, vector: np.ndarray, keyword_hits: Sequence[tuple[str, str, float]], seen: set[str]
) -> tuple[dict[str, float], set[str]]:
    """The cosine similarity of the best keyword hits the vector leg did not return, from their
    stored vectors, so fusion scores them by what they are rather than by a guess; and those of
    them that have no vector yet (their meaning is unknown, see :mod:`fusion`)."""
    missing = [cid for cid, _p, _s in keyword_hits[:MEASURED] if cid not in seen]
    if not missing:
        return {}, set()
    try:
        stored = index.vectors.chunk_vectors(missing)
    except (VectorStoreUnavailable, VectorStoreDamaged):
        return {}, set()
    query = np.asarray(vector, dtype=np.float32)
    cosines = {
        cid: float(np.dot(np.asarray(v, dtype=np.float32), query)) for cid, v in stored.items()
    }
    return cosines, {cid for cid in missing if cid not in stored}


def rank_legs(legs: Legs, rule: FusionRule) -> list[str]:
    """Files best first under ``rule`` (hybrid, no score cut): how benchmarks compare rules."""
    candidates, file_scores, _ = _fuse(legs, SearchRequest("x", mode=SearchMode.HYBRID), rule)
    return sorted(file_scores, key=lambda path: (-file_scores[path], path))


class Candidate(NamedTuple):
    """A scored chunk before it becomes a :class:`Passage` (only the shown ones do); a named
    tuple, as :class:`~explorer.core.retrieval.fusion.LegScores`, for the same reason."""

    chunk_id: str
    path: str
    start_char: int
    score: float
    fused: float
    keyword_rank: int | None
    keyword_score: float | None
    vector_rank: int | None
    vector_similarity: float | None
    file_similarity: float | None
    file_keyword_score: float | None


def _fuse(
    legs: Legs, request: SearchRequest, rule: FusionRule
) -> tuple[list[Candidate], dict[str, float], str]:
    """Score every candidate chunk and every file.

    Returns the candidates passing ``min_score``, best first, each file's score, and the
    fusion rule in words with this query's numbers.
    """
    keyword = {cid: (rank, score) for rank, (cid, _p, score) in enumerate(legs.keyword, 1)}
    vector = {cid: (rank, sim) for rank, (cid, sim) in enumerate(legs.vector, 1)}
    ids = [cid for cid in legs.places if cid in keyword or cid in vector]
    legs_of: list[LegScores] = []
    for cid in ids:
        keyword_rank, keyword_score = keyword.get(cid, (None, None))
        vector_rank, vector_similarity = vector.get(cid, (None, None))
        legs_of.append(
            LegScores(
                keyword_rank,
                keyword_score,
                vector_rank,
                vector_similarity,
                legs.measured.get(cid),
                legs.file_similarity.get(legs.places[cid][0]),
                legs.file_keyword.get(legs.places[cid][0]),
                cid in legs.pending,
            )
        )
    description = ""
    if request.mode == SearchMode.HYBRID:
        scores, description = fuse(rule, legs_of, legs.coverage, legs.lookup, legs.embedded_share)
    elif request.mode == SearchMode.SEMANTIC:
        scores = [
            _unit(leg.meaning(leg.vector_similarity or 0.0, rule.file_weight)) for leg in legs_of
        ]
    else:
        scores = keyword_relative(
            [leg.keyword_score or 0.0 for leg in legs_of],
            [leg.file_keyword_score or 0.0 for leg in legs_of],
            rule.file_keyword_weight,
        )
    scored: list[Candidate] = []
    file_scores: dict[str, float] = {}
    for cid, leg, score in zip(ids, legs_of, scores, strict=True):
        path, start_char = legs.places[cid]
        file_scores[path] = max(file_scores.get(path, 0.0), score)
        if score >= request.min_score:
            scored.append(
                Candidate(
                    cid,
                    path,
                    start_char,
                    score,
                    score,
                    leg.keyword_rank,
                    leg.keyword_score,
                    leg.vector_rank,
                    # a passage the vector leg did not return shows its measured cosine
                    leg.vector_similarity
                    if leg.vector_similarity is not None
                    else leg.measured_similarity,
                    leg.file_similarity,
                    leg.file_keyword_score,
                )
            )
    scored.sort(key=lambda c: (-round(c.score, 4), c.path, c.start_char))  # as shown: 4 places
    return scored, file_scores, description


def _unit(value: float) -> float:
    return max(0.0, min(1.0, value))


def _group(
    index: Index,
    candidates: list[Candidate],
    file_scores: dict[str, float],
    request: SearchRequest,
) -> list[FileHit]:
    """The best files, each with its best passages, snippets made for those alone."""
    return group_files(
        candidates,
        file_scores,
        request,
        index.keywords.chunks_by_id,
        index.keywords.file_summaries,
    )


def group_files(
    candidates: list[Candidate],
    file_scores: dict[str, float],
    request: SearchRequest,
    chunks_by_id: Callable[[Sequence[str]], Mapping[str, StoredChunk]],
    file_summaries: Callable[[Sequence[str]], Mapping[str, FileSummary]],
) -> list[FileHit]:
    """The best files, each with its best passages, snippets made for those alone; the
    passages' text and the files' titles are read with ``chunks_by_id`` and
    ``file_summaries``."""
    by_file: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        by_file.setdefault(candidate.path, []).append(candidate)
    ranked = sorted(by_file, key=lambda path: (-file_scores[path], path))
    ranked = ranked[request.offset : request.offset + request.limit]
    # A few more passages than shown are read, so a file's own text can lead before a list
    # of links to other pages (explorer.core.retrieval.passage_order).
    pool = {path: by_file[path][: request.per_file + PASSAGES_WEIGHED] for path in ranked}
    chunks = chunks_by_id([c.chunk_id for group in pool.values() for c in group])

    def text_of(candidate: Candidate) -> str | None:
        chunk = chunks.get(candidate.chunk_id)
        return chunk.text if chunk is not None else None

    shown = {
        path: content_first(group, text_of)[: request.per_file] for path, group in pool.items()
    }
    summaries = file_summaries(ranked)
    terms, typed_word = list(request.parsed.terms), request.parsed.prefix_word
    hits = []
    for path in ranked:
        passages = []
        for candidate in shown[path]:
            chunk = chunks.get(candidate.chunk_id)
            if chunk is None:  # removed between the two reads
                continue
            snippet, highlights, matches = snippet_and_matches(
                chunk.text, terms, typed_word=typed_word
            )
            entry = named_entry(chunk, matches)
            passages.append(_passage(candidate, chunk, snippet, highlights, entry, matches))
        if passages:
            summary = summaries.get(path) or FileSummary("")
            hits.append(
                FileHit(
                    path,
                    summary.title,
                    round(file_scores[path], 4),
                    passages,
                    summary.description,
                    list(summary.tags),
                )
            )
    return hits


def named_entry(chunk: StoredChunk, matches: Sequence[tuple[int, int]]) -> EntrySpan | None:
    """The entry of ``chunk`` its matching words stand in (``matches``: where the query's
    words stand in its text, :func:`~explorer.core.retrieval.query.word_matches`): the one
    holding the most of them (a member rather than its class, where it holds them); without a
    word matched, the one that holds most of the passage."""
    if not chunk.entries:
        return None
    text, found = chunk.text, dict[EntrySpan, tuple[set[str], int]]()
    line, counted, entry = chunk.start_line, 0, None
    for start, end in matches:  # in order: lines counted once
        before = line
        line += text.count("\n", counted, start)
        counted = start
        if entry is None or line != before:
            entry = entry_at(chunk.entries, line)
        if entry is not None:
            words, count = found.get(entry, (set(), 0))
            words.add(text[start:end].casefold())
            found[entry] = (words, count + 1)
    if found:
        return max(found, key=lambda entry: (len(found[entry][0]), found[entry][1]))
    lines = chunk.end_line - chunk.start_line + 1
    for entry in reversed(chunk.entries):  # the innermost: a member before its class
        held = min(entry.end_line, chunk.end_line) - max(entry.start_line, chunk.start_line) + 1
        if 2 * held >= lines:
            return entry
    return None


def _passage(
    candidate: Candidate,
    chunk: StoredChunk,
    snippet: str,
    highlights: list[tuple[int, int]],
    entry: EntrySpan | None,
    matches: Sequence[tuple[int, int]],
) -> Passage:
    """The passage of ``chunk`` as a result shows it; ``matches``: where the query's words
    stand in its text (the line of their densest run is where a reader is shown them)."""
    match_line = None
    if matches:
        match_line = chunk.start_line + chunk.text.count("\n", 0, densest_start(matches))
    return Passage(
        chunk_id=candidate.chunk_id,
        heading=chunk.heading,
        start_line=chunk.start_line,
        end_line=chunk.end_line,
        start_char=chunk.start_char,
        end_char=chunk.end_char,
        score=round(candidate.score, 4),
        snippet=snippet,
        highlights=highlights,
        keyword_rank=candidate.keyword_rank,
        keyword_score=None
        if candidate.keyword_score is None
        else round(candidate.keyword_score, 4),
        vector_rank=candidate.vector_rank,
        vector_similarity=(
            None if candidate.vector_similarity is None else round(candidate.vector_similarity, 4)
        ),
        file_similarity=(
            None if candidate.file_similarity is None else round(candidate.file_similarity, 4)
        ),
        file_keyword_score=(
            None if candidate.file_keyword_score is None else round(candidate.file_keyword_score, 4)
        ),
        fused=round(candidate.fused, 6),
        page=chunk.page,
        entry=entry.title if entry is not None else "",
        entry_line=(
            entry.start_line
            if entry is not None and chunk.start_line <= entry.start_line <= chunk.end_line
            else None
        ),
        match_line=match_line,
    )
