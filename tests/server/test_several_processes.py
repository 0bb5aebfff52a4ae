"""Several processes on one index, on the local store and on a Chroma server.

Workers are real processes (``tests/index_worker.py``) released at the same moment.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from explorer.core.indexing.indexer import Indexer
from explorer.core.models import FileState
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.core.store.vectors import VectorStore, file_vector_id
from explorer.settings.config import Settings
from tests.conftest import wait_until, write_files
from tests.fakes import FakeEmbedder
from tests.index_worker import BUSY_EXIT

REPO = Path(__file__).resolve().parents[2]
CORPUS = {
    f"topic-{n:02d}/note-{m}.md": f"# Note {n}-{m}\n\nword{n} and word{m} with lemur{n * m}.\n"
    for n in range(12)
    for m in range(5)
}


@pytest.fixture(params=["local", "server"])
def store(request) -> str | None:
    """The Chroma URL of the session's server, or None for the local store."""
    if request.param == "local":
        return None
    return request.getfixturevalue("chroma_server").url


def start_worker(root: Path, index_dir: Path, model: str, chroma_url: str | None):
    args = [sys.executable, "-m", "tests.index_worker", str(root), str(index_dir), model]
    worker = subprocess.Popen(
        [*args, *([chroma_url] if chroma_url else [])],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert worker.stdout.readline().strip() == "imported", worker.stderr.read()
    return worker


def release(workers) -> list[tuple[int, str, str]]:
    for worker in workers:
        worker.stdin.write("go\n")
        worker.stdin.flush()
    return [(w.wait(120), w.stdout.read(), w.stderr.read()) for w in workers]


def open_index(root, index_dir, model, chroma_url) -> Index:
    settings = Settings.for_root(root, index_dir, model=model, chroma_url=chroma_url)
    return Index(settings, embedder=FakeEmbedder())


def assert_whole(index: Index) -> None:
    """Every file fresh, each chunk once in SQLite and its vector stored, file vectors too."""
    files = index.keywords.files()
    assert set(files) == set(CORPUS)
    assert all(record.state == FileState.FRESH for record in files.values())
    ids = index.keywords.chunk_ids()
    assert len(ids) == len(set(ids)) == len(CORPUS)
    assert index.vectors.existing_chunk_ids(ids) == set(ids)
    file_ids = {file_vector_id(p, r.hash) for p, r in files.items()}
    assert index.vectors.existing_file_ids(file_ids) == file_ids


def test_two_processes_indexing_one_index_at_once(tmp_path, store):
    root = write_files(tmp_path / "docs", CORPUS)
    model = f"fake-{uuid.uuid4().hex[:10]}"
    workers = [start_worker(root, tmp_path / "index", model, store) for _ in range(2)]
    outcomes = release(workers)
    codes = sorted(code for code, _out, _err in outcomes)
    assert codes == [0, BUSY_EXIT], outcomes
    busy = next(out for code, out, _err in outcomes if code == BUSY_EXIT)
    assert "being written by explorer index (pid" in busy and "wait for it to finish" in busy
    report = json.loads(next(out for code, out, _e in outcomes if code == 0).splitlines()[-1])
    assert report["added"] == len(CORPUS)
    index = open_index(root, tmp_path / "index", model, store)
    try:
        assert_whole(index)
        again = Indexer(index).sync()
        assert (again.added, again.updated, again.chunks_embedded) == (0, 0, 0)
    finally:
        index.close()


def test_two_machines_index_the_same_content_at_once_on_the_server(tmp_path, chroma_server):
    model = f"fake-{uuid.uuid4().hex[:10]}"
    roots = [write_files(tmp_path / name, CORPUS) for name in ("a", "b")]
    workers = [
        start_worker(root, tmp_path / f"{root.name}-index", model, chroma_server.url)
        for root in roots
    ]
    outcomes = release(workers)
    assert [code for code, _o, _e in outcomes] == [0, 0], outcomes
    for root in roots:
        index = open_index(root, tmp_path / f"{root.name}-index", model, chroma_server.url)
        try:
            assert_whole(index)
        finally:
            index.close()
    from explorer.core.store.chroma_server import parse_server_url

    shared = VectorStore(address=parse_server_url(chroma_server.url), model=model)
    assert shared.count_chunks() == len(CORPUS)  # identical chunks stored once, not twice


def test_a_reader_sees_vectors_another_process_writes(tmp_path, store):
    """A reader's local Chroma client caches its graph; it must catch up with the writer."""
    model = f"fake-{uuid.uuid4().hex[:10]}"
    root = write_files(tmp_path / "docs", dict(list(CORPUS.items())[:10]))
    reader = open_index(root, tmp_path / "index", model, store)
    try:
        Indexer(reader).sync()  # the first files, written and read by this process
        assert search(reader, SearchRequest("lemur9", "semantic")).results

        write_files(root, {"late/capybara.md": "# Capybara\n\ncapybara wallows happily\n"})
        worker = start_worker(root, tmp_path / "index", model, store)
        assert release([worker])[0][0] == 0

        def finds_capybara() -> bool:
            hits = search(reader, SearchRequest("capybara wallows", "semantic")).results
            return bool(hits) and hits[0].path == "late/capybara.md"

        assert wait_until(finds_capybara, timeout=10)
    finally:
        reader.close()


def test_a_reader_that_becomes_the_writer_keeps_the_other_writers_vectors(tmp_path, store):
    """Writing through a client opened before another process wrote must not lose vectors.

    A local Chroma client writes its in-memory graph to disk after about 1,000 changes; one
    loaded before the other process wrote would write back a graph without that process's
    vectors. So: this process loads 100, the other adds 1,100, then this one writes 1,000.
    """
    model = f"fake-{uuid.uuid4().hex[:10]}"

    def bulk(numbers) -> dict[str, str]:
        return {f"bulk/{n:04d}.md": f"# Bulk {n}\n\nword{n % 17} lemur{n % 13}\n" for n in numbers}

    root = write_files(tmp_path / "docs", bulk(range(100)))
    reader = open_index(root, tmp_path / "index", model, store)
    try:
        Indexer(reader).sync()  # this process's client now holds a graph of 100 vectors
        assert search(reader, SearchRequest("lemur9", "semantic")).results
        write_files(root, bulk(range(100, 1200)))
        worker = start_worker(root, tmp_path / "index", model, store)
        assert release([worker])[0][0] == 0
        reader.acquire_write_lock()
        write_files(root, bulk(range(1200, 2200)))
        assert Indexer(reader).sync().chunks_embedded == 1000
    finally:
        reader.close()

    fresh = open_index(root, tmp_path / "index", model, store)
    try:
        ids = fresh.keywords.chunk_ids()
        assert len(ids) == 2200 and fresh.vectors.existing_chunk_ids(ids) == set(ids)
        # The chunks are findable by vector search, not only listed. HNSW is approximate, so a
        # query for every vector may miss a few; a stale graph would miss the other's 1,100.
        vector = FakeEmbedder().embed_query("word1 lemur")
        found = {cid for cid, _sim in fresh.vectors.query_chunks(vector, len(ids))}
        assert len(found & set(ids)) >= 0.98 * len(ids)
    finally:
        fresh.close()


def test_index_command_next_to_a_live_tui_explains_itself(tmp_path):
    from click.testing import CliRunner

    from explorer.cli import main
    from explorer.core.live.writer import LiveIndex

    root = write_files(tmp_path / "docs", dict(list(CORPUS.items())[:5]))
    settings = Settings.for_root(root, tmp_path / "index", model=FakeEmbedder.name)
    live = LiveIndex(  # as the TUI's bridge starts it
        settings,
        lambda _event: None,
        embedder=FakeEmbedder(),
        watch=False,
        holder="the explorer TUI",
    )
    live.start()
    try:
        assert live.wait_idle(20)
        result = CliRunner().invoke(
            main, ["index", str(root), "--index-dir", str(tmp_path / "index")]
        )
        assert result.exit_code == 2
        assert "being written by the explorer TUI (pid" in result.stderr
        assert "keeps the index up to date" in result.stderr
    finally:
        live.stop()
    shutil.rmtree(tmp_path / "index")
