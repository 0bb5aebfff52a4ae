"""An index folder named by the user may be a folder of the user's own files (issue 29:
``explorer index docs --index-dir ~/work`` made every file there 0600, every folder 0700, and
took a script's execute bits). explorer changes the modes of what it made and of nothing else:
a folder of other files that is not an index is refused in one line before anything is written,
whichever way it was named (``--index-dir``, ``EXPLORER_INDEX_DIR``, the live index of the TUI
and the MCP server), and an older index that sits among the user's files is made private
without touching them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from explorer.cli import main
from explorer.core.live.writer import LiveIndex
from explorer.core.store.index import Index
from explorer.core.store.index_files import IndexDirRefused
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder
from tests.hostile.test_private_index import usual_umask  # noqa: F401 - an autouse fixture


@pytest.fixture
def run(monkeypatch):
    monkeypatch.setattr(
        "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
    )
    runner = CliRunner()
    return lambda *args: runner.invoke(main, [str(a) for a in args], catch_exceptions=True)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """``~/work``: a folder of the user's, with the documents to index in ``docs``."""
    top = write_files(
        tmp_path / "work",
        {"a.txt": "notes\n", "run.sh": "#!/bin/sh\necho hi\n", "docs/guide.md": "# Guide\n\nx\n"},
    )
    (top / "run.sh").chmod(0o755)
    for path in (top, top / "docs"):
        path.chmod(0o755)
    return top


def modes(top: Path) -> dict[str, str]:
    """Every entry under ``top`` (itself included) and its mode."""
    found = {".": f"{stat.S_IMODE(top.stat().st_mode):o}"}
    for folder, dirnames, filenames in os.walk(top):
        for name in (*dirnames, *filenames):
            path = Path(folder, name)
            found[path.relative_to(top).as_posix()] = f"{stat.S_IMODE(path.lstat().st_mode):o}"
    return found


def assert_refused(result, index_dir: Path) -> None:
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert f"the index folder {index_dir} " in line
    assert "name a new or empty folder for the index, or leave it out" in line


def test_a_folder_holding_the_root_and_other_files_is_refused_untouched(work, run):
    before = modes(work)
    result = run("index", work / "docs", "--index-dir", work)
    assert_refused(result, work)
    assert f"holds the folder indexed ({work / 'docs'})" in result.output
    assert modes(work) == before, "nothing created, no mode changed"


def test_the_folder_indexed_itself_is_refused_as_an_index_folder(work, run):
    before = modes(work)
    result = run("index", work / "docs", "--index-dir", work / "docs")
    assert_refused(result, work / "docs")
    assert "is the folder indexed" in result.output
    assert modes(work) == before


def test_a_folder_of_other_files_is_refused_whichever_way_it_is_named(
    tmp_path, work, run, monkeypatch
):
    elsewhere = write_files(tmp_path / "elsewhere", {f"f{n}.txt": "x\n" for n in range(5)})
    before = modes(elsewhere)
    result = run("index", work / "docs", "--index-dir", elsewhere)
    assert_refused(result, elsewhere)
    assert "holds files that are not an explorer index (f0.txt, f1.txt, f2.txt and 2 more)" in (
        result.output
    )
    monkeypatch.setenv("EXPLORER_INDEX_DIR", str(elsewhere))
    assert_refused(run("index", work / "docs"), elsewhere)
    assert modes(elsewhere) == before


def test_the_live_index_of_the_tui_and_the_mcp_server_refuses_it_too(tmp_path, work):
    before = modes(work)
    settings = Settings.for_root(work / "docs", work, model=FakeEmbedder.name)
    with pytest.raises(IndexDirRefused, match="holds the folder indexed"):
        LiveIndex(settings, lambda _event: None, FakeEmbedder())
    with pytest.raises(IndexDirRefused):
        Index.open_for_writing(settings, FakeEmbedder())
    assert modes(work) == before


def test_an_index_among_the_users_files_is_made_private_without_touching_them(tmp_path, run):
    """An index an older explorer put among the user's files: the next writer takes the open
    bits off the index's own entries, and leaves the user's files and the folder as they are."""
    root = write_files(tmp_path / "root", {"page.md": "# Page\n\nwords\n"})
    shared = tmp_path / "shared"
    assert run("index", root, "--index-dir", shared).exit_code == 0
    for path in (shared, *shared.rglob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)  # what an older explorer left
    write_files(shared, {"mine.txt": "mine\n", "tools/run.sh": "#!/bin/sh\n"})
    (shared / "tools" / "run.sh").chmod(0o755)
    result = run("index", root, "--index-dir", shared)
    assert result.exit_code == 0, result.output
    assert "permissions: made" in result.output and "mine.txt" not in result.output
    after = modes(shared)
    assert after["."] == "755" and after["mine.txt"] == "644"
    assert after["tools"] == "755" and after["tools/run.sh"] == "755"
    assert after["index.sqlite"] == "600" and after["chroma"] == "700"
    status = run("status", root, "--index-dir", shared).output
    assert "permissions private (folders 0700, files 0600)" in status


def test_the_resident_readers_files_are_among_the_index_entries():
    from explorer.cli.resident_client import LOCK_NAME, SOCKET_NAME
    from explorer.core.store.index_files import READER_ENTRIES

    assert set(READER_ENTRIES) == {SOCKET_NAME, LOCK_NAME}


def test_a_data_directory_of_the_users_own_keeps_its_mode(tmp_path, run, monkeypatch):
    """EXPLORER_DATA_DIR at a folder of the user's: the indexes folder explorer makes there is
    private, the folder itself and the user's files keep their modes."""
    data = write_files(tmp_path / "shared", {"notes.txt": "mine\n"})
    data.chmod(0o755)
    monkeypatch.setenv("EXPLORER_DATA_DIR", str(data))
    root = write_files(tmp_path / "root", {"page.md": "# Page\n\nwords\n"})
    assert run("index", root).exit_code == 0
    after = modes(data)
    assert after["."] == "755" and after["notes.txt"] == "644"
    assert after["indexes"] == "700"
