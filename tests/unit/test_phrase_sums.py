"""A keyword ranking of OR-ed phrases summed from each phrase's own scores: FTS5's ranking to
the bit, each phrase scored once while the words before the last one stay the same."""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

import numpy as np
import pytest

from explorer.core.models import SearchMode
from explorer.core.retrieval.query import fts_expression
from explorer.core.retrieval.search import SearchRequest, rank_words_ahead
from explorer.core.store.keyword_statistics import KeywordStatistics, KeywordTable
from explorer.core.store.keywords import _BM25_SCORE, KeywordIndex
from explorer.core.store.phrase_sums import PhraseScores, best_of_sum, or_phrases
from tests.keyword_corpus import add_file, add_word_files

WORDS = (
    "device tree node memory barrier interrupt handler page cache spin lock mapping"
    " driver bus clock power reset register kernel module trace event"
).split()


@pytest.fixture
def keywords(tmp_path):
    index = KeywordIndex(tmp_path / "index" / "index.sqlite")
    add_word_files(index, WORDS, seed=7, longest=60)
    yield index
    index.close()


def fts5_ranking(keywords: KeywordIndex, match: str, limit: int) -> list[tuple[str, float]]:
    """What FTS5 ranks for ``match`` as one expression, best first (ties by rowid)."""
    db = sqlite3.connect(keywords.path)
    try:
        rows = db.execute(
            f"SELECT c.id, {_BM25_SCORE} FROM chunks_fts JOIN chunks c"
            " ON c.rowid = chunks_fts.rowid WHERE chunks_fts MATCH ?"
            " ORDER BY score DESC, c.rowid LIMIT ?",
            (match, limit),
        ).fetchall()
    finally:
        db.close()
    return [(row[0], row[1]) for row in rows]


@pytest.mark.parametrize(
    "typed",
    ["device tre", "memory barrier", "page cache spin", "interrupt handler kernel mod", "device"],
)
def test_the_summed_ranking_is_fts5s_own_to_the_bit(keywords, typed):
    match = fts_expression(typed, prefix_last=True)
    assert match is not None and or_phrases(match) is not None
    ours = [(cid, score) for cid, _path, score in keywords._ranked(match, 60)]
    assert ours == fts5_ranking(keywords, match, 60)


def test_the_words_before_the_last_are_scored_once_while_typing(keywords, phrases_scored):
    scored = phrases_scored
    for typed in ("memory ", "memory bar", "memory barr", "memory barri", "memory barrier"):
        keywords.search(fts_expression(typed, prefix_last=True), 10)
    assert scored.count('"memory"') == 1
    assert scored[1:] == ['"bar" *', '"barr" *', '"barri" *', '"barrier" *']


def test_a_changed_file_is_scored_again(keywords):
    match = fts_expression("memory trace", prefix_last=False)
    before = keywords.search(match, 5)
    add_file(keywords, "new.md", "memory trace " * 30)
    after = keywords.search(match, 5)
    assert after[0][1] == "new.md" and before[0][1] != "new.md"
    assert [(cid, score) for cid, _path, score in keywords.search(match, 60)] == fts5_ranking(
        keywords, match, 60
    )


def test_only_phrases_joined_by_or_are_summed():
    assert or_phrases('"device" OR "tre" *') == ('"device"', '"tre" *')
    assert or_phrases('"say ""hello"" OR not"') == ('"say ""hello"" OR not"',)
    for other in ('"a" AND "b"', '"a" "b"', 'NEAR("a" "b")', '"a" OR', 'title: "a"', 'a OR "b"'):
        assert or_phrases(other) is None


