"""Smoke test in a real terminal: run ``python -m explorer sample_docs`` under tmux.

The app runs with the real model and Chroma on an isolated data dir. Keyword results come
first, so a query shows known paths within seconds even while the model loads. Quit and
started again, it shows the query and the file the user left.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def _tmux(socket: str, *args: str) -> str:
    result = subprocess.run(
        ["tmux", "-L", socket, *args], capture_output=True, text=True, timeout=10
    )
    return result.stdout


def _wait_for_screen(socket: str, predicate, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _tmux(socket, "capture-pane", "-p", "-t", "explorer")
        if predicate(screen):
            return screen
        time.sleep(0.25)
    raise AssertionError(f"timed out; the screen was:\n{screen}")


class Explorer:
    """``python -m explorer ARGS`` in a tmux session of its own, on an isolated data dir; its
    exit status is written to a file when it quits."""

    def __init__(self, tmp_path: Path, args: str, width: int) -> None:
        self.socket = f"explorer-test-{uuid.uuid4().hex[:8]}"
        self.exit_file = tmp_path / "exit-code"
        self.env = {
            "EXPLORER_DATA_DIR": str(tmp_path / "data"),
            "EXPLORER_CONFIG_DIR": str(tmp_path / "config"),
            "EXPLORER_STATE_DIR": str(tmp_path / "state"),
            "EXPLORER_CACHE_DIR": str(tmp_path / "cache"),
            "TERM": "xterm-256color",
        }
        exports = " ".join(f"{key}={value}" for key, value in self.env.items())
        # The app runs under script(1), which keeps what the terminal showed: an exit status
        # other than 0 comes with the app's last words, not only a number.
        self.log = tmp_path / "terminal.log"
        app = f"env {exports} {sys.executable} -m explorer {args}"
        self.command = (
            f"cd {REPO} && script -q -e -c {shlex.quote(app)} {self.log}; "
            f"echo $? > {self.exit_file}"
        )
        self.width = width

    def start(self) -> None:
        self.exit_file.unlink(missing_ok=True)
        size = ["-x", str(self.width), "-y", "40"]
        start = ["tmux", "-L", self.socket, "new-session", "-d", "-s", "explorer", *size]
        env = {**os.environ, **self.env}
        subprocess.run([*start, self.command], check=True, timeout=10, env=env)

    def wait_for(self, predicate, timeout: float) -> str:
        return _wait_for_screen(self.socket, predicate, timeout)

    def type(self, text: str) -> None:
        _tmux(self.socket, "send-keys", "-t", "explorer", "-l", text)

    def press(self, key: str) -> None:
        _tmux(self.socket, "send-keys", "-t", "explorer", key)

    def quit(self) -> None:
        _quit(self.socket, self.exit_file, self.log)

    def kill(self) -> None:
        _tmux(self.socket, "kill-server")


def test_search_in_a_real_terminal(tmp_path):
    explorer = Explorer(tmp_path, "sample_docs", 120)
    explorer.start()
    try:
        explorer.wait_for(lambda s: "Files" in s and "Results" in s, 30)
        # A filtered query, so the known file is on screen whatever else mentions backups.
        explorer.type("backups path:guides/")
        screen = explorer.wait_for(lambda s: "guides/backups.md" in s.split("╭─ Results")[-1], 60)
        assert "Search" in screen
        explorer.press("Enter")  # open the best result
        explorer.wait_for(_preview_titled("guides/backups.md"), 30)
        explorer.quit()
        # Started again: the query and the open file are back.
        explorer.start()
        explorer.wait_for(lambda s: "backups path:guides/" in s, 60)
        explorer.wait_for(_preview_titled("guides/backups.md"), 30)
        explorer.quit()
    finally:
        explorer.kill()


def test_a_query_typed_while_the_window_starts_is_searched(tmp_path):
    """Typed at once after the command, before the window has drawn: the letters wait for
    the search box (its letters are keys of the panes too: ``c`` copies, ``h`` and ``e`` move;
    run before the panes existed, ``c`` failed the app with a traceback)."""
    explorer = Explorer(tmp_path, "sample_docs", 120)
    explorer.start()
    try:
        explorer.type("checklist cache")
        screen = explorer.wait_for(lambda s: "checklist cache" in s, 30)
        assert "Traceback" not in screen and "Error" not in screen
        explorer.wait_for(lambda s: ".md" in s.split("╭─ Results")[-1], 60)
        explorer.quit()
    finally:
        explorer.kill()


def test_two_folders_in_one_real_terminal(tmp_path):
    """`explorer A B` in tmux with the real model: each folder a node of the tree under its
    name, one ranking over both (keyword results come while the model loads)."""
    explorer = Explorer(tmp_path, "sample_docs/guides sample_docs/runbooks", 140)
    explorer.start()
    try:
        explorer.wait_for(lambda s: "Search · guides + runbooks" in s, 30)
        nodes = [re.compile(rf"│[▶▼] {name}\b") for name in ("guides", "runbooks")]
        explorer.wait_for(lambda s: all(node.search(s) for node in nodes), 60)
        explorer.type("restore snapshot backup")

        def both(screen: str) -> bool:
            results = screen.split("╭─ Results")[-1].split("╭─ Preview")[0]
            return "guides/backups.md" in results and "runbooks/restore-from-backup" in results

        explorer.wait_for(both, 60)
        explorer.quit()
    finally:
        explorer.kill()


def _preview_titled(path: str):
    """A screen whose preview (a border's top line, under the search box) names ``path``."""

    def check(screen: str) -> bool:
        lines = screen.split("\n")
        return any("╭" in line and path in line for line in lines[3:])

    return check


def _quit(socket: str, exit_file: Path, log: Path) -> None:
    _tmux(socket, "send-keys", "-t", "explorer", "C-q")
    deadline = time.monotonic() + 60
    while not exit_file.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert exit_file.exists(), "the app did not quit on ctrl+q"
    status = exit_file.read_text().strip()
    assert status == "0", f"exit status {status}; the terminal's last lines:\n{_last_words(log)}"


def _last_words(log: Path, lines: int = 40) -> str:
    """The end of what the terminal showed, its escape sequences taken out."""
    try:
        shown = log.read_text(errors="replace")
    except OSError as error:
        return f"(no terminal log: {error})"
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>]|\r", "", shown)
    return "\n".join(plain.splitlines()[-lines:])
