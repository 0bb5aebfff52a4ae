"""The resident reader: a process that keeps Chroma imported and answers one-shot searches.

Started detached by the first ``explorer search`` on an index (see
:mod:`explorer.cli.resident_client`), it listens on ``reader.sock`` in the index directory (mode
0600, in a folder of its user that nobody else may write to). One reader per index directory:
``reader.lock`` (an exclusive ``flock``, holding the reader's pid) decides, and the holder may
remove a socket a killed reader left. Each request runs the very command code a process would
(click's runner, in the client's environment and working folder), so the output is the same
byte for byte.

It never takes the write lock (``related`` on a file still waiting for its vectors is refused,
see :func:`explorer.cli.commands.forbid_embedding`). It leaves when idle for
``EXPLORER_READER_IDLE`` seconds (default 600), and when the index changed since it started (a
writer recorded vectors, updated the index, or a rebuild swapped the database): that request is
refused, the client answers in-process and the next call starts a fresh reader.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import signal
import socket
import sqlite3
import sys
from contextlib import suppress
from pathlib import Path

from explorer.cli.resident_client import (
    LOCK_NAME,
    PROTOCOL,
    owned_private_dir,
    socket_path,
)

IDLE_ENV = "EXPLORER_READER_IDLE"
IDLE_SECONDS = 600.0
"""Seconds without a request after which the reader leaves."""
REQUEST_LIMIT = 16 << 20
"""Largest request accepted (the environment and the command line), in bytes."""


class RequestRefused(Exception):
    """A request this reader must not answer; the client then works in-process."""


def index_state(index_dir: Path) -> tuple[object, ...] | None:
    """What changes when a writer changes the index: the database file's identity, its vectors
    epoch and last update time (None when it cannot be read)."""
    database = index_dir / "index.sqlite"
    try:
        info = os.stat(database)
        connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=1)
        try:
            rows = dict(
                connection.execute(
                    "SELECT key, value FROM meta WHERE key IN ('vectors_epoch', 'last_update')"
                ).fetchall()
            )
        finally:
            connection.close()
    except (OSError, sqlite3.Error):
        return None
    return (info.st_ino, info.st_dev, rows.get("vectors_epoch"), rows.get("last_update"))


def serve(index_dir: Path) -> None:
    """Serve ``index_dir`` until idle or until the index changes; return at once if another
    reader serves it or the folder is not this user's own."""
    index_dir = index_dir.absolute()
    if not owned_private_dir(index_dir):
        return
    lock = os.open(index_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        return
    signal.signal(signal.SIGTERM, _leave)  # `kill PID` removes the socket on the way out
    try:
        os.ftruncate(lock, 0)
        os.write(lock, f"{os.getpid()}\n".encode())  # who serves: for `kill`, and for tests
        _warm()
        state = index_state(index_dir)
        if state is None:
            return
        _listen_and_answer(index_dir, state)
    finally:
        os.close(lock)


def _leave(_signal: int, _frame: object) -> None:
    sys.exit(0)


def _warm() -> None:
    """Import what a hybrid search needs, so the first request is as quick as the next."""
    import chromadb  # noqa: F401
    import numpy  # noqa: F401
    import onnxruntime  # noqa: F401
    import tokenizers  # noqa: F401

    from explorer.cli.commands import forbid_embedding
    from explorer.core.embed.embedder import keep_loaded_embedders

    keep_loaded_embedders()
    forbid_embedding()


def _listen_and_answer(index_dir: Path, state: tuple[object, ...]) -> None:
    path = socket_path(index_dir)
    with suppress(FileNotFoundError):
        path.unlink()  # we hold the lock: whatever socket is there, its reader is gone
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(mask)
    os.chmod(path, 0o600)
    mine = os.lstat(path)
    listener.listen(16)
    listener.settimeout(float(os.environ.get(IDLE_ENV, IDLE_SECONDS)))
    try:
        while True:
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                return
            with connection:
                if index_state(index_dir) != state:
                    _reply(connection, {"error": "the index changed"})
                    return
                _answer(connection, index_dir)
    finally:
        listener.close()
        with suppress(OSError):
            now = os.lstat(path)
            if (now.st_ino, now.st_dev) == (mine.st_ino, mine.st_dev):
                path.unlink()


def _answer(connection: socket.socket, index_dir: Path) -> None:
    connection.settimeout(5.0)
    try:
        request = json.loads(_read_request(connection))
        if request.get("protocol") != PROTOCOL or request.get("index_dir") != str(index_dir):
            raise RequestRefused("another index or protocol")
        reply = run_command(list(request["argv"]), dict(request["env"]), str(request["cwd"]))
    except (RequestRefused, OSError, ValueError, KeyError, TypeError) as error:
        reply = {"error": str(error)}
    with suppress(OSError):
        _reply(connection, reply)


def _read_request(connection: socket.socket) -> bytes:
    parts, size = [], 0
    while chunk := connection.recv(1 << 16):
        parts.append(chunk)
        size += len(chunk)
        if size > REQUEST_LIMIT:
            raise RequestRefused("request too large")
    return b"".join(parts)


def _reply(connection: socket.socket, reply: dict[str, object]) -> None:
    connection.sendall(json.dumps(reply).encode())


def run_command(argv: list[str], env: dict[str, str], cwd: str) -> dict[str, object]:
    """Run ``explorer ARGV`` as the client would have, in its environment and folder."""
    from click.testing import CliRunner

    from explorer.cli.entry import main

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        result = CliRunner().invoke(main, argv, obj={}, catch_exceptions=True)
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise RequestRefused(f"{type(result.exception).__name__}: {result.exception}")
    return {
        "stdout": base64.b64encode(result.stdout_bytes).decode(),
        "stderr": base64.b64encode(result.stderr_bytes).decode(),
        "exit": result.exit_code,
    }
