"""End to end: two folders searched together rank as one folder holding both, with the real
model and real Chroma.

sample_docs is split into two folders (its guides, API pages and top-level files; its runbooks,
notes, design records and source), each indexed on its own, and sample_docs itself holds both,
indexed once (its `guides/x.md` is `handbook/guides/x.md` of the two).
The same questions (sample_docs' everyday-words and exact-term ones) over the two collections
and over the one folder must give the same top 10. Vectors of one passage embedded in two
batches differ in the last bits (cosine >= 0.99999), so two files the one folder scores within
0.002 of each other may trade places; nothing else may differ.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer.core.indexing.indexer import Indexer
from explorer.core.retrieval.collections import Collection, Collections
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.settings.config import Settings
from tests.e2e.conftest import in_split

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
EXPECTATIONS = json.loads((REPO / "tests" / "sample_docs_expectations.json").read_text())
NEAR_TIE = 0.002


@pytest.fixture(scope="module")
def indexes(tmp_path_factory, built_split_sample_docs):
    """A copy of the session's two folders and their union with their indexes (built by
    tests/e2e/conftest.py), opened; a sync of each copy embeds nothing."""
    base = tmp_path_factory.mktemp("collections-real")
    built = {}
    embedder = None
    for name, source, root in (
        ("handbook", built_split_sample_docs.handbook, base / "apart" / "handbook"),
        ("ops", built_split_sample_docs.ops, base / "apart" / "ops"),
        ("union", built_split_sample_docs.union, base / "union"),
    ):
        source.copy(root, base / f"index-{name}")
        index = Index(Settings.for_root(root, base / f"index-{name}"), embedder=embedder)
        report = Indexer(index).sync()
        assert report.chunks_embedded == 0 and report.chunks_reused == 0, name
        embedder = index.embedder
        built[name] = index
    yield built
    for index in built.values():
        index.close()


def questions() -> list[str]:
    everyday = [case["query"] for case in EXPECTATIONS["semantic_queries"]]
    exact = [case["query"] for case in EXPECTATIONS["keyword_queries"]]
    return [*everyday, *exact, "backup restore", "rotate the webhook secret"]


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
def test_two_collections_rank_as_one_folder_holding_both(indexes, mode) -> None:
    together = Collections(
        [Collection("handbook", indexes["handbook"]), Collection("ops", indexes["ops"])]
    )
    compared = 0
    for query in questions():
        request = SearchRequest(query, mode=mode, limit=10, per_file=1)
        one = [(in_split(hit.path), hit.score) for hit in search(indexes["union"], request).results]
        two = [
            (f"{hit.collection}/{hit.path}", hit.score) for hit in together.search(request).results
        ]
        assert len(two) == len(one), query
        score_in_one = dict(one)
        for position, ((path, score), (expected, expected_score)) in enumerate(
            zip(two, one, strict=True)
        ):
            assert score == pytest.approx(expected_score, abs=NEAR_TIE), (query, position)
            if path != expected:  # only a near tie may trade places
                theirs = score_in_one.get(path, score)  # past the one folder's 10th: its own
                assert abs(theirs - expected_score) < NEAR_TIE, (query, position, path)
        compared += len(one)
    assert compared >= 100
