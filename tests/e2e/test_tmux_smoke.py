"""Smoke test in a real terminal: run ``python -m explorer sample_docs`` under tmux.

The app runs with the real model and Chroma on an isolated data dir. Keyword results come
first, so a query shows known paths within seconds even while the model loads. Quit and
started again, it shows the query and the file the user left.
"""

from __future__ import annotations

import os
import re
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


def test_search_in_a_real_terminal(tmp_path):
    socket = f"explorer-test-{uuid.uuid4().hex[:8]}"
    exit_file = tmp_path / "exit-code"
    env = {
        "EXPLORER_DATA_DIR": str(tmp_path / "data"),
        "EXPLORER_CONFIG_DIR": str(tmp_path / "config"),
        "EXPLORER_STATE_DIR": str(tmp_path / "state"),
        "TERM": "xterm-256color",
    }
    exports = " ".join(f"{key}={value}" for key, value in env.items())
    command = (
        f"cd {REPO} && env {exports} {sys.executable} -m explorer sample_docs; "
        f"echo $? > {exit_file}"
    )
    start = ["tmux", "-L", socket, "new-session", "-d", "-s", "explorer", "-x", "120", "-y", "40"]
    subprocess.run([*start, command], check=True, timeout=10, env={**os.environ, **env})
    try:
        _wait_for_screen(socket, lambda s: "Files" in s and "Results" in s, 30)
        # A filtered query, so the known file is on screen whatever else mentions backups.
        _tmux(socket, "send-keys", "-t", "explorer", "-l", "backups path:guides/")
        screen = _wait_for_screen(
            socket, lambda s: "guides/backups.md" in s.split("╭─ Results")[-1], 60
        )
        assert "Search" in screen
        _tmux(socket, "send-keys", "-t", "explorer", "Enter")  # open the best result
        _wait_for_screen(socket, _preview_titled("guides/backups.md"), 30)
        _quit(socket, exit_file)
        # Started again: the query and the open file are back.
        exit_file.unlink()
        subprocess.run([*start, command], check=True, timeout=10, env={**os.environ, **env})
        screen = _wait_for_screen(socket, lambda s: "backups path:guides/" in s, 60)
        _wait_for_screen(socket, _preview_titled("guides/backups.md"), 30)
        _quit(socket, exit_file)
    finally:
        _tmux(socket, "kill-server")


def test_two_folders_in_one_real_terminal(tmp_path):
    """`explorer A B` in tmux with the real model: each folder a node of the tree under its
    name, one ranking over both (keyword results come while the model loads)."""
    socket = f"explorer-test-{uuid.uuid4().hex[:8]}"
    exit_file = tmp_path / "exit-code"
    env = {
        "EXPLORER_DATA_DIR": str(tmp_path / "data"),
        "EXPLORER_CONFIG_DIR": str(tmp_path / "config"),
        "EXPLORER_STATE_DIR": str(tmp_path / "state"),
        "TERM": "xterm-256color",
    }
    exports = " ".join(f"{key}={value}" for key, value in env.items())
    folders = "sample_docs/guides sample_docs/runbooks"
    command = (
        f"cd {REPO} && env {exports} {sys.executable} -m explorer {folders}; echo $? > {exit_file}"
    )
    start = ["tmux", "-L", socket, "new-session", "-d", "-s", "explorer", "-x", "140", "-y", "40"]
    subprocess.run([*start, command], check=True, timeout=10, env={**os.environ, **env})
    try:
        _wait_for_screen(socket, lambda s: "Search · guides + runbooks" in s, 30)
        nodes = [re.compile(rf"│[▶▼] {name}\b") for name in ("guides", "runbooks")]
        _wait_for_screen(socket, lambda s: all(node.search(s) for node in nodes), 60)
        _tmux(socket, "send-keys", "-t", "explorer", "-l", "restore snapshot backup")

        def both(screen: str) -> bool:
            results = screen.split("╭─ Results")[-1].split("╭─ Preview")[0]
            return "guides/backups.md" in results and "runbooks/restore-from-backup" in results

        _wait_for_screen(socket, both, 60)
        _quit(socket, exit_file)
    finally:
        _tmux(socket, "kill-server")


def _preview_titled(path: str):
    """A screen whose preview (a border's top line, under the search box) names ``path``."""

    def check(screen: str) -> bool:
        lines = screen.split("\n")
        return any("╭" in line and path in line for line in lines[3:])

    return check


def _quit(socket: str, exit_file) -> None:
    _tmux(socket, "send-keys", "-t", "explorer", "C-q")
    deadline = time.monotonic() + 60
    while not exit_file.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert exit_file.exists(), "the app did not quit on ctrl+q"
    assert exit_file.read_text().strip() == "0"
