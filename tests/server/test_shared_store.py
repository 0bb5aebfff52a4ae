"""Vectors on a real Chroma server (``chroma run`` on 127.0.0.1), shared by several checkouts.

Each test uses its own model name, so its collections on the session's server are its own.
"""

from __future__ import annotations

import shutil
import uuid

import pytest

from explorer.core.indexing.indexer import Indexer
from explorer.core.models import FileState
from explorer.core.retrieval.related import related_files
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.core.store.vectors import VectorStore, file_vector_id
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder

CORPUS = {
    "guides/install.md": "# Install\n\nRun apt install tern to set up the bookmark server.\n",
    "guides/backup.md": "# Backups\n\nSnapshots of the bookmark database, taken nightly.\n",
    "notes/ideas.txt": "Ideas: a telescope mode for browsing far-away bookmarks.\n",
    "src/app.py": "def serve():\n    '''Start the bookmark server.'''\n    return 'serving'\n",
}


@pytest.fixture
def model() -> str:
    """A model name of this test's own: the server's collections are named after it."""
    return f"fake-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def checkout(tmp_path, chroma_server, model):
    """Make a checkout of CORPUS (or ``files``) and open its index against the server."""
    opened: list[Index] = []

    def make(name: str, files: dict[str, str] | None = None, embedder=None) -> Index:
        root = write_files(tmp_path / name, files or CORPUS)
        settings = Settings.for_root(
            root, tmp_path / f"{name}-index", model=model, chroma_url=chroma_server.url
        )
        index = Index(settings, embedder=embedder or FakeEmbedder())
        opened.append(index)
        return index

    yield make
    for index in opened:
        index.close()


def server_store(chroma_server, model) -> VectorStore:
    from explorer.core.store.chroma_server import parse_server_url

    return VectorStore(address=parse_server_url(chroma_server.url), model=model)


def paths_of(index: Index, query: str, mode: str = "semantic") -> list[str]:
    return [hit.path for hit in search(index, SearchRequest(query, mode)).results]


def test_a_second_checkout_reuses_every_vector_and_embeds_nothing(checkout):
    first_embedder, second_embedder = FakeEmbedder(), FakeEmbedder()
    first = checkout("machine-a", embedder=first_embedder)
    first_report = Indexer(first).sync()
    assert first_report.chunks_embedded > 0 and first_report.chunks_reused == 0

    second = checkout("machine-b", embedder=second_embedder)
    report = Indexer(second).sync()
    assert report.chunks_embedded == 0 and second_embedder.documents_embedded == 0
    assert report.chunks_reused == first_report.chunks_embedded
    status = second.status()
    assert (status.indexed, status.stale) == (len(CORPUS), 0)
    assert status.vectors == status.chunks and status.vector_store == "server"
    assert paths_of(second, "telescope browsing")[0] == "notes/ideas.txt"
    related = related_files(second, "guides/install.md", limit=3)
    assert related and "guides/install.md" not in {r.path for r in related}


def test_an_edit_embeds_only_that_file_and_leaves_the_other_checkout_whole(
    checkout, chroma_server, model
):
    first = checkout("machine-a")
    Indexer(first).sync()
    embedder = FakeEmbedder()
    second = checkout("machine-b", embedder=embedder)
    Indexer(second).sync()

    edited = second.settings.root / "notes/ideas.txt"
    edited.write_text("Ideas: a walrus mode that sorts bookmarks by tusk length.\n")
    report = Indexer(second).sync()
    assert report.updated == 1
    assert report.chunks_embedded == len(second.keywords.chunk_ids("notes/ideas.txt"))
    assert paths_of(second, "walrus tusk")[0] == "notes/ideas.txt"

    # The first checkout still has the old text: its vectors were not deleted under it.
    old_ids = first.keywords.chunk_ids("notes/ideas.txt")
    assert server_store(chroma_server, model).existing_chunk_ids(old_ids) == set(old_ids)
    assert paths_of(first, "telescope browsing")[0] == "notes/ideas.txt"
    assert Indexer(first).sync().chunks_embedded == 0


def test_search_and_related_never_show_another_checkouts_files(checkout):
    first = checkout("machine-a", {**CORPUS, "only-on-a.md": "# Telescope\n\ntelescope lenses\n"})
    Indexer(first).sync()
    second = checkout("machine-b")
    Indexer(second).sync()

    for mode in ("semantic", "hybrid"):
        assert "only-on-a.md" not in paths_of(second, "telescope lenses", mode)
    assert "only-on-a.md" in paths_of(first, "telescope lenses")
    source = "notes/ideas.txt"
    assert "only-on-a.md" not in {r.path for r in related_files(second, source, limit=10)}
    assert "only-on-a.md" in {r.path for r in related_files(first, source, limit=10)}


