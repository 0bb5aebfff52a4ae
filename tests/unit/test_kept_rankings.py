"""The rankings of an index's most frequent words and prefixes, kept in the index: a search
that reads one answers what FTS5 answers, and one is read only while the keyword table is the
one it was ranked on."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from explorer.core.indexing.indexer import Indexer
from explorer.core.live.writer import LiveIndex
from explorer.core.retrieval.query import MIN_PREFIX, fts_expression
from explorer.core.store import kept_rankings
from explorer.core.store.index import Index
from explorer.core.store.kept_rankings import PREFIX_FROM, frequent_phrases, stored_phrase
from explorer.core.store.keywords import _BM25_SCORE, SEARCH_DEPTH, KeywordIndex
from explorer.core.store.phrase_sums import or_phrases
from explorer.settings.config import Settings
from tests.conftest import wait_until, write_files
from tests.fakes import FakeEmbedder
from tests.keyword_corpus import add_file, add_word_files

WORDS = (
    "device devices developer tree node memory barrier interrupt internal into in a page"
    " cache mapping driver 内存 屏障"
).split()
FREQUENT = 60
"""Rows a phrase matches to be kept, in these tests (of 200)."""


@pytest.fixture
def keywords(tmp_path):
    index = KeywordIndex(tmp_path / "index" / "index.sqlite")
    add_word_files(index, WORDS, seed=31, longest=40)
    for number in range(4):
        add_file(index, f"spin{number}.md", "spin lock")  # in 4 rows: not frequent
    yield index
    index.close()


def fts5_ranking(keywords: KeywordIndex, match: str, limit: int) -> list[tuple[str, str, float]]:
    """What FTS5 ranks for ``match``, best first (ties by rowid), on a connection of its own."""
    db = sqlite3.connect(keywords.path)
    try:
        rows = db.execute(
            f"SELECT c.id, c.path, {_BM25_SCORE} FROM chunks_fts JOIN chunks c"
            " ON c.rowid = chunks_fts.rowid WHERE chunks_fts MATCH ?"
            " ORDER BY score DESC, c.rowid LIMIT ?",
            (match, limit),
        ).fetchall()
    finally:
        db.close()
    return [(row[0], row[1], row[2]) for row in rows]


def typed(text: str) -> str:
    """The expression a search asks while ``text`` is being typed."""
    match = fts_expression(text, prefix_last=True)
    assert match is not None
    return match


def test_the_frequent_phrases_are_those_a_word_being_typed_asks(keywords):
    with keywords._reading() as db:
        found = frequent_phrases(db, FREQUENT)
        phrases = [phrase for phrase, _rows in found]
        counts = {
            p: db.execute(
                "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (p,)
            ).fetchone()[0]
            for p in phrases
        }
    assert dict(found) == counts
    # The words and prefixes of the first keys, as the query writes them.
    for text in ("in", "a", "dev", "devi", "int", "mem"):
        assert typed(text) in phrases, text
    assert '"devic"' in phrases and '"device"' not in phrases  # whole words: the stored term
    assert all(rows >= FREQUENT for rows in counts.values())
    assert list(counts.values()) == sorted(counts.values(), reverse=True)
    assert not [p for p in phrases if any("\u4e00" <= c <= "\u9fff" for c in p)]  # CJK: bigrams
    assert PREFIX_FROM == MIN_PREFIX
    with keywords._reading() as db:
        assert frequent_phrases(db, 205) == []  # more rows than the table holds (204)


def test_a_kept_ranking_is_fts5s_own_to_the_bit(keywords):
    assert keywords.keep_rankings(min_rows=FREQUENT) > 0
    assert keywords.rankings.current()
    for text in ("in", "dev", "devi", "int", "mem"):
        match = typed(text)
        kept = keywords._kept_ranking(match, SEARCH_DEPTH)
        assert kept is not None, text
        assert list(kept) == fts5_ranking(keywords, match, SEARCH_DEPTH)
        assert keywords.search(match, 7) == fts5_ranking(keywords, match, 7)
    assert keywords._kept_ranking(typed("spin"), SEARCH_DEPTH) is None  # not frequent here


def test_a_whole_word_reads_the_ranking_kept_for_the_term_it_is_stored_as(keywords):
    keywords.keep_rankings(min_rows=FREQUENT)
    for text in ("device", "devices", "Device "):  # words the stemmer changes: not prefixes
        match = typed(text)
        assert stored_phrase(match) == '"devic"', text
        kept = keywords._kept_ranking(match, SEARCH_DEPTH)
        assert kept is not None and list(kept) == fts5_ranking(keywords, match, SEARCH_DEPTH)
    assert stored_phrase('"devic" *') == '"devic" *'  # a prefix is asked as it is
    assert stored_phrase('"spin lock"') == '"spin lock"'


def test_a_ranking_kept_to_its_depth_is_not_read_deeper(keywords, monkeypatch):
    monkeypatch.setattr("explorer.core.store.keywords.SEARCH_DEPTH", 10)
    keywords.keep_rankings(min_rows=FREQUENT)
    match = typed("dev")
    assert keywords._kept_ranking(match, 10) is not None
    assert keywords._kept_ranking(match, 11) is None  # it matches more than the 10 ranked
    assert list(keywords._ranked(match, 30)) == fts5_ranking(keywords, match, 30)


def test_a_write_to_the_table_leaves_the_kept_rankings_unread_until_ranked_again(keywords):
    keywords.keep_rankings(min_rows=FREQUENT)
    match = typed("dev")
    add_file(keywords, "new.md", "developer " * 30)
    assert not keywords.rankings.current()
    assert keywords._kept_ranking(match, SEARCH_DEPTH) is None
    fresh = keywords.search(match, 5)
    assert fresh == fts5_ranking(keywords, match, 5) and fresh[0][1] == "new.md"
    assert keywords.keep_rankings(min_rows=FREQUENT) > 0
    assert list(keywords._kept_ranking(match, SEARCH_DEPTH) or ()) == fts5_ranking(
        keywords, match, SEARCH_DEPTH
    )
    keywords.remove_file("new.md")
    assert keywords._kept_ranking(match, SEARCH_DEPTH) is None


def test_recording_vectors_leaves_the_kept_rankings_in_use(keywords):
    keywords.keep_rankings(min_rows=FREQUENT)
    version = keywords.keyword_version()
    keywords.ledger.mark_embedded(keywords.chunk_ids("f03.md"))
    assert keywords.rankings.current()
    assert keywords._kept_ranking(typed("dev"), SEARCH_DEPTH) is not None
    assert keywords.keyword_version() == version  # nor do the kept rankings' own writes count


def test_a_stop_before_the_end_keeps_nothing(keywords):
    stop = threading.Event()
    stop.set()
    assert keywords.keep_rankings(stop, min_rows=FREQUENT) is None
    assert not keywords.rankings.current()
    assert keywords._kept_ranking(typed("dev"), SEARCH_DEPTH) is None


def test_a_write_while_ranking_keeps_nothing(keywords, monkeypatch):
    ranked = []

    def frequent_then_a_write(db, min_rows):
        ranked.append(min_rows)
        add_file(keywords, "late.md", "device " * 9)
        return [('"dev" *', 100)]

    monkeypatch.setattr(kept_rankings, "frequent_phrases", frequent_then_a_write)
    assert keywords.keep_rankings(min_rows=FREQUENT) is None
    assert ranked and not keywords.rankings.current()
    assert keywords._kept_ranking(typed("dev"), SEARCH_DEPTH) is None


def test_a_reader_keeps_nothing(keywords):
    keywords.close()
    reader = KeywordIndex(keywords.path, read_only=True)
    try:
        assert not reader.rankings.current()
        assert reader.keep_rankings(min_rows=FREQUENT) == 0  # it never writes
        assert reader._kept_ranking(typed("dev"), SEARCH_DEPTH) is None
    finally:
        reader.close()


def test_an_index_without_the_table_searches_as_before(keywords):
    keywords.keep_rankings(min_rows=FREQUENT)
    with keywords._lock, keywords._db:
        keywords._db.execute("DROP TABLE kept_rankings")
    keywords.close()
    old = KeywordIndex(keywords.path, read_only=True)
    try:
        assert old.search(typed("dev"), 5) == fts5_ranking(old, typed("dev"), 5)
    finally:
        old.close()


NOTES = {f"n{i}.md": f"# Note {i}\n\nA walrus colony, number {i}.\n" for i in range(3)}


def test_an_index_run_keeps_them_and_a_keyword_pass_alone_does_not(tmp_path, monkeypatch):
    monkeypatch.setattr(kept_rankings, "KEPT_ROWS", 3)
    root = write_files(tmp_path / "root", NOTES)
    index = Index(
        Settings.for_root(root, tmp_path / "index", model=FakeEmbedder.name), FakeEmbedder()
    )
    try:
        Indexer(index).sync(embed=False)  # keywords first: searchable without waiting for this
        assert not index.keywords.rankings.current()
        Indexer(index).sync()
        assert index.keywords.rankings.current()
        kept = index.keywords._kept_ranking(typed("wal"), SEARCH_DEPTH)
        assert kept is not None and {path for _id, path, _score in kept} == set(NOTES)
    finally:
        index.close()


def test_the_live_writer_keeps_them_and_ranks_them_again_after_a_change(
    tmp_path, settings_for, monkeypatch
):
    monkeypatch.setattr(kept_rankings, "KEPT_ROWS", 3)
    root = write_files(tmp_path / "root", NOTES)
    live = LiveIndex(settings_for(root), lambda _event: None, embedder=FakeEmbedder())
    live.start()
    try:
        assert live.wait_idle(20)
        keywords = live.index.keywords
        assert keywords.rankings.current()
        assert keywords._kept_ranking(typed("wal"), SEARCH_DEPTH) is not None
        (root / "n3.md").write_text("# Note 3\n\nWalruses, walrus and walrus.\n")
        assert wait_until(lambda: len(keywords.search(typed("wal"), 9)) == 4, 5)
        assert live.wait_idle(20)
        assert keywords.rankings.current()
        kept = keywords._kept_ranking(typed("wal"), SEARCH_DEPTH)
        assert kept is not None and kept[0][1] == "n3.md"
        assert list(kept) == fts5_ranking(keywords, typed("wal"), SEARCH_DEPTH)
    finally:
        live.stop()


def test_a_word_after_others_is_summed_from_its_kept_ranking_to_fts5s_own(
    keywords, phrases_scored, monkeypatch
):
    monkeypatch.setattr("explorer.core.store.keywords.SEARCH_DEPTH", 40)  # of ~150 rows
    keywords.keep_rankings(min_rows=FREQUENT)
    match = typed("spin dev")
    assert or_phrases(match) == ('"spin"', '"dev" *')
    assert list(keywords._ranked(match, 10)) == fts5_ranking(keywords, match, 10)
    assert phrases_scored == ['"spin"']  # "dev" * came from its kept ranking
    for limit in (1, 5, 20, 39, 40):
        assert list(keywords._ranked(match, limit)) == fts5_ranking(keywords, match, limit)


def test_a_word_after_a_broad_one_is_scored_over_every_row(keywords, phrases_scored, monkeypatch):
    monkeypatch.setattr("explorer.core.store.keywords.SEARCH_DEPTH", 40)
    keywords.keep_rankings(min_rows=FREQUENT)
    match = typed("developer int")
    # Most rows of "developer" lie beyond the 40 of "int" * kept: scoring them alone would
    # cost what scoring every row of "int" * does.
    assert list(keywords._ranked(match, 10)) == fts5_ranking(keywords, match, 10)
    assert phrases_scored == ['"developer"', '"int" *']
