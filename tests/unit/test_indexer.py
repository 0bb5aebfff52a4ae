"""The indexer: full syncs, incremental updates, skips, deletions, renames and model changes."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from explorer.core.embed.embedder import MODEL_BATCH
from explorer.core.indexing.indexer import FORMAT_READINGS_KEY, Indexer, format_readings
from explorer.core.ingest.documents import Chunk
from explorer.core.models import FileState, SearchMode, SyncPhase
from explorer.core.retrieval.query import fts_expression
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.core.store.keywords import KeywordIndex
from explorer.core.store.vectors import file_vector_id
from tests.conftest import write_files
from tests.documents import API_PAGE
from tests.fakes import FakeEmbedder

CORPUS = {
    "guides/install.md": "---\ntitle: Installing Explorer\n---\n# Install\n\n"
    "Run pip install to set up the explorer.\n\n## Linux\n\nUse the apt package manager.\n",
    "guides/search.md": "# Search\n\nHybrid search fuses keyword and vector rankings.\n",
    "src/app.py": "def launch_rocket(fuel):\n    return fuel * 2\n\n\n"
    "class Telescope:\n    def focus(self):\n        return 'sharp'\n",
    "notes/todo.txt": "Buy groceries: lemons, basil and olive oil.\n",
    "README.md": "# Explorer\n\nA terminal document explorer.\n",
}


@pytest.fixture
def root(tmp_path):
    return write_files(tmp_path / "root", CORPUS)


@pytest.fixture
def index(root, settings_for, fake_embedder):
    opened = Index(settings_for(root), embedder=fake_embedder)
    yield opened
    opened.close()


def keyword_paths(index, query: str) -> set[str]:
    return {path for _id, path, _s in index.keywords.search(fts_expression(query), 100)}


def assert_consistent(index) -> None:
    """SQLite and Chroma hold the same chunks; file vectors exist for exactly the fresh files."""
    sqlite_ids = index.keywords.chunk_ids()
    assert len(sqlite_ids) == len(set(sqlite_ids))
    assert set(sqlite_ids) == index.vectors.chunk_ids()
    files = index.keywords.files()
    fresh_with_chunks = {
        file_vector_id(p, r.hash): p
        for p, r in files.items()
        if r.state == FileState.FRESH and r.chunk_count
    }
    assert index.vectors.file_entries() == fresh_with_chunks
    assert all(r.state in (FileState.FRESH, FileState.SKIPPED) for r in files.values()), {
        p: r.state for p, r in files.items()
    }


def edit(path, text: str) -> None:
    """Rewrite a file and make sure its mtime moves even on coarse clocks."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text, encoding="utf-8")
    if path.stat().st_mtime_ns == before:
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


def test_first_sync_adds_every_file_and_makes_them_searchable(index, fake_embedder):
    report = Indexer(index).sync()
    assert report.added == len(CORPUS)
    assert (report.updated, report.removed, report.unchanged, report.failed) == (0, 0, 0, 0)
    assert report.skipped == {}
    chunks = len(index.keywords.chunk_ids())
    assert report.chunks_written == chunks == report.chunks_embedded
    assert fake_embedder.documents_embedded == chunks
    assert keyword_paths(index, "groceries") == {"notes/todo.txt"}
    assert keyword_paths(index, "telescope") == {"src/app.py"}
    assert keyword_paths(index, "apt") == {"guides/install.md"}
    status = index.status()
    assert (status.indexed, status.stale, status.skipped, status.failed) == (5, 0, 0, 0)
    assert status.chunks == status.vectors == chunks
    assert status.model == "fake-hash-64" and status.dimension == 64
    assert not status.needs_rebuild
    assert_consistent(index)


def test_front_matter_title_or_file_name_becomes_the_title(index):
    Indexer(index).sync()
    titles = index.keywords.titles(["guides/install.md", "notes/todo.txt"])
    assert titles == {"guides/install.md": "Installing Explorer", "notes/todo.txt": "todo"}


def test_second_sync_changes_nothing_and_embeds_nothing(index, fake_embedder):
    Indexer(index).sync()
    embedded = fake_embedder.documents_embedded
    ids = set(index.keywords.chunk_ids())
    report = Indexer(index).sync()
    assert report.unchanged == len(CORPUS)
    assert report.changed == 0
    assert report.chunks_written == report.chunks_embedded == 0
    assert fake_embedder.documents_embedded == embedded
    assert set(index.keywords.chunk_ids()) == ids


