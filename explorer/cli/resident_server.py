"""The resident reader: a process that keeps Chroma imported and answers one-shot reads.

Started detached by a one-shot command on an index (see :mod:`explorer.cli.resident_client`),
it listens on ``reader.sock`` in the index directory (mode 0600, in a folder of its user that
nobody else may write to). One reader per index directory: ``reader.lock`` (an exclusive
``flock``, holding the reader's pid) decides, and the holder may remove a socket a killed reader
left.

It is a narrow service. It reads one typed request per connection
(:mod:`explorer.cli.reader_protocol`: search, related, links or status of its own index) and
answers with the text the command would print (:mod:`explorer.cli.reader_answers`). It never
changes its environment or working folder, never writes the index nor takes its write lock,
and never starts the TUI, indexing, a writer or a watcher: no such request exists.

- **Any bytes**: a request is read within :data:`READ_SECONDS` and :data:`REQUEST_LIMIT` bytes,
  its nesting checked before it is parsed, then its types and bounds; whatever fails gets a
  typed refusal, and no failure while serving one client ends the reader.
- **Concurrency**: each client is served on a thread of its own, at most :data:`MAX_CLIENTS`
  at once (one more is refused as busy at once). A slow client holds only its own thread
  until its deadline; the answers themselves are computed one at a time (the core's objects
  are not shared between threads), and a request that waits too long for its turn is refused
  as busy.
- **Versions**: a request from other code (another protocol, or another build: see
  :func:`~explorer.cli.reader_protocol.code_fingerprint`) is refused. If the sender knows
  this protocol or a later one, the reader leaves, and the client starts a reader of its code.
- **Leaving**: when idle for ``EXPLORER_READER_IDLE`` seconds (default 600), on SIGTERM, and
  when the index changed since it started (a writer recorded vectors, updated the index, or a
  rebuild swapped the database): that request is refused and the next call starts a fresh one.
  A reader that leaves gives up its socket and its lock before it replies.
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import sqlite3
import sys
import threading
import time
from contextlib import suppress
from pathlib import Path

from explorer.cli.reader_answers import answer
from explorer.cli.reader_protocol import (
    REQUEST_LIMIT,
    Refusal,
    Refused,
    Reply,
    RequestRefused,
    code_fingerprint,
    encode_reply,
    parse_request,
)
from explorer.cli.resident_client import LOCK_NAME, owned_private_dir, socket_path

IDLE_ENV = "EXPLORER_READER_IDLE"
IDLE_SECONDS = 600.0
"""Seconds without a request after which the reader leaves."""
MAX_CLIENTS = 8
"""Clients served at once; one more is refused as busy (it answers in its own process)."""
READ_SECONDS = 2.0
"""A client's whole request must arrive within this time (a real one takes microseconds)."""
ANSWER_WAIT_SECONDS = 2.0
"""How long a request waits for the answer before it (a slow one) to be done; then it is refused
as busy, well before its client gives up (see ``TIMEOUT_SECONDS`` of the client)."""
BUSY_READ_SECONDS = 0.1
"""How long a client beyond :data:`MAX_CLIENTS` is read before it is refused as busy (a real
client sends its request at once)."""
WRITE_SECONDS = 5.0
"""A client must take the reply within this time."""
POLL_SECONDS = 0.25
"""How often the accepting loop looks whether the reader should leave."""
LEAVE_SECONDS = 5.0
"""How long a leaving reader lets the clients it serves finish."""


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
    """Serve ``index_dir`` until idle, until the index changes or until other code asks;
    return at once if another reader serves it or the folder is not this user's own."""
    index_dir = index_dir.absolute()
    fingerprint = code_fingerprint()  # first: the code this process runs is the code on disk now
    if not owned_private_dir(index_dir):
        return
    try:
        lock = os.open(index_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError:  # not ours to lock (a link, a folder): no reader here
        return
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
        ResidentReader(index_dir, lock, fingerprint, state).run()
    finally:
        os.close(lock)


def _leave(_signal: int, _frame: object) -> None:
    sys.exit(0)


def _warm() -> None:
    """Import what the answers need, so the first request is as quick as the next."""
    import chromadb  # noqa: F401
    import numpy  # noqa: F401
    import onnxruntime  # noqa: F401
    import tokenizers  # noqa: F401

    import explorer.core.indexing.disk_state
    import explorer.core.retrieval.agent_context
    import explorer.core.retrieval.links
    import explorer.core.retrieval.related
    import explorer.core.retrieval.search
    import explorer.core.store.index  # noqa: F401
    from explorer.cli.reader_protocol import warm_schema
    from explorer.core.embed.embedder import keep_loaded_embedders

    keep_loaded_embedders()
    warm_schema()


class ResidentReader:
    """The listening socket of one index, its clients' threads, and when to leave."""

    def __init__(
        self, index_dir: Path, lock: int, fingerprint: str, state: tuple[object, ...]
    ) -> None:
        self.index_dir = index_dir
        self.fingerprint = fingerprint
        self._lock = lock
        self._state = state
        self._path = socket_path(index_dir)
        self._socket_id: tuple[int, int] | None = None
        self._idle = float(os.environ.get(IDLE_ENV, IDLE_SECONDS))
        self._clients = threading.BoundedSemaphore(MAX_CLIENTS)
        self._threads: set[threading.Thread] = set()
        self._threads_lock = threading.Lock()
        self._answering = threading.Lock()
        """Held while an answer is computed: the core's objects are used by one at a time."""
        self._leaving = threading.Event()
        self._leave_lock = threading.Lock()
        self._last_activity = time.monotonic()

    def run(self) -> None:
        """Listen and serve until it is time to leave."""
        listener: socket.socket | None = None
        try:
            # Made inside the ``try``: a SIGTERM the moment the socket appears (a client may
            # already see it) still removes it on the way out.
            listener = self._listen()
            while not self._leaving.is_set():
                try:
                    connection, _ = listener.accept()
                except TimeoutError:
                    if self._idle_too_long():
                        return
                    continue
                self._last_activity = time.monotonic()
                self._start_client(connection)
        finally:
            if listener is not None:
                listener.close()
            self.retire()
            self._let_clients_finish()

    def _listen(self) -> socket.socket:
        with suppress(FileNotFoundError):
            self._path.unlink()  # we hold the lock: whatever socket is there, its reader is gone
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        mask = os.umask(0o177)
        try:
            listener.bind(str(self._path))
        finally:
            os.umask(mask)
        os.chmod(self._path, 0o600)
        info = os.lstat(self._path)
        self._socket_id = (info.st_ino, info.st_dev)
        listener.listen(64)
        listener.settimeout(POLL_SECONDS)
        return listener

    def _idle_too_long(self) -> bool:
        with self._threads_lock:
            busy = bool(self._threads)
        return not busy and time.monotonic() - self._last_activity > self._idle

    def _start_client(self, connection: socket.socket) -> None:
        """Serve ``connection`` on a thread of its own, or refuse it as busy at once."""
        if not self._clients.acquire(blocking=False):
            with connection:
                _drain(connection, BUSY_READ_SECONDS)
                _send(connection, Refused(Refusal.BUSY, f"{MAX_CLIENTS} clients are served"))
            return
        thread = threading.Thread(target=self._serve_client, args=(connection,), daemon=True)
        with self._threads_lock:
            self._threads.add(thread)
        try:
            thread.start()
        except RuntimeError:  # no thread to be had: refuse this one
            with self._threads_lock:
                self._threads.discard(thread)
            self._clients.release()
            connection.close()

    def _serve_client(self, connection: socket.socket) -> None:
        """Read one request, answer or refuse it, and close. Nothing a client sends or fails
        to send ends the reader."""
        try:
            with connection:
                reply = self._reply_to(connection)
                connection.settimeout(WRITE_SECONDS)
                _send(connection, reply)
        # The whole body of a client's thread: a client that vanishes mid-reply, a bug in an
        # answer: this client is dropped, the reader goes on serving the others.
        except Exception:  # noqa: BLE001 - see above
            pass
        finally:
            self._last_activity = time.monotonic()
            with self._threads_lock:
                self._threads.discard(threading.current_thread())
            self._clients.release()

    def _reply_to(self, connection: socket.socket) -> Reply:
        try:
            data = _read_request(connection)
            request = parse_request(data, self.fingerprint)
            if index_state(self.index_dir) != self._state:
                raise RequestRefused(Refusal.INDEX_CHANGED, "the index changed", leaving=True)
            if not self._answering.acquire(timeout=ANSWER_WAIT_SECONDS):
                raise RequestRefused(Refusal.BUSY, "another answer is taking long")
            try:
                return answer(request, self.index_dir)
            finally:
                self._answering.release()
        except RequestRefused as refused:
            if refused.reply.leaving:
                self.retire()  # before the reply: its client may start a reader at once
            return refused.reply
        except TimeoutError:
            return Refused(Refusal.BAD_REQUEST, f"no whole request within {READ_SECONDS:g} s")
        # What answering raised, expected (an ExplorerError: no index, a bad query, a store
        # that does not answer) or not: the client runs the command and reports it its way.
        except Exception as error:  # noqa: BLE001 - see above
            return Refused(Refusal.FAILED, f"{type(error).__name__}: {error}")

    def retire(self) -> None:
        """Stop serving: remove the socket (if still ours) and give up the lock, so that a
        fresh reader may start at once. Idempotent; any thread may call it."""
        with self._leave_lock:
            if self._leaving.is_set():
                return
            self._leaving.set()
            with suppress(OSError):
                now = os.lstat(self._path)
                # Not known yet (stopped between the socket's bind and its lstat): under the
                # lock, whatever socket is there is this reader's, as :meth:`_listen` says.
                if self._socket_id is None or (now.st_ino, now.st_dev) == self._socket_id:
                    self._path.unlink()
            with suppress(OSError):
                fcntl.flock(self._lock, fcntl.LOCK_UN)

    def _let_clients_finish(self) -> None:
        deadline = time.monotonic() + LEAVE_SECONDS
        with self._threads_lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))


