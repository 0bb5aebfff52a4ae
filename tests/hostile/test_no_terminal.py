"""``explorer ROOT`` without a terminal (issue 21): the TUI with stdin from ``/dev/null`` spun at
100 % CPU forever; now it is one line and exit status 2, before Textual starts."""

from __future__ import annotations

import os
import pty
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import EXPLORER_PROCESS, write_files


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_files(tmp_path / "root", {"a.md": "# A\n\nA page.\n"})


def open_app(root: Path, stdin: int, stdout: int) -> tuple[int, str, float]:
    """``explorer ROOT`` with these streams: (exit status, stderr, seconds); killed after 30 s
    (the test then fails on the timeout)."""
    started = time.monotonic()
    done = subprocess.run(
        [*EXPLORER_PROCESS, str(root), "--index-dir", str(root.parent / "index")],
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=30,
    )
    return done.returncode, done.stderr, time.monotonic() - started


def test_stdin_from_dev_null_is_one_line_and_exit_2(root: Path) -> None:
    primary, secondary = pty.openpty()  # stdout is a terminal; only stdin is not
    try:
        status, stderr, seconds = open_app(root, subprocess.DEVNULL, secondary)
    finally:
        os.close(primary)
        os.close(secondary)
    assert status == 2
    assert stderr.count("\n") == 1 and "needs a terminal" in stderr, stderr
    assert seconds < 20
    assert not (root.parent / "index").exists()  # nothing started: no index was opened


def test_stdout_into_a_pipe_is_one_line_and_exit_2(root: Path) -> None:
    primary, secondary = pty.openpty()  # stdin is a terminal; stdout is not
    try:
        status, stderr, _seconds = open_app(root, secondary, subprocess.PIPE)
    finally:
        os.close(primary)
        os.close(secondary)
    assert status == 2
    assert stderr.startswith("explorer: error: the explorer needs a terminal"), stderr