def test_touching_a_file_without_changing_it_embeds_nothing(index, root, fake_embedder):
    Indexer(index).sync()
    embedded = fake_embedder.documents_embedded
    target = root / "notes/todo.txt"
    stat = target.stat()
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    report = Indexer(index).sync()
    assert report.unchanged == len(CORPUS)
    assert fake_embedder.documents_embedded == embedded
    # The new mtime is recorded, so the next sync does not even read the file.
    assert index.keywords.file("notes/todo.txt").mtime_ns == target.stat().st_mtime_ns


def test_editing_one_file_reembeds_only_its_chunks(index, root, fake_embedder):
    Indexer(index).sync()
    other_ids = {p: index.keywords.chunk_ids(p) for p in CORPUS if p != "guides/search.md"}
    embedded = fake_embedder.documents_embedded
    edit(
        root / "guides/search.md",
        "# Search\n\nQuasar filters narrow the results.\n\n"
        "## Scores\n\nScores run from zero to one.\n",
    )
    report = Indexer(index).sync()
    new_ids = index.keywords.chunk_ids("guides/search.md")
    assert report.updated == 1 and report.unchanged == len(CORPUS) - 1
    assert fake_embedder.documents_embedded - embedded == len(new_ids) == report.chunks_embedded
    assert {p: index.keywords.chunk_ids(p) for p in other_ids} == other_ids
    assert keyword_paths(index, "quasar") == {"guides/search.md"}
    assert keyword_paths(index, "fuses") == set()
    assert_consistent(index)


def test_deleting_a_file_leaves_no_chunk_or_vector_of_it(index, root):
    Indexer(index).sync()
    old_ids = set(index.keywords.chunk_ids("notes/todo.txt"))
    assert old_ids
    (root / "notes/todo.txt").unlink()
    report = Indexer(index).sync()
    assert report.removed == 1
    assert index.keywords.file("notes/todo.txt") is None
    assert index.keywords.chunk_ids("notes/todo.txt") == []
    assert not old_ids & index.vectors.chunk_ids()
    assert "notes/todo.txt" not in index.vectors.file_entries().values()
    assert keyword_paths(index, "groceries") == set()
    assert_consistent(index)


def test_renaming_a_file_moves_it_and_leaves_nothing_at_the_old_path(index, root, fake_embedder):
    Indexer(index).sync()
    old_ids = set(index.keywords.chunk_ids("guides/search.md"))
    (root / "guides/search.md").rename(root / "guides/finding.md")
    report = Indexer(index).sync()
    assert report.removed == 1 and report.added == 1
    assert index.keywords.chunk_ids("guides/search.md") == []
    assert not old_ids & index.vectors.chunk_ids()
    assert "guides/search.md" not in index.vectors.file_entries().values()
    assert "guides/finding.md" in index.vectors.file_entries().values()
    assert keyword_paths(index, "hybrid") == {"guides/finding.md"}
    vector = fake_embedder.embed_query("hybrid search fuses keyword and vector rankings")
    nearest = index.vectors.query_chunks(vector, 100)
    stored = index.keywords.chunks_by_id([cid for cid, _sim in nearest])
    assert set(stored) == {cid for cid, _sim in nearest}
    assert "guides/search.md" not in {chunk.path for chunk in stored.values()}
    assert_consistent(index)


