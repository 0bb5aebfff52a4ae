"""The fast path of a one-shot ``explorer search`` or ``related``: ask the index's resident reader.

A process that imports Chroma and opens the store spends about a second before it answers.
The resident reader (:mod:`explorer.cli.resident_server`) is a process that has done so already and
listens on a Unix socket in the index directory. This client sends it the command line, the
environment and the working folder, and writes the answer it gets back byte for byte. It imports
nothing heavy (no chromadb, torch or sentence_transformers).

Whenever the reader cannot answer exactly as this process would, the client answers ``None``
and the command runs in this process as usual: no socket yet (one is started for the next call),
a stale socket (removed), a timeout, an error, a non-zero exit (so error messages are the
in-process ones), a terminal on stdout (styles depend on it), or ``EXPLORER_NO_DAEMON=1``.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

NO_DAEMON_ENV = "EXPLORER_NO_DAEMON"
"""Set (to anything but empty or 0) to run every command in its own process."""
DEBUG_ENV = "EXPLORER_READER_DEBUG"
"""Set to have the client say on stderr when the resident reader answered."""
SOCKET_NAME = "reader.sock"
LOCK_NAME = "reader.lock"
SERVED_COMMANDS = frozenset({"search", "related"})
"""Subcommands the resident reader answers: read-only ones that never take the write lock."""
TIMEOUT_SECONDS = 5.0
"""How long the client waits for the reader's answer before answering in-process."""
MAX_SOCKET_PATH = 100
"""``sun_path`` holds 108 bytes; a longer index path goes without a resident reader."""
PROTOCOL = 1
SERVED_NOTE = "explorer: answered by the resident reader"


@dataclass(frozen=True)
class Answer:
    """What the resident reader's run of the command printed, and its exit status."""

    stdout: bytes
    stderr: bytes
    exit_code: int


def disabled() -> bool:
    """True when ``EXPLORER_NO_DAEMON`` asks for in-process work only."""
    return os.environ.get(NO_DAEMON_ENV, "") not in ("", "0")


def socket_path(index_dir: Path) -> Path:
    """Where the resident reader of ``index_dir`` listens."""
    return index_dir / SOCKET_NAME


def owned_private_dir(directory: Path) -> bool:
    """True when ``directory`` is a real folder of this user that nobody else may write to."""
    try:
        info = os.lstat(directory)
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def try_resident(argv: list[str]) -> int | None:
    """Answer ``explorer ARGV`` through the resident reader: write its output and give the
    exit status, or ``None`` when this process must run the command itself."""
    if disabled() or not argv or argv[0] not in SERVED_COMMANDS:
        return None
    if any(arg in ("--help", "--version") for arg in argv) or sys.stdout.isatty():
        return None
    found = _index_dir(argv)
    if found is None:
        return None
    index_dir, keyword_only = found
    if not (index_dir / "index.sqlite").is_file():
        return None
    if len(os.fsencode(socket_path(index_dir))) > MAX_SOCKET_PATH:
        return None
    if not owned_private_dir(index_dir):
        return None
    answer = _ask(index_dir, argv, start=not keyword_only)
    if answer is None or answer.exit_code != 0:
        return None
    _write(answer)
    return answer.exit_code


def _index_dir(argv: list[str]) -> tuple[Path, bool] | None:
    """The index directory the command would use, found as the command finds it, and whether
    it searches by keywords only (fast enough in-process: no reader is started for it).

    ``related`` finds its index from FILE (``--root``, the root stored in ``--index-dir``, or
    the nearest indexed folder above FILE), as the command does."""
    import click

    from explorer.cli.commands import IndexOptions, related_settings, settings_for
    from explorer.cli.entry import main
    from explorer.core.errors import ExplorerError

    command = main.commands[argv[0]]
    try:
        context = command.make_context(argv[0], list(argv[1:]), resilient_parsing=True)
        params = context.params
        options = IndexOptions(
            params.get("index_dir"), params.get("model"), params.get("chroma_url")
        )
        if argv[0] == "related":
            settings = related_settings(params["file"], options, params.get("root"))
        else:
            settings = settings_for(params.get("root"), options)
        index_dir = settings.index_dir.absolute()
    except (click.ClickException, ExplorerError, OSError):  # fails the same way in-process
        return None
    return index_dir, params.get("mode") == "keyword"


def _ask(index_dir: Path, argv: list[str], start: bool) -> Answer | None:
    """The reader's answer, or None; with ``start``, a missing reader is started for the
    next call."""
    path = socket_path(index_dir)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if start:
            start_reader(index_dir)
        return None
    except OSError:
        return None
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        return None
    request = {
        "protocol": PROTOCOL,
        "index_dir": str(index_dir),
        "argv": argv,
        "env": dict(os.environ),
        "cwd": os.getcwd(),
    }
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(TIMEOUT_SECONDS)
            connection.connect(str(path))
            connection.sendall(json.dumps(request).encode() + b"\n")
            connection.shutdown(socket.SHUT_WR)
            reply = _read_all(connection)
    except (ConnectionRefusedError, FileNotFoundError):
        _remove_stale(path, info)
        if start:
            start_reader(index_dir)
        return None
    except OSError:  # a timeout, a reset: answer in-process this time
        return None
    try:
        data = json.loads(reply)
        return Answer(
            base64.b64decode(data["stdout"]), base64.b64decode(data["stderr"]), int(data["exit"])
        )
    except (ValueError, KeyError, TypeError):  # an error reply, or a reader that died mid-answer
        return None


def _read_all(connection: socket.socket) -> bytes:
    parts = []
    while chunk := connection.recv(1 << 16):
        parts.append(chunk)
    return b"".join(parts)


def _remove_stale(path: Path, seen: os.stat_result) -> None:
    """Remove a socket nobody listens on (its reader was killed), if it is still that one."""
    try:
        now = os.lstat(path)
        if (now.st_ino, now.st_dev) == (seen.st_ino, seen.st_dev):
            path.unlink()
    except OSError:
        pass


def start_reader(index_dir: Path) -> None:
    """Start the resident reader of ``index_dir``, detached, unless it cannot listen there."""
    if not os.access(index_dir, os.W_OK):
        return
    try:
        subprocess.Popen(
            [sys.executable, "-m", "explorer", "_reader", str(index_dir)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass


def _write(answer: Answer) -> None:
    """Write the reader's output as this process would have; a closed pipe ends it quietly."""
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(answer.stdout)
        sys.stdout.buffer.flush()
        sys.stderr.buffer.write(answer.stderr)
        if os.environ.get(DEBUG_ENV):
            sys.stderr.buffer.write(SERVED_NOTE.encode() + b"\n")
        sys.stderr.buffer.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os._exit(141)
