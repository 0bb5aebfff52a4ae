"""Path filters at scale: each leg's best among the allowed files, without Chroma's ``where``.

At 100,000 chunks a Chroma ``where`` filter cost 0.3-2.5 s per query (benchmarks/scale.py);
these tests hold the legs to the exact filtered answer while counting how they reach it.
"""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.indexing.indexer import Indexer
from explorer.core.retrieval import scoped_legs
from explorer.core.retrieval.file_filter import FileFilter
from explorer.core.retrieval.query import PathFilter, fts_expression
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder

FOLDERS = 10
WORDS = ["lantern", "harbour", "copper", "meadow", "signal", "orchard", "glacier", "market"]


def corpus() -> dict[str, str]:
    files = {}
    for folder in range(FOLDERS):
        for number in range(6):
            words = " ".join(WORDS[(folder + number + i) % len(WORDS)] for i in range(5))
            files[f"f{folder}/note{number}.md"] = (
                f"# Note {folder}.{number}\n\nA lantern note about {words}.\n\n"
                f"## More\n\nThe {words} again, and a lantern by the {WORDS[number]}.\n"
            )
    return files


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    base = tmp_path_factory.mktemp("scoped")
    root = write_files(base / "root", corpus())
    index = Index(Settings.for_root(root, base / "index", model=FakeEmbedder.name), FakeEmbedder())
    Indexer(index).sync()
    yield index
    index.close()


class QuerySpy:
    """Records the keyword arguments of every Chroma query on the chunk collection."""

    def __init__(self, index: Index, monkeypatch) -> None:
        self.calls: list[dict] = []
        collection = index.vectors._chunks
        original = collection.query

        def query(*args, **kwargs):
            self.calls.append(kwargs)
            return original(*args, **kwargs)

        monkeypatch.setattr(collection, "query", query)


def exact_nearest(index: Index, vector: np.ndarray, allowed: list[str], k: int) -> list[float]:
    """The ``k`` best cosines among the allowed files' chunks, by brute force (ties make ids
    of equal texts interchangeable, so the similarities are compared)."""
    stored = index.vectors.chunk_vectors(index.keywords.chunk_ids_of(allowed))
    return sorted((round(float(np.dot(v, vector)), 4) for v in stored.values()), reverse=True)[:k]


def allowed_by(index: Index, pattern: str) -> list[str]:
    return PathFilter((pattern,)).select(index.keywords.paths())


@pytest.mark.parametrize(
    ("pattern", "share"), [("f[!3]/**", 0.9), ("f3/", 0.1), ("f3/note1.md", 1 / 60)]
)
def test_vector_leg_is_the_exact_nearest_among_the_allowed_files_without_a_where(
    index, monkeypatch, pattern, share
):
    allowed = allowed_by(index, pattern)
    assert len(allowed) == round(share * 60)
    vector = index.embedder.embed_query("lantern by the copper meadow")
    k = 8
    spy = QuerySpy(index, monkeypatch)
    hits = scoped_legs.vector_hits(index, vector, k, allowed)
    assert [round(sim, 4) for _cid, sim in hits] == exact_nearest(index, vector, allowed, k)
    places = index.keywords.chunk_places([cid for cid, _sim in hits])
    assert {path for path, _start in places.values()} <= set(allowed)
    assert all("where" not in call for call in spy.calls)
    if share >= scoped_legs.OVERFETCH_SHARE:
        assert len(spy.calls) == 1 and "ids" not in spy.calls[0]  # one over-fetch was enough
    else:
        assert [sorted(call["ids"]) for call in spy.calls] == [
            sorted(index.keywords.chunk_ids_of(allowed))
        ]


@pytest.mark.parametrize("pattern", ["f[!3]/**", "f3/", "f3/note1.md"])
def test_keyword_leg_equals_the_restricted_ranking(index, monkeypatch, pattern):
    allowed = allowed_by(index, pattern)
    expression = fts_expression("lantern copper", False)
    k = 10
    expected = index.keywords.search(expression, k, allowed)
    asked: list[object] = []
    original = index.keywords.search

    def counted(match, limit, paths=None):
        asked.append(paths)
        return original(match, limit, paths)

    monkeypatch.setattr(index.keywords, "search", counted)
    hits = scoped_legs.keyword_hits(index, expression, k, allowed)
    assert {cid: round(score, 6) for cid, _p, score in hits} == {
        cid: round(score, 6) for cid, _p, score in expected
    }
    assert all(path in set(allowed) for _cid, path, _s in hits)
    if len(allowed) / 60 >= scoped_legs.OVERFETCH_SHARE:
        assert asked == [None]  # ranked over every file once, no per-query table of 54 paths


def test_filtered_search_answers_from_the_allowed_files_only(index):
    response = search(index, SearchRequest("lantern copper", paths=("f[!3]/**",), limit=60))
    paths = {hit.path for hit in response.results}
    assert paths and all(not path.startswith("f3/") for path in paths)
    assert len(paths) == 54


def test_a_filters_files_are_kept_until_the_manifest_changes(tmp_path, monkeypatch):
    root = write_files(tmp_path / "root", {"a/one.md": "# One\n\nlantern\n", "b/two.md": "x\n"})
    settings = Settings.for_root(root, tmp_path / "index", model=FakeEmbedder.name)
    writer = Index(settings, FakeEmbedder())
    Indexer(writer).sync()
    reader = Index.open_existing(settings, FakeEmbedder())
    listed = []
    original = reader.keywords.paths
    monkeypatch.setattr(reader.keywords, "paths", lambda: listed.append(1) or original())
    only_a = FileFilter(("a/",))
    try:
        assert only_a.select(reader.keywords) == ["a/one.md"]
        search(reader, SearchRequest("lantern", paths=("a/",)))
        assert only_a.select(reader.keywords) == ["a/one.md"]
        assert len(listed) == 1  # searching changed nothing, so nothing was listed again
        write_files(root, {"a/three.md": "# Three\n\nlantern\n"})
        Indexer(writer).sync()  # another connection commits
        assert only_a.select(reader.keywords) == ["a/one.md", "a/three.md"]
        assert only_a.select(writer.keywords) == ["a/one.md", "a/three.md"]
        (root / "a" / "one.md").unlink()
        Indexer(writer).sync()
        assert only_a.select(reader.keywords) == ["a/three.md"]
        assert only_a.select(writer.keywords) == ["a/three.md"]  # its own writes
    finally:
        reader.close()
        writer.close()
