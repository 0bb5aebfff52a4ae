"""A damaged index repairs itself (``explorer index``) or says what to do (search, status).

Damage is made the way a disk or a careless copy makes it: the SQLite file cut in half,
overwritten with garbage, or with a few pages overwritten; garbage in Chroma's own database.
The repair must keep the damaged files, reuse the store that is intact (no chunk embedded again
when only SQLite was lost), and leave an index that answers both legs.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from explorer.cli import main
from explorer.core.indexing.indexer import Indexer
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.damaged_store import DAMAGED_PREFIX, Store
from explorer.core.store.index import CHROMA_DIR_NAME, DATABASE_NAME, Index
from explorer.core.store.keywords import KeywordIndexDamaged
from explorer.core.store.vectors import CHROMA_DATABASE, VectorStore, VectorStoreDamaged
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder
from tests.hostile.damage import Damage, damage_file

CORPUS = {
    f"notes/note{n}.md": f"# Note {n}\n\nTelescope mirrors, lens number w{n}x.\n\n"
    f"## Sky\n\nStars at night seen from hill h{n}y.\n"
    for n in range(6)
}


def damage_sqlite(path: Path, kind: str) -> None:
    damage_file(path, Damage(kind))


@pytest.fixture
def built(tmp_path):
    """A corpus indexed with the fake embedder: (settings, embedder, chunk count)."""
    root = write_files(tmp_path / "root", CORPUS)
    settings = Settings.for_root(root, tmp_path / "index", model=FakeEmbedder.name)
    embedder = FakeEmbedder()
    index = Index.open_for_writing(settings, embedder)
    try:
        Indexer(index).sync()
        chunks = index.keywords.counts()["chunks"]
    finally:
        index.close()
    assert chunks >= len(CORPUS)
    return settings, embedder, chunks


def damaged_folders(settings: Settings) -> list[Path]:
    return sorted(settings.index_dir.glob(f"{DAMAGED_PREFIX}*"))


def assert_answers_both_legs(settings: Settings, embedder: FakeEmbedder) -> None:
    index = Index.open_existing(settings, embedder)
    try:
        response = search(index, SearchRequest("telescope w3x", limit=1))
        assert [hit.path for hit in response.results] == ["notes/note3.md"]
        passage = response.results[0].passages[0]
        assert passage.keyword_rank is not None and passage.vector_rank is not None
        assert not response.notes
    finally:
        index.close()


# -- the keyword index (SQLite) -------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["half", "garbage", "pages"])
def test_a_damaged_keyword_index_is_set_aside_and_rebuilt_reusing_every_vector(built, kind):
    settings, embedder, chunks = built
    database = settings.index_dir / DATABASE_NAME
    damage_sqlite(database, kind)
    damaged_bytes = database.read_bytes()
    before = embedder.documents_embedded

    index = Index.open_for_writing(settings, embedder)
    try:
        report = Indexer(index).sync()
        [repair] = index.repairs
    finally:
        index.close()

    assert repair.store is Store.KEYWORDS
    assert report.added == len(CORPUS)
    assert report.chunks_reused == chunks
    assert embedder.documents_embedded == before, "vectors were embedded again"
    assert damaged_folders(settings) == [repair.kept_in]
    assert (repair.kept_in / DATABASE_NAME).read_bytes() == damaged_bytes
    line = repair.describe()
    assert "\n" not in line and str(repair.kept_in) in line and "keyword index" in line
    assert_answers_both_legs(settings, embedder)


def test_only_the_files_changed_meanwhile_are_embedded_after_a_keyword_rebuild(built):
    settings, embedder, _chunks = built
    damage_sqlite(settings.index_dir / DATABASE_NAME, "half")
    write_files(settings.root, {"notes/note1.md": "# Note 1\n\nA new text about comets.\n"})
    before = embedder.documents_embedded
    index = Index.open_for_writing(settings, embedder)
    try:
        report = Indexer(index).sync()
        new_chunks = len(index.keywords.chunk_ids("notes/note1.md"))
    finally:
        index.close()
    assert embedder.documents_embedded - before == report.chunks_embedded == new_chunks
    assert report.orphans_removed == 2  # the old note1's vectors, no chunk names them now


def test_readers_of_a_damaged_keyword_index_name_the_file_and_the_fix(built):
    settings, embedder, _chunks = built
    damage_sqlite(settings.index_dir / DATABASE_NAME, "garbage")
    with pytest.raises(KeywordIndexDamaged) as caught:
        Index.open_existing(settings, embedder)
    message = str(caught.value)
    assert str(settings.index_dir / DATABASE_NAME) in message
    assert f"explorer index {settings.root} --index-dir {settings.index_dir}" in message
    assert not damaged_folders(settings), "a reader must not move anything"


def test_damage_met_in_the_middle_of_a_read_is_reported_too(built):
    """quick_check is not run by search: a read that meets a bad page still gives one line."""
    settings, embedder, _chunks = built
    index = Index.open_existing(settings, embedder)
    try:
        damage_sqlite(settings.index_dir / DATABASE_NAME, "garbage")
        with pytest.raises(KeywordIndexDamaged, match="is damaged"):
            search(index, SearchRequest("telescope", mode="keyword"))
    finally:
        index.close()


# -- the vector store (Chroma) --------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["half", "garbage", "later-pages"])
def test_a_damaged_vector_store_is_set_aside_and_embedded_again(built, kind):
    settings, embedder, chunks = built
    damage_sqlite(settings.index_dir / CHROMA_DIR_NAME / CHROMA_DATABASE, kind)
    before = embedder.documents_embedded
    index = Index.open_for_writing(settings, embedder)
    try:
        report = Indexer(index).sync()
        [repair] = index.repairs
        status = index.status()
    finally:
        index.close()
    assert repair.store is Store.VECTORS
    assert (repair.kept_in / CHROMA_DIR_NAME / CHROMA_DATABASE).exists()
    assert report.changed == 0, "the keyword index was intact"
    assert report.chunks_embedded == chunks == embedder.documents_embedded - before
    assert status.vectors == status.chunks == chunks and status.vectors_available
    assert_answers_both_legs(settings, embedder)


@pytest.mark.parametrize("kind", ["garbage", "later-pages"])
def test_search_on_damaged_vectors_answers_by_keyword_and_says_why(built, kind, capfd):
    """``later-pages`` makes Chroma's Rust core panic as it opens the store: the panic (and,
    with RUST_BACKTRACE, its backtrace) must not reach the terminal."""
    settings, embedder, _chunks = built
    damage_sqlite(settings.index_dir / CHROMA_DIR_NAME / CHROMA_DATABASE, kind)
    index = Index.open_existing(settings, embedder)
    try:
        response = search(index, SearchRequest("telescope w3x", limit=1))
        assert [hit.path for hit in response.results] == ["notes/note3.md"]
        [note] = response.notes
        assert "keyword results only" in note and CHROMA_DIR_NAME in note
        assert f"explorer index {settings.root}" in note
        with pytest.raises(VectorStoreDamaged):
            search(index, SearchRequest("telescope", mode="semantic"))
        status = index.status()
        assert not status.vectors_available and "is damaged" in status.vectors_problem
        assert status.needs_rebuild
    finally:
        index.close()
    assert not damaged_folders(settings), "a reader must not move anything"
    assert "panicked" not in capfd.readouterr().err


def test_a_damaged_store_fails_the_same_way_twice_and_a_fresh_one_opens_in_its_place(tmp_path):
    """Chroma caches a client system per path even when starting it failed; the store drops
    it (a private Chroma API: this test fails if a release moves it)."""
    directory = tmp_path / "chroma"
    VectorStore(directory).close()
    (directory / CHROMA_DATABASE).write_bytes(random.Random(1).randbytes(200_000))
    for _attempt in range(2):
        with pytest.raises(VectorStoreDamaged, match="file is not a database"):
            VectorStore(directory)
    (directory / CHROMA_DATABASE).rename(tmp_path / "kept.sqlite3")
    store = VectorStore(directory)
    try:
        assert store.count_chunks() == 0
    finally:
        store.close()


# -- the CLI --------------------------------------------------------------------------------------
@pytest.fixture
def cli(monkeypatch):
    monkeypatch.setattr(
        "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
    )
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=True)

    return invoke


def test_index_repairs_in_one_line_and_json_lists_the_repair(built, cli):
    settings, _embedder, chunks = built
    damage_sqlite(settings.index_dir / DATABASE_NAME, "half")
    result = cli("index", settings.root, "--index-dir", settings.index_dir)
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert first.startswith("repaired: the keyword index was damaged (")
    assert str(settings.index_dir / DAMAGED_PREFIX) in first
    assert f"reused {chunks} chunk vectors" in result.stdout
    damage_sqlite(settings.index_dir / CHROMA_DIR_NAME / CHROMA_DATABASE, "garbage")
    result = cli("index", settings.root, "--index-dir", settings.index_dir, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [r["store"] for r in data["repairs"]] == ["vector store"]
    assert data["chunks_embedded"] == chunks


def test_status_and_search_on_a_damaged_keyword_index_are_one_line(built, cli):
    settings, _embedder, _chunks = built
    damage_sqlite(settings.index_dir / DATABASE_NAME, "pages")
    for args in (
        ("status",),
        ("search", "telescope"),
        ("search", "telescope", "--mode", "keyword"),
    ):
        result = cli(*args, settings.root, "--index-dir", settings.index_dir)
        assert result.exit_code == 2, result.output
        [line] = result.stderr.splitlines()
        assert line.startswith("explorer: error: the keyword index ")
        assert str(settings.index_dir / DATABASE_NAME) in line and "explorer index" in line
    # Without ROOT the folder is unknown (it is recorded in the damaged file): say so.
    damage_sqlite(settings.index_dir / DATABASE_NAME, "garbage")
    result = cli("search", "telescope", "--index-dir", settings.index_dir)
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert f"explorer index <the folder it indexes> --index-dir {settings.index_dir}" in line


def test_a_long_running_reader_finds_the_vectors_again_after_a_repair(built):
    """An MCP server or a TUI that only reads keeps its Index open: once a writer has
    repaired the store, the reader's next search answers by meaning again."""
    settings, embedder, _chunks = built
    damage_sqlite(settings.index_dir / CHROMA_DIR_NAME / CHROMA_DATABASE, "garbage")
    reader = Index.open_existing(settings, embedder)
    try:
        response = search(reader, SearchRequest("telescope w3x", limit=1))
        assert response.notes and "keyword results only" in response.notes[0]
        writer = Index.open_for_writing(settings, embedder)
        try:
            Indexer(writer).sync()
        finally:
            writer.close()
        response = search(reader, SearchRequest("telescope w3x", limit=1))
        assert not response.notes
        assert response.results[0].passages[0].vector_rank is not None
    finally:
        reader.close()


