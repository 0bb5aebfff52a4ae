"""Related files: the other files most alike in content, each with the passage pair explaining it.

Two signals, added into one ranking value per candidate file:

- **Passage pairs** (meaning). Each embedded passage of the source file (at most 64, spread over
  the file) asks the vector store for its nearest passages, in one batched query. A pair counts
  by how far its cosine stands above the source passage's *background*, the mean cosine of that
  passage's 10 nearest passages in other files: a boilerplate passage ("Before you begin:
  install NGINX Plus") is close to dozens of pages and so explains none of them, while a
  passage whose one close match stands out explains that match. A candidate's pairs are
  matched one to one, strongest first, and the ``pairs`` strongest averaged, a missing pair
  counting 0: two strong matches beat one, and a one-passage stub cannot win on one line.
- **More like this** (words). The source file's most distinctive index terms (tf-idf over the
  keyword index) are OR-ed into one BM25 query; a candidate scores the BM25 of its best chunks
  relative to the best candidate's, times ``keyword_weight``: a tie-breaker among the files the
  pairs found (letting in files found by words alone did not help).

The value is multiplied by a length factor ``min(1, characters / full_length) ** 0.5`` (a
near-empty page cannot crowd out real ones) and shown as ``1 - exp(-value / 0.1)``: 0 when no
passage stands above its background, about 0.6 for a typical best neighbour, toward 1 for
passages nearly alike. The link graph is not used: neighbours are by content. The defaults were
chosen on the nginx docs, judged by each page's own links (``benchmarks/related.py``).

Passages not embedded yet take no part: a source file with some vectors answers from those, and a
file none of whose passages is embedded is not listed until it is. A source with no vectors at all
is a :class:`RelatedError` ("run explorer index"). The explaining pair of each neighbour is its
strongest passage pair.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.core.models import FileState
from explorer.core.store.index import Index
from explorer.core.store.keywords import StoredChunk


class RelatedError(ExplorerError, ValueError):
    """A file whose neighbours cannot be given; the message is meant for the user."""


class FileNotIndexed(RelatedError):
    """The file is not in the manifest (not indexed, or not an indexed kind of file)."""


class NoVectorYet(RelatedError):
    """The file is in the manifest but has no vector: still ``pending``, or ``skipped`` or
    ``failed`` (then ``reason`` says why)."""

    def __init__(self, path: str, state: FileState, reason: str, command: str) -> None:
        """``command`` brings the index up to date (``explorer index ROOT``, with its
        ``--index-dir`` when the index is not in its default place)."""
        self.path = path
        self.state = state
        self.reason = reason
        why = f"{state}: {reason}" if reason else str(state)
        super().__init__(f"{path} has no vector yet ({why}); run `{command}` to finish embedding")


@dataclass
class PassageRef:
    """A passage named by its place in a file."""

    heading: str
    start_line: int
    end_line: int
    text: str
    page: int | None = None
    """1-based page in a paged document (PDF); None elsewhere."""


@dataclass
class RelatedFile:
    """A neighbour of the source file."""

    path: str
    title: str
    score: float
    """The fused score, 0–1 (see the module docstring)."""
    source_passage: PassageRef
    """The passage of the source file closest to ``related_passage``."""
    related_passage: PassageRef


@dataclass(frozen=True)
class RelatedTuning:
    """The knobs of the method; defaults chosen on the nginx docs (benchmarks/related.py)."""

    neighbours_per_passage: int = 40
    """Nearest passages asked of the vector store for each source passage."""
    background: int = 10
    """A source passage's background is the mean cosine of its this-many nearest passages in
    other files; a pair counts by how far it stands above that. 0: raw cosines."""
    score_scale: float = 0.1
    """The score shown is ``1 - exp(-d / score_scale)`` of the ranking value ``d`` (a pair's
    distance above its background): 0 for none, 0.63 at ``score_scale``, toward 1 above."""
    headroom: bool = False
    """Count a pair as the share of the way from its background to 1 it goes, rather than
    the plain difference."""
    max_source_passages: int = 64
    """A longer source file asks for this many of its passages, spread evenly over the file."""
    pairs: int = 2
    """Strongest one-to-one passage pairs averaged into a candidate's pair score."""
    keyword_weight: float = 0.05
    """Added to the pair score: this times the candidate's BM25 relative to the best
    candidate's. Pair scores sit around 0.05-0.2, so this is a tie-breaker; 0 turns the
    keyword signal off."""
    terms: int = 24
    """Distinctive terms in the "more like this" query; 0 turns the keyword signal off."""
    keyword_chunks: int = 200
    """Chunks the "more like this" query ranks."""
    keyword_file_chunks: int = 3
    """A candidate's keyword score sums the BM25 of its best this-many chunks."""
    full_length: int = 600
    """Characters of text from which a file's length no longer lowers its score; 0: no factor."""


