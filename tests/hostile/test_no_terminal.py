"""``explorer ROOT`` without a terminal (issue 21): the TUI with stdin from ``/dev/null`` spun at
100 % CPU forever; now it is one line and exit status 2, before Textual starts."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from explorer.tui.terminal_watch import EXIT_STATUS
from tests.conftest import EXPLORER_PROCESS, TREE, terminal_output, write_files


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


def test_the_app_ends_when_its_terminal_goes_away_unannounced(root: Path, tmp_path: Path) -> None:
    # The terminal is not the app's controlling one, so its end sends no hang-up signal: as
    # under `make run` in a tmux server that dies. Textual spun on its input at 77 % CPU for good
    # and the app kept its index's writer lock.
    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "EXPLORER_DATA_DIR": str(tmp_path / "data"),
        "EXPLORER_STATE_DIR": str(tmp_path / "state"),
        "EXPLORER_CONFIG_DIR": str(tmp_path / "config"),
    }
    app = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fake_model_cli",
            str(root),
            "--index-dir",
            str(tmp_path / "i"),
        ],
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        env=env,
        cwd=TREE,
    )
    os.close(secondary)
    painted = threading.Event()
    seen = bytearray()

    def drain() -> None:  # a terminal reads what the app writes, or the app would block
        for data in terminal_output(primary):
            seen.extend(data)
            if b"Search" in seen:
                painted.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        assert painted.wait(30), bytes(seen[-2000:])
        time.sleep(1.0)  # the app at work: its index opened, its writer running
        os.close(primary)  # the terminal goes away
        primary = -1
        status = app.wait(timeout=20)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
        if primary >= 0:
            os.close(primary)
    assert status in (0, EXIT_STATUS), status


class _LostTerminalApp:
    """Stands for the app whose terminal went away: Textual's input thread failed on it, and
    printing that failure at exit fails with EIO (1 run in 13 of the test above, under load)."""

    return_code = None

    def run(self) -> None:
        raise OSError(5, "Input/output error")


def test_a_terminal_lost_while_the_app_ends_is_a_hang_up_not_an_error(monkeypatch) -> None:
    import explorer.tui.app as tui_app

    monkeypatch.setattr(tui_app, "terminal_present", lambda fd: False)
    assert tui_app.run_in_terminal(_LostTerminalApp()) == EXIT_STATUS  # type: ignore[arg-type]
    monkeypatch.setattr(tui_app, "terminal_present", lambda fd: True)  # a real error, still there
    with pytest.raises(OSError):
        tui_app.run_in_terminal(_LostTerminalApp())  # type: ignore[arg-type]
