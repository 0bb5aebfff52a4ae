"""The SQLite keyword index and manifest: chunks, FTS5 in step, states and bookkeeping."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
import time

import pytest

from explorer.core.ingest.documents import Chunk
from explorer.core.models import FileState
from explorer.core.retrieval.query import fts_expression
from explorer.core.store import keyword_statistics
from explorer.core.store.keyword_statistics import KeywordTable
from explorer.core.store.keywords import SCHEMA_VERSION, KeywordIndex


@pytest.fixture
def keywords(tmp_path):
    index = KeywordIndex(tmp_path / "index" / "index.sqlite")
    yield index
    index.close()


def chunk(text: str, heading: str = "", line: int = 1) -> Chunk:
    return Chunk(
        text=text,
        heading_path=heading,
        start_line=line,
        end_line=line + text.count("\n"),
        start_char=0,
        end_char=len(text),
    )


def add(keywords, path, texts, title="", prefix=None):
    prefix = prefix or path
    chunks = [(f"{prefix}#{i}", chunk(text, line=i * 10 + 1)) for i, text in enumerate(texts)]
    return keywords.replace_file(path, 100, 1, f"hash-{prefix}", chunks, {}, title)


def paths_for(keywords, query, paths=None, limit=50):
    return [path for _id, path, _score in keywords.search(fts_expression(query), limit, paths)]


def file_scores(keywords, query, paths):
    return keywords.file_search(fts_expression(query), paths)


def fts_rows(keywords) -> int:
    db = sqlite3.connect(keywords.path)
    try:
        return db.execute("SELECT COUNT(*) FROM chunks_fts").fetchone()[0]
    finally:
        db.close()


def test_replace_file_swaps_chunks_and_keeps_fts_in_step(keywords):
    assert add(keywords, "a.md", ["alpha apples", "beta bananas"]) == []
    assert paths_for(keywords, "apples") == ["a.md"]
    assert keywords.file("a.md").state == FileState.PENDING
    assert keywords.file("a.md").chunk_count == 2

    old = add(keywords, "a.md", ["cherries only"], prefix="a2")
    assert sorted(old) == ["a.md#0", "a.md#1"]
    assert paths_for(keywords, "apples") == []
    assert paths_for(keywords, "cherries") == ["a.md"]
    assert keywords.chunk_ids() == ["a2#0"]
    assert fts_rows(keywords) == 1


def test_a_search_asked_again_or_deeper_sees_every_change_of_the_index(keywords, tmp_path):
    # Ranked rows are kept between searches (a widening search slices them); what another
    # connection or this one writes must show in the very next search all the same.
    for number in range(30):
        add(keywords, f"f{number:02}.md", ["kernel " * (number + 1) + "notes"])
    deep = paths_for(keywords, "kernel", limit=30)
    assert deep[0] == "f29.md" and len(deep) == 30  # the most mentions first
    assert paths_for(keywords, "kernel", limit=5) == deep[:5]
    other = KeywordIndex(tmp_path / "index" / "index.sqlite")
    try:
        add(other, "new.md", ["kernel " * 200])
    finally:
        other.close()
    assert paths_for(keywords, "kernel", limit=5)[0] == "new.md"
    keywords.remove_file("new.md")
    assert paths_for(keywords, "kernel", limit=5) == deep[:5]


def test_ranked_rows_outlive_recorded_vectors_but_not_a_change_of_text(keywords, monkeypatch):
    # While a folder embeds, every batch of vectors is written to this database; the screen
    # asks its question again as they come. The rows a search ranked stay valid meanwhile
    # (the keyword tables did not change), and a changed file is seen at once all the same.
    for number in range(12):
        add(keywords, f"f{number:02}.md", ["kernel " * (number + 1) + "notes"])
    ranked = []
    real = KeywordIndex._ranked

    def counted(self, match, limit):
        ranked.append(match)
        return real(self, match, limit)

    monkeypatch.setattr(KeywordIndex, "_ranked", counted)
    first = paths_for(keywords, "kernel", limit=5)
    keywords.ledger.mark_embedded(keywords.chunk_ids("f03.md"))
    keywords.ledger.mark_fresh("f03.md")
    assert keywords.ledger.changes > 0
    assert paths_for(keywords, "kernel", limit=5) == first
    assert len(ranked) == 1  # asked again: not ranked again
    add(keywords, "f03.md", ["kernel " * 50])
    assert paths_for(keywords, "kernel", limit=5)[0] == "f03.md"
    assert len(ranked) == 2


def test_a_files_distinctive_terms_follow_its_text_when_asked_again(keywords):
    """The terms of a file are kept between asks (going back to a file asks again), for that
    version of the file only."""
    add(keywords, "notes.md", ["kerberos tickets renew kerberos", "kerberos realm keytab"])
    add(keywords, "other.md", ["a note about gardening and tomatoes"])
    first = keywords.distinctive_terms("notes.md", 10)
    assert first == keywords.distinctive_terms("notes.md", 10)
    assert "kerbero" in first  # as the index stems it
    # The same path written again (the test's size, mtime and hash stay the same).
    add(keywords, "notes.md", ["compost heaps and compost bins", "compost turning"])
    again = keywords.distinctive_terms("notes.md", 10)
    assert "compost" in again and "kerbero" not in again


def test_a_terms_weight_follows_the_files_that_hold_it_after_a_change(keywords):
    """How many rows hold a term is kept between files asked (the frequent terms of one file
    are those of the next), and counted again once the index changes."""
    add(keywords, "notes.md", ["kerberos realm keytab kerberos", "tickets renew tickets"])
    add(keywords, "other.md", ["a note about gardening and tomatoes"])
    first = keywords.distinctive_terms("notes.md", 3)
    assert first[:2] == ["kerbero", "ticket"]  # as often, as rare: by name
    for number in range(6):  # kerberos is everywhere now; tickets still rare
        add(keywords, f"k{number}.md", [f"kerberos note {number}"])
    again = keywords.distinctive_terms("other.md", 3)  # another file asked: counts kept or not
    assert again
    assert keywords.distinctive_terms("notes.md", 3)[0] == "ticket"


def test_a_files_terms_counted_for_related_files_change_no_version_of_the_index(keywords):
    """Related files count the source's terms in a scratch table; what searches keep between
    keys (the files a filter allows, the references' fingerprint) must outlive that, as it
    outlives vectors being recorded, and not outlive a real change."""
    add(keywords, "notes.md", ["kerberos tickets renew kerberos", "kerberos realm keytab"])
    add(keywords, "other.md", ["a note about gardening and tomatoes"])
    manifest, words = keywords.manifest_version(), keywords.keyword_version()
    assert keywords.distinctive_terms("notes.md", 10)
    assert keywords.distinctive_terms("other.md", 10)
    assert (keywords.manifest_version(), keywords.keyword_version()) == (manifest, words)
    add(keywords, "third.md", ["another note"])
    assert keywords.manifest_version() != manifest and keywords.keyword_version() != words


def test_the_manifest_is_read_while_a_write_is_under_way(keywords):
    # The TUI's file tree lists the manifest while the live index writes: the list is the
    # last committed one, at once, not after the write.
    add(keywords, "a.md", ["alpha"])
    writing, written = threading.Event(), threading.Event()

    def slow_write() -> None:
        with keywords._lock, keywords._db:  # one long transaction of the writer's
            keywords._db.execute("UPDATE files SET title = 'changed' WHERE path = 'a.md'")
            writing.set()
            written.wait(10)

    writer = threading.Thread(target=slow_write)
    writer.start()
    try:
        assert writing.wait(10)
        began = time.monotonic()
        assert keywords.files()["a.md"].title == ""  # the committed state
        assert time.monotonic() - began < 1.0
    finally:
        written.set()
        writer.join()
    assert keywords.files()["a.md"].title == "changed"


def test_file_without_chunks_is_fresh_and_not_listed_as_searchable(keywords):
    keywords.replace_file("empty.md", 0, 1, "h", [], {}, "")
    assert keywords.file("empty.md").state == FileState.FRESH
    assert keywords.paths() == []


def test_remove_and_mark_skipped_drop_chunks(keywords):
    add(keywords, "a.md", ["alpha apples"])
    add(keywords, "b.md", ["apples again"])
    assert keywords.remove_file("a.md") == ["a.md#0"]
    assert keywords.file("a.md") is None
    assert keywords.mark_skipped(
        "b.md", 5, 6, FileState.SKIPPED, "binary: NUL byte at offset 3"
    ) == ["b.md#0"]
    assert paths_for(keywords, "apples") == []
    assert keywords.chunk_ids() == []
    assert fts_rows(keywords) == 0
    assert keywords.file("b.md").state == FileState.SKIPPED


def test_search_restricted_to_paths_ranks_only_those(keywords):
    add(keywords, "strong.md", ["zebra zebra zebra zebra"])
    add(keywords, "weak.md", ["a zebra among many other words in a long passage of text"])
    assert paths_for(keywords, "zebra", limit=1) == ["strong.md"]
    assert paths_for(keywords, "zebra", paths=["weak.md"], limit=1) == ["weak.md"]
    assert paths_for(keywords, "zebra", paths=[]) == []
    # The restriction does not leak into a later unrestricted search.
    assert sorted(paths_for(keywords, "zebra")) == ["strong.md", "weak.md"]


def test_scores_are_higher_for_better_matches_and_title_counts(keywords):
    add(keywords, "titled.md", ["something about the walrus"], title="Walrus")
    add(keywords, "plain.md", ["something about the walrus"], title="Other")
    hits = keywords.search(fts_expression("walrus"), 10)
    assert [path for _id, path, _s in hits] == ["titled.md", "plain.md"]
    assert hits[0][2] > hits[1][2] > 0


def test_porter_stemming_matches_word_forms(keywords):
    add(keywords, "a.md", ["Installing the package"])
    assert paths_for(keywords, "install") == ["a.md"]
    assert paths_for(keywords, "installs") == ["a.md"]


def test_embedding_bookkeeping(keywords):
    add(keywords, "a.md", ["one", "two"])
    add(keywords, "b.md", ["three"])
    assert [(c.id, c.length) for c in keywords.ledger.pending()] == [
        ("a.md#0", len("one")),
        ("a.md#1", len("two")),
        ("b.md#0", len("three")),
    ]
    keywords.ledger.mark_embedded(["a.md#0", "b.md#0"])
    assert keywords.ledger.files_ready_to_finish() == ["b.md"]
    keywords.ledger.mark_embedded(["a.md#1"])
    assert sorted(keywords.ledger.files_ready_to_finish()) == ["a.md", "b.md"]
    keywords.ledger.mark_fresh("a.md")
    keywords.ledger.mark_fresh("b.md")
    assert keywords.ledger.pending() == []

    keywords.ledger.mark_missing_vectors(["b.md#0"])
    assert keywords.file("a.md").state == FileState.FRESH
    assert keywords.file("b.md").state == FileState.PENDING
    assert [c.id for c in keywords.ledger.pending()] == ["b.md#0"]

    keywords.ledger.reset_embedded()
    assert len(keywords.ledger.pending()) == 3
    assert keywords.file("a.md").state == FileState.PENDING


def test_counts_and_skip_reasons(keywords):
    add(keywords, "a.md", ["one", "two"])
    keywords.ledger.mark_embedded(["a.md#0"])
    add(keywords, "b.md", ["three"])
    keywords.ledger.mark_fresh("b.md")
    keywords.mark_skipped("big.md", 0, 0, FileState.SKIPPED, "too-large: 3.0 MB > 2.0 MB cap")
    keywords.mark_skipped("bin.md", 1, 1, FileState.SKIPPED, "binary: NUL byte at offset 0")
    keywords.mark_skipped("bin2.md", 1, 1, FileState.SKIPPED, "binary: NUL byte at offset 9")
    keywords.mark_skipped("bad.py", 1, 1, FileState.FAILED, "chunking failed: ValueError: x")
    counts = keywords.counts()
    assert counts == {
        FileState.FRESH: 1,
        FileState.PENDING: 1,
        FileState.SKIPPED: 3,
        FileState.FAILED: 1,
        "chunks": 3,
        "embedded": 1,
    }
    assert keywords.skip_reasons() == {"too-large": 1, "binary": 2, "chunking failed": 1}


def test_chunks_by_id_returns_positions_and_title(keywords):
    add(keywords, "a.md", ["first", "second"], title="A title")
    found = keywords.chunks_by_id(["a.md#1", "missing"])
    assert list(found) == ["a.md#1"]
    stored = found["a.md#1"]
    assert (stored.path, stored.ord, stored.text, stored.title) == ("a.md", 1, "second", "A title")
    assert stored.start_line == 11
    assert keywords.chunk_ids("a.md") == ["a.md#0", "a.md#1"]


def test_meta_round_trip_and_reopen(tmp_path):
    path = tmp_path / "db" / "index.sqlite"
    first = KeywordIndex(path)
    first.set_meta("model", "m1")
    add(first, "a.md", ["persisted words"])
    first.close()
    second = KeywordIndex(path)
    try:
        assert second.get_meta("model") == "m1"
        assert second.get_meta("absent", "default") == "default"
        assert paths_for(second, "persisted") == ["a.md"]
    finally:
        second.close()


def _steps_to_find_ready_files(tmp_path, files: int, chunks_per_file: int) -> int:
    """SQLite VM steps one ``files_ready_to_finish`` call takes on a fresh, unembedded index."""
    keywords = KeywordIndex(tmp_path / f"scale-{files}" / "index.sqlite")
    try:
        for number in range(files):
            add(keywords, f"doc{number}.md", [f"words {i}" for i in range(chunks_per_file)])
        keywords.ledger.mark_embedded([f"doc0.md#{i}" for i in range(chunks_per_file)])
        steps = 0

        def count() -> int:
            nonlocal steps
            steps += 1
            return 0

        keywords._db.set_progress_handler(count, 10)
        assert keywords.ledger.files_ready_to_finish() == ["doc0.md"]
        keywords._db.set_progress_handler(None, 0)
        return steps
    finally:
        keywords.close()


def test_finding_finished_files_grows_with_files_not_files_times_chunks(tmp_path):
    """The indexer asks after every batch which files are fully embedded. That question must
    cost about the same per file however many chunks wait in the whole index: on the nginx docs
    a plan that scanned every waiting chunk per file took 3 s per call, 28% of the embedding
    phase."""
    small = _steps_to_find_ready_files(tmp_path, files=50, chunks_per_file=10)
    large = _steps_to_find_ready_files(tmp_path, files=200, chunks_per_file=10)
    assert large < 6 * small  # linear: about 4x; the old plan (files x chunks): about 16x


# -- front matter as weighted keyword fields ---------------------------------------------------
def test_a_word_only_in_tags_or_description_finds_its_file(keywords):
    chunks = [("tagged#0", chunk("Plain body text about installing packages."))]
    metadata = {"description": "How teams rotate their credentials", "tags": ["zebrafish", "ops"]}
    keywords.replace_file("tagged.md", 100, 1, "hash-t", chunks, metadata, "Install")
    add(keywords, "other.md", ["Credentials are mentioned here once, in the body."])
    for i in range(6):
        add(keywords, f"filler{i}.md", [f"Unrelated notes on gardening, part {i}."])
    assert paths_for(keywords, "zebrafish") == ["tagged.md"]
    assert paths_for(keywords, "rotate") == ["tagged.md"]
    assert set(paths_for(keywords, "credentials")) == {"tagged.md", "other.md"}


def test_an_index_made_before_the_tag_columns_is_upgraded_in_place(tmp_path):
    path = tmp_path / "index.sqlite"
    old = sqlite3.connect(path)
    old.executescript(
        """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema', '1');
        CREATE TABLE files(path TEXT PRIMARY KEY, size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL, hash TEXT NOT NULL DEFAULT '', state TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '', title TEXT NOT NULL DEFAULT '',
            metadata TEXT NOT NULL DEFAULT '{}', chunk_count INTEGER NOT NULL DEFAULT 0,
            updated_at REAL NOT NULL);
        CREATE TABLE chunks(rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
            path TEXT NOT NULL, ord INTEGER NOT NULL, heading TEXT NOT NULL,
            start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, start_char INTEGER NOT NULL,
            end_char INTEGER NOT NULL, text TEXT NOT NULL, embedded INTEGER NOT NULL DEFAULT 0);
        CREATE VIRTUAL TABLE chunks_fts USING fts5(title, heading, body,
            tokenize = 'porter unicode61 remove_diacritics 2');
        INSERT INTO files VALUES ('a.md', 1, 1, 'h', 'fresh', '', 'Alpha',
            '{"tags": "okapi", "description": "a quiet page"}', 1, 0);
        INSERT INTO chunks VALUES (7, 'a#0', 'a.md', 0, 'Alpha', 1, 2, 0, 10, 'walrus text', 1);
        INSERT INTO chunks_fts(rowid, title, heading, body) VALUES (7, 'Alpha', 'Alpha',
            'walrus text');
        """
    )
    old.commit()
    old.close()
    keywords = KeywordIndex(path)
    try:
        assert paths_for(keywords, "okapi") == ["a.md"]
        assert paths_for(keywords, "walrus") == ["a.md"]
        assert keywords.get_meta("schema") == SCHEMA_VERSION
        assert keywords.counts()["embedded"] == 1, "the vectors stay valid: nothing to re-embed"
        assert fts_rows(keywords) == 1
        assert set(file_scores(keywords, "walrus okapi", ["a.md"])) == {"a.md"}
    finally:
        keywords.close()
    again = KeywordIndex(path)  # a second open has nothing left to do
    try:
        assert paths_for(again, "okapi") == ["a.md"]
    finally:
        again.close()


def test_description_and_tags_go_with_the_first_chunk_only(keywords):
    """BM25 normalises by the whole row, so fields repeated on every chunk would lower every
    passage of a described file; they are searched with its first passage alone."""
    chunks = [("two#0", chunk("Opening words.")), ("two#1", chunk("Later words.", line=5))]
    keywords.replace_file("two.md", 100, 1, "h", chunks, {"tags": ["okapi"]}, "Two")
    for i in range(4):
        add(keywords, f"filler{i}.md", [f"Unrelated notes, part {i}."])
    hits = keywords.search(fts_expression("okapi"), 10)
    assert [cid for cid, _path, _score in hits] == ["two#0"]


def test_a_page_about_the_words_outscores_one_that_mentions_them_once(keywords):
    add(keywords, "about.md", ["walrus habitat", "what a walrus eats", "walrus tusks"])
    add(keywords, "mention.md", ["a walrus once", "harbour cranes", "tide tables"])
    add(keywords, "other.md", ["walrus walrus"])
    scores = file_scores(keywords, "walrus", ["about.md", "mention.md"])
    assert set(scores) == {"about.md", "mention.md"}, "only the files asked for"
    assert scores["about.md"] > scores["mention.md"] > 0
    assert file_scores(keywords, "walrus", []) == {}


def test_the_whole_file_row_follows_replace_skip_and_remove(keywords):
    add(keywords, "a.md", ["alpha apples", "beta bananas"])
    add(keywords, "b.md", ["bananas too"])
    assert set(file_scores(keywords, "apples bananas", ["a.md", "b.md"])) == {"a.md", "b.md"}
    add(keywords, "a.md", ["cherries only"], prefix="a2")
    assert set(file_scores(keywords, "apples bananas", ["a.md", "b.md"])) == {"b.md"}
    assert set(file_scores(keywords, "cherries", ["a.md"])) == {"a.md"}
    keywords.mark_skipped("a.md", 1, 1, FileState.SKIPPED, "too large")
    assert file_scores(keywords, "cherries", ["a.md"]) == {}
    keywords.remove_file("b.md")
    assert file_scores(keywords, "bananas", ["b.md"]) == {}
    db = sqlite3.connect(keywords.path)
    try:
        assert db.execute("SELECT COUNT(*) FROM files_fts").fetchone()[0] == 0
    finally:
        db.close()


def _row_facts(keywords, ids, paths):
    """What a search of two folders reads about its hits' rows."""
    stats = keywords.statistics
    rows = stats.chunk_rowids(ids)
    return (
        keywords.chunk_places(ids),
        rows,
        stats.file_rowids(paths),
        stats.row_lengths(KeywordTable.CHUNKS, list(rows.values())),
    )


def placed(text: str, start: int) -> Chunk:
    return Chunk(text, "", 1, 1, start, start + len(text))


def test_the_rows_a_search_read_follow_a_file_rewritten_here_or_by_another_writer(
    keywords, tmp_path
):
    # Each key of a query being typed asks for mostly the same rows: their places, rows and
    # lengths are kept between searches, and must be the file's new ones once it changes.
    ids, paths = ["a.md#0", "a.md#1", "b.md#0"], ["a.md", "b.md"]
    add(keywords, "a.md", ["alpha apples", "beta bananas"])
    add(keywords, "b.md", ["bananas too"])
    before = _row_facts(keywords, ids, paths)
    assert before == _row_facts(keywords, ids, paths)  # asked again: the same
    new = [("a.md#0", placed("alpha apples and many more words", 40)), ("a.md#1", placed("x", 90))]
    keywords.replace_file("a.md", 100, 2, "hash-a2", new, {}, "")
    other = KeywordIndex(tmp_path / "index" / "index.sqlite")
    try:
        add(other, "b.md", ["bananas and a much longer passage than before"])
    finally:
        other.close()
    after = _row_facts(keywords, ids, paths)
    fresh = KeywordIndex(tmp_path / "index" / "index.sqlite")
    try:
        assert after == _row_facts(fresh, ids, paths)  # an index that never kept any
    finally:
        fresh.close()
    places, rows, files, lengths = after
    assert places["a.md#0"] == ("a.md", 40) and places["a.md#1"] == ("a.md", 90)
    assert set(rows.values()).isdisjoint(before[1].values())  # every row written again
    assert files["a.md"] == rows["a.md#0"] and files["b.md"] == rows["b.md#0"]
    assert lengths[rows["a.md#0"]] > before[3][before[1]["a.md#0"]]


def test_words_summed_name_the_passages_the_rows_hold_now(keywords, tmp_path):
    # Several words are ranked by rows (rowid, score), then named by the chunk each row holds,
    # kept between keys. SQLite gives the rows of a file added after the last one was removed
    # that file's numbers again: the next search names the new file's passages.
    for number in range(5):
        add(keywords, f"f{number}.md", [f"alpha beta note {number}", "gamma"])
    query = fts_expression("alpha beta")
    first = keywords.search(query, 10)
    assert {cid for cid, _p, _s in first} == {f"f{n}.md#0" for n in range(5)}
    keywords.remove_file("f4.md")
    add(keywords, "new.md", ["alpha beta written after", "alpha alone"])
    fresh = KeywordIndex(tmp_path / "index" / "index.sqlite")
    try:
        assert keywords.search(query, 10) == fresh.search(query, 10)
    finally:
        fresh.close()
    assert {"new.md#0", "new.md#1"} <= {cid for cid, _p, _s in keywords.search(query, 10)}


def test_the_kept_rows_start_over_rather_than_grow_past_their_bound(keywords, monkeypatch):
    monkeypatch.setattr(keyword_statistics, "ROWS_KEPT", 3)
    add(keywords, "a.md", [f"passage {number}" for number in range(8)])
    ids = [f"a.md#{number}" for number in range(8)]
    for cid in ids:  # one at a time: each answer whole, whatever was forgotten before
        assert keywords.chunk_places([cid]) == {cid: ("a.md", 0)}
        assert len(keywords.derived("chunk places", dict, keyword_tables=True)) <= 3
    assert keywords.chunk_places(ids) == dict.fromkeys(ids, ("a.md", 0))


class _StartsOverAfterEachLook(dict):
    """Kept rows that another thread starts over right after each look."""

    def __contains__(self, key):
        found = super().__contains__(key)
        self.clear()
        return found

    def get(self, key, default=None):
        value = super().get(key, default)
        self.clear()
        return value


def test_kept_rows_started_over_by_another_thread_cost_a_row_read_again_not_an_error():
    kept = _StartsOverAfterEachLook({"a.md#0": ("a.md", 0), "a.md#1": ("a.md", 9)})
    asked = []

    def read(missing):
        asked.append(missing)
        return {"a.md#1": ("a.md", 9)}

    whole = {"a.md#0": ("a.md", 0), "a.md#1": ("a.md", 9)}
    assert keyword_statistics.kept_or_read(kept, ["a.md#0", "a.md#1"], read) == whole
    assert asked == [["a.md#1"]]


def test_an_index_without_the_file_table_reads_and_is_upgraded_when_written(tmp_path):
    path = tmp_path / "index.sqlite"
    made = KeywordIndex(path)
    add(made, "a.md", ["walrus text", "more walrus"])
    made.close()
    db = sqlite3.connect(path)  # as schema 2 left it: no whole-file table
    db.executescript("DROP TABLE files_fts; UPDATE meta SET value = '2' WHERE key = 'schema';")
    db.commit()
    db.close()
    reader = KeywordIndex(path, read_only=True)
    try:
        assert paths_for(reader, "walrus") == ["a.md", "a.md"]
        assert file_scores(reader, "walrus", ["a.md"]) == {}, "no file table: no file term"
    finally:
        reader.close()
    writer = KeywordIndex(path)
    try:
        assert set(file_scores(writer, "walrus", ["a.md"])) == {"a.md"}
        assert writer.get_meta("schema") == SCHEMA_VERSION
    finally:
        writer.close()


def test_tables_another_writer_made_between_two_looks_are_no_damage(tmp_path, monkeypatch):
    # Two processes open a new index at once: one makes the tables, a statement at a time, while
    # the other looks at them. Its look for the index's own table came first (nothing yet); by
    # its next look every table is there. It opens the index: no "damaged", no traceback.
    path = tmp_path / "index" / "index.sqlite"
    KeywordIndex(path).close()  # the other writer's tables, all made by now
    monkeypatch.setattr(KeywordIndex, "_has_index_tables", lambda self: False)  # looked early
    opened = KeywordIndex(path)
    try:
        assert opened.files() == {} and not opened.found_empty
    finally:
        opened.close()


def _open_at_the_cue(path, cue, outcomes) -> None:
    """In a forked process: wait for the cue, open the index as a writer, search it, close."""
    cue.wait()
    try:
        keywords = KeywordIndex(path)
        try:
            paths_for(keywords, "anything")
        finally:
            keywords.close()
    except sqlite3.Error as error:  # reported to the test, which shows it
        outcomes.put(f"{type(error).__name__}: {error}")
    else:
        outcomes.put("ok")


def test_two_writers_opening_a_new_index_at_the_same_moment_both_find_it_whole(tmp_path):
    # One writer creating the tables while the other reads them once failed the second with
    # "vtable constructor failed: chunks_fts" (about one round in ten on two cores).
    context = multiprocessing.get_context("fork")
    for round_number in range(30):
        path = tmp_path / f"round-{round_number}" / "index.sqlite"
        cue, outcomes = context.Barrier(2), context.Queue()
        workers = [
            context.Process(target=_open_at_the_cue, args=(path, cue, outcomes)) for _ in range(2)
        ]
        for worker in workers:
            worker.start()
        results = [outcomes.get(timeout=60) for _ in workers]
        for worker in workers:
            worker.join(60)
        assert results == ["ok", "ok"], f"round {round_number}: {results}"
