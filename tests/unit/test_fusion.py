"""Fusion rules on hand-made leg scores: what each rule promises, independent of any index."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from explorer.core.models import FusionKind
from explorer.core.retrieval.fusion import FusionRule, LegScores, fuse

CALIBRATED = FusionRule(FusionKind.CALIBRATED, semantic_weight=0.6, keyword_confidence=2.0)


def question_like() -> list[LegScores]:
    """The vector leg's best passage (0) was not matched by the keyword leg; the keyword leg's
    best (1) is far down the vector leg; the rest are unremarkable on both."""
    candidates = [
        LegScores(None, None, 1, 0.5),
        LegScores(1, 15.0, 40, 0.42),
    ]
    for i in range(2, 60):
        candidates.append(LegScores(i, 3.0 - i / 40, i + 1, 0.45 - i / 1000))
    return candidates


def best(scores: list[float]) -> int:
    return max(range(len(scores)), key=scores.__getitem__)


def test_calibrated_scores_are_between_0_and_1_and_half_is_the_average_candidate():
    scores, _ = fuse(CALIBRATED, question_like(), coverage=1.0)
    assert all(0.0 < s < 1.0 for s in scores)
    assert sum(scores) / len(scores) == pytest.approx(0.5, abs=0.1)


def test_a_keyword_leg_that_covers_little_of_the_query_weighs_little():
    candidates = question_like()
    covering, _ = fuse(CALIBRATED, candidates, coverage=1.0)
    assert best(covering) == 1, "the keyword leg's standout wins when it holds the query"
    partial, description = fuse(CALIBRATED, candidates, coverage=0.25)
    assert best(partial) == 0, "when its best passages hold a quarter of the query, meaning wins"
    assert "coverage 0.25" in description


def test_fixed_weights_ignore_coverage():
    fixed = FusionRule(FusionKind.CALIBRATED, semantic_weight=0.6, keyword_confidence=0.0)
    candidates = question_like()
    assert fuse(fixed, candidates, coverage=0.1)[0] == fuse(fixed, candidates, coverage=1.0)[0]


def test_a_passage_the_vector_leg_missed_counts_its_measured_cosine():
    candidates = [
        LegScores(None, None, 1, 0.6),
        LegScores(None, None, 2, 0.5),
        LegScores(1, 5.0, None, None, measured_similarity=0.05),
        LegScores(2, 5.0, None, None),
    ]
    rule = FusionRule(FusionKind.CONVEX, semantic_weight=0.7)
    scores, _ = fuse(rule, candidates)
    assert scores[2] == pytest.approx(0.7 * 0.05 + 0.3 * 1.0)
    assert scores[3] == pytest.approx(0.7 * 0.5 + 0.3 * 1.0), "unknown: the leg's lowest"
    guessed = FusionRule(FusionKind.CONVEX, semantic_weight=0.7, measured=False)
    assert fuse(guessed, candidates)[0][2] == pytest.approx(0.7 * 0.5 + 0.3 * 1.0)


def test_rrf_divides_by_the_best_possible_value():
    candidates = [LegScores(1, 2.0, 1, 0.5), LegScores(2, 1.0, None, None)]
    scores, description = fuse(FusionRule(FusionKind.RRF, rrf_k=60), candidates)
    assert scores[0] == pytest.approx(1.0)
    assert scores[1] == pytest.approx((1 / 62) / (2 / 61))
    assert "k=60" in description


@pytest.mark.parametrize("kind", list(FusionKind))
def test_one_leg_alone_stands_as_it_is(kind):
    keyword_only = [LegScores(1, 4.0, None, None), LegScores(2, 2.0, None, None)]
    vector_only = [LegScores(None, None, 1, 0.5), LegScores(None, None, 2, 0.25)]
    rule = FusionRule(kind)
    if kind is FusionKind.RRF:
        assert fuse(rule, keyword_only)[0][0] == pytest.approx(1.0)
        return
    assert fuse(rule, keyword_only)[0] == pytest.approx([1.0, 0.5])
    assert fuse(rule, vector_only)[0] == pytest.approx([0.5, 0.25])


def test_no_candidates_no_scores():
    assert fuse(CALIBRATED, [])[0] == []


def test_calibrated_is_the_logistic_of_the_weighted_standard_scores():
    candidates = [
        LegScores(1, 3.0, 2, 0.4),
        LegScores(None, None, 1, 0.6),
        LegScores(2, 1.0, 3, 0.2),
    ]
    rule = FusionRule(FusionKind.CALIBRATED, semantic_weight=0.6, keyword_confidence=1.0)
    scores, _ = fuse(rule, candidates, coverage=0.5)

    def z(values):
        mean = sum(values) / len(values)
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        return [(v - mean) / sd for v in values]

    cosines, bm25 = z([0.4, 0.6, 0.2]), z([3.0, 0.0, 1.0])
    expected = [
        1 / (1 + math.exp(-(0.6 * c + 0.4 * 0.5 * b))) for c, b in zip(cosines, bm25, strict=True)
    ]
    assert scores == pytest.approx(expected)


def test_explain_text_shows_a_measured_cosine_without_a_rank(capsys):
    from explorer.cli.render import render_search
    from explorer.core.retrieval.agent_context import AgentAnswer, ContextOptions
    from explorer.core.retrieval.search import FileHit, Passage, SearchResponse

    passage = Passage(
        "c1", "Intro", 1, 2, 0, 10, 0.7, "some text", [], 1, 9.5, None, 0.123, fused=0.7
    )
    response = SearchResponse("q", "hybrid", [FileHit("a.md", "A", 0.7, [passage])])
    render_search(AgentAnswer(response, ContextOptions()), explain=True)
    assert "keyword #1 (bm25 9.50) · vector - (cos 0.123, measured) · fused 0.7000" in (
        capsys.readouterr().out
    )
    passage.file_similarity = 0.456
    render_search(AgentAnswer(response, ContextOptions()), explain=True)
    assert "vector - (cos 0.123, measured) · file cos 0.456 · fused 0.7000" in (
        capsys.readouterr().out
    )
    passage.file_keyword_score = 21.5
    render_search(AgentAnswer(response, ContextOptions()), explain=True)
    assert "keyword #1 (bm25 9.50) · file bm25 21.50 · vector -" in capsys.readouterr().out


def test_meaning_blends_the_passage_cosine_with_its_files():
    passage = LegScores(None, None, 1, 0.5, file_similarity=0.8)
    assert passage.meaning(0.5, 0.3) == pytest.approx((0.5 + 0.3 * 0.8) / 1.3)
    assert passage.meaning(0.5, 0.0) == 0.5
    assert LegScores(None, None, 1, 0.5).meaning(0.5, 0.3) == 0.5  # no file vector yet


def test_of_two_equal_passages_the_one_whose_file_means_the_query_wins():
    # Same BM25, same cosine; one sits in a file that as a whole is about the query, the other
    # in a file about something else.
    candidates = [
        LegScores(1, 5.0, 1, 0.5, file_similarity=0.2),
        LegScores(2, 5.0, 2, 0.5, file_similarity=0.6),
        *[LegScores(3 + i, 1.0, 3 + i, 0.3, file_similarity=0.3) for i in range(10)],
    ]
    blended, description = fuse(FusionRule(file_weight=0.3), candidates)
    assert blended[1] > blended[0]
    assert "meaning = (cosine + 0.3 x file cosine) / 1.3" in description
    plain, _ = fuse(FusionRule(file_weight=0.0), candidates)
    assert plain[0] == pytest.approx(plain[1])


@pytest.mark.parametrize("kind", [FusionKind.CALIBRATED, FusionKind.CONVEX])
def test_of_two_equal_passages_the_one_whose_file_holds_the_words_wins(kind):
    # Same BM25, same cosine; one sits in a file whose whole text matches the query's words
    # far better than the other's.
    candidates = [
        LegScores(1, 5.0, 1, 0.5, file_keyword_score=2.0),
        LegScores(2, 5.0, 2, 0.5, file_keyword_score=9.0),
        *[LegScores(3 + i, 1.0, 3 + i, 0.3, file_keyword_score=1.0) for i in range(10)],
    ]
    mixed, description = fuse(FusionRule(kind, file_keyword_weight=1.0), candidates)
    assert mixed[1] > mixed[0]
    assert "x file BM25/best) / 2" in description or "x z(file BM25)) / 2" in description
    plain, _ = fuse(FusionRule(kind, file_keyword_weight=0.0), candidates)
    assert plain[0] == pytest.approx(plain[1])
    no_files = [
        LegScores(c.keyword_rank, c.keyword_score, c.vector_rank, c.vector_similarity)
        for c in candidates
    ]  # an index without the file table
    scores, said = fuse(FusionRule(kind, file_keyword_weight=1.0), no_files)
    assert scores == pytest.approx(plain)
    assert "file BM25" not in said


def test_the_keyword_leg_alone_mixes_in_the_file_too():
    # No vectors yet: hybrid answers by its keyword leg, each side over its best.
    candidates = [
        LegScores(1, 8.0, None, None, file_keyword_score=1.0),
        LegScores(2, 6.0, None, None, file_keyword_score=4.0),
    ]
    scores, _ = fuse(FusionRule(file_keyword_weight=1.0), candidates)
    assert scores == pytest.approx([(1 + 0.25) / 2, (0.75 + 1) / 2])


def partly_covered(keyword_cosine: float) -> list[LegScores]:
    """The vector leg's best passage (0) holds no query word; the keyword leg's three best
    (1–3) hold part of the query, and the vector leg rates them ``keyword_cosine``."""
    candidates = [LegScores(None, None, 1, 0.6)]
    for i in range(1, 4):
        candidates.append(LegScores(i, 12.0 - i, None, None, measured_similarity=keyword_cosine))
    for i in range(4, 60):
        candidates.append(LegScores(i, 3.0 - i / 40, i - 2, 0.55 - i / 1000))
    return candidates


AGREEING = FusionRule(FusionKind.CALIBRATED, 0.5, keyword_confidence=3.0, agreement=(0.4, 0.7))


def test_keyword_hits_that_mean_what_the_query_means_keep_their_weight_despite_low_coverage():
    # Vector leg's 3 best: 0.6, 0.546, 0.545 (mean 0.564); keyword leg's 3 best at 0.5 each:
    # ratio 0.89, above the ramp's end, so the keyword side counts fully.
    agreeing, description = fuse(AGREEING, partly_covered(0.5), coverage=0.4)
    assert best(agreeing) == 1, "the legs agree: the keyword leg's standout wins"
    assert "agreement 1.00" in description
    assert description.endswith("keyword weight 0.5")
    assert "max(coverage^3, agreement)" in description
    without = FusionRule(FusionKind.CALIBRATED, 0.5, keyword_confidence=3.0)
    assert best(fuse(without, partly_covered(0.5), coverage=0.4)[0]) == 0, "coverage alone"


def test_keyword_hits_far_from_the_query_meaning_weigh_by_coverage_only():
    # Keyword leg's 3 best at cosine 0.1: ratio 0.18, below the ramp's start.
    scores, description = fuse(AGREEING, partly_covered(0.1), coverage=0.4)
    assert best(scores) == 0, "incidental words: meaning wins"
    assert "agreement 0.00" in description
    assert description.endswith(f"keyword weight {0.5 * 0.4**3:.3g}")


def test_agreement_ramps_linearly_between_its_ends():
    # ratio 0.3164 / 0.564 = 0.56: about halfway up the 0.4–0.7 ramp.
    candidates = partly_covered(0.3164)
    vector_best = (0.6 + 0.546 + 0.545) / 3
    expected = (0.3164 / vector_best - 0.4) / 0.3
    _, description = fuse(AGREEING, candidates, coverage=0.0)
    assert f"agreement {expected:.2f}" in description
    assert description.endswith(f"keyword weight {0.5 * expected:.3g}")


def being_embedded() -> list[LegScores]:
    """A folder 20 % embedded: the vector leg's 10 best (0–9) are unrelated passages that hold
    no query word; the keyword leg's best (10–19) hold the query's words, and only the last two
    of them have a vector yet (cosine 0.1)."""
    candidates = [LegScores(None, None, 1 + i, 0.14 - i / 200) for i in range(10)]
    for i in range(8):
        candidates.append(LegScores(1 + i, 9.0 - i / 2, None, None, pending=True))
    for i in range(8, 10):
        candidates.append(LegScores(1 + i, 9.0 - i / 2, None, None, measured_similarity=0.1))
    return candidates


def test_a_passage_without_a_vector_yet_is_not_ranked_as_the_worst_by_meaning():
    rule = FusionRule(FusionKind.CALIBRATED, 0.5, keyword_confidence=3.0)
    scores, description = fuse(rule, being_embedded(), coverage=1.0, embedded_share=0.2)
    assert best(scores) == 10, "the keyword leg's best passage, waiting for its vector, wins"
    assert scores[10] > scores[0] > 0.0
    assert "20% of the keyword leg's best passages have vectors yet" in description
    assert description.endswith(f"vector weight {0.5 * 0.2**2:.3g}")
    before = replace(rule, pending_meaning=False)
    old, said = fuse(before, being_embedded(), coverage=1.0, embedded_share=0.2)
    assert best(old) == 0, "as the vector leg's lowest, the best unrelated vector won"
    assert "vectors yet" not in said


def test_a_pending_passage_counts_as_the_average_candidate_by_meaning():
    rule = FusionRule(FusionKind.CALIBRATED, 0.5, embedded_power=0.0)  # the weight left whole
    candidates = [
        LegScores(None, None, 1, 0.6),
        LegScores(None, None, 2, 0.2),
        LegScores(1, 4.0, None, None, pending=True),
        LegScores(2, 4.0, 3, 0.4),
    ]
    scores, _ = fuse(rule, candidates, embedded_share=0.5)
    # The known cosines 0.6, 0.2, 0.4 average 0.4: the pending passage scores as passage 3,
    # which has the same BM25 and that cosine.
    assert scores[2] == pytest.approx(scores[3])
    assert scores[2] > fuse(replace(rule, pending_meaning=False), candidates)[0][2]


def test_a_folder_fully_embedded_fuses_as_it_always_did():
    candidates = question_like()
    rule = replace(CALIBRATED, pending_meaning=False)
    assert fuse(CALIBRATED, candidates, embedded_share=1.0) == fuse(rule, candidates)
