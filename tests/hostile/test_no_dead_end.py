"""No dead end: whatever happened to an index, ``explorer index`` repairs it, and meanwhile
every other command answers (by keyword, with a note) or says in one line what to run.

Each case is what issue 21's hostile battery found: a zero-byte ``index.sqlite``, garbage in
the middle of Chroma's database, the ``chroma/`` folder deleted, a model that cannot load,
chunks or vectors deleted behind explorer's back, ``check-refs`` on a read-only index, and hints
that dropped ``--index-dir``. The index lives in a ``--index-dir`` of its own, so every hint
must carry it.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from explorer.cli import main
from explorer.core.store.damaged_store import DAMAGED_PREFIX
from explorer.core.store.index import CHROMA_DIR_NAME, DATABASE_NAME
from explorer.core.store.vectors import CHROMA_DATABASE, VectorStore
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder
from tests.hostile.damage import Damage, damage_file

CORPUS = {
    f"notes/note{n:03d}.md": f"# Note {n}\n\nTelescope mirrors and lens w{n}x.\n\n"
    f"## Sky\n\nStars seen at night from hill h{n}y.\n"
    for n in range(120)
}
"""Enough notes (240 chunks) that Chroma's database has pages in the middle to damage."""
FILES, CHUNKS = len(CORPUS), 2 * len(CORPUS)


def invoke(*args: object) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=True)


def ok(result: Result) -> Result:
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def one_line_error(result: Result) -> str:
    """The single stderr line of a command that failed cleanly (exit 2, no traceback)."""
    assert result.exit_code == 2, (result.output, result.exception)
    [line] = result.stderr.splitlines()
    assert line.startswith("explorer: error: ") and "Traceback" not in result.output
    return line


@pytest.fixture
def fake_model(monkeypatch):
    monkeypatch.setattr(
        "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
    )


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """The corpus indexed once (fake embedder) into an index directory of its own."""
    base = tmp_path_factory.mktemp("pristine")
    root, index_dir = write_files(base / "root", CORPUS), base / "index"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
        )
        ok(invoke("index", root, "--index-dir", index_dir))
    return root, index_dir


@pytest.fixture
def indexed(pristine, tmp_path, fake_model):
    """A copy of the pristine folder and its index, to change and damage: (root, index dir,
    the command that repairs)."""
    source_root, source_index = pristine
    root, index_dir = tmp_path / "root", tmp_path / "index"
    shutil.copytree(source_root, root)
    shutil.copytree(source_index, index_dir)
    for source, copy in zip(sorted(source_root.rglob("*")), sorted(root.rglob("*")), strict=True):
        shutil.copystat(source, copy)  # the same times: the index finds nothing changed
    with sqlite3.connect(index_dir / DATABASE_NAME) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'root'", (str(root),))
    db.close()
    return root, index_dir, f"explorer index {root} --index-dir {index_dir}"


def search_json(root: Path, index_dir: Path, query: str, *args: object) -> dict:
    result = ok(invoke("search", query, root, "--index-dir", index_dir, "--json", *args))
    return json.loads(result.stdout)


def status_json(root: Path, index_dir: Path) -> dict:
    return json.loads(ok(invoke("status", root, "--index-dir", index_dir, "--json")).stdout)


def assert_both_legs_answer(root: Path, index_dir: Path) -> None:
    found = search_json(root, index_dir, "telescope w7x", "--explain")
    assert found["results"][0]["path"] == "notes/note007.md"
    assert "notes" not in found, found["notes"]
    explain = found["results"][0]["passages"][0]["explain"]
    assert explain["keyword_rank"] is not None and explain["vector_rank"] is not None
    data = status_json(root, index_dir)
    assert data["files"] == {"indexed": FILES, "stale": 0, "skipped": 0, "failed": 0}
    assert data["vectors"] == data["chunks"] == CHUNKS
    assert data["vector_store"]["available"] and "missing" not in data["vector_store"]


# -- a zero-byte keyword index --------------------------------------------------------------------
def test_a_zero_byte_keyword_index_is_one_line_to_readers_and_repaired_by_index(indexed):
    root, index_dir, command = indexed
    damage_file(index_dir / DATABASE_NAME, Damage.EMPTY)
    for args in (
        ("status", root),
        ("search", "telescope", root),
        ("search", "telescope", root, "--mode", "keyword"),
        ("related", root / "notes/note001.md", "--root", root),
        ("links", root / "notes/note001.md", "--root", root),
    ):
        line = one_line_error(invoke(*args, "--index-dir", index_dir))
        assert f"{index_dir / DATABASE_NAME} is damaged (the file is empty)" in line, args
        assert f"run `{command}` to repair it" in line, args

    result = ok(invoke("index", root, "--index-dir", index_dir, "--json"))
    data = json.loads(result.stdout)
    [repair] = data["repairs"]
    assert repair["store"] == "keyword index" and "kept_in" not in repair  # nothing to keep
    assert data["added"] == FILES and data["chunks_reused"] == CHUNKS
    assert data["chunks_embedded"] == 0, "every vector was still in the store"
    assert_both_legs_answer(root, index_dir)


