"""End to end: the CLI over two folders with the real model and real Chroma, as processes.

sample_docs is split into two folders (its guides, API pages and top-level files; its runbooks,
notes, design records and source) and `explorer index A B` indexes both; sample_docs itself
holds both. Then `explorer search QUERY A B --json` must give the top 10 of
`explorer search QUERY UNION --json` (each result named by its collection, its path relative to
its folder: `guides/x.md` of the union is `handbook/guides/x.md` of the two), `status A B` reports
each, and `related FILE B` finds neighbours in both. Two files the one folder scores within
0.002 of each other may trade places (vectors of one passage embedded in two batches differ in
the last bits); nothing else may differ.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.conftest import run_explorer
from tests.e2e.conftest import in_split, index_dir_under

pytestmark = pytest.mark.e2e

QUERIES = ["how do I get my data back after a crash", "rotate the webhook secret", "429"]
NEAR_TIE = 0.002


def explorer(*args: object, env: dict) -> subprocess.CompletedProcess:
    return run_explorer(*args, env=env, check=True)


@pytest.fixture(scope="module")
def folders(tmp_path_factory, built_split_sample_docs):
    """A copy of the session's two folders and their union (sample_docs), each with its index
    in its default place (tests/e2e/conftest.py builds them with ``explorer index``)."""
    built = built_split_sample_docs
    assert [(c["collection"], c["root"]) for c in built.report["collections"]] == [
        ("handbook", str(built.handbook.root)),
        ("ops", str(built.ops.root)),
    ]
    assert all(c["chunks_embedded"] > 0 for c in built.report["collections"])
    base = tmp_path_factory.mktemp("cli-collections-real")
    env = {
        **os.environ,
        "EXPLORER_DATA_DIR": str(base / "data"),
        "EXPLORER_CONFIG_DIR": str(base / "config"),
        "HF_HUB_OFFLINE": "1",
    }
    for name in ("EXPLORER_MODEL", "EXPLORER_CHROMA_URL", "EXPLORER_INDEX_DIR"):
        env.pop(name, None)
    handbook, ops, union = base / "apart" / "handbook", base / "apart" / "ops", base / "union"
    for source, root in ((built.handbook, handbook), (built.ops, ops), (built.union, union)):
        source.copy(root, index_dir_under(base / "data", root))
    return handbook, ops, union, env


@pytest.mark.parametrize("query", QUERIES)
def test_two_folders_rank_as_one_folder_holding_both(folders, query) -> None:
    handbook, ops, union, env = folders
    two = json.loads(explorer("search", query, handbook, ops, "--json", env=env).stdout)
    one = json.loads(explorer("search", query, union, "--json", env=env).stdout)
    together = [(f"{r['collection']}/{r['path']}", r["score"]) for r in two["results"]]
    alone = [(in_split(r["path"]), r["score"]) for r in one["results"]]
    assert len(together) == len(alone) > 0, query
    scores = dict(alone)
    for position, ((path, score), (expected, expected_score)) in enumerate(
        zip(together, alone, strict=True)
    ):
        assert score == pytest.approx(expected_score, abs=NEAR_TIE), (query, position)
        if path != expected:  # only a near tie may trade places
            assert abs(scores.get(path, score) - expected_score) < NEAR_TIE, (query, position)


def test_status_and_related_across_the_two(folders) -> None:
    handbook, ops, _union, env = folders
    status = json.loads(explorer("status", handbook, ops, "--json", env=env).stdout)
    assert [s["collection"] for s in status["collections"]] == ["handbook", "ops"]
    assert all(
        s["files"]["indexed"] > 0 and s["stale"]["files"] == 0 for s in status["collections"]
    )
    source = ops / "runbooks" / "restore-from-backup.md"
    related = json.loads(explorer("related", source, handbook, "--json", env=env).stdout)
    assert related["collection"] == "ops" and related["path"] == "runbooks/restore-from-backup.md"
    assert {r["collection"] for r in related["related"]} == {"handbook", "ops"}
    text = explorer("search", "restore a backup", handbook, ops, env=env).stdout
    assert " 1. [" in text
