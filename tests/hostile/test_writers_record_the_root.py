"""Every writer records the folder its index is of (issue 29): the TUI's live index never did,
so the resident reader refused every index the TUI built (``another-index: the index is not
that of …/sample_docs``) and a script paid a whole process start per search. The CLI, the
TUI's and the MCP server's live index and a rebuild record it; an index built before that is
served as it is and gets its root on its next write."""

from __future__ import annotations

import os
import sqlite3
import subprocess

import pytest

from explorer.cli.resident_client import SERVED_NOTE
from explorer.cli.targets import stored_root
from explorer.core.live.writer import LiveIndex
from explorer.core.store.index import DATABASE_NAME
from explorer.core.store.index_files import ROOT_META
from explorer.settings.config import Settings
from tests.conftest import run_explorer, write_files
from tests.fakes import FakeEmbedder
from tests.unit.test_resident_reader import start_reader

pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")

CORPUS = {"guides/telescope.md": "# Telescope\n\nTelescope lenses and telescope mirrors.\n"}


def build_live(root, index_dir) -> None:
    """Index ``root`` as the TUI and the MCP server do: a live index, keywords and vectors."""
    settings = Settings.for_root(root, index_dir, model=FakeEmbedder.name)
    live = LiveIndex(settings, lambda _event: None, FakeEmbedder(), watch=False)
    live.start()
    try:
        assert live.wait_idle(30)
    finally:
        live.stop()


def forget_root(index_dir) -> None:
    """What an index built by an older TUI holds: no root."""
    with sqlite3.connect(index_dir / DATABASE_NAME) as database:
        database.execute("DELETE FROM meta WHERE key = ?", (ROOT_META,))
    database.close()


@pytest.fixture
def reader_env():
    env = {**os.environ, "EXPLORER_READER_DEBUG": "1", "EXPLORER_READER_IDLE": "60"}
    env.pop("EXPLORER_NO_DAEMON")
    return env


def served_search(root, index_dir, env) -> subprocess.CompletedProcess:
    process = start_reader(index_dir, env)
    try:
        args = ("search", "telescope", root, "--mode", "keyword", "--index-dir", index_dir)
        return run_explorer(*args, env=env, timeout=60)
    finally:
        process.kill()
        process.wait(timeout=10)


def test_the_live_index_of_the_tui_and_mcp_records_its_root(tmp_path):
    root = write_files(tmp_path / "root", CORPUS)
    build_live(root, tmp_path / "index")
    assert stored_root(tmp_path / "index") == root


def test_the_resident_reader_serves_an_index_the_tui_built(tmp_path, reader_env):
    root = write_files(tmp_path / "root", CORPUS)
    index_dir = tmp_path / "index"
    build_live(root, index_dir)
    done = served_search(root, index_dir, reader_env)
    assert done.returncode == 0 and "guides/telescope.md" in done.stdout
    assert done.stderr == SERVED_NOTE + "\n", "answered by the resident reader"


def test_an_index_without_its_root_is_served_and_healed_by_the_next_writer(tmp_path, reader_env):
    root = write_files(tmp_path / "root", CORPUS)
    index_dir = tmp_path / "index"
    build_live(root, index_dir)
    forget_root(index_dir)
    assert stored_root(index_dir) is None
    done = served_search(root, index_dir, reader_env)
    assert done.stderr == SERVED_NOTE + "\n" and "guides/telescope.md" in done.stdout
    build_live(root, index_dir)
    assert stored_root(index_dir) == root
