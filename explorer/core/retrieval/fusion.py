"""Fusion of the keyword and vector legs of hybrid search into one 0–1 score per passage.

Each candidate passage carries what the two legs said about it (:class:`LegScores`); a
:class:`FusionRule` turns all of one query's candidates into scores at once, because the
calibrated rules look at the whole list: how the scores of each leg spread for this query.

Rules (``FusionKind``):

- ``calibrated`` (default): each leg's scores are standardised over this query's candidates
  (z = (score − mean) / standard deviation, a passage a leg did not match counting BM25 0 and
  its measured cosine), so a leg whose best passages stand far above the rest for this query
  counts more, and MiniLM's narrow band of cosines is stretched to the same scale as BM25. The
  fused value ``f = w × z(cosine) + (1 − w) × c^p × z(BM25)`` is shown as ``1 / (1 + e^−f)``:
  0.5 is a passage as good as this query's average candidate, 0.9 one about 2.2 standard
  deviations above it. ``c`` is the keyword leg's coverage of the query (the share of its topic
  words that the keyword leg's best passages hold): a question in everyday words whose words
  the keyword leg found only here and there weighs little on the keyword side, unless the two
  legs agree: with ``agreement``, the keyword side's factor is ``max(c^p, a)``, where ``a``
  ramps from 0 to 1 as the mean cosine of the keyword leg's 3 best passages goes from
  ``agreement[0]`` to ``agreement[1]`` times the mean cosine of the vector leg's 3 best. A long
  claim whose words the keyword leg holds only in part, but whose keyword hits mean what the
  query means, keeps its keyword weight; hits on incidental words (far from the query's
  meaning) do not. A query made
  only of identifiers uses ``lookup_weight`` as ``w`` (meaning says little about
  ``proxy_cache_valid``).

  Each leg also hears the passage's whole file: with ``file_weight`` the cosine becomes the
  passage's *meaning*, ``(cosine + w_f x file cosine) / (1 + w_f)`` (the file's stored vector),
  and with ``file_keyword_weight`` z(BM25) becomes its *words*,
  ``(z(BM25) + w_k x z(file BM25)) / (1 + w_k)`` (the BM25 of the whole file as one row), so a
  passage in a page about the query beats an equal passage in a page that mentions it once.

  While a folder is being embedded, some candidates have no vector yet: their meaning is
  unknown, not poor. With ``pending_meaning``, such a passage counts as this query's average
  candidate by meaning (z = 0; convex: the mean cosine of the candidates that have one), and
  the vector leg's weight is multiplied by the *embedded share* (the share of the keyword leg's
  best passages that have a vector) to the power ``embedded_power``. The vector leg has then
  seen only part of the places the words point to, and the best of a few unrelated vectors (a
  cosine of 0.14 standardised over an index 13 % embedded) no longer outranks passages that
  hold the query's words.
- ``convex``: ``w × cosine + (1 − w) × c^p × BM25 / best BM25`` (the rule before calibration,
  with ``p = 0``).
- ``rrf``: Reciprocal Rank Fusion, ``Σ 1 / (k + rank)`` divided by its best possible value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from explorer.core.models import FusionKind


class LegScores(NamedTuple):
    """What each leg said about one candidate passage (None: the leg did not return it).

    A named tuple: a search makes one per candidate passage (3,200 for "c" on the kernel's
    docs), and a frozen dataclass took 2.8 µs to make against 0.8."""

    keyword_rank: int | None
    keyword_score: float | None
    vector_rank: int | None
    vector_similarity: float | None
    measured_similarity: float | None = None
    """Cosine similarity computed for a passage the vector leg did not return (None: unknown)."""
    file_similarity: float | None = None
    """Cosine similarity of the passage's whole file (its stored file vector, the normalised
    mean of its chunks' vectors; None: not stored yet)."""
    file_keyword_score: float | None = None
    """BM25 of the passage's whole file (None: the file does not match the query's words, or
    the index has no file table yet)."""
    pending: bool = False
    """The passage has no vector yet (its file waits to be embedded): its meaning is unknown."""

    def meaning(self, cosine: float, file_weight: float) -> float:
        """The vector side of this passage: its cosine, with ``file_weight`` of its file's
        (``(cosine + w x file cosine) / (1 + w)``; the cosine alone without a file vector)."""
        if self.file_similarity is None or file_weight <= 0:
            return cosine
        return (cosine + file_weight * self.file_similarity) / (1 + file_weight)


