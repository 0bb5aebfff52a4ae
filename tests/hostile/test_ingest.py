"""``explorer index`` (a process of its own) on the whole hostile folder: it finishes in seconds
within bounded memory, every good file is searchable, and each bad case is counted as designed."""

from __future__ import annotations

import json
import resource
import subprocess
import time

import pytest

from tests.conftest import EXPLORER_PROCESS, invoke_cli
from tests.hostile.corpus import build_hostile_folder

MEMORY_CAP = 3 << 30
"""Address space the indexing process may use (the alias bomb took 23 GB before the fix)."""


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def explorer(*args: object, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*EXPLORER_PROCESS, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=_cap_memory,
    )


def key_of(rel: str) -> str:
    """The index's spelling of a path (``\\xNN`` for each byte that is not UTF-8)."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def found(index_dir, word: str, mode: str = "keyword") -> set[str]:
    """The files a search finds, asked in this process (the index is what was built by a
    process of its own; each search a process would cost some 1.5 s of starting)."""
    done = invoke_cli("search", word, "--index-dir", index_dir, "--mode", mode, "--json")
    results = json.loads(done.stdout)["results"]
    assert done.exit_code == (0 if results else 1), (done.output, done.exception)  # 1: none
    return {hit["path"] for hit in results}


def test_explorer_index_on_a_hostile_folder(tmp_path):
    corpus = build_hostile_folder(tmp_path)
    index_dir = tmp_path / "index"
    started = time.monotonic()
    done = explorer("index", corpus.root, "--index-dir", index_dir, "--keywords-only", timeout=30)
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no traceback, no warning
    assert seconds < 20
    assert "5 skipped (1 binary, 3 not-regular, 1 outside-root)" in done.stdout
    for rel, word in corpus.good.items():
        assert key_of(rel) in found(index_dir, word), (rel, word)
    for word in corpus.forbidden_words:
        assert found(index_dir, word) == set()
    assert found(index_dir, "lol") == set()  # the alias bomb's leaves are not indexed
    status = explorer("status", "--index-dir", index_dir, "--json")
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["skip_reasons"] == {"binary": 1, "not-regular": 3, "outside-root": 1}
    assert report["files"]["indexed"] + report["files"]["stale"] == len(
        {key_of(rel) for rel in corpus.good}
    )
    again = explorer("index", corpus.root, "--index-dir", index_dir, "--keywords-only", "--json")
    assert json.loads(again.stdout)["added"] == 0 and json.loads(again.stdout)["removed"] == 0
    text = explorer("status", "--index-dir", index_dir)
    assert "outside-root" in text.stdout and "not-regular" in text.stdout


@pytest.mark.e2e
def test_the_real_model_embeds_a_hostile_folder(tmp_path):
    corpus = build_hostile_folder(tmp_path)
    index_dir = tmp_path / "index"
    done = explorer("index", corpus.root, "--index-dir", index_dir, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "embedded" in done.stdout
    status = json.loads(explorer("status", "--index-dir", index_dir, "--json").stdout)
    assert status["files"]["stale"] == 0 and status["vectors"] == status["chunks"] > 0
    hybrid = found(index_dir, "walrusmeadow", mode="hybrid")
    assert "utf16.txt" in hybrid
    assert "bad\\xff\\xfename.md" in found(index_dir, "saffronkettle", mode="hybrid")
