"""The resident reader against hostile and unlucky clients (issue 21): whatever bytes arrive,
it answers with a typed refusal and goes on serving; it runs nothing but reads of its own index;
a slow client delays no one; a request from other code makes it leave for a fresh reader.

After each case the reader still answers a search in under 0.3 s, byte for byte as a process
of its own would, and nothing else ran: no new or changed file in the index directory, no
write lock taken, no child process, no thread left over, the same working folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from explorer.cli import main
from explorer.cli.reader_protocol import (
    PROTOCOL,
    Answer,
    Refusal,
    Refused,
    decode_reply,
    encode_request,
)
from explorer.cli.resident_client import LOCK_NAME, SERVED_NOTE, SOCKET_NAME, resolve
from explorer.cli.resident_server import MAX_CLIENTS, READ_SECONDS
from tests.conftest import EXPLORER_PROCESS, run_explorer, wait_until, write_files
from tests.fakes import FakeEmbedder, index_with_fake_model

CORPUS = {
    "guides/telescope.md": "# Telescope\n\nTelescope lenses and telescope mirrors.\n",
    "notes/stars.md": "# Stars\n\nStars seen through a telescope at night.\n",
}
ANSWER_SECONDS = 0.3
READER_FILES = {SOCKET_NAME, LOCK_NAME}
"""The reader's own files in the index directory: everything else must stay as it was."""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A small index served by one resident reader for the whole battery: (root, index dir,
    the reader's process, its environment)."""
    base = tmp_path_factory.mktemp("served")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
        )
        patch.setenv("EXPLORER_DATA_DIR", str(base / "data"))
        patch.setenv("EXPLORER_CONFIG_DIR", str(base / "config"))
        root, index_dir = build_index(base)
        env = reader_env()
        process = start_reader(index_dir, env)
        yield root, index_dir, process, env
        stop(process)


@pytest.fixture
def own_reader(tmp_path, monkeypatch):
    """A reader of a small index of its own, for cases that make a reader leave."""
    monkeypatch.setattr(
        "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
    )
    root, index_dir = build_index(tmp_path)
    env = reader_env()
    process = start_reader(index_dir, env)
    yield root, index_dir, process, env
    stop(process)
    stop_reader_of(index_dir)  # a fresh one a client started


def build_index(base: Path) -> tuple[Path, Path]:
    root, index_dir = write_files(base / "root", CORPUS), base / "index"
    done = CliRunner().invoke(main, ["index", str(root), "--index-dir", str(index_dir)])
    assert done.exit_code == 0, done.output
    return root, index_dir


def reader_env() -> dict[str, str]:
    env = {**os.environ, "EXPLORER_READER_DEBUG": "1", "EXPLORER_READER_IDLE": "120"}
    env.pop("EXPLORER_NO_DAEMON", None)
    return env


