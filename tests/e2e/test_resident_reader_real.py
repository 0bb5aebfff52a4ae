"""End to end: hybrid searches answered by the resident reader, with the real model and Chroma,
byte for byte as a process of their own answers them."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest

from explorer.cli.resident_client import LOCK_NAME, SERVED_NOTE, SOCKET_NAME
from tests.conftest import run_explorer, wait_until

pytestmark = pytest.mark.e2e

SAMPLE_DOCS = Path(__file__).resolve().parents[2] / "sample_docs"


@pytest.fixture
def corpus(tmp_path):
    """A few sample_docs files indexed with the real model; returns (root, index dir, env)."""
    root, index_dir = tmp_path / "docs", tmp_path / "index"
    files = sorted(p for p in SAMPLE_DOCS.rglob("*.md") if p.is_file())[:4]
    for path in files:
        target = root / path.relative_to(SAMPLE_DOCS)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "EXPLORER_READER_IDLE": "60"}
    run_explorer("index", root, "--index-dir", index_dir, env=env, check=True)
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