def _read_request(connection: socket.socket) -> bytes:
    """The bytes a client sends before it shuts its side, within :data:`READ_SECONDS` in all;
    a request over :data:`REQUEST_LIMIT` is refused without reading the rest."""
    deadline = time.monotonic() + READ_SECONDS
    parts: list[bytes] = []
    size = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        connection.settimeout(remaining)
        chunk = connection.recv(1 << 16)
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        size += len(chunk)
        if size > REQUEST_LIMIT:
            _drain(connection)
            raise RequestRefused(Refusal.BAD_REQUEST, f"larger than {REQUEST_LIMIT} bytes")


def _send(connection: socket.socket, reply: Reply) -> None:
    with suppress(OSError):
        connection.sendall(encode_reply(reply))


def _drain(connection: socket.socket, seconds: float = 0.0) -> None:
    """Read and drop what the client sends, until it shuts its side or ``seconds`` pass (or
    at once, without waiting, for 0): a Unix socket closed with unread data resets its peer,
    which could then lose the reply, and a client refused before it sent its request would
    find the socket closed."""
    deadline, drained = time.monotonic() + seconds, 0
    with suppress(OSError):
        while drained <= REQUEST_LIMIT:  # a client that never stops sending is left to its reset
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                chunk = connection.recv(1 << 16, socket.MSG_DONTWAIT)
            else:
                connection.settimeout(remaining)
                chunk = connection.recv(1 << 16)
            if not chunk:
                return
            drained += len(chunk)