DEFAULT_TUNING = RelatedTuning()
PASSAGE_CHARS = 300
"""A passage that explains a neighbour is cut (at a word) after this many characters."""


def related_files(
    index: Index,
    path: str,
    limit: int = 10,
    source_vectors: dict[str, np.ndarray] | None = None,
    tuning: RelatedTuning = DEFAULT_TUNING,
) -> list[RelatedFile]:
    """The ``limit`` other files most related to ``path`` (relative to the root), best first.

    ``source_vectors`` ({chunk id: vector}) stand in for the stored vectors of ``path``: a
    reader computes them in memory for a file whose vectors are still pending.
    """
    if limit < 1:
        raise RelatedError("{0} must be at least 1", fields=("limit",))
    keywords = index.keywords
    record = keywords.file(path)
    if record is None:
        raise FileNotIndexed(f"{path} is not in the index of {index.settings.root}")
    source_ids = keywords.chunk_ids(path)
    if not source_vectors:
        source_vectors = index.vectors.chunk_vectors(source_ids) if source_ids else {}
    if not source_vectors:
        raise NoVectorYet(path, record.state, record.reason, index.settings.repair_command)
    ordered = [cid for cid in source_ids if cid in source_vectors]
    if len(ordered) > tuning.max_source_passages:
        step = len(ordered) / tuning.max_source_passages
        ordered = [ordered[int(i * step)] for i in range(tuning.max_source_passages)]
    matrix = np.asarray([source_vectors[cid] for cid in ordered], dtype=np.float32)

    pairs = _passage_pairs(index, path, ordered, matrix, len(source_ids), tuning)
    use_words = tuning.terms > 0 and tuning.keyword_weight > 0
    terms = keywords.distinctive_terms(path, tuning.terms) if use_words else []
    keyword_hits = keywords.more_like_this(terms, tuning.keyword_chunks, path) if terms else []
    keyword_best = _best_chunk_per_file(keyword_hits, tuning.keyword_file_chunks)

    candidates = set(pairs.best)  # words re-rank files with vectors; they add none
    if not candidates:
        return []
    lengths = keywords.text_lengths(sorted(candidates))
    top_bm25 = max((score for _cid, score in keyword_best.values()), default=0.0) or 1.0
    needed = min(tuning.pairs, len(ordered))
    scored = []
    for other in candidates:
        words = keyword_best[other][1] / top_bm25 if other in keyword_best else 0.0
        fused = pairs.score(other, needed) + tuning.keyword_weight * words
        scored.append((fused * _length_factor(lengths.get(other, 0), tuning), other))
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    chosen = [(_shown(value, tuning), other) for value, other in scored[:limit]]
    return _explain(index, chosen, pairs)


class _Pairs:
    """Passage pairs (value, source passage, candidate passage) found per candidate file; the
    value is the pair's cosine above its source passage's background."""

    def __init__(self) -> None:
        self.found: dict[str, list[tuple[float, str, str]]] = {}
        self.best: dict[str, tuple[float, str, str]] = {}

    def add_above_background(
        self, others: list[tuple[str, str, float]], tuning: RelatedTuning, source_id: str
    ) -> None:
        """Add the pairs of the source passage ``source_id`` with its nearest ``others``
        ((file, passage id, cosine), nearest first), each by how far its cosine stands above
        the passage's background (the mean of its ``tuning.background`` nearest; fewer than
        that in a small folder: the missing ones count as unrelated, 0)."""
        background = 0.0
        if tuning.background > 0:
            nearest = [similarity for _p, _o, similarity in others[: tuning.background]]
            background = max(0.0, sum(nearest) / tuning.background)
        for other, other_id, similarity in others:
            value = max(0.0, similarity - background)
            if tuning.headroom and background < 1.0:
                value /= 1.0 - background
            self.add(other, value, source_id, other_id)

    def add(self, path: str, similarity: float, source_id: str, other_id: str) -> None:
        self.found.setdefault(path, []).append((similarity, source_id, other_id))
        if path not in self.best or similarity > self.best[path][0]:
            self.best[path] = (similarity, source_id, other_id)

    def score(self, path: str, needed: int) -> float:
        """The mean of the ``needed`` strongest one-to-one pairs, a missing pair counting 0."""
        if needed < 1:
            return 0.0
        used_source: set[str] = set()
        used_other: set[str] = set()
        total, taken = 0.0, 0
        for similarity, source_id, other_id in sorted(self.found.get(path, ()), reverse=True):
            if source_id in used_source or other_id in used_other:
                continue
            used_source.add(source_id)
            used_other.add(other_id)
            total += max(0.0, min(1.0, similarity))
            taken += 1
            if taken == needed:
                break
        return total / needed