def test_an_index_opened_read_only_writes_once_it_takes_the_write_lock(built):
    settings, embedder, _chunks = built
    write_files(settings.root, {"notes/late.md": "# Late\n\nComets over the lake.\n"})
    index = Index.open_existing(settings, embedder)
    try:
        assert index.vectors.count_chunks() > 0  # a read-only store, opened before the lock
        index.acquire_write_lock("a test")
        report = Indexer(index).sync()
        assert report.added == 1 and report.chunks_embedded > 0
    finally:
        index.close()
    assert_answers_both_legs(settings, embedder)


def test_status_text_on_damaged_vectors_names_the_store_and_the_fix(built, cli):
    settings, _embedder, _chunks = built
    damage_sqlite(settings.index_dir / CHROMA_DIR_NAME / CHROMA_DATABASE, "garbage")
    result = cli("status", settings.root, "--index-dir", settings.index_dir)
    assert result.exit_code == 0, result.output
    [line] = [x for x in result.stdout.splitlines() if x.startswith("vectors ")]
    assert "unreadable, counts are from the manifest" in line
    assert f"{settings.index_dir / CHROMA_DIR_NAME} is damaged (file is not a database)" in line
    assert f"run `explorer index {settings.root}" in line


class _MidWrite:
    """A chunk collection read while another process writes it: its ``get`` fails the way
    Chroma fails then, ``failures`` times in all (across fresh opens)."""

    def __init__(self, collection, failures: list[int]) -> None:
        self._collection = collection
        self._failures = failures

    def get(self, *args, **kwargs):
        from chromadb.errors import InternalError

        if self._failures[0] > 0:
            self._failures[0] -= 1
            raise InternalError("Error executing plan: Error finding id")
        return self._collection.get(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._collection, name)


