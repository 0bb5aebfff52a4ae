"""End to end: hybrid searches answered by the resident reader, with the real model and Chroma,
byte for byte as a process of their own answers them."""

from __future__ import annotations

import os
import signal

import pytest

from explorer.cli.resident_client import LOCK_NAME, SERVED_NOTE, SOCKET_NAME
from tests.conftest import run_explorer, wait_until

pytestmark = pytest.mark.e2e


@pytest.fixture
def corpus(tmp_path, built_sample_docs):
    """A copy of sample_docs and its index built with the real model; (root, index dir, env).

    The whole of it (588 chunks), not a few files: a store under ~100 vectors hid the HNSW
    difference between processes that tests/unit/test_same_nearest.py covers."""
    root, index_dir = built_sample_docs.index.copy(tmp_path / "docs", tmp_path / "index")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "EXPLORER_READER_IDLE": "60"}
    env.pop("EXPLORER_NO_DAEMON")
    yield root, index_dir, env
    lock = index_dir / LOCK_NAME
    if lock.exists() and lock.read_text().strip():
        try:
            os.kill(int(lock.read_text()), signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_later_searches_and_related_are_served_and_identical(corpus):
    root, index_dir, env = corpus
    debug = {**env, "EXPLORER_READER_DEBUG": "1"}
    alone = {**env, "EXPLORER_NO_DAEMON": "1"}
    query = ("search", "how do I configure the index", root, "--index-dir", index_dir)
    first = run_explorer(*query, env=debug, timeout=120)
    assert first.returncode == 0, first.stderr
    assert first.stderr == ""  # no reader yet: answered in-process, one started
    assert wait_until(lambda: (index_dir / SOCKET_NAME).exists(), timeout=60)
    a_file = next(p for p in sorted(root.rglob("*.md")))
    related = ("related", a_file, "--index-dir", index_dir)
    for args in (query, (*query, "--json"), (*query, "--explain", "--mode", "semantic"), related):
        served = run_explorer(*args, env=debug, timeout=120)
        assert served.stderr == SERVED_NOTE + "\n"
        expected = run_explorer(*args, env=alone, timeout=120)
        assert expected.returncode == 0, expected.stderr
        assert served.stdout == expected.stdout
        assert served.stdout.strip()