def test_file_vectors_are_shared_by_content(checkout, chroma_server, model):
    first = checkout("machine-a")
    Indexer(first).sync()
    second = checkout("machine-b")
    Indexer(second).sync()
    records = second.keywords.files()
    assert all(record.state == FileState.FRESH for record in records.values())
    expected = {file_vector_id(path, record.hash) for path, record in records.items()}
    assert server_store(chroma_server, model).file_ids() == expected  # one per content


def test_moving_a_checkout_keeps_its_vectors(checkout, tmp_path):
    first = checkout("machine-a")
    Indexer(first).sync()
    moved = tmp_path / "elsewhere"
    shutil.copytree(first.settings.root, moved)
    embedder = FakeEmbedder()
    settings = Settings.for_root(
        moved,
        tmp_path / "moved-index",
        model=first.settings.model,
        chroma_url=first.settings.chroma_url,
    )
    index = Index(settings, embedder=embedder)
    try:
        assert Indexer(index).sync().chunks_embedded == 0
        assert embedder.documents_embedded == 0
    finally:
        index.close()


def index_locally(root, index_dir, model: str) -> int:
    """Index ``root`` into ``index_dir`` with its vectors in the local store, as before a
    move to the server; how many chunks were embedded."""
    local = Index(Settings.for_root(root, index_dir, model=model), embedder=FakeEmbedder())
    try:
        return Indexer(local).sync().chunks_embedded
    finally:
        local.close()


def test_an_index_moved_to_the_server_uploads_its_local_vectors_instead_of_embedding(
    tmp_path, chroma_server, model
):
    root = write_files(tmp_path / "docs", CORPUS)
    local_settings = Settings.for_root(root, tmp_path / "index", model=model)
    local_embedder = FakeEmbedder()
    local = Index(local_settings, embedder=local_embedder)
    try:
        built = Indexer(local).sync()
        chunk_ids = local.keywords.chunk_ids()
        local_vectors = local.vectors.chunk_vectors(chunk_ids)
    finally:
        local.close()
    assert built.chunks_embedded == len(chunk_ids) > 0

    moving_embedder = FakeEmbedder()
    moved_settings = Settings.for_root(
        root, tmp_path / "index", model=model, chroma_url=chroma_server.url
    )
    moved = Index(moved_settings, embedder=moving_embedder)
    try:
        report = Indexer(moved).sync()
        assert (report.chunks_embedded, moving_embedder.documents_embedded) == (0, 0)
        assert report.chunks_moved == len(chunk_ids) and report.vectors_lost == 0
        on_server = server_store(chroma_server, model).chunk_vectors(chunk_ids)
        assert set(on_server) == set(chunk_ids)
        assert all(
            (on_server[cid] == pytest.approx(local_vectors[cid], abs=1e-6)) for cid in chunk_ids
        )
        status = moved.status()
        assert (status.indexed, status.stale) == (len(CORPUS), 0)
        assert status.vectors == status.chunks and status.vector_store == "server"
        assert paths_of(moved, "telescope browsing")[0] == "notes/ideas.txt"
        again = Indexer(moved).sync()
        assert (again.chunks_embedded, again.chunks_moved, again.vectors_lost) == (0, 0, 0)
    finally:
        moved.close()


def test_a_move_to_the_server_under_another_model_embeds_anew(tmp_path, chroma_server, model):
    """Vectors of another model are no use on the server: the move embeds every chunk."""
    root = write_files(tmp_path / "docs", CORPUS)
    chunks = index_locally(root, tmp_path / "index", model)
    other_model = f"{model}-other"
    settings = Settings.for_root(
        root, tmp_path / "index", model=other_model, chroma_url=chroma_server.url
    )
    moved = Index(settings, embedder=FakeEmbedder())
    try:
        report = Indexer(moved).sync()
        assert (report.chunks_embedded, report.chunks_moved) == (chunks, 0)
    finally:
        moved.close()


def test_an_index_directory_moved_then_sent_to_the_server_still_uploads_its_vectors(
    tmp_path, chroma_server, model
):
    root = write_files(tmp_path / "docs", CORPUS)
    chunks = index_locally(root, tmp_path / "index", model)
    shutil.move(tmp_path / "index", tmp_path / "elsewhere")  # it records the old folder still
    settings = Settings.for_root(
        root, tmp_path / "elsewhere", model=model, chroma_url=chroma_server.url
    )
    moved = Index(settings, embedder=FakeEmbedder())
    try:
        report = Indexer(moved).sync()
        assert (report.chunks_embedded, report.chunks_moved) == (0, chunks)
    finally:
        moved.close()