def test_a_zero_byte_keyword_index_does_not_stop_a_rebuild(indexed):
    root, index_dir, _command = indexed
    damage_file(index_dir / DATABASE_NAME, Damage.EMPTY)
    result = ok(invoke("index", root, "--index-dir", index_dir, "--rebuild"))
    assert f"rebuilt from scratch: {FILES} added" in result.stdout
    assert_both_legs_answer(root, index_dir)


def test_index_says_what_it_repaired_in_one_line(indexed):
    root, index_dir, _command = indexed
    damage_file(index_dir / DATABASE_NAME, Damage.EMPTY)
    first = ok(invoke("index", root, "--index-dir", index_dir)).stdout.splitlines()[0]
    assert first == (
        "repaired: the keyword index was lost (the file was empty); rebuilt from the files,"
        " reusing the stored vectors"
    )


# -- garbage in the middle of Chroma's database ---------------------------------------------------
def test_garbage_in_chromas_database_answers_by_keyword_and_index_sets_it_aside(indexed):
    """Chroma itself says ``InvalidArgumentError: ... Error sending backfill request to
    compactor``, nothing about damage: SQLite's check of its database tells."""
    root, index_dir, command = indexed
    database = index_dir / CHROMA_DIR_NAME / CHROMA_DATABASE
    damaged = damage_file(database, Damage.MIDDLE)

    data = status_json(root, index_dir)
    store = data["vector_store"]
    assert store["available"] is False
    assert f"{index_dir / CHROMA_DIR_NAME} is damaged (" in store["problem"]
    assert f"run `{command}` to repair it" in store["problem"]
    found = search_json(root, index_dir, "telescope w7x")
    assert found["results"][0]["path"] == "notes/note007.md"
    [note] = found["notes"]
    assert note.startswith("vectors unavailable: keyword results only; the vector store")
    line = one_line_error(
        invoke("search", "telescope", root, "--index-dir", index_dir, "--mode", "semantic")
    )
    assert "is damaged" in line and command in line
    assert not list(index_dir.glob(f"{DAMAGED_PREFIX}*")), "readers never move anything"

    result = ok(invoke("index", root, "--index-dir", index_dir))
    first = result.stdout.splitlines()[0]
    assert first.startswith("repaired: the vector store was damaged (")
    [kept] = index_dir.glob(f"{DAMAGED_PREFIX}*")
    assert (kept / CHROMA_DIR_NAME / CHROMA_DATABASE).stat().st_size == len(damaged)
    assert f"embedded {CHUNKS} chunks" in result.stdout
    assert_both_legs_answer(root, index_dir)


# -- chroma/ deleted ------------------------------------------------------------------------------
def test_a_deleted_vector_store_is_reported_answered_by_keyword_and_embedded_again(indexed):
    root, index_dir, command = indexed
    shutil.rmtree(index_dir / CHROMA_DIR_NAME)

    data = status_json(root, index_dir)
    store = data["vector_store"]
    assert store["available"] is False and store["missing"] == CHUNKS
    assert f"is missing ({CHUNKS} chunks lack their vectors)" in store["problem"]
    assert data["stale"]["waiting_for_vectors"] == FILES == data["files"]["stale"]
    assert data["vectors"] == 0
    text = ok(invoke("status", root, "--index-dir", index_dir)).stdout
    assert f"run `{command}` to embed them again" in text
    assert f"stale       {FILES} waiting for vectors: run `{command}` to catch up" in text

    found = search_json(root, index_dir, "telescope w7x")
    assert found["results"][0]["path"] == "notes/note007.md"
    [note] = found["notes"]
    assert "keyword results only" in note and "is missing" in note
    for args in (
        ("search", "telescope", root, "--mode", "semantic"),
        ("related", root / "notes/note001.md", "--root", root),
    ):
        line = one_line_error(invoke(*args, "--index-dir", index_dir))
        assert f"is missing ({CHUNKS} chunks lack their vectors)" in line and command in line
    assert not (index_dir / CHROMA_DIR_NAME).exists(), "readers never write"

    result = ok(invoke("index", root, "--index-dir", index_dir))
    assert result.stdout.splitlines()[0] == (
        f"repaired: the vector store was lost ({CHUNKS} chunks lacked their vectors);"
        " its chunks are embedded again"
    )
    assert f"embedded {CHUNKS} chunks" in result.stdout
    assert_both_legs_answer(root, index_dir)