@dataclass(frozen=True)
class FusionRule:
    """A fusion kind and its parameters."""

    kind: FusionKind = FusionKind.CALIBRATED
    semantic_weight: float = 0.5
    rrf_k: int = 60
    measured: bool = True
    """Score a passage the vector leg missed by its measured cosine, not the leg's lowest."""
    keyword_confidence: float = 0.0
    """Exponent of the keyword leg's coverage of the query on its weight (0: fixed weights)."""
    lookup_weight: float | None = None
    """The vector leg's weight for a query that names only identifiers (None: the usual)."""
    agreement: tuple[float, float] | None = None
    """Where the legs' agreement (mean cosine of the keyword leg's best passages over the
    vector leg's) starts and ends lifting the keyword factor to 1 (None: coverage alone)."""
    file_weight: float = 0.0
    """Weight of the passage's whole-file cosine next to its own (see :meth:`LegScores.meaning`)."""
    file_keyword_weight: float = 0.0
    """Weight of the whole file's BM25 next to the passage's own on the keyword side:
    ``(z(BM25) + w x z(file BM25)) / (1 + w)`` (convex: each over its best)."""
    pending_meaning: bool = True
    """A passage without a vector yet counts as the average candidate by meaning, and the vector
    leg weighs by the embedded share (False: it counts as the vector leg's lowest cosine)."""
    embedded_power: float = 2.0
    """Exponent of the embedded share on the vector leg's weight (with ``pending_meaning``).
    Chosen on nginx and the vault cut down to folders embedded in part (``benchmarks/
    ranking.py --pending``; ``benchmarks/RESULTS.md``, "Folders being embedded")."""

    def vector_factor(self, embedded_share: float) -> float:
        """What the vector leg's weight is multiplied by when only ``embedded_share`` of the
        keyword leg's best passages have vectors (1 without ``pending_meaning``)."""
        return embedded_share**self.embedded_power if self.pending_meaning else 1.0

    def describe(
        self,
        coverage: float | None = None,
        agreement: float | None = None,
        embedded_share: float = 1.0,
    ) -> str:
        """The rule in words; with ``coverage`` (and ``agreement``), this query's keyword
        weight too; with an ``embedded_share`` below 1, the vector leg's weight it gave."""
        if self.kind is FusionKind.RRF:
            return f"reciprocal rank fusion, k={self.rrf_k}"
        w = self.semantic_weight
        leg = "BM25/best BM25" if self.kind is FusionKind.CONVEX else "z(BM25)"
        if self.file_keyword_weight > 0:
            leg = "words"
        cosine = "cosine"
        if self.file_weight > 0:
            cosine = "meaning"
        keyword = f"{1 - w:g}"
        if self.keyword_confidence and self.agreement:
            keyword += f" x max(coverage^{self.keyword_confidence:g}, agreement)"
        elif self.keyword_confidence:
            keyword += f" x coverage^{self.keyword_confidence:g}"
        if self.kind is FusionKind.CONVEX:
            text = f"{w:g} x {cosine} + {keyword} x {leg}"
        else:
            text = f"logistic({w:g} x z({cosine}) + {keyword} x {leg}), z over the candidates"
        if self.file_weight > 0:
            f = self.file_weight
            text += f"; meaning = (cosine + {f:g} x file cosine) / {1 + f:g}"
        if self.file_keyword_weight > 0:
            f = self.file_keyword_weight
            one = "BM25/best" if self.kind is FusionKind.CONVEX else "z(BM25)"
            whole = "file BM25/best" if self.kind is FusionKind.CONVEX else "z(file BM25)"
            text += f"; words = ({one} + {f:g} x {whole}) / {1 + f:g}"
        if coverage is not None and self.keyword_confidence:
            factor = coverage**self.keyword_confidence
            numbers = f"coverage {coverage:.2f}"
            if self.agreement and agreement is not None:
                factor = max(factor, agreement)
                numbers += f", agreement {agreement:.2f}"
            text += f"; this query: {numbers}, keyword weight {(1 - w) * factor:.3g}"
        if embedded_share < 1.0 and self.pending_meaning:
            text += (
                f"; {embedded_share:.0%} of the keyword leg's best passages have vectors yet:"
                f" vector weight {w * self.vector_factor(embedded_share):.3g}"
            )
        return text


