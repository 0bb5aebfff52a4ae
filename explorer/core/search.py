"""Hybrid search: a keyword leg (SQLite FTS5, BM25) and a vector leg (Chroma), fused by RRF.

The path filter is resolved first, to the set of indexed files it matches, and both legs search
only that set, so a filter never shrinks a global top-k after the fact. Results are grouped by
file, best passage first.

Scores shown (0–1), by mode:

- ``hybrid``: the fused Reciprocal Rank Fusion value divided by the best value possible, i.e.
  ``sum(1 / (k + rank)) / (legs / (k + 1))``. 1.0 means every leg that found anything ranked the
  passage first; 0.5 means first in one of two legs and absent from the other.
- ``semantic``: the cosine similarity of query and passage (clipped to 0–1).
- ``keyword``: BM25 relative to the best BM25 of the query (the top passage has 1.0).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from explorer.core.index import Index
from explorer.core.query import PathFilter, QueryError, fts_expression, make_snippet, query_terms

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


@dataclass
class SearchResponse:
    """Results plus what a user needs to trust them: the mode that answered, filters, notes."""

    query: str
    mode: str
    results: list[FileHit]
    filters: dict[str, str] = field(default_factory=dict)
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
    prefix_last: bool = False
    """Treat the last word as a prefix (results while typing)."""


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
    if not 0.0 <= request.min_score <= 1.0:
        raise QueryError("--min-score must be between 0 and 1")
    path_filter = PathFilter(request.paths)
    allowed = path_filter.select(index.keywords.paths()) if path_filter.active else None
    response = SearchResponse(query=request.query, mode=request.mode, results=[])
    scope = (
        f"{len(allowed)} files matching {path_filter.describe()}"
        if allowed is not None
        else "all files"
    )
    if allowed is not None and not allowed:
        response.notes.append(f"no indexed file matches {path_filter.describe()}")
        return response

    settings = index.settings
    k = settings.candidates
    vector = None
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
        if request.mode in ("hybrid", "semantic"):
            if vector is None:
                vector = index.embedder.embed_query(request.query)
            vector_hits = index.vectors.query_chunks(vector, k, allowed)
            response.filters["vector"] = f"Chroma cosine over {scope}"
        passages = _fuse(index, request, keyword_hits, vector_hits)
        files = {p_path for p_path, _ in passages}
        exhausted = len(keyword_hits) < k and len(vector_hits) < k
        if len(files) >= request.limit or exhausted or k >= 8 * settings.candidates:
            break
        k *= 4

    if request.mode == "hybrid" and not keyword_hits and vector_hits:
        response.notes.append("no keyword matches: results are by meaning only")
    if request.mode == "hybrid" and keyword_hits and not vector_hits:
        response.notes.append("no vectors yet: results are by keyword only")
    response.results = _group(index, passages, request)
    return response


def _fuse(index, request, keyword_hits, vector_hits) -> list[tuple[str, Passage]]:
    """Score every candidate chunk; returns (path, passage) best first."""
    rrf_k = index.settings.rrf_k
    keyword = {cid: (rank, score) for rank, (cid, _p, score) in enumerate(keyword_hits, 1)}
    vector = {cid: (rank, sim) for rank, (cid, sim) in enumerate(vector_hits, 1)}
    legs = int(bool(keyword)) + int(bool(vector))
    best_bm25 = keyword_hits[0][2] if keyword_hits else 1.0
    chunks = index.keywords.chunks_by_id(list(dict.fromkeys([*keyword, *vector])))
    terms = query_terms(request.query)
    scored: list[tuple[str, Passage]] = []
    for cid, chunk in chunks.items():
        k_rank, k_score = keyword.get(cid, (None, None))
        v_rank, v_sim = vector.get(cid, (None, None))
        fused = sum(1.0 / (rrf_k + r) for r in (k_rank, v_rank) if r is not None)
        if request.mode == "hybrid":
            score = fused / (legs / (rrf_k + 1))
        elif request.mode == "semantic":
            score = max(0.0, min(1.0, v_sim))
        else:
            score = k_score / best_bm25 if best_bm25 > 0 else 0.0
        if score < request.min_score:
            continue
        snippet, spans = make_snippet(chunk.text, terms)
        scored.append(
            (
                chunk.path,
                Passage(
                    chunk_id=cid,
                    heading=chunk.heading,
                    start_line=chunk.start_line,
                    end_line=chunk.end_line,
                    start_char=chunk.start_char,
                    end_char=chunk.end_char,
                    score=round(score, 4),
                    snippet=snippet,
                    highlights=spans,
                    keyword_rank=k_rank,
                    keyword_score=None if k_score is None else round(k_score, 4),
                    vector_rank=v_rank,
                    vector_similarity=None if v_sim is None else round(v_sim, 4),
                    fused=round(fused, 6),
                ),
            )
        )
    scored.sort(key=lambda item: (-item[1].score, -(item[1].fused or 0), item[0]))
    return scored


def _group(index, passages: list[tuple[str, Passage]], request: SearchRequest) -> list[FileHit]:
    hits: dict[str, FileHit] = {}
    for path, passage in passages:
        hit = hits.get(path)
        if hit is None:
            if len(hits) == request.limit:
                continue
            hit = hits[path] = FileHit(path=path, title="", score=passage.score, passages=[])
        if len(hit.passages) < request.per_file:
            hit.passages.append(passage)
    titles = index.keywords.titles(list(hits))
    for hit in hits.values():
        hit.title = titles.get(hit.path, "")
    return list(hits.values())
