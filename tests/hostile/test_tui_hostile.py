"""The TUI on a hostile folder: the preview opens only regular files inside the root, decodes
UTF-16, and the app quits at once even while it scans a folder full of fifos."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from explorer.tui.app import make_app
from explorer.tui.widgets.preview_loading import LoadedFile, load_file
from tests.fakes import FakeEmbedder
from tests.hostile import corpus as hostile
from tests.ui.conftest import wait_for

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def load_in_time(path: str, absolute: Path) -> LoadedFile:
    """``load_file`` on a thread; fail instead of hanging if it blocks."""
    outcome: list[LoadedFile] = []
    worker = threading.Thread(target=lambda: outcome.append(load_file(path, absolute)), daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), f"loading {path} blocked"
    return outcome[0]


def plain(loaded: LoadedFile) -> str:
    return loaded.text + "\n".join(line.plain for line in loaded.lines)


def test_the_preview_never_opens_a_fifo_or_a_device(tmp_path: Path) -> None:
    fifo = hostile.add_fifo_file(tmp_path)
    loaded = load_in_time("pipe.md", fifo)
    assert loaded.kind == "message" and "named pipe" in loaded.note
    zero = tmp_path / "zero.txt"
    zero.symlink_to("/dev/zero")
    loaded = load_in_time("zero.txt", zero)
    assert loaded.kind == "message" and "device" in loaded.note


def test_the_preview_decodes_utf16_and_hides_front_matter_as_the_index_does(tmp_path: Path):
    path, word = hostile.add_utf16_file(tmp_path)
    loaded = load_in_time("utf16.txt", path)
    assert loaded.kind == "text" and word in plain(loaded) and "été" in plain(loaded)
    toml = tmp_path / "page.md"
    toml.write_text('+++\ntitle = "T"\n+++\n# Top\n')
    loaded = load_in_time("page.md", toml)
    assert loaded.kind == "markdown" and loaded.text == "# Top\n" and loaded.line_offset == 3
    assert load_in_time("blob.txt", hostile.add_binary_file(tmp_path)).note.startswith("Binary")


@pytest.mark.anyio
async def test_the_tui_indexes_a_hostile_folder_and_never_shows_a_file_outside(tmp_path):
    corpus = hostile.build_hostile_folder(tmp_path)
    app = make_app(corpus.root, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await wait_for(
            pilot,
            lambda: (
                {"zz-last.md", "bad\\xff\\xfename.md", "utf16.txt"} <= set(screen.file_tree.paths)
            ),
            20,
            "the tree to show the files after the bad name",
        )
        screen.open_file("utf16.txt")
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        assert screen.preview.path == "utf16.txt" and screen.preview.kind == "text"
        screen.open_file("bad\\xff\\xfename.md")
        await wait_for(
            pilot,
            lambda: screen.preview.loaded and screen.preview.path == "bad\\xff\\xfename.md",
            what="the file with a name that is not UTF-8",
        )
        assert screen.preview.kind == "markdown"
        screen.open_file("notes/passwd.txt")  # a link to a file outside the root
        await pilot.pause(0.2)
        assert screen.preview.path == "bad\\xff\\xfename.md"
        assert screen.current_path == "bad\\xff\\xfename.md"


def _tmux(socket: str, *args: str) -> str:
    done = subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, timeout=10)
    return done.stdout


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_ctrl_q_quits_at_once_while_scanning_a_folder_of_fifos(tmp_path):
    corpus = hostile.build_hostile_folder(tmp_path)
    for index in range(20):  # more fifos, as .gitignore and as indexable names, in many folders
        hostile.add_fifo_gitignore(corpus.root, f"more/fifo-{index}")
        hostile.add_fifo_file(corpus.root, f"more/fifo-{index}/pipe.md")
    socket = f"explorer-hostile-{uuid.uuid4().hex[:8]}"
    exit_file = tmp_path / "exit-code"
    env = {
        "EXPLORER_DATA_DIR": str(tmp_path / "data"),
        "EXPLORER_CONFIG_DIR": str(tmp_path / "config"),
        "PYTHONPATH": str(REPO),
        "TERM": "xterm-256color",
    }
    exports = " ".join(f"{key}={value}" for key, value in env.items())
    command = (
        f"cd {REPO} && env {exports} {sys.executable} -m explorer {corpus.root}; "
        f"echo $? > {exit_file}"
    )
    subprocess.run(
        ["tmux", "-L", socket, "new-session", "-d", "-s", "x", "-x", "120", "-y", "40", command],
        check=True,
        timeout=10,
        env={**os.environ, **env},
    )
    try:
        deadline = time.monotonic() + 60
        screen = ""
        while "Files" not in screen and time.monotonic() < deadline:
            screen = _tmux(socket, "capture-pane", "-p", "-t", "x")
            time.sleep(0.1)
        assert "Files" in screen, screen
        _tmux(socket, "send-keys", "-t", "x", "C-q")
        quit_by = time.monotonic() + 5
        while not exit_file.exists() and time.monotonic() < quit_by:
            time.sleep(0.1)
        assert exit_file.exists(), "ctrl+q left the app running"
        assert exit_file.read_text().strip() == "0"
    finally:
        _tmux(socket, "kill-server")
