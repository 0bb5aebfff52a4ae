"""Hybrid search: a keyword leg (SQLite FTS5, BM25) and a vector leg (Chroma), fused.

The filters (path globs, front-matter tags and versions) are resolved first, to the set of
indexed files they allow, and both legs search only that set, so a filter never shrinks a
global top-k after the fact. Results are grouped by file, best file first and each file's best
passages first.

Scores shown (0–1), by mode:

- ``hybrid`` (default fusion ``convex``): ``0.7 x cosine similarity + 0.3 x BM25 / best BM25``.
  A passage the vector leg did not return counts the lowest similarity it did return; one the
  keyword leg did not return counts 0. A file scores as its best passage. The weight 0.7 was
  chosen on BEIR SciFact train (benchmarks/fusion.py), where it beat Reciprocal Rank Fusion;
  ``fusion="rrf"`` (k=60, scores divided by the best possible value) is the alternative.
- ``semantic``: the cosine similarity of query and passage (clipped to 0–1).
- ``keyword``: BM25 relative to the best BM25 of the query (the top passage has 1.0).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from explorer.core.file_filter import FileFilter
from explorer.core.index import Index
from explorer.core.manifest_records import FileSummary
from explorer.core.query import QueryError, fts_expression, make_snippet, query_terms
from explorer.core.vectors import VectorStoreDamaged, VectorStoreUnavailable

MODES = ("hybrid", "semantic", "keyword")


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
    fused: float | None = None


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


@dataclass
class SearchResponse:
    """Results plus what a user needs to trust them: the mode that answered, filters, notes."""

    query: str
    mode: str
    results: list[FileHit]
    filters: dict[str, str] = field(default_factory=dict)
    """Per leg, the set of files it searched."""
    fusion: str = ""
    """How the legs were combined (hybrid mode)."""
    notes: list[str] = field(default_factory=list)

    def as_json(self, explain: bool = False) -> dict:
        data = asdict(self)
        if not explain:
            for hit in data["results"]:
                for passage in hit["passages"]:
                    for key in (
                        "keyword_rank",
                        "keyword_score",
                        "vector_rank",
                        "vector_similarity",
                        "fused",
                    ):
                        passage.pop(key)
        return data


@dataclass(frozen=True)
class SearchRequest:
    """What to search for and how."""

    query: str
    mode: str = "hybrid"
    paths: tuple[str, ...] = ()
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

    @property
    def file_filter(self) -> FileFilter:
        return FileFilter(self.paths, self.tags, self.versions)


def search(index: Index, request: SearchRequest) -> SearchResponse:
    """Run a search; raises :class:`QueryError` for a query that cannot be run."""
    if request.mode not in MODES:
        raise QueryError(f"unknown mode {request.mode!r}; use one of {', '.join(MODES)}")
    if not request.query.strip():
        raise QueryError("empty query: give some words to search for")
    if not query_terms(request.query):
        raise QueryError("the query has no words to match (only punctuation?)")
    if request.limit < 1 or request.per_file < 1:
        raise QueryError("--limit and --per-file must be at least 1")
    if request.offset < 0:
        raise QueryError("--offset must be 0 or more")
    if not 0.0 <= request.min_score <= 1.0:
        raise QueryError("--min-score must be between 0 and 1")
    file_filter = request.file_filter
    allowed = file_filter.select(index.keywords)
    response = SearchResponse(query=request.query, mode=request.mode, results=[])
    scope = (
        f"{len(allowed)} files matching {file_filter.describe()}"
        if allowed is not None
        else "all files"
    )
    if allowed is not None and not allowed:
        response.notes.append(f"no indexed file matches {file_filter.describe()}")
        return response

    settings = index.settings
    k = settings.candidates
    vector = None
    vectors_lost = ""
    while True:
        keyword_hits, vector_hits = [], []
        if request.mode in ("hybrid", "keyword"):
            expression = fts_expression(request.query, request.prefix_last)
            if expression is None:
                if request.mode == "keyword":
                    raise QueryError("the query has no words to match (only punctuation?)")
            else:
                keyword_hits = index.keywords.search(expression, k, allowed)
            response.filters["keyword"] = f"FTS5 BM25 over {scope}"
        if request.mode == "hybrid":
            response.fusion = _describe_fusion(settings)
        if request.mode in ("hybrid", "semantic") and not vectors_lost:
            if vector is None:
                vector = index.embedder.embed_query(request.query)
            try:
                vector_hits = index.vectors.query_chunks(vector, k, allowed)
            except (VectorStoreUnavailable, VectorStoreDamaged) as error:
                if request.mode == "semantic":
                    raise
                vectors_lost = str(error)  # hybrid goes on with its keyword leg alone
            else:
                response.filters["vector"] = f"Chroma cosine over {scope}"
        candidates, file_scores = _fuse(index, request, keyword_hits, vector_hits)
        files = {candidate.path for candidate in candidates}
        exhausted = len(keyword_hits) < k and len(vector_hits) < k
        wanted = request.offset + request.limit
        if len(files) >= wanted or exhausted or k >= 8 * settings.candidates:
            break
        k *= 4

    if vectors_lost:
        response.notes.append(f"vectors unavailable: keyword results only; {vectors_lost}")
    elif request.mode == "hybrid" and not keyword_hits and vector_hits:
        response.notes.append("no keyword matches: results are by meaning only")
    elif request.mode == "hybrid" and keyword_hits and not vector_hits:
        response.notes.append("no vectors yet: results are by keyword only")
    response.results = _group(index, candidates, file_scores, request)
    return response


@dataclass(frozen=True)
class _Candidate:
    """A scored chunk before it becomes a :class:`Passage` (only the shown ones do)."""

    chunk_id: str
    path: str
    start_char: int
    score: float
    fused: float
    keyword_rank: int | None
    keyword_score: float | None
    vector_rank: int | None
    vector_similarity: float | None


def _fuse(index, request, keyword_hits, vector_hits) -> tuple[list[_Candidate], dict]:
    """Score every candidate chunk and every file.

    Returns the candidates passing ``min_score``, best first, and each file's score.
    """
    settings = index.settings
    keyword = {cid: (rank, score) for rank, (cid, _p, score) in enumerate(keyword_hits, 1)}
    ids = [*keyword, *(cid for cid, _sim in vector_hits)]
    places = index.keywords.chunk_places(list(dict.fromkeys(ids)))
    # Vectors of chunks this index does not hold (on a shared server: other checkouts'; on
    # any store: chunks replaced a moment ago) are dropped before ranks are given.
    known = [(cid, sim) for cid, sim in vector_hits if cid in places]
    vector = {cid: (rank, sim) for rank, (cid, sim) in enumerate(known, 1)}
    best_bm25 = keyword_hits[0][2] if keyword_hits and keyword_hits[0][2] > 0 else 1.0
    fusion = _Fusion(settings, keyword, vector, best_bm25) if request.mode == "hybrid" else None
    scored: list[_Candidate] = []
    file_scores: dict[str, float] = {}
    for cid, (path, start_char) in places.items():
        k_rank, k_score = keyword.get(cid, (None, None))
        v_rank, v_sim = vector.get(cid, (None, None))
        if fusion is not None:
            score = fusion.chunk(k_rank, k_score, v_rank, v_sim)
        elif request.mode == "semantic":
            score = _unit(v_sim)
        else:
            score = k_score / best_bm25
        file_scores[path] = max(file_scores.get(path, 0.0), score)
        if score >= request.min_score:
            scored.append(
                _Candidate(cid, path, start_char, score, score, k_rank, k_score, v_rank, v_sim)
            )
    scored.sort(key=lambda c: (-round(c.score, 4), c.path, c.start_char))  # as shown: 4 places
    return scored, file_scores


def _describe_fusion(settings) -> str:
    if settings.fusion == "rrf":
        return f"reciprocal rank fusion, k={settings.rrf_k}"
    w = settings.semantic_weight
    return f"{w:g} x cosine + {1 - w:g} x BM25/best BM25"


def _unit(value: float) -> float:
    return max(0.0, min(1.0, value))


class _Fusion:
    """The hybrid score of chunks and files from the two legs' results.

    ``convex`` (default): ``w * cosine + (1 - w) * BM25 / best BM25``, with w the semantic
    weight; a chunk the vector leg did not return counts the lowest similarity it did return,
    one the keyword leg did not return counts 0; when a leg returned nothing at all, the other
    leg's score stands alone. ``rrf``: ``sum(1 / (k + rank))`` divided by
    its best possible value. Either way a file scores as its best chunk.
    """

    def __init__(self, settings, keyword: dict, vector: dict, best_bm25: float) -> None:
        self.kind = settings.fusion
        self.weight = settings.semantic_weight
        self.rrf_k = settings.rrf_k
        self.best_bm25 = best_bm25
        self.floor = min((sim for _r, sim in vector.values()), default=0.0)
        self.has_keywords, self.has_vectors = bool(keyword), bool(vector)
        self.legs = int(self.has_keywords) + int(self.has_vectors)

    def chunk(self, k_rank, k_score, v_rank, v_sim) -> float:
        if self.kind == "rrf":
            fused = sum(1.0 / (self.rrf_k + r) for r in (k_rank, v_rank) if r is not None)
            return _unit(fused / (self.legs / (self.rrf_k + 1)))
        cosine = _unit(self.floor if v_sim is None else v_sim)
        relative_bm25 = 0.0 if k_score is None else k_score / self.best_bm25
        if not self.has_vectors:  # a leg that found nothing (no vectors yet) does not count
            return _unit(relative_bm25)
        if not self.has_keywords:
            return cosine
        return _unit(self.weight * cosine + (1.0 - self.weight) * relative_bm25)


def _group(
    index, candidates: list[_Candidate], file_scores: dict, request: SearchRequest
) -> list[FileHit]:
    """The best files, each with its best passages, snippets made for those alone."""
    by_file: dict[str, list[_Candidate]] = {}
    for candidate in candidates:
        by_file.setdefault(candidate.path, []).append(candidate)
    ranked = sorted(by_file, key=lambda path: (-file_scores[path], path))
    ranked = ranked[request.offset : request.offset + request.limit]
    shown = {path: by_file[path][: request.per_file] for path in ranked}
    chunks = index.keywords.chunks_by_id([c.chunk_id for group in shown.values() for c in group])
    summaries = index.keywords.file_summaries(ranked)
    terms = query_terms(request.query)
    hits = []
    for path in ranked:
        passages = []
        for candidate in shown[path]:
            chunk = chunks.get(candidate.chunk_id)
            if chunk is None:  # removed between the two reads
                continue
            snippet, highlights = make_snippet(chunk.text, terms)
            passages.append(_passage(candidate, chunk, snippet, highlights))
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


def _passage(candidate: _Candidate, chunk, snippet: str, highlights) -> Passage:
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
        fused=round(candidate.fused, 6),
    )