def test_unindexable_files_are_skipped_with_reasons_and_never_crash(
    tmp_path, settings_for, fake_embedder
):
    root = write_files(tmp_path / "root", {"ok.md": "# Fine\n\nreadable words\n"})
    (root / "blob.txt").write_bytes(b"header\x00\x01\x02binary payload")
    (root / "latin1.txt").write_bytes("caf\xe9 cr\xe8me br\xfbl\xe9e".encode("latin-1"))
    (root / "mixed.txt").write_bytes("crème brûlée ".encode() * 5 + b"caf\xe9")
    (root / "big.md").write_text("word " * 400, encoding="utf-8")
    index = Index(settings_for(root, max_file_bytes=1000), embedder=fake_embedder)
    try:
        report = Indexer(index).sync()
        assert report.added == 2  # ok.md, and latin1.txt read in its legacy encoding
        assert report.skipped == {"binary": 1, "undecodable": 1, "too-large": 1}
        status = index.status()
        assert status.indexed == 2 and status.skipped == 3
        assert keyword_paths(index, "crème") == {"latin1.txt"}
        assert status.skip_reasons == {"binary": 1, "undecodable": 1, "too-large": 1}
        assert index.keywords.chunk_ids("big.md") == []
        assert keyword_paths(index, "payload") == set()
        # A second sync does not turn them into crashes or indexed files either, and reports
        # them the same way as the first did.
        again = Indexer(index).sync()
        assert again.skipped == {"binary": 1, "undecodable": 1, "too-large": 1}
        assert again.unchanged == 2
        assert index.status().skip_reasons == {"binary": 1, "undecodable": 1, "too-large": 1}
        assert_consistent(index)
    finally:
        index.close()


def test_several_binary_files_are_all_counted_in_status(tmp_path, settings_for, fake_embedder):
    root = write_files(tmp_path / "root", {"ok.md": "text\n"})
    (root / "a.txt").write_bytes(b"\x00abc")
    (root / "b.txt").write_bytes(b"abcdef\x00")
    index = Index(settings_for(root), embedder=fake_embedder)
    try:
        Indexer(index).sync()
        assert index.status().skip_reasons == {"binary": 2}
    finally:
        index.close()


def test_a_skipped_file_that_becomes_text_is_indexed(tmp_path, settings_for, fake_embedder):
    root = write_files(tmp_path / "root", {"ok.md": "text\n"})
    (root / "later.txt").write_bytes(b"\x00\x01")
    index = Index(settings_for(root), embedder=fake_embedder)
    try:
        Indexer(index).sync()
        edit(root / "later.txt", "now it is readable marmalade\n")
        report = Indexer(index).sync()
        assert report.added == 1
        assert keyword_paths(index, "marmalade") == {"later.txt"}
        assert index.status().skip_reasons == {}
        assert_consistent(index)
    finally:
        index.close()


def test_gitignored_files_are_not_indexed(tmp_path, settings_for, fake_embedder):
    root = write_files(
        tmp_path / "root",
        {
            ".gitignore": "secret.md\nbuild-output/\n",
            "public.md": "# Public\n\nshared words\n",
            "secret.md": "# Secret\n\nclassified shared words\n",
            "build-output/gen.md": "generated classified text\n",
        },
    )
    index = Index(settings_for(root), embedder=fake_embedder)
    try:
        report = Indexer(index).sync()
        assert report.added == 1
        assert set(index.keywords.files()) == {"public.md"}
        assert keyword_paths(index, "classified") == set()
    finally:
        index.close()


def test_empty_file_is_fresh_without_chunks(tmp_path, settings_for, fake_embedder):
    root = write_files(tmp_path / "root", {"empty.md": "", "full.md": "words here\n"})
    index = Index(settings_for(root), embedder=fake_embedder)
    try:
        Indexer(index).sync()
        record = index.keywords.file("empty.md")
        assert record.state == FileState.FRESH and record.chunk_count == 0
        assert_consistent(index)
    finally:
        index.close()


def test_keywords_first_then_vectors_later(index, fake_embedder):
    report = Indexer(index).sync(embed=False)
    assert report.added == len(CORPUS) and report.chunks_embedded == 0
    assert fake_embedder.documents_embedded == 0
    status = index.status()
    assert status.stale == len(CORPUS) and status.indexed == 0 and status.vectors == 0
    response = search(index, SearchRequest("groceries", mode="keyword"))
    assert [hit.path for hit in response.results] == ["notes/todo.txt"]
    hybrid = search(index, SearchRequest("groceries"))
    assert [hit.path for hit in hybrid.results] == ["notes/todo.txt"]
    assert any("no vectors yet" in note for note in hybrid.notes)
    assert hybrid.results[0].score == 1.0  # the keyword leg alone decides, on its own scale

    report = Indexer(index).sync()
    assert report.unchanged == len(CORPUS)
    assert report.chunks_embedded == len(index.keywords.chunk_ids())
    status = index.status()
    assert status.stale == 0 and status.indexed == len(CORPUS)
    assert status.vectors == status.chunks
    assert_consistent(index)


