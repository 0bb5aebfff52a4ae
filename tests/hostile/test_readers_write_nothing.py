"""Readers never write the index directory (issue 21): `search`, `related`, `links`, `status`
and the resident reader leave every file of it byte for byte as the writer left it, with the
same modification time, and add none.

Chroma writes any store it opens (a row in ``chroma.sqlite3`` on every start, and the HNSW
files of a small collection rewritten), and SQLite's WAL mode has readers create and write
``-wal`` and ``-shm`` files: each read once changed the folder.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.cli import main
from explorer.cli.reader_protocol import Answer, decode_reply, encode_request
from explorer.cli.resident_client import LOCK_NAME, SOCKET_NAME, resolve
from tests.conftest import wait_until, write_files
from tests.hostile.test_reader_hostile import exchange, stop

CORPUS = {
    "guides/telescope.md": "# Telescope\n\nTelescope lenses and telescope mirrors.\n\n"
    "See [the stars](../notes/stars.md).\n",
    "notes/stars.md": "# Stars\n\nStars seen through a telescope at night.\n",
    "notes/lenses.md": "# Lenses\n\nGlass lenses bend light, as in a telescope.\n",
}
FAKE_MODEL_CLI = [sys.executable, "-m", "tests.fake_model_cli"]
"""The CLI as a process of its own, with the fake embedder (see tests/fake_model_cli.py)."""
READER_FILES = {SOCKET_NAME, LOCK_NAME}
"""The resident reader's own socket and lock: the only files it may add."""


def fake_cli(*args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [*FAKE_MODEL_CLI, *map(str, args)],
        capture_output=True,
        text=True,
        env=os.environ if env is None else env,
        timeout=300,
    )
    assert done.returncode == 0, f"explorer {' '.join(map(str, args))}: {done.stderr}"
    return done


def every_file(index_dir: Path, leave_out: frozenset[str] = frozenset()) -> dict[str, object]:
    """Each file of the index directory: its bytes' digest, size and modification time."""
    found: dict[str, object] = {}
    for path in sorted(index_dir.rglob("*")):
        if path.is_file() and path.name not in leave_out:
            info = path.stat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            found[str(path.relative_to(index_dir))] = (digest, info.st_size, info.st_mtime_ns)
    return found


@pytest.fixture
def indexed(tmp_path):
    """A small folder indexed with the fake embedder, by a process of its own."""
    root, index_dir = write_files(tmp_path / "root", CORPUS), tmp_path / "index"
    fake_cli("index", root, "--index-dir", index_dir)
    assert (index_dir / "chroma" / "chroma.sqlite3").exists()
    return root, index_dir


READS = {
    "search": ["search", "telescope", "{root}"],
    "semantic search": ["search", "glass that bends light", "{root}", "--mode", "semantic"],
    "related": ["related", "{root}/guides/telescope.md"],
    "links": ["links", "{root}/guides/telescope.md"],
    "status": ["status", "{root}", "--json"],
}


@pytest.mark.parametrize("argv", READS.values(), ids=READS.keys())
def test_a_read_command_leaves_every_file_as_it_was(indexed, argv):
    root, index_dir = indexed
    before = every_file(index_dir)
    args = [part.format(root=root) for part in argv]
    done = fake_cli(*args, "--index-dir", index_dir)
    assert done.stdout.strip()  # it did read something
    assert every_file(index_dir) == before


def test_every_read_in_turn_leaves_every_file_as_it_was(indexed):
    """The first read after a write included: each once had the next read see other files."""
    root, index_dir = indexed
    before = every_file(index_dir)
    for argv in READS.values():
        fake_cli(*[part.format(root=root) for part in argv], "--index-dir", index_dir)
    assert every_file(index_dir) == before


def test_the_resident_reader_leaves_every_file_as_it_was(indexed):
    root, index_dir = indexed
    before = every_file(index_dir)
    env = {**os.environ, "EXPLORER_READER_IDLE": "120"}
    env.pop("EXPLORER_NO_DAEMON", None)
    reader = subprocess.Popen(
        [*FAKE_MODEL_CLI, "_reader", str(index_dir)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_until(lambda: (index_dir / SOCKET_NAME).exists(), timeout=60)
        # With the fake embedder the reader serves no query vector: a keyword search, and the
        # reads that open the vector store (status counts vectors, related reads them).
        calls = [
            ["search", "telescope", str(root), "--mode", "keyword"],
            ["status", str(root), "--json"],
            ["related", str(root / "guides" / "telescope.md")],
            ["links", str(root / "guides" / "telescope.md")],
        ]
        for call in calls:
            resolved = resolve([*call, "--index-dir", str(index_dir)], main)
            assert resolved is not None, call
            reply = decode_reply(exchange(index_dir, encode_request(resolved.request)))
            assert isinstance(reply, Answer), (call, reply)
            assert reply.stdout.strip(), call
        assert every_file(index_dir, frozenset(READER_FILES)) == before
    finally:
        stop(reader)