def _passage_pairs(
    index: Index,
    path: str,
    ordered: list[str],
    matrix: np.ndarray,
    own_count: int,
    tuning: RelatedTuning,
) -> _Pairs:
    """Ask the vector store for each source passage's nearest passages of other files.

    The source's own passages come back among the nearest, so as many more are asked for (up
    to a bound); ids the keyword index does not hold (another checkout's on a shared server, or
    replaced a moment ago) are dropped. Each pair counts by how far its cosine stands above the
    source passage's background (see :class:`RelatedTuning`): a boilerplate passage ("Before
    you begin: install NGINX Plus") is close to dozens of pages and so explains none of them.
    """
    k = tuning.neighbours_per_passage + min(own_count, tuning.neighbours_per_passage)
    answers = index.vectors.query_chunks_many(matrix, k)
    places = index.keywords.chunk_places(
        list(dict.fromkeys(cid for answer in answers for cid, _sim in answer))
    )
    pairs = _Pairs()
    for source_id, answer in zip(ordered, answers, strict=True):
        others = [
            (place[0], other_id, similarity)
            for other_id, similarity in answer
            if (place := places.get(other_id)) is not None and place[0] != path
        ][: tuning.neighbours_per_passage]
        pairs.add_above_background(others, tuning, source_id)
    return pairs


def _best_chunk_per_file(
    hits: list[tuple[str, str, float]], per_file: int
) -> dict[str, tuple[str, float]]:
    """Each file's best chunk and its keyword score: the BM25 of its ``per_file`` best chunks."""
    best: dict[str, tuple[str, float]] = {}
    counted: dict[str, int] = {}
    for chunk_id, other, score in hits:
        if other not in best:
            best[other], counted[other] = (chunk_id, score), 1
        elif counted[other] < per_file:
            best[other] = (best[other][0], best[other][1] + score)
            counted[other] += 1
    return best


def _shown(value: float, tuning: RelatedTuning) -> float:
    """The 0–1 score shown for a ranking value (monotonic, so the order is kept)."""
    if tuning.score_scale <= 0:
        return value
    return 1.0 - math.exp(-max(0.0, value) / tuning.score_scale)


def _length_factor(characters: int, tuning: RelatedTuning) -> float:
    if tuning.full_length <= 0:
        return 1.0
    return math.sqrt(min(1.0, characters / tuning.full_length))


def _explain(index: Index, chosen: list[tuple[float, str]], pairs: _Pairs) -> list[RelatedFile]:
    """Give each chosen neighbour its explaining passage pair (its strongest) and build them."""
    explained = {other: pairs.best[other][1:] for _score, other in chosen}
    chunks = index.keywords.chunks_by_id([cid for pair in explained.values() for cid in pair])
    titles = index.keywords.titles([other for _s, other in chosen])
    return _explained_files(chosen, explained, chunks, titles)


def _explained_files(
    chosen: list[tuple[float, str]],
    explained: Mapping[str, tuple[str, str]],
    chunks: Mapping[str, StoredChunk],
    titles: Mapping[str, str],
) -> list[RelatedFile]:
    """Each chosen neighbour (named as ``chosen`` names it) with its explaining pair
    (``explained``: its source and related passage ids), skipped when a passage of the pair
    changed between the reads."""
    results = []
    for score, other in chosen:
        pair = explained.get(other)
        if pair is None or pair[0] not in chunks or pair[1] not in chunks:
            continue  # changed between the reads
        results.append(
            RelatedFile(
                path=other,
                title=titles.get(other, ""),
                score=round(max(0.0, min(1.0, score)), 4),
                source_passage=_reference(chunks[pair[0]]),
                related_passage=_reference(chunks[pair[1]]),
            )
        )
    return results


def _reference(chunk: StoredChunk) -> PassageRef:
    """The passage as it stands in the file (its lines kept, so a reader can still tell a code
    fence or a list from prose), cut at a word after 300 characters."""
    text = chunk.text.strip()
    if len(text) > PASSAGE_CHARS:
        text = text[: PASSAGE_CHARS - 1].rsplit(" ", 1)[0].rstrip() + "…"
    return PassageRef(
        heading=chunk.heading,
        start_line=chunk.start_line,
        end_line=chunk.end_line,
        text=text,
        page=chunk.page,
    )
