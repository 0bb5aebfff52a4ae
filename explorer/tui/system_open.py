"""Opening a file with the system's own application (``o``): ``xdg-open`` on Linux and the
BSDs, ``open`` on macOS, ``os.startfile`` on Windows; ``EXPLORER_OPENER`` names another
command. For a PDF this is "open in the viewer". The opener runs detached, its output
discarded, so it never draws over the TUI or holds it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from explorer.core.errors import ExplorerError

OPENER_ENV = "EXPLORER_OPENER"
"""A command that opens a file (the file is added as its last argument)."""


class NoOpener(ExplorerError):
    """No command to open files with was found."""


def opener_command() -> list[str]:
    """The command that opens a file here (the file comes after it); raises :class:`NoOpener`."""
    if configured := os.environ.get(OPENER_ENV, "").strip():
        return shlex.split(configured)
    name = "open" if sys.platform == "darwin" else "xdg-open"
    if shutil.which(name) is None:
        raise NoOpener(f"cannot open files here: {name} not found (set {OPENER_ENV})")
    return [name]


def open_with_system(path: Path) -> None:
    """Open ``path`` with the system's application for it, without waiting for it."""
    if sys.platform == "win32" and not os.environ.get(OPENER_ENV):
        os.startfile(path)  # type: ignore[attr-defined,unused-ignore]  # Windows only
        return
    command = [*opener_command(), str(path)]
    try:
        subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as error:
        raise NoOpener(f"cannot run {command[0]}: {error.strerror or error}") from error