# -- a model that cannot load ---------------------------------------------------------------------
def test_a_model_that_cannot_load_is_one_line_before_anything_is_stored(tmp_path, monkeypatch):
    """No fake model here: the real loader meets a name that is neither a folder nor in the
    Hugging Face cache (and the hub is offline)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    root = write_files(tmp_path / "root", dict(list(CORPUS.items())[:5]))
    index_dir = tmp_path / "index"
    for attempt in range(2):
        result = invoke("index", root, "--index-dir", index_dir, "--model", "no-such-model-zq")
        line = one_line_error(result)
        assert "cannot load model 'no-such-model-zq'" in line and "--model" in line, attempt
        assert not index_dir.exists(), "nothing is stored for a model that cannot load"


def test_a_file_that_failed_is_read_again_by_the_next_run_and_says_why(indexed, monkeypatch):
    """``failed`` is what a parser did with a file's content, not a final state: once the
    parser (or the file) is fixed, the next run takes the file in."""
    root, index_dir, _command = indexed
    write_files(root, {"notes/odd.md": "# Odd\n\nA file about quasarwhistle.\n"})
    import explorer.core.indexing.indexer as indexer_module

    real_chunk_document = indexer_module.chunk_document

    def broken_parser(rel_path, *args, **kwargs):
        if rel_path == "notes/odd.md":
            raise ValueError("the parser tripped")
        return real_chunk_document(rel_path, *args, **kwargs)

    monkeypatch.setattr(indexer_module, "chunk_document", broken_parser)
    result = ok(invoke("index", root, "--index-dir", index_dir))
    assert f"0 added, 0 updated, 0 removed, {FILES} unchanged, 1 failed" in result.stdout
    assert "failed: notes/odd.md: chunking failed: ValueError: the parser tripped" in (
        result.stdout
    )
    # the parser is fixed
    monkeypatch.setattr(indexer_module, "chunk_document", real_chunk_document)
    result = ok(invoke("index", root, "--index-dir", index_dir))
    assert f"1 added, 0 updated, 0 removed, {FILES} unchanged" in result.stdout
    found = search_json(root, index_dir, "quasarwhistle", "--mode", "keyword")
    assert [hit["path"] for hit in found["results"]] == ["notes/odd.md"]


# -- a database that disagrees with its vectors ---------------------------------------------------
def test_chunks_deleted_behind_explorers_back_are_reported_and_indexed_again(indexed):
    root, index_dir, command = indexed
    with sqlite3.connect(index_dir / DATABASE_NAME) as db:
        db.execute("DELETE FROM chunks WHERE path = 'notes/note007.md'")
    db.close()

    data = status_json(root, index_dir)
    assert data["stale"]["missing_chunks"] == 1 and data["files"]["stale"] == 1
    assert data["files"]["indexed"] == FILES - 1
    text = ok(invoke("status", root, "--index-dir", index_dir)).stdout
    assert f"stale       1 missing their chunks: run `{command}` to catch up" in text

    data = json.loads(ok(invoke("index", root, "--index-dir", index_dir, "--json")).stdout)
    assert data["files_restored"] == 1 and data["unchanged"] == FILES - 1
    assert data["chunks_reused"] == 2 and data["chunks_embedded"] == 0
    with sqlite3.connect(index_dir / DATABASE_NAME) as db:
        keyword_rows = db.execute("SELECT COUNT(*) FROM chunks_fts").fetchone()[0]
    db.close()
    assert keyword_rows == CHUNKS, "the deleted chunks' keyword rows were left behind"
    assert_both_legs_answer(root, index_dir)


def test_vectors_deleted_behind_explorers_back_are_reported_and_embedded_again(indexed):
    root, index_dir, command = indexed
    with sqlite3.connect(index_dir / DATABASE_NAME) as db:
        ids = [row[0] for row in db.execute("SELECT id FROM chunks WHERE path LIKE '%00_.md'")]
    db.close()
    store = VectorStore(index_dir / CHROMA_DIR_NAME)
    try:
        store.delete_chunks(ids)
    finally:
        store.close()

    data = status_json(root, index_dir)
    assert data["vector_store"]["missing"] == len(ids) == 20
    assert data["stale"]["waiting_for_vectors"] == 10 == data["files"]["stale"]
    text = ok(invoke("status", root, "--index-dir", index_dir)).stdout
    assert f"{len(ids)} chunks recorded as embedded have no vector: run `{command}`" in text

    data = json.loads(ok(invoke("index", root, "--index-dir", index_dir, "--json")).stdout)
    assert data["vectors_lost"] == len(ids) == data["chunks_embedded"]
    assert_both_legs_answer(root, index_dir)


# -- check-refs on a read-only index --------------------------------------------------------------
def test_check_refs_checks_a_read_only_index_as_it_is(tmp_path):
    root = write_files(
        tmp_path / "root",
        {"a.md": "# A\n\nSee [b](b.md) and [gone](gone.md).\n", "b.md": "# B\n\nText.\n"},
    )
    index_dir = tmp_path / "index"
    fake_cli = [sys.executable, "-m", "tests.fake_model_cli"]
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run([*fake_cli, "index", root, "--index-dir", index_dir], env=env)
    assert done.returncode == 0
    prefix: list[str] = []
    if os.geteuid() == 0:  # root ignores file modes unless it drops CAP_DAC_OVERRIDE
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: file modes would not be enforced")
        prefix = [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]
    for folder, _dirs, files in os.walk(index_dir):
        for name in files:
            Path(folder, name).chmod(stat.S_IRUSR)
        Path(folder).chmod(0o500)
    try:
        denied = subprocess.run([*prefix, "touch", str(index_dir / "x")], capture_output=True)
        assert denied.returncode != 0, "the directory is writable: the test would prove nothing"
        done = subprocess.run(
            [*prefix, *fake_cli, "check-refs", root, "--index-dir", index_dir],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
    finally:
        for folder, _dirs, files in os.walk(index_dir):
            Path(folder).chmod(0o700)
            for name in files:
                Path(folder, name).chmod(0o600)
    assert done.returncode == 1, done.stderr  # a missing reference was found
    assert done.stdout == "a.md:3: missing gone.md\n"
    note, summary, layout = done.stderr.splitlines()
    assert note.startswith(f"note: the index at {index_dir} cannot be written (")
    assert note.endswith("; checking the index as it is")
    assert summary == "1 missing reference in 1 file (2 checked: 1 resolved)"
    assert layout == "links resolved as: plain folder: links by path"


# -- hints carry --index-dir ----------------------------------------------------------------------
def test_every_hint_to_run_index_carries_the_index_dir(indexed, tmp_path):
    root, index_dir, command = indexed
    # status: files changed since the last run
    write_files(root, {"notes/new.md": "# New\n\nA new note.\n"})
    text = ok(invoke("status", root, "--index-dir", index_dir)).stdout
    assert f"run `{command}` to catch up" in text
    assert (
        json.loads(ok(invoke("status", root, "--index-dir", index_dir, "--json")).stdout)[
            "index_command"
        ]
        == command
    )
    # search, status and MCP on a folder with no index there yet
    empty = tmp_path / "empty-index"
    line = one_line_error(invoke("search", "telescope", root, "--index-dir", empty))
    assert line.endswith(f"run: explorer index {root} --index-dir {empty}")
    from explorer.mcp.arguments import RelatedArguments, SearchArguments
    from explorer.mcp.freshness import Freshness
    from explorer.mcp.keeper import IndexKeeper
    from explorer.mcp.tools import ExplorerTools, ToolFailure

    def mcp_tools(settings: Settings) -> tuple[ExplorerTools, IndexKeeper]:
        keeper = IndexKeeper(settings, FakeEmbedder, live=False)
        return ExplorerTools(settings, keeper, Freshness(settings)), keeper

    tools, keeper = mcp_tools(Settings.for_root(root, empty))
    try:
        with pytest.raises(ToolFailure) as failure:
            tools.call(lambda: tools.search(SearchArguments(query="telescope")))
    finally:
        keeper.close()
    assert f"run: explorer index {root} --index-dir {empty}" in str(failure.value)
    # related (MCP) on a file still waiting for its vectors
    ok(invoke("index", root, "--index-dir", index_dir, "--keywords-only"))
    tools, keeper = mcp_tools(Settings.for_root(root, index_dir))
    try:
        with pytest.raises(ToolFailure) as failure:
            tools.call(lambda: tools.related(RelatedArguments(path="notes/new.md")))
    finally:
        keeper.close()
    assert f"run `{command}` to finish embedding" in str(failure.value)
    # links on an index made before links were stored
    with sqlite3.connect(index_dir / DATABASE_NAME) as db:
        db.execute("DELETE FROM meta WHERE key LIKE '%links%'")
    db.close()
    line = one_line_error(
        invoke("links", root / "notes/note001.md", "--root", root, "--index-dir", index_dir)
    )
    assert line.endswith(f"run: {command}")