def fuse(
    rule: FusionRule,
    candidates: Sequence[LegScores],
    coverage: float = 1.0,
    lookup: bool = False,
    embedded_share: float = 1.0,
) -> tuple[list[float], str]:
    """Scores (0–1) for ``candidates`` under ``rule``, and the rule with this query's numbers.

    ``coverage`` is the share of the query's topic words the keyword leg's best passages hold;
    ``lookup``: the query names only identifiers; ``embedded_share``: the share of the keyword
    leg's best passages that have a vector (below 1 while the folder is being embedded).
    """
    note = ""
    if lookup and rule.lookup_weight is not None:
        rule = replace(rule, semantic_weight=rule.lookup_weight, lookup_weight=None)
        note = " (the query names only identifiers)"
    if not candidates:
        return [], rule.describe()
    has_keywords = any(c.keyword_rank is not None for c in candidates)
    has_vectors = any(c.vector_rank is not None for c in candidates)
    if rule.kind is FusionKind.RRF:
        legs = int(has_keywords) + int(has_vectors)
        best = legs / (rule.rrf_k + 1)
        scores = [
            _unit(sum(1.0 / (rule.rrf_k + r) for r in (c.keyword_rank, c.vector_rank) if r) / best)
            for c in candidates
        ]
        return scores, rule.describe()
    floor = min(
        (c.vector_similarity for c in candidates if c.vector_similarity is not None), default=0.0
    )
    cosines = [c.meaning(_cosine(c, floor, rule.measured), rule.file_weight) for c in candidates]
    known = [not (c.pending and rule.pending_meaning) for c in candidates]
    if not all(known):  # a pending passage: this query's average candidate by meaning
        average = _mean([c for c, k in zip(cosines, known, strict=True) if k], default=floor)
        cosines = [c if k else average for c, k in zip(cosines, known, strict=True)]
    bm25 = [c.keyword_score or 0.0 for c in candidates]
    file_bm25 = [c.file_keyword_score or 0.0 for c in candidates]
    if not any(file_bm25):  # no file matched, or no file table yet: the rule says so too
        rule = replace(rule, file_keyword_weight=0.0)
    agreement = None
    if rule.agreement and has_vectors and has_keywords:
        agreement = _agreement(candidates, cosines, known, rule.agreement)
    described = rule.describe(coverage, agreement, embedded_share) + note
    if not has_vectors:  # a leg that found nothing (no vectors yet) does not count
        return [
            _unit(b) for b in keyword_relative(bm25, file_bm25, rule.file_keyword_weight)
        ], described
    if not has_keywords:
        return [_unit(c) for c in cosines], described
    w = rule.semantic_weight
    factor = coverage**rule.keyword_confidence
    if agreement is not None:
        factor = max(factor, agreement)
    keyword_weight = (1 - w) * factor
    w *= rule.vector_factor(embedded_share)
    if rule.kind is FusionKind.CONVEX:
        words = keyword_relative(bm25, file_bm25, rule.file_keyword_weight)
        return [
            _unit(w * c + keyword_weight * b) for c, b in zip(cosines, words, strict=True)
        ], described
    z_cos, z_words = _standardise(cosines, known), _standardise(bm25)
    if rule.file_keyword_weight > 0:
        f = rule.file_keyword_weight
        z_words = [
            (b + f * fb) / (1 + f) for b, fb in zip(z_words, _standardise(file_bm25), strict=True)
        ]
    scores = [_logistic(w * c + keyword_weight * b) for c, b in zip(z_cos, z_words, strict=True)]
    return scores, described


def keyword_relative(
    bm25: Sequence[float], file_bm25: Sequence[float], weight: float
) -> list[float]:
    """The keyword side on a 0–1 scale: each passage's BM25 over the best one's, with ``weight``
    of its file's BM25 over the best file's (``(b + w x f) / (1 + w)``; the file term only when
    some file matched). The keyword mode's score, and the convex rule's keyword leg."""
    best = max(bm25, default=0.0) or 1.0
    if weight <= 0 or not any(file_bm25):
        return [b / best for b in bm25]
    best_file = max(file_bm25)
    return [
        (b / best + weight * fb / best_file) / (1 + weight)
        for b, fb in zip(bm25, file_bm25, strict=True)
    ]


AGREEMENT_RAMP = (0.4, 0.7)
"""The default :attr:`FusionRule.agreement`: chosen on the nginx dev set, sample_docs and
SciFact train (``benchmarks/RESULTS.md``, "Second pass")."""

AGREEMENT_DEPTH = 3
"""Passages of each leg (its best) whose cosines the legs' agreement compares."""


def _agreement(
    candidates: Sequence[LegScores],
    cosines: list[float],
    known: list[bool],
    ramp: tuple[float, float],
) -> float:
    """How far the keyword leg's best passages mean what the vector leg's best do: the ratio of
    their mean cosines, mapped linearly from ``ramp[0]`` (0) to ``ramp[1]`` (1) and clipped.
    Passages whose meaning is unknown (``known`` False) are left out."""

    def best_mean(rank_of: Callable[[LegScores], int | None]) -> float:
        ranked = sorted(
            (rank, cos)
            for c, cos, k in zip(candidates, cosines, known, strict=True)
            if k and (rank := rank_of(c))
        )
        return _mean([cos for _rank, cos in ranked[:AGREEMENT_DEPTH]])

    vector_best = best_mean(lambda c: c.vector_rank)
    if vector_best <= 0:
        return 0.0
    ratio = best_mean(lambda c: c.keyword_rank) / vector_best
    low, high = ramp
    return max(0.0, min(1.0, (ratio - low) / (high - low)))


def _cosine(candidate: LegScores, floor: float, measured: bool) -> float:
    if candidate.vector_similarity is not None:
        return candidate.vector_similarity
    if measured and candidate.measured_similarity is not None:
        return candidate.measured_similarity
    return floor


def _standardise(values: list[float], counted: list[bool] | None = None) -> list[float]:
    """z of every value, over the mean and spread of the ``counted`` ones (None: all)."""
    sample = values if counted is None else [v for v, c in zip(values, counted, strict=True) if c]
    if not sample:
        return [0.0] * len(values)
    mean = _mean(sample)
    spread = math.sqrt(sum((v - mean) ** 2 for v in sample) / len(sample))
    if spread <= 1e-12:
        return [0.0] * len(values)
    return [(v - mean) / spread for v in values]


def _mean(values: Sequence[float], default: float = 0.0) -> float:
    return sum(values) / len(values) if values else default


def _logistic(value: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, value))))


def _unit(value: float) -> float:
    return max(0.0, min(1.0, value))