def start_reader(index_dir: Path, env: dict[str, str]) -> subprocess.Popen:
    process = subprocess.Popen(
        [*EXPLORER_PROCESS, "_reader", str(index_dir)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert wait_until(lambda: (index_dir / SOCKET_NAME).exists(), timeout=60)
    return process


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.kill()
    process.wait(timeout=10)


def stop_reader_of(index_dir: Path) -> None:
    """Kill the reader that holds ``reader.lock`` now, if any (one a client started)."""
    try:
        pid = int((index_dir / LOCK_NAME).read_text().strip() or 0)
    except (OSError, ValueError):
        return
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def exchange(index_dir: Path, payload: bytes, timeout: float = 10.0) -> bytes:
    """Send ``payload`` whole to the reader and read its reply to the end."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(timeout)
        connection.connect(str(index_dir / SOCKET_NAME))
        connection.sendall(payload)
        connection.shutdown(socket.SHUT_WR)
        return read_all(connection)


def read_all(connection: socket.socket) -> bytes:
    """Read to the end, as the client does: a reader that refuses a request without reading
    all of it resets the connection after its reply (a Unix socket closed with unread data)."""
    parts = []
    while True:
        try:
            chunk = connection.recv(1 << 16)
        except ConnectionResetError:
            if not parts:
                raise
            break
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
    return b"".join(parts)


def search_args(root: Path, index_dir: Path) -> list[str]:
    return ["search", "telescope", str(root), "--mode", "keyword", "--index-dir", str(index_dir)]


def search_request(root: Path, index_dir: Path) -> bytes:
    """The request a client of this code sends for a keyword search, byte for byte."""
    resolved = resolve(search_args(root, index_dir), main)
    assert resolved is not None
    return encode_request(resolved.request)


def refusal(data: bytes) -> Refused:
    """The typed refusal in a reply (fails on anything else)."""
    reply = decode_reply(data)
    assert isinstance(reply, Refused), data[:200]
    return reply


def assert_answers_a_search(root: Path, index_dir: Path) -> None:
    """The reader answers a search in under 0.3 s, as the command in a process would print."""
    request = search_request(root, index_dir)
    start = time.perf_counter()
    data = exchange(index_dir, request, timeout=5)
    seconds = time.perf_counter() - start
    reply = decode_reply(data)
    assert isinstance(reply, Answer), data[:200]
    assert seconds < ANSWER_SECONDS, f"answered in {seconds:.3f} s"
    alone = CliRunner().invoke(main, search_args(root, index_dir))
    assert alone.exit_code == 0, alone.output
    assert reply.stdout == alone.stdout
    assert "guides/telescope.md" in reply.stdout


def index_files(index_dir: Path) -> dict[str, tuple[str, int, int]]:
    """Every file of the index but the reader's own: its bytes' digest, size and modification
    time. Chroma's files and SQLite's included: a reader opens a private snapshot of the
    vector store, and the keyword index rests in rollback mode, where reading writes nothing."""
    found: dict[str, tuple[str, int, int]] = {}
    for path in sorted(index_dir.rglob("*")):
        if path.is_file() and path.name not in READER_FILES:
            info = path.stat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            found[str(path.relative_to(index_dir))] = (digest, info.st_size, info.st_mtime_ns)
    return found


def threads_of(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def children_of(pid: int) -> list[str]:
    children = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            children += Path(f"/proc/{pid}/task/{task}/children").read_text().split()
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
    return children


class Watch:
    """What the reader is before a case, to check afterwards that nothing else ran."""

    def __init__(self, process: subprocess.Popen, index_dir: Path) -> None:
        self.process, self.index_dir = process, index_dir
        self.files = index_files(index_dir)
        self.cwd = os.readlink(f"/proc/{process.pid}/cwd")
        self.threads = threads_of(process.pid)

    def assert_nothing_else_ran(self) -> None:
        pid = self.process.pid
        assert self.process.poll() is None, "the reader died"
        assert index_files(self.index_dir) == self.files
        assert not (self.index_dir / "write.lock").exists()
        assert os.readlink(f"/proc/{pid}/cwd") == self.cwd
        assert children_of(pid) == []
        # A client's thread ends with its reply; nothing else may have started one.
        assert wait_until(lambda: threads_of(pid) <= self.threads, timeout=READ_SECONDS + 3)


@pytest.fixture
def watched(served):
    root, index_dir, process, _env = served
    assert_answers_a_search(root, index_dir)  # warm, and the baseline of threads
    watch = Watch(process, index_dir)
    yield watch
    watch.assert_nothing_else_ran()
    assert_answers_a_search(root, index_dir)
    watch.assert_nothing_else_ran()


HOSTILE_BODIES = {
    "null": b"null",
    "a number": b"5",
    "a string": b'"x"',
    "an empty array": b"[]",
    "deep nesting": b"[" * 100_000,
    "deep nesting in an object": b'{"protocol": 2, "call": ' + b"[" * 100_000,
    "garbage": bytes(range(256)) * 64,
    "nothing": b"",
    "an object of nothing": b"{}",
}


@pytest.mark.parametrize("body", HOSTILE_BODIES.values(), ids=HOSTILE_BODIES.keys())
def test_any_bytes_get_a_typed_refusal_and_the_reader_goes_on(served, watched, body):
    assert refusal(exchange(served[1], body)).reason is Refusal.BAD_REQUEST


def test_half_a_request_and_a_client_that_vanishes(served, watched):
    root, index_dir, _process, _env = served
    request = search_request(root, index_dir)
    assert refusal(exchange(index_dir, request[: len(request) // 2])).reason is Refusal.BAD_REQUEST
    for _ in range(3):  # connect, send half, and go without reading anything
        vanishing = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        vanishing.connect(str(index_dir / SOCKET_NAME))
        vanishing.sendall(request[:100])
        vanishing.close()
    vanishing = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # whole, then gone
    vanishing.connect(str(index_dir / SOCKET_NAME))
    vanishing.sendall(request)
    vanishing.close()


def old_style(index_dir: Path, argv: list[str], cwd: Path, env: dict[str, str]) -> bytes:
    """A request of protocol 1: a command line, an environment and a folder to run it in."""
    request = {
        "protocol": 1,
        "index_dir": str(index_dir),
        "argv": argv,
        "env": env,
        "cwd": str(cwd),
    }
    return json.dumps(request).encode()


def test_an_empty_command_line_starts_nothing(served, watched, tmp_path):
    """``argv: []`` once started the TUI inside the reader, with its writer scanning the
    folder it was sent."""
    _root, index_dir, _process, env = served
    folder = write_files(tmp_path / "folder", {"a.md": "# A\n"})
    canary = tmp_path / "canary-data"
    request = old_style(index_dir, [], folder, {**env, "EXPLORER_DATA_DIR": str(canary)})
    refused = refusal(exchange(index_dir, request))
    assert refused.reason is Refusal.VERSION
    assert not refused.leaving  # an older client does not replace a reader
    time.sleep(0.5)
    assert not canary.exists()


@pytest.mark.parametrize("command", ["index", "check-refs"])
def test_a_write_command_is_refused(served, watched, tmp_path, command):
    """``index`` or ``check-refs`` of any folder once ran in the reader as sent."""
    root, index_dir, _process, env = served
    other_root = write_files(tmp_path / "other", {"b.md": "# B\n\nTelescope.\n"})
    other_index = tmp_path / "other-index"
    argv = [command, str(other_root), "--index-dir", str(other_index)]
    assert refusal(exchange(index_dir, old_style(index_dir, argv, tmp_path, env))).reason in (
        Refusal.VERSION,
        Refusal.BAD_REQUEST,
    )
    # The same as a call of this protocol: no such kind of call exists.
    typed = json.loads(search_request(root, index_dir))
    typed["call"] = {"kind": command, "root": str(other_root), "index_dir": str(other_index)}
    assert refusal(exchange(index_dir, json.dumps(typed).encode())).reason is Refusal.BAD_REQUEST
    time.sleep(0.5)
    assert not other_index.exists()


def test_status_of_another_index_is_refused(served, watched, tmp_path):
    root, index_dir, _process, _env = served
    other_root, other_index = build_index_elsewhere(tmp_path)
    typed = json.loads(search_request(root, index_dir))
    typed["settings"]["index_dir"] = str(other_index)
    typed["settings"]["root"] = str(other_root)
    typed["call"] = {"kind": "status", "as_json": True}
    refused = refusal(exchange(index_dir, json.dumps(typed).encode()))
    assert refused.reason is Refusal.ANOTHER_INDEX


def build_index_elsewhere(base: Path) -> tuple[Path, Path]:
    root, index_dir = write_files(base / "elsewhere", CORPUS), base / "elsewhere-index"
    index_with_fake_model(root, index_dir)
    return root, index_dir


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("per_file", 10**9),
        ("limit", -1),
        ("per_file", "3"),
        ("explain", 1),
        ("query", "x" * 100_000),
        ("unknown", True),
    ],
    ids=["per_file 10**9", "limit -1", "per_file '3'", "explain 1", "a long query", "unknown"],
)
def test_wrong_types_unknown_fields_and_numbers_out_of_bounds_are_refused(
    served, watched, field, value
):
    root, index_dir, _process, _env = served
    typed = json.loads(search_request(root, index_dir))
    typed["call"][field] = value
    assert refusal(exchange(index_dir, json.dumps(typed).encode())).reason is Refusal.BAD_REQUEST


def test_a_slow_client_delays_no_one(served, watched):
    """A client sending a byte every 3.5 s once held the reader: every other call waited."""
    root, index_dir, _process, _env = served
    request = search_request(root, index_dir)
    slow = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    slow.connect(str(index_dir / SOCKET_NAME))
    done = threading.Event()

    def drip() -> None:
        for byte in request[:3]:
            try:
                slow.send(bytes([byte]))
            except OSError:
                return
            if done.wait(3.5):
                return

    dripping = threading.Thread(target=drip, daemon=True)
    dripping.start()
    try:
        time.sleep(0.3)  # the reader has taken the slow client
        for _ in range(3):
            assert_answers_a_search(root, index_dir)
        slow.settimeout(READ_SECONDS + 3)
        start = time.monotonic()
        assert refusal(read_all(slow)).reason is Refusal.BAD_REQUEST  # its deadline passed
        assert time.monotonic() - start < READ_SECONDS + 1
    finally:
        done.set()
        slow.close()
        dripping.join(5)


def test_more_clients_than_served_at_once_are_refused_quickly(served, watched):
    root, index_dir, _process, _env = served
    idle = []
    try:
        for _ in range(MAX_CLIENTS):
            connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            connection.connect(str(index_dir / SOCKET_NAME))
            idle.append(connection)
        time.sleep(0.5)  # each has a thread waiting for its request
        start = time.monotonic()
        extra = exchange(index_dir, search_request(root, index_dir), timeout=5)
        assert refusal(extra).reason is Refusal.BUSY
        assert time.monotonic() - start < 0.5
    finally:
        for connection in idle:
            connection.close()
    assert wait_until(lambda: _answers(root, index_dir), timeout=READ_SECONDS + 3)


def _answers(root: Path, index_dir: Path) -> bool:
    return isinstance(decode_reply(exchange(index_dir, search_request(root, index_dir))), Answer)


def other_build(request: bytes) -> bytes:
    typed = json.loads(request)
    typed["fingerprint"] = "0" * 32
    return json.dumps(typed).encode()


def newer_protocol(request: bytes) -> bytes:
    typed = json.loads(request)
    typed["protocol"] = PROTOCOL + 1
    typed["call"] = {"kind": "search", "shape": "of the future"}
    return json.dumps(typed).encode()


@pytest.mark.parametrize("other", [other_build, newer_protocol])
def test_a_request_from_other_code_replaces_the_reader(own_reader, other):
    """Without a version check the old code answered until it had been idle for 10 minutes."""
    root, index_dir, process, env = own_reader
    refused = refusal(exchange(index_dir, other(search_request(root, index_dir))))
    assert refused.reason is Refusal.VERSION
    assert refused.leaving
    assert not (index_dir / SOCKET_NAME).exists()  # gone before it replied
    process.wait(timeout=10)
    files = index_files(index_dir)
    # The next call (one worth a reader) answers in its own process and starts a fresh reader.
    args = ["related", root / "notes" / "stars.md", "--index-dir", index_dir, "--json"]
    alone = run_explorer(*args, env=env, timeout=60)
    assert alone.returncode == 0, alone.stderr
    assert SERVED_NOTE not in alone.stderr
    assert wait_until(lambda: (index_dir / SOCKET_NAME).exists(), timeout=60)
    fresh = int((index_dir / LOCK_NAME).read_text())
    assert fresh != process.pid
    assert_answers_a_search(root, index_dir)
    served = run_explorer(*args, env=env, timeout=60)
    assert served.stderr == SERVED_NOTE + "\n"
    assert served.stdout == alone.stdout
    assert index_files(index_dir) == files