def test_update_paths_handles_created_modified_and_deleted_files(index, root, fake_embedder):
    Indexer(index).sync()
    embedded = fake_embedder.documents_embedded
    write_files(root, {"guides/new.md": "# New\n\nA brand new xylophone guide.\n"})
    edit(root / "README.md", "# Explorer\n\nNow with zeppelins.\n")
    (root / "notes/todo.txt").unlink()
    report = Indexer(index).update_paths(
        ["guides/new.md", "README.md", "notes/todo.txt", "does/not/exist.md"]
    )
    assert (report.added, report.updated, report.removed) == (1, 1, 1)
    new_chunks = len(index.keywords.chunk_ids("guides/new.md")) + len(
        index.keywords.chunk_ids("README.md")
    )
    assert fake_embedder.documents_embedded - embedded == new_chunks == report.chunks_embedded
    assert keyword_paths(index, "xylophone") == {"guides/new.md"}
    assert keyword_paths(index, "zeppelins") == {"README.md"}
    assert keyword_paths(index, "groceries") == set()
    assert index.keywords.file("does/not/exist.md") is None
    assert_consistent(index)
    # A full sync afterwards agrees: nothing left to do.
    assert Indexer(index).sync().changed == 0


def test_update_paths_of_a_rename(index, root):
    Indexer(index).sync()
    (root / "src/app.py").rename(root / "src/main.py")
    report = Indexer(index).update_paths(["src/app.py", "src/main.py"])
    assert (report.added, report.removed) == (1, 1)
    assert keyword_paths(index, "telescope") == {"src/main.py"}
    assert_consistent(index)


def test_update_paths_ignores_files_the_rules_exclude(index, root):
    Indexer(index).sync()
    write_files(root, {"image.png": "not really an image", ".hidden.md": "hidden"})
    report = Indexer(index).update_paths(["image.png", ".hidden.md"])
    assert report.changed == 0
    assert "image.png" not in index.keywords.files()
    assert ".hidden.md" not in index.keywords.files()


def test_model_change_needs_rebuild_and_reembeds_everything(root, settings_for, fake_embedder):
    first = Index(settings_for(root), embedder=fake_embedder)
    Indexer(first).sync()
    chunks = len(first.keywords.chunk_ids())
    first.close()

    other = FakeEmbedder(dimension=32)
    other.name = "other"
    second = Index(replace(settings_for(root), model="other"), embedder=other)
    try:
        status = second.status()
        assert status.needs_rebuild
        assert "fake-hash-64" in status.rebuild_reason and "other" in status.rebuild_reason
        report = Indexer(second).sync()
        assert report.chunks_embedded == chunks == other.documents_embedded
        status = second.status()
        assert not status.needs_rebuild
        assert status.model == "other" and status.dimension == 32
        assert status.indexed == len(CORPUS) and status.vectors == chunks
        assert_consistent(second)
        vector = other.embed_query("olive oil groceries")
        response = search(second, SearchRequest("olive oil groceries", mode="semantic"))
        assert response.results[0].path == "notes/todo.txt"
        assert len(vector) == 32
    finally:
        second.close()


def test_cancelled_sync_stops_and_a_later_sync_finishes(index, fake_embedder):
    cancel = threading.Event()
    cancel.set()
    report = Indexer(index).sync(cancel=cancel)
    assert report.cancelled
    assert fake_embedder.documents_embedded == 0
    report = Indexer(index).sync()
    assert not report.cancelled
    assert index.status().indexed == len(CORPUS)
    assert_consistent(index)


def test_cancel_during_embedding_keeps_finished_batches(root, settings_for, fake_embedder):
    index = Index(settings_for(root, embed_batch=2), embedder=fake_embedder)
    cancel = threading.Event()

    def progress(update):
        if update.phase == "embed" and update.chunks_done >= 2:
            cancel.set()

    try:
        report = Indexer(index).sync(progress=progress, cancel=cancel)
        assert report.cancelled
        assert report.chunks_embedded == fake_embedder.documents_embedded == 2
        assert index.status().stale > 0
        total = len(index.keywords.chunk_ids())
        report = Indexer(index).sync()
        # Only what was left is embedded: finished batches are kept.
        assert report.chunks_embedded == total - 2
        assert fake_embedder.documents_embedded == total
        assert_consistent(index)
    finally:
        index.close()


