"""The resident reader: later one-shot searches are answered by it, byte for byte as a process
would answer; the client falls back to in-process work whenever the reader cannot answer."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import time

import pytest
from click.testing import CliRunner

from explorer.cli import main
from explorer.cli.resident_client import SERVED_NOTE, SOCKET_NAME
from tests.conftest import EXPLORER_PROCESS, run_explorer, wait_until, write_files
from tests.fakes import FakeEmbedder

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
def test_the_reader_answers_byte_for_byte(indexed, reader, reader_env, extra):
    root, index_dir = indexed
    args = search_args(root, index_dir, *extra)
    served = run_explorer(*args, env=reader_env, timeout=60)
    assert served.returncode == 0
    assert served.stderr == SERVED_NOTE + "\n"
    assert "telescope" in served.stdout
    alone = run_explorer(*args, env={**reader_env, "EXPLORER_NO_DAEMON": "1"}, timeout=60)
    assert alone.stderr == ""
    assert served.stdout == alone.stdout == in_process(*args)


def test_relative_paths_are_those_of_the_callers_folder(indexed, reader, reader_env):
    root, index_dir = indexed
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


def test_the_served_client_never_imports_the_heavy_modules(indexed, reader, reader_env):
    root, index_dir = indexed
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
def test_errors_are_the_in_process_ones(indexed, reader, reader_env, bad):
    root, index_dir = indexed
    args = search_args(root, index_dir, *bad)
    done = run_explorer(*args, env=reader_env, timeout=60)
    alone = run_explorer(*args, env={**reader_env, "EXPLORER_NO_DAEMON": "1"}, timeout=60)
    assert done.returncode == alone.returncode == 2
    assert done.stderr == alone.stderr
    assert done.stderr.startswith("explorer: error: ")
    assert "--limit" in done.stderr


def test_no_daemon_keeps_every_call_in_its_process(indexed, reader_env):
    root, index_dir = indexed
    env = {**reader_env, "EXPLORER_NO_DAEMON": "1"}
    # hybrid: the mode that starts a reader (this index's fake vectors make it fail, in-process)
    done = run_explorer(*search_args(root, index_dir, "--mode", "hybrid"), env=env, timeout=60)
    assert done.stderr.startswith("explorer: error: ")
    time.sleep(0.5)
    assert not (index_dir / SOCKET_NAME).exists()


def test_a_closed_pipe_ends_a_served_call_quietly(indexed, reader, reader_env):
    root, index_dir = indexed
    args = [*EXPLORER_PROCESS, *map(str, search_args(root, index_dir, "--json", "--explain"))]
    head = subprocess.Popen(["head", "-c", "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    writer = subprocess.run(args, stdout=head.stdin, stderr=subprocess.PIPE, env=reader_env)
    head.stdin.close()
    head.wait()
    assert b"Traceback" not in writer.stderr
    assert writer.returncode in (0, 141)


def test_related_is_served_too(indexed, reader, reader_env):
    root, index_dir = indexed
    args = ("related", root / "notes" / "stars.md", "--index-dir", index_dir, "--json")
    served = run_explorer(*args, env=reader_env, timeout=60)
    assert served.returncode == 0
    assert served.stderr == SERVED_NOTE + "\n"
    assert '"guides/telescope.md"' in served.stdout
    assert served.stdout == in_process(*args)


def test_the_reader_never_embeds_a_file_waiting_for_vectors(tmp_path, monkeypatch):
    """In the reader, ``related`` on a pending file fails (its client then runs it) instead of
    taking the write lock to embed it."""
    root, index_dir = write_files(tmp_path / "root", CORPUS), tmp_path / "index"
    done = CliRunner().invoke(
        main, ["index", str(root), "--index-dir", str(index_dir), "--keywords-only"]
    )
    assert done.exit_code == 0, done.output
    monkeypatch.setattr("explorer.cli.commands._may_embed", False)
    args = ["related", str(root / "notes" / "stars.md"), "--index-dir", str(index_dir)]
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 2
    assert "waits for its vectors" in refused.stderr
    status = CliRunner().invoke(main, ["status", str(root), "--index-dir", str(index_dir)])
    assert "(0 with vectors)" in status.stdout  # nothing was embedded
