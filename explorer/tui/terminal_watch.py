"""The end of the app when its terminal goes away without a word.

A terminal can vanish without the app being told: a tmux server or an SSH connection that dies
while the app is not what the terminal's hang-up signal reaches (under ``make run``, make is the
session's leader and catches it). Textual then reads nothing from its input at once, forever (a
core at 77 %), and its output queue fills, so the app's own loop stops: no timer of the app runs
again, and its live index keeps the folder's writer lock, so another window on the folder can
only read. A thread of its own therefore looks at the terminal every :data:`CHECK_EVERY`
seconds. Once the terminal is gone the app is asked to exit; if the process is still there
:data:`GRACE` seconds later, it ends (the index is crash-safe: the next sync repairs whatever
a batch left half done).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

CHECK_EVERY = 1.0
"""Seconds between two looks at the terminal."""
GRACE = 5.0
"""Seconds the app has to exit by itself once its terminal is gone."""
EXIT_STATUS = 129
"""The status the process ends with if it must be ended: 128 + SIGHUP, as shells report a
hang-up."""


def terminal_present(fd: int) -> bool:
    """Whether ``fd`` is still a terminal: a hung-up one answers no terminal request."""
    try:
        return os.isatty(fd)
    except OSError:
        return False


def watch_terminal(
    fd: int, loop: asyncio.AbstractEventLoop, exit_app: Callable[[], None]
) -> threading.Thread | None:
    """Start watching the terminal ``fd`` (nothing for a descriptor that is no terminal, as
    in tests); ``exit_app`` is called on ``loop`` once the terminal is gone."""
    if not terminal_present(fd):
        return None
    thread = threading.Thread(
        target=_watch, args=(fd, loop, exit_app), name="explorer-terminal-watch", daemon=True
    )
    thread.start()
    return thread


def _watch(fd: int, loop: asyncio.AbstractEventLoop, exit_app: Callable[[], None]) -> None:
    while terminal_present(fd):
        time.sleep(CHECK_EVERY)
    log.warning("the terminal is gone: the app exits")
    try:
        loop.call_soon_threadsafe(exit_app)
    except RuntimeError:  # the loop is closed: the app is ending already
        return
    time.sleep(GRACE)
    os._exit(EXIT_STATUS)  # the app's loop is stuck on the lost terminal: end the process