def test_a_cancel_is_heard_between_model_steps_of_one_batch(tmp_path, settings_for):
    # A batch of 128 passages takes the real model 4-9 s on two cores: quitting (or a key
    # typed) waits for one model step of MODEL_BATCH passages, not for the whole batch.
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
    folder = write_files(
        tmp_path / "many",
        {f"n{i:02}.md": " ".join(words[: 1 + i % 10]) + f" note{i}" for i in range(80)},
    )
    embedder = RecordingEmbedder()
    index = Index(settings_for(folder), embedder=embedder)
    cancel = threading.Event()
    embedder.after_call = cancel.set
    try:
        report = Indexer(index).sync(cancel=cancel)
        assert report.cancelled
        assert report.chunks_embedded == embedder.documents_embedded == MODEL_BATCH
        assert len(embedder.calls) == 1 and len(embedder.calls[0]) == MODEL_BATCH
        # The longest passages of the batch went first (note i holds 1 + i % 10 words: eight
        # notes of each length), each vector stored under its own passage's id.
        assert MODEL_BATCH % 8 == 0
        lengths_taken = MODEL_BATCH // 8
        text_of = {int(re.search(r"note(\d+)", text)[1]): text for text in embedder.calls[0]}
        assert sorted(text_of) == [i for i in range(80) if i % 10 >= 10 - lengths_taken]
        ids = index.keywords.chunk_ids()
        stored = index.vectors.chunk_vectors(ids)
        places = index.keywords.chunk_places(list(stored))
        assert len(stored) == MODEL_BATCH
        for chunk_id, vector in stored.items():
            number = int(re.search(r"n(\d+)\.md", places[chunk_id][0])[1])
            assert np.allclose(vector, FakeEmbedder().embed_documents([text_of[number]])[0])
        embedder.after_call = None
        report = Indexer(index).sync()
        assert not report.cancelled and report.chunks_embedded == 80 - MODEL_BATCH
        assert_consistent(index)
    finally:
        index.close()


class RecordingEmbedder(FakeEmbedder):
    """The fake embedder, keeping each call's texts."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[str]] = []
        self.after_call: Callable[[], None] | None = None

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        vectors = super().embed_documents(texts)
        self.calls.append(list(texts))
        if self.after_call is not None:
            self.after_call()
        return vectors


def test_progress_reports_phases_in_order(index):
    phases = []
    Indexer(index).sync(progress=lambda p: phases.append(p.phase))
    order = list(dict.fromkeys(phases))
    assert order == ["scan", "keywords", "embed", "done"]


def leave_an_older_reading(
    keywords, path: str, chunk_of: Callable, readings: dict[str, int], title: str
) -> None:
    """Put back what an older reading of ``path`` left: each stored chunk as ``chunk_of``
    makes it (same ids), and the formats' readings of that explorer in the index's meta."""
    ids = keywords.chunk_ids(path)
    stored = keywords.chunks_by_id(ids)
    record = keywords.file(path)
    old = [(cid, chunk_of(stored[cid])) for cid in ids]
    keywords.replace_file(path, record.size, record.mtime_ns, record.hash, old, {}, title)
    keywords.set_meta(FORMAT_READINGS_KEY, json.dumps(readings))


def manual_with_a_navigation_bar(tmp_path: Path) -> Path:
    """Two pages of an HTML manual; the first has a bar of links to the next and the up page,
    which HTML reading 1 read as words of the page."""
    bar = '<p><a href="b.html" rel="next">Next</a> <a href="index.html" rel="up">Up</a></p>'
    return write_files(
        tmp_path / "root",
        {
            "manual/a.html": f"<body>{bar}<h1>Closures</h1><p>Closures bind data.</p></body>",
            "manual/b.html": "<body><h1>Types</h1><p>Types describe values.</p></body>",
        },
    )


def leave_the_bars_reading(keywords: KeywordIndex) -> None:
    """What HTML reading 1 left of :func:`manual_with_a_navigation_bar`'s first page: the
    bar's words in its passage, under the same ids."""
    leave_an_older_reading(
        keywords,
        "manual/a.html",
        lambda c: Chunk("Next Up\n\n" + c.text, c.heading, 1, 5, 0, 9),
        {"html": 1},
        "Closures",
    )