def test_the_cut_keeps_the_best_and_takes_ties_by_rowid():
    first = PhraseScores(np.array([1, 2, 3, 4]), np.array([1.0, 5.0, 2.0, 2.0]))
    second = PhraseScores(np.array([3, 5, 6]), np.array([3.0, 7.0, 0.5]))
    assert best_of_sum([first, second], 3) == [(5, 7.0), (2, 5.0), (3, 5.0)]
    assert best_of_sum([first, second], 4) == [(5, 7.0), (2, 5.0), (3, 5.0), (4, 2.0)]
    tied = PhraseScores(np.array([9, 8, 7, 6]), np.array([1.0, 1.0, 1.0, 1.0]))
    assert best_of_sum([tied], 2) == [(6, 1.0), (7, 1.0)]
    assert best_of_sum([PhraseScores.of_rows([])], 5) == []


def test_statistics_read_the_kept_scores_as_they_would_ask_fts5(keywords):
    # Several folders searched together rescore each hit per phrase: once a ranking kept a
    # phrase's scores, those are read, and they are what FTS5 answers for the phrase alone.
    keywords.search(fts_expression("memory barrier trace", prefix_last=True), 10)
    kept = keywords.statistics
    asked = KeywordStatistics(keywords._reading, keywords.derived, kept.weights)
    rowids = list(kept.chunk_rowids(keywords.chunk_ids()).values())[::3]
    for phrase in ('"memory"', '"barrier"', '"trace" *'):
        assert keywords.kept_phrase_scores(KeywordTable.CHUNKS, phrase) is not None
        assert kept.phrase_scores(KeywordTable.CHUNKS, phrase, rowids) == asked.phrase_scores(
            KeywordTable.CHUNKS, phrase, rowids
        )
        assert kept.phrase_rows(KeywordTable.CHUNKS, phrase) == asked.phrase_rows(
            KeywordTable.CHUNKS, phrase
        )
    assert keywords.kept_phrase_scores(KeywordTable.FILES, '"memory"') is None
    add_file(keywords, "late.md", "memory barrier")
    assert keywords.kept_phrase_scores(KeywordTable.CHUNKS, '"memory"') is None  # tables changed


def test_a_phrases_scores_are_looked_up_by_row_whatever_order_they_came_in():
    scores = PhraseScores.of_rows([(9, 1.5), (2, 3.0), (5, 0.25)])
    assert scores.rowids.tolist() == [2, 5, 9]
    assert scores.scores_of([9, 7, 2, 100, 1]) == {9: 1.5, 2: 3.0}
    assert scores.scores_of([]) == {}


def test_whole_words_are_scored_between_keys_for_the_next_word(keywords, phrases_scored):
    # The TUI ranks ahead once an answer is shown: the word "memory" typed whole is scored
    # alone then, and the next word's first search scores only its own phrase.
    scored = phrases_scored
    index = SimpleNamespace(keywords=keywords)
    for typed in ("memo", "memory", "memory ", "memory b"):
        rank_words_ahead(index, SearchRequest(typed, SearchMode.KEYWORD, prefix_last=True))
    assert scored == ['"memory"']  # not while the word was typed; once, whole
    ranked = keywords.search(fts_expression("memory bar", prefix_last=True), 60)
    assert scored == ['"memory"', '"bar" *']
    assert [(cid, score) for cid, _path, score in ranked] == fts5_ranking(
        keywords, fts_expression("memory bar", prefix_last=True), 60
    )


@pytest.mark.parametrize(
    "request_",
    [
        SearchRequest("trace ", SearchMode.SEMANTIC, prefix_last=True),
        SearchRequest("trace ", SearchMode.KEYWORD, ("f01.md",), prefix_last=True),
        SearchRequest("trac", SearchMode.HYBRID, prefix_last=True),
    ],
    ids=["by meaning", "some files", "word being typed"],
)
def test_nothing_is_ranked_ahead_that_the_next_search_would_not_use(keywords, request_):
    rank_words_ahead(SimpleNamespace(keywords=keywords), request_)
    assert keywords.kept_phrase_scores(KeywordTable.CHUNKS, '"trace"') is None
    assert keywords.kept_phrase_scores(KeywordTable.CHUNKS, '"trac" *') is None
