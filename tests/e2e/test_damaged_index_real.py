"""End to end, damaged and read-only indexes: the real model, real Chroma, the CLI as processes.

The issue's standard: after cutting ``index.sqlite`` in half or overwriting ``chroma.sqlite3``
with garbage, ``explorer index`` exits 0 and ``explorer search`` answers again, by keyword and
by meaning; before the repair, search and status answer in one line and never a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.conftest import EXPLORER_PROCESS, run_explorer
from tests.hostile.damage import Damage, damage_file

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "sample_docs" / "runbooks"
QUERY = "restore a backup after a failed deploy"


@pytest.fixture(scope="module")
def built(tmp_path_factory, built_sample_docs):
    """sample_docs/runbooks with its index made with the real model: (root, index dir, chunk
    count). The session's build of sample_docs, copied, and the rest of the folder deleted and
    taken out by ``explorer index`` (which embeds nothing): the repair that embeds again then
    embeds runbooks' chunks, not all of sample_docs'."""
    base = tmp_path_factory.mktemp("damaged-real")
    root, index_dir = built_sample_docs.index.copy(base / "docs", base / "index")
    for entry in root.iterdir():
        if entry.is_dir() and entry.name != SAMPLE.name:
            shutil.rmtree(entry)
        elif not entry.is_dir():
            entry.unlink()
    env = _env(base)
    done = run_explorer("index", root, "--index-dir", index_dir, "--json", env=env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["removed"] > 0 and report["chunks_embedded"] == 0, report
    status = json.loads(
        run_explorer("status", root, "--index-dir", index_dir, "--json", env=env).stdout
    )
    assert status["files"]["indexed"] == sum(1 for p in SAMPLE.rglob("*") if p.is_file())
    assert status["chunks"] == status["vectors"] > 0
    return root, index_dir, status["chunks"]


def _env(base: Path) -> dict:
    env = {**os.environ, "EXPLORER_DATA_DIR": str(base / "data"), "HF_HUB_OFFLINE": "1"}
    env["TMPDIR"] = str(base)
    for name in ("EXPLORER_MODEL", "EXPLORER_CHROMA_URL", "EXPLORER_INDEX_DIR"):
        env.pop(name, None)
    return env


@pytest.fixture
def copy(built, tmp_path):
    """A private copy of the built index (same root): (root, index dir, env, chunk count)."""
    root, index_dir, chunks = built
    mine = tmp_path / "index"
    shutil.copytree(index_dir, mine)
    return root, mine, _env(tmp_path), chunks


def explorer(*args, env, code: int = 0) -> subprocess.CompletedProcess:
    done = run_explorer(*args, env=env, timeout=300)
    assert done.returncode == code, (args, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and "panicked" not in done.stderr, done.stderr
    return done


def assert_both_legs_answer(root: Path, index_dir: Path, env: dict) -> None:
    done = explorer("search", QUERY, root, "--index-dir", index_dir, "--json", "--explain", env=env)
    data = json.loads(done.stdout)
    assert data["results"] and "notes" not in data, data["notes"]
    passages = [p["explain"] for hit in data["results"] for p in hit["passages"]]
    assert any(p.get("vector_rank") is not None for p in passages)
    assert any(p.get("keyword_rank") is not None for p in passages)


def test_index_sqlite_cut_in_half_is_rebuilt_without_embedding_again(copy):
    root, index_dir, env, chunks = copy
    database = index_dir / "index.sqlite"
    damaged = damage_file(database, Damage.HALF)

    for args in (("status",), ("search", QUERY)):
        done = explorer(*args, root, "--index-dir", index_dir, env=env, code=2)
        [line] = done.stderr.splitlines()
        assert str(database) in line and f"explorer index {root}" in line

    done = explorer("index", root, "--index-dir", index_dir, "--json", env=env)
    report = json.loads(done.stdout)
    assert report["chunks_embedded"] == 0 and report["chunks_reused"] == chunks
    [repair] = report["repairs"]
    assert repair["store"] == "keyword index"
    assert Path(repair["kept_in"], "index.sqlite").read_bytes() == damaged
    assert_both_legs_answer(root, index_dir, env)


def test_garbage_in_chroma_sqlite3_degrades_search_then_index_embeds_again(copy):
    root, index_dir, env, chunks = copy
    chroma = index_dir / "chroma" / "chroma.sqlite3"
    damage_file(chroma, Damage.GARBAGE)

    done = explorer("search", QUERY, root, "--index-dir", index_dir, "--json", env=env)
    data = json.loads(done.stdout)
    assert data["results"], "keyword results still come"
    [note] = data["notes"]
    assert "keyword results only" in note and str(index_dir / "chroma") in note
    status = json.loads(
        explorer("status", root, "--index-dir", index_dir, "--json", env=env).stdout
    )
    assert status["vector_store"]["available"] is False and status["needs_rebuild"] is True
    explorer("search", QUERY, root, "--index-dir", index_dir, "--mode", "semantic", env=env, code=2)

    done = explorer("index", root, "--index-dir", index_dir, env=env)
    first = done.stdout.splitlines()[0]
    assert first.startswith("repaired: the vector store was damaged (file is not a database)")
    assert f"embedded {chunks} chunks" in done.stdout
    assert_both_legs_answer(root, index_dir, env)


def test_a_read_only_index_directory_answers_hybrid_search_and_status(copy):
    root, index_dir, env, chunks = copy
    prefix: list[str] = []
    if os.geteuid() == 0:  # root ignores file modes unless it drops CAP_DAC_OVERRIDE
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: file modes would not be enforced")
        prefix = [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]
    for folder, _dirs, files in os.walk(index_dir):
        for name in files:
            Path(folder, name).chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        Path(folder).chmod(0o555)
    try:

        def run(*args: str) -> subprocess.CompletedProcess:
            command = [*prefix, *EXPLORER_PROCESS, *args, "--index-dir", str(index_dir)]
            return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)

        denied = subprocess.run([*prefix, "touch", str(index_dir / "x")], capture_output=True)
        assert denied.returncode != 0, "the directory is writable: the test would prove nothing"
        status = run("status", str(root), "--json")
        assert status.returncode == 0, status.stderr
        data = json.loads(status.stdout)
        assert data["vectors"] == data["chunks"] == chunks
        found = run("search", QUERY, str(root), "--json", "--explain")
        assert found.returncode == 0, found.stderr
        results = json.loads(found.stdout)["results"]
        passages = [p["explain"] for hit in results for p in hit["passages"]]
        assert any(p.get("vector_rank") is not None for p in passages)
    finally:
        for folder, _dirs, files in os.walk(index_dir):
            Path(folder).chmod(0o755)
            for name in files:
                Path(folder, name).chmod(0o644)
