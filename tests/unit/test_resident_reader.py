"""The resident reader: later one-shot searches (and related, links, status) are answered by it,
byte for byte as a process would answer; the client falls back to in-process work whenever the
reader cannot answer."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from explorer.cli import main
from explorer.cli.reader_protocol import Refusal, Refused, decode_reply, encode_request
from explorer.cli.resident_client import SERVED_NOTE, SOCKET_NAME, resolve
from tests.conftest import EXPLORER_PROCESS, run_explorer, wait_until, write_files
from tests.fakes import FakeEmbedder, index_with_fake_model

CORPUS = {
    "guides/telescope.md": "# Telescope\n\nTelescope lenses and telescope mirrors.\n",
    "notes/stars.md": "# Stars\n\nStars seen through a telescope at night.\n",
}


@pytest.fixture(autouse=True)
def fake_model(monkeypatch):
    monkeypatch.setattr(
        "explorer.core.store.index.load_embedder", lambda model, precision: FakeEmbedder()
    )


@pytest.fixture
def indexed(tmp_path):
    root, index_dir = write_files(tmp_path / "root", CORPUS), tmp_path / "index"
    done = CliRunner().invoke(main, ["index", str(root), "--index-dir", str(index_dir)])
    assert done.exit_code == 0, done.output
    return root, index_dir


@pytest.fixture
def reader_env():
    """The environment of a script that may use the resident reader (and is told when it did)."""
    env = {**os.environ, "EXPLORER_READER_DEBUG": "1", "EXPLORER_READER_IDLE": "60"}
    env.pop("EXPLORER_NO_DAEMON")
    return env


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One index and its resident reader for the tests that only ask it questions: they change
    neither the folder, nor the index, nor the reader (a test that does has its own,
    :func:`reader`). Returns (root, index_dir)."""
    base = tmp_path_factory.mktemp("served")
    root, index_dir = write_files(base / "root", CORPUS), base / "index"
    index_with_fake_model(root, index_dir)
    env = {
        **os.environ,
        "EXPLORER_READER_IDLE": "600",
        **{
            f"EXPLORER_{name}_DIR": str(base / name.lower()) for name in ("DATA", "CONFIG", "STATE")
        },
    }
    env.pop("EXPLORER_NO_DAEMON", None)
    process = start_reader(index_dir, env)
    yield root, index_dir
    process.kill()
    process.wait(timeout=10)


@pytest.fixture
def reader(indexed, reader_env):
    """A resident reader serving the index, started as the first hybrid search would."""
    _root, index_dir = indexed
    process = start_reader(index_dir, reader_env)
    yield process
    if process.poll() is None:
        process.kill()
    process.wait(timeout=10)