def _stored_store(tmp_path, monkeypatch, failures: int) -> tuple[VectorStore, list[str]]:
    directory = tmp_path / "chroma"
    writer = VectorStore(directory)
    ids = [f"c{i}" for i in range(5)]
    writer.upsert_chunks(ids, np.eye(5, 8, dtype=np.float32), ["a.md"] * 5)
    writer.close()
    left = [failures]
    opened = VectorStore._open_collections

    def open_mid_write(self):
        opened(self)
        self._chunks = _MidWrite(self._chunks, left)

    monkeypatch.setattr(VectorStore, "_open_collections", open_mid_write)
    monkeypatch.setattr("explorer.core.store.vectors.REREAD_PAUSE", 0.0)
    return VectorStore(directory, read_only=True), ids


def test_a_reader_that_meets_a_write_in_progress_reads_again_and_answers(tmp_path, monkeypatch):
    store, ids = _stored_store(tmp_path, monkeypatch, failures=1)
    try:
        vectors = store.chunk_vectors(ids)
    finally:
        store.close()
    assert sorted(vectors) == ids
    assert vectors["c2"][2] == pytest.approx(1.0)


def test_a_store_that_fails_again_after_a_fresh_open_is_damaged(tmp_path, monkeypatch):
    store, ids = _stored_store(tmp_path, monkeypatch, failures=2)
    try:
        with pytest.raises(VectorStoreDamaged, match="Error finding id"):
            store.chunk_vectors(ids)
    finally:
        store.close()