def test_html_indexed_by_an_older_reading_is_read_again_once_and_only_changed_pages_embed(
    tmp_path, settings_for, fake_embedder
):
    """An index made when HTML was read with a manual's navigation bars (HTML reading 1) holds
    their words in its passages, and the pages never change: the next sync reads its HTML
    again. A page whose passages came out otherwise gets new chunk ids (the old ids' vectors
    were of other text) and is embedded again; a page read alike keeps its ids and vectors;
    the sync after reads nothing."""
    root = manual_with_a_navigation_bar(tmp_path)
    index = Index(settings_for(root), embedder=fake_embedder)
    try:
        Indexer(index).sync()
        assert format_readings()["html"] == 3
        keywords = index.keywords
        ids_a, ids_b = keywords.chunk_ids("manual/a.html"), keywords.chunk_ids("manual/b.html")
        leave_the_bars_reading(keywords)
        assert keyword_paths(index, "next") == {"manual/a.html"}

        report = Indexer(index).sync()
        assert report.updated == 2 and report.chunks_embedded == len(ids_a)
        new_a = keywords.chunk_ids("manual/a.html")
        assert not set(new_a) & set(ids_a)  # embedded again, under ids of their own
        assert keywords.chunk_ids("manual/b.html") == ids_b  # read alike: vectors kept
        assert keyword_paths(index, "next") == set()
        assert keyword_paths(index, "closures") == {"manual/a.html"}
        assert json.loads(keywords.get_meta(FORMAT_READINGS_KEY)) == format_readings()
        assert_consistent(index)

        again = Indexer(index).sync()
        assert again.unchanged == 2 and again.chunks_embedded == 0
    finally:
        index.close()


def test_a_page_read_again_alike_is_not_counted_as_waiting_for_the_model(
    tmp_path, settings_for, fake_embedder
):
    """A page read again by a new reading whose passages come out the same keeps its ids and
    its vectors, and from the keyword phase on its chunks count as embedded: the status bar,
    shown before the model has loaded, said "embedding 26,771 chunks" of the corpora's pages
    read again, though none were embedded. A page whose passages changed is counted."""
    root = manual_with_a_navigation_bar(tmp_path)
    index = Index(settings_for(root), embedder=fake_embedder)
    try:
        Indexer(index).sync()
        keywords = index.keywords
        ids_b = keywords.chunk_ids("manual/b.html")
        leave_the_bars_reading(keywords)
        keywords.ledger.mark_embedded(keywords.chunk_ids())  # as the older index had them
        seen = []

        def at_the_keyword_phases_end(event):
            # What the status bar reads while the pages are read again, before the vector
            # store is asked what it holds.
            if event.phase is SyncPhase.KEYWORDS and event.files_done == event.files_total:
                seen.append(keywords.counts())

        Indexer(index).sync(at_the_keyword_phases_end, embed=False)
        counts = seen[-1]
        new_a = keywords.chunk_ids("manual/a.html")
        assert keywords.chunk_ids("manual/b.html") == ids_b  # read again, alike
        assert counts["chunks"] - counts["embedded"] == len(new_a)  # only a's are waiting
        report = Indexer(index).sync()
        assert report.chunks_embedded == len(new_a)
        assert keywords.counts()["embedded"] == keywords.counts()["chunks"]
        assert_consistent(index)
    finally:
        index.close()


def test_an_api_manual_indexed_before_entries_gains_them_with_its_vectors_kept(
    tmp_path, settings_for, fake_embedder
):
    """An index made by HTML reading 2 holds no passage's entries: the next sync reads its
    HTML again, once; the text is the same, so every chunk keeps its id and vector (nothing is
    embedded), and a result names its entry from then on."""
    root = write_files(tmp_path / "root", {"library/csv.html": API_PAGE})
    index = Index(settings_for(root), embedder=fake_embedder)
    Indexer(index).sync()
    ids = index.keywords.chunk_ids("library/csv.html")
    database = index.keywords.path
    index.keywords.set_meta(FORMAT_READINGS_KEY, json.dumps({**format_readings(), "html": 2}))
    index.close()
    with sqlite3.connect(database) as db:  # the chunks table before entries were kept
        db.execute("ALTER TABLE chunks DROP COLUMN entries")
    index = Index(settings_for(root), embedder=fake_embedder)
    try:
        request = SearchRequest("map each row", mode=SearchMode.KEYWORD)
        assert search(index, request).results[0].passages[0].entry == ""
        report = Indexer(index).sync()
        assert report.updated == 1 and report.chunks_embedded == 0
        assert index.keywords.chunk_ids("library/csv.html") == ids
        assert search(index, request).results[0].passages[0].entry == "csv.DictReader"
        assert Indexer(index).sync().unchanged == 1
        assert_consistent(index)
    finally:
        index.close()