def start_reader(index_dir, env) -> subprocess.Popen:
    process = subprocess.Popen(
        [*EXPLORER_PROCESS, "_reader", str(index_dir)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert wait_until(lambda: (index_dir / SOCKET_NAME).exists(), timeout=60)
    return process


def search_args(root, index_dir, *extra):
    return ("search", "telescope", root, "--mode", "keyword", "--index-dir", index_dir, *extra)


def in_process(*args) -> str:
    done = CliRunner().invoke(main, [str(a) for a in args])
    assert done.exit_code == 0, done.output
    return done.stdout


@pytest.mark.parametrize("extra", [(), ("--json",), ("--explain",), ("--format", "paths")])
def test_the_reader_answers_byte_for_byte(served, reader_env, extra):
    root, index_dir = served
    args = search_args(root, index_dir, *extra)
    served = run_explorer(*args, env=reader_env, timeout=60)
    assert served.returncode == 0
    assert served.stderr == SERVED_NOTE + "\n"
    assert "telescope" in served.stdout
    alone = run_explorer(*args, env={**reader_env, "EXPLORER_NO_DAEMON": "1"}, timeout=60)
    assert alone.stderr == ""
    assert served.stdout == alone.stdout == in_process(*args)


@pytest.mark.parametrize(
    ("query", "extra", "status", "notes"),
    [
        ("telescope", ("--tag", "nope"), 1, "note: no indexed file matches tag nope\n"),
        (
            "telescope",
            ("--path", "nowhere/", "--format", "paths"),
            1,
            "note: no indexed file matches nowhere/\n",
        ),
        ("telescope", ("--path", "nowhere/", "--json"), 1, ""),  # the notes are in the JSON
        ("telescope", ("--exclude", "notes/", "--json", "--offsets"), 0, ""),
        ("zzzqqq", (), 1, "note: no results for 'zzzqqq' (keyword)\n"),
    ],
    ids=["note", "paths", "json", "exclude", "no-match"],
)
def test_the_reader_gives_the_notes_and_exit_status_of_the_process(
    served, reader_env, query, extra, status, notes
):
    root, index_dir = served
    args = ("search", query, root, "--mode", "keyword", "--index-dir", index_dir, *extra)
    served = run_explorer(*args, env=reader_env, timeout=60)
    alone = run_explorer(*args, env={**reader_env, "EXPLORER_NO_DAEMON": "1"}, timeout=60)
    assert served.returncode == alone.returncode == status, (served.stderr, alone.stderr)
    assert alone.stderr == notes
    assert served.stderr == notes + SERVED_NOTE + "\n"
    assert served.stdout == alone.stdout
    if "--exclude" in extra:
        assert '"guides/telescope.md"' in served.stdout and "notes/" not in served.stdout
        assert '"chunk_id"' in served.stdout


def test_a_root_the_index_does_not_record_gets_the_processs_error(
    indexed, reader, reader_env, tmp_path
):
    """The client leaves the index's recorded root to the reader, which refuses another: the
    command then fails in-process, with its own message, as it always did."""
    _root, index_dir = indexed
    other = write_files(tmp_path / "other", {"a.md": "# A\n\ntelescope\n"})
    args = search_args(other, index_dir)
    served = run_explorer(*args, env=reader_env, timeout=60)
    alone = run_explorer(*args, env={**reader_env, "EXPLORER_NO_DAEMON": "1"}, timeout=60)
    assert served.returncode == alone.returncode == 2
    assert served.stdout == alone.stdout == ""
    assert served.stderr == alone.stderr
    assert "belongs to" in served.stderr and SERVED_NOTE not in served.stderr
    assert reader.poll() is None  # refused, still serving its own index


def test_relative_paths_are_those_of_the_callers_folder(served, reader_env):
    root, index_dir = served
    args = ("search", "stars", ".", "--mode", "keyword", "--index-dir", index_dir)
    served = subprocess.run(
        [*EXPLORER_PROCESS, *map(str, args)],
        env=reader_env,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert served.stderr == SERVED_NOTE + "\n"
    assert "notes/stars.md" in served.stdout


def test_the_served_client_never_imports_the_heavy_modules(served, reader_env):
    root, index_dir = served
    command = [*EXPLORER_PROCESS[:1], "-X", "importtime", *EXPLORER_PROCESS[1:]]
    args = map(str, search_args(root, index_dir))
    done = subprocess.run(
        [*command, *args], env=reader_env, capture_output=True, text=True, timeout=60
    )
    assert SERVED_NOTE in done.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert "explorer.cli" in imported
    assert not imported & {"chromadb", "torch", "sentence_transformers", "numpy"}


def test_the_socket_is_the_owners_alone_and_one_reader_serves(indexed, reader, reader_env):
    _root, index_dir = indexed
    mode = os.stat(index_dir / SOCKET_NAME).st_mode
    assert stat.S_ISSOCK(mode)
    assert stat.S_IMODE(mode) == 0o600
    second = subprocess.run(
        [*EXPLORER_PROCESS, "_reader", str(index_dir)], env=reader_env, timeout=60
    )
    assert second.returncode == 0  # left at once: the first one holds reader.lock
    assert reader.poll() is None


def test_a_killed_reader_leaves_a_socket_the_client_removes(indexed, reader, reader_env):
    root, index_dir = indexed
    reader.send_signal(signal.SIGKILL)
    reader.wait(timeout=10)
    assert (index_dir / SOCKET_NAME).exists()
    args = search_args(root, index_dir, "--json")
    done = run_explorer(*args, env=reader_env, timeout=60)
    assert done.returncode == 0
    assert done.stderr == ""  # answered in-process
    assert done.stdout == in_process(*args)
    assert not (index_dir / SOCKET_NAME).exists()


def test_a_terminated_reader_removes_its_socket(indexed, reader):
    _root, index_dir = indexed
    assert (index_dir / "reader.lock").read_text().strip() == str(reader.pid)
    reader.terminate()
    reader.wait(timeout=10)
    assert not (index_dir / SOCKET_NAME).exists()


def test_a_reader_leaves_when_idle(indexed, reader_env):
    _root, index_dir = indexed
    process = start_reader(index_dir, {**reader_env, "EXPLORER_READER_IDLE": "0.5"})
    process.wait(timeout=30)
    assert not (index_dir / SOCKET_NAME).exists()


def test_a_reader_leaves_when_the_index_changes(indexed, reader, reader_env):
    root, index_dir = indexed
    (root / "notes" / "moon.md").write_text("# Moon\n\nThe moon through a telescope.\n")
    done = CliRunner().invoke(main, ["index", str(root), "--index-dir", str(index_dir)])
    assert done.exit_code == 0, done.output
    args = search_args(root, index_dir)
    changed = run_explorer(*args, env=reader_env, timeout=60)
    assert changed.stderr == ""  # refused by the reader, answered in-process
    assert "notes/moon.md" in changed.stdout
    reader.wait(timeout=30)
    assert not (index_dir / SOCKET_NAME).exists()


@pytest.mark.parametrize("bad", [("--limit", "0"), ("--limit", "many")])
def test_errors_are_the_in_process_ones(served, reader_env, bad):
    root, index_dir = served
    args = search_args(root, index_dir, *bad)
    done = run_explorer(*args, env=reader_env, timeout=60)
    alone = run_explorer(*args, env={**reader_env, "EXPLORER_NO_DAEMON": "1"}, timeout=60)
    assert done.returncode == alone.returncode == 2
    assert done.stderr == alone.stderr
    assert done.stderr.startswith("explorer: error: ")
    assert "--limit" in done.stderr


def readers_of(index_dir) -> list[int]:
    """The processes running a resident reader of ``index_dir``, by their command lines."""
    wanted = ["_reader", str(index_dir)]
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            args = (Path(entry.path) / "cmdline").read_bytes().decode().split("\0")
        except OSError:
            continue
        if all(part in args for part in wanted):
            found.append(int(entry.name))
    return found


def test_no_daemon_keeps_every_call_in_its_process(indexed, reader_env):
    root, index_dir = indexed
    env = {**reader_env, "EXPLORER_NO_DAEMON": "1"}
    # related: a command that opens the vector store, so one that starts a reader
    args = ("related", root / "notes" / "stars.md", "--index-dir", index_dir)
    done = run_explorer(*args, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "guides/telescope.md" in done.stdout
    assert SERVED_NOTE not in done.stderr
    assert readers_of(index_dir) == [], "no reader was started"
    assert not (index_dir / SOCKET_NAME).exists()


def test_a_closed_pipe_ends_a_served_call_quietly(served, reader_env):
    root, index_dir = served
    args = [*EXPLORER_PROCESS, *map(str, search_args(root, index_dir, "--json", "--explain"))]
    head = subprocess.Popen(["head", "-c", "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    writer = subprocess.run(args, stdout=head.stdin, stderr=subprocess.PIPE, env=reader_env)
    head.stdin.close()
    head.wait()
    assert b"Traceback" not in writer.stderr
    assert writer.returncode in (0, 141)


def test_related_is_served_too(served, reader_env):
    root, index_dir = served
    args = ("related", root / "notes" / "stars.md", "--index-dir", index_dir, "--json")
    served = run_explorer(*args, env=reader_env, timeout=60)
    assert served.returncode == 0
    assert served.stderr == SERVED_NOTE + "\n"
    assert '"guides/telescope.md"' in served.stdout
    assert served.stdout == in_process(*args)


def test_the_reader_never_embeds_a_file_waiting_for_vectors(tmp_path, reader_env):
    """In the reader, ``related`` on a pending file is refused (its client then runs it)
    instead of taking the write lock to embed it."""
    root, index_dir = write_files(tmp_path / "root", CORPUS), tmp_path / "index"
    done = CliRunner().invoke(
        main, ["index", str(root), "--index-dir", str(index_dir), "--keywords-only"]
    )
    assert done.exit_code == 0, done.output
    process = start_reader(index_dir, reader_env)
    try:
        args = ["related", str(root / "notes" / "stars.md"), "--index-dir", str(index_dir)]
        resolved = resolve(args, main)
        assert resolved is not None
        reply = decode_reply(exchange(index_dir, encode_request(resolved.request)))
        assert isinstance(reply, Refused)
        assert reply.reason is Refusal.NOT_SERVED
        assert "waits for its vectors" in reply.detail
        assert not (index_dir / "write.lock").exists()
    finally:
        process.kill()
        process.wait(timeout=10)
    status = CliRunner().invoke(main, ["status", str(root), "--index-dir", str(index_dir)])
    assert "(0 with vectors)" in status.stdout  # nothing was embedded


def exchange(index_dir, payload: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(10)
        connection.connect(str(index_dir / SOCKET_NAME))
        connection.sendall(payload)
        connection.shutdown(socket.SHUT_WR)
        parts = []
        while chunk := connection.recv(1 << 16):
            parts.append(chunk)
        return b"".join(parts)


@pytest.mark.parametrize(
    "extra",
    [
        ("--version", "1.5"),  # a filter of search, not the program's --version flag
        ("--tag", "--help"),  # a tag named --help, not a request for help
        ("--per-file", "1", "--limit", "1", "--offset", "1"),
    ],
)
def test_search_options_that_look_like_flags_are_served(served, reader_env, extra):
    root, index_dir = served
    args = search_args(root, index_dir, *extra)
    served = run_explorer(*args, env=reader_env, timeout=60)
    alone = run_explorer(*args, env={**reader_env, "EXPLORER_NO_DAEMON": "1"}, timeout=60)
    # no file carries that version or tag: found nothing (1), and a note says so
    assert served.returncode == alone.returncode == (0 if "--per-file" in extra else 1)
    assert served.stderr == alone.stderr + SERVED_NOTE + "\n"
    assert served.stdout == alone.stdout


def test_help_is_printed_by_the_process(served, reader_env):
    root, index_dir = served
    done = run_explorer(*search_args(root, index_dir, "--help"), env=reader_env, timeout=60)
    assert done.returncode == 0
    assert SERVED_NOTE not in done.stderr
    assert "Search the index of ROOT for QUERY" in done.stdout


@pytest.mark.parametrize(
    "args",
    [
        lambda root, index_dir: ("status", root, "--index-dir", index_dir),
        lambda root, index_dir: ("status", "--index-dir", index_dir, "--json"),
        lambda root, index_dir: ("links", root / "notes" / "stars.md", "--index-dir", index_dir),
        lambda root, index_dir: ("related", root / "notes" / "stars.md", "--index-dir", index_dir),
    ],
    ids=["status", "status --json", "links", "related"],
)
def test_status_links_and_related_are_served_byte_for_byte(served, reader_env, args):
    root, index_dir = served
    args = args(root, index_dir)
    served = run_explorer(*args, env=reader_env, timeout=60)
    assert served.returncode == 0, served.stderr
    assert served.stderr == SERVED_NOTE + "\n"
    assert served.stdout.strip()
    assert served.stdout == in_process(*args)


def test_links_of_a_missing_file_is_the_process_error(served, reader_env):
    root, index_dir = served
    args = ("links", root / "notes" / "gone.md", "--index-dir", index_dir)
    done = run_explorer(*args, env=reader_env, timeout=60)
    assert done.returncode == 2
    assert done.stderr == f"explorer: error: no such file: {root / 'notes' / 'gone.md'} " + (
        "(and nothing links to it)\n"
    )


def test_a_reader_of_the_first_protocol_is_stopped_for_one_of_this_code(indexed, reader_env):
    """A reader of protocol 1 refuses every typed request and, called again and again, never
    idles out: the client stops it (SIGTERM), and the next call starts a reader of its code."""
    root, index_dir = indexed
    legacy = subprocess.Popen(
        [sys.executable, "-c", LEGACY_READER, str(index_dir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_until(lambda: (index_dir / SOCKET_NAME).exists(), timeout=30)
        args = ("status", root, "--index-dir", index_dir)  # a command that starts a reader
        alone = run_explorer(*args, env=reader_env, timeout=60)
        assert alone.returncode == 0 and alone.stderr == ""  # answered in-process
        assert legacy.wait(timeout=10) == 0  # stopped by SIGTERM, its socket removed
        assert not (index_dir / SOCKET_NAME).exists()
        run_explorer(*args, env=reader_env, timeout=60)  # no socket: a reader is started
        assert wait_until(lambda: (index_dir / SOCKET_NAME).exists(), timeout=60)
        served = run_explorer(*args, env=reader_env, timeout=60)
        assert served.stderr == SERVED_NOTE + "\n"
        assert served.stdout == alone.stdout
    finally:
        if legacy.poll() is None:
            legacy.kill()
        pid = (index_dir / "reader.lock").read_text().strip()
        if pid and int(pid) != legacy.pid:
            os.kill(int(pid), signal.SIGKILL)


LEGACY_READER = """
import fcntl, json, os, signal, socket, sys
index_dir = sys.argv[1]
lock = os.open(os.path.join(index_dir, "reader.lock"), os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
os.ftruncate(lock, 0)
os.write(lock, f"{os.getpid()}\\n".encode())
path = os.path.join(index_dir, "reader.sock")
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(path)
os.chmod(path, 0o600)
listener.listen(4)
def leave(*_):
    os.unlink(path)
    sys.exit(0)
signal.signal(signal.SIGTERM, leave)
while True:
    connection, _ = listener.accept()
    with connection:
        while connection.recv(65536):
            pass
        connection.sendall(json.dumps({"error": "another index or protocol"}).encode())
"""


def test_a_reader_stopped_as_its_socket_appears_leaves_none_behind(tmp_path, monkeypatch):
    # `kill PID` right after the socket appeared (a client may already see it): the SIGTERM
    # handler's exit came before the reader had noted its socket, and the socket stayed.
    from explorer.cli import resident_server

    index_dir = tmp_path / "index"
    index_dir.mkdir(mode=0o700)
    lock = os.open(index_dir / "reader.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        reader = resident_server.ResidentReader(index_dir, lock, "code", ())

        def killed(path, mode):  # the moment after bind(): the socket is there
            assert (index_dir / SOCKET_NAME).exists()
            raise SystemExit(0)  # what the SIGTERM handler raises

        monkeypatch.setattr(resident_server.os, "chmod", killed)
        with pytest.raises(SystemExit):
            reader.run()
        assert not (index_dir / SOCKET_NAME).exists()
    finally:
        os.close(lock)