def test_pending_state_until_vectors_exist(index):
    Indexer(index).sync(embed=False)
    assert {r.state for r in index.keywords.files().values()} == {FileState.PENDING}


def test_files_skipped_as_undecodable_by_an_older_explorer_are_read_again_once(
    tmp_path, settings_for, fake_embedder
):
    """An index made before legacy encodings were read holds a Latin-1 note as skipped
    (undecodable), and the note never changes: the next sync reads it, the one after does not."""
    root = write_files(tmp_path / "root", {"ok.md": "# Fine\n\nreadable words\n"})
    note = root / "latin1.txt"
    note.write_bytes("Die Größe der Sicherung wird täglich geprüft.".encode("latin-1"))
    index = Index(settings_for(root), embedder=fake_embedder)
    try:
        Indexer(index).sync()
        assert keyword_paths(index, "größe") == {"latin1.txt"}
        # What an older explorer left: the note skipped, and no decoding recorded.
        stat = note.stat()
        index.keywords.mark_skipped(
            "latin1.txt",
            stat.st_size,
            stat.st_mtime_ns,
            FileState.SKIPPED,
            "undecodable: not UTF-8 at byte 8",
        )
        index.keywords.set_meta("text_decoding", "1")
        assert keyword_paths(index, "größe") == set()
        report = Indexer(index).sync()
        assert report.skipped == {} and keyword_paths(index, "größe") == {"latin1.txt"}
        assert Indexer(index).sync().unchanged == 2
        assert_consistent(index)
    finally:
        index.close()


def test_markdown_indexed_with_markup_in_its_titles_is_read_again_once(
    tmp_path, settings_for, fake_embedder
):
    """An index made by Markdown reading 1 holds a heading's title as written
    (``**Weights**``): the next sync reads its Markdown again, once. The page whose titles
    change is embedded again under new ids; a page without markup in a heading keeps its
    ids and vectors; the sync after reads nothing."""
    root = write_files(
        tmp_path / "root",
        {
            "bold.md": "# Balancing\n\n## **Weights**\n\nServers get weights.\n",
            "plain.md": "# Caching\n\n## Keys\n\nKeys name entries.\n",
        },
    )
    index = Index(settings_for(root), embedder=fake_embedder)
    try:
        Indexer(index).sync()
        assert format_readings()["markdown"] == 3
        keywords = index.keywords
        ids_bold, ids_plain = keywords.chunk_ids("bold.md"), keywords.chunk_ids("plain.md")
        stored = keywords.chunks_by_id(ids_bold)
        assert [stored[cid].heading for cid in ids_bold][-1] == "Balancing > Weights"
        # What reading 1 left: the title as written.
        leave_an_older_reading(
            keywords,
            "bold.md",
            lambda c: Chunk(
                c.text,
                c.heading.replace("Weights", "**Weights**"),
                c.start_line,
                c.end_line,
                c.start_char,
                c.end_char,
            ),
            {"markdown": 1},
            "x",
        )

        report = Indexer(index).sync()
        assert report.chunks_embedded == len(ids_bold)
        new_bold = keywords.chunk_ids("bold.md")
        assert not set(new_bold) & set(ids_bold)
        assert keywords.chunk_ids("plain.md") == ids_plain  # read alike: vectors kept
        stored = keywords.chunks_by_id(new_bold)
        assert "**" not in "".join(stored[cid].heading for cid in new_bold)
        assert_consistent(index)
        again = Indexer(index).sync()
        assert again.unchanged == 2 and again.chunks_embedded == 0
    finally:
        index.close()
