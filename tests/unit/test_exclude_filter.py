"""Exclude patterns: files left out before ranking, so ``limit`` is filled from the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer.api.requests import SearchOptions
from explorer.core.indexing.indexer import Indexer
from explorer.core.retrieval.file_filter import FileFilter, parse_filter_words
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder


def corpus() -> dict[str, str]:
    """Drafts that match "harbour" strongly, and weaker published pages."""
    files = {}
    for i in range(30):
        files[f"drafts/d{i:02d}.md"] = f"# Harbour {i}\n\nHarbour, harbour walls, harbour {i}.\n"
    for i in range(12):
        files[f"pages/p{i:02d}.md"] = f"# Page {i}\n\nA walk past the harbour, page {i}.\n"
        files[f"pages/old/o{i:02d}.log"] = f"harbour log {i}\n"
    return files


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    base = tmp_path_factory.mktemp("exclude")
    root = write_files(base / "root", corpus())
    settings = Settings.for_root(
        root, base / "index", model=FakeEmbedder.name, extensions=frozenset({"md", "log"})
    )
    index = Index(settings, embedder=FakeEmbedder())
    Indexer(index).sync()
    yield index
    index.close()


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
def test_excluded_files_are_left_out_before_ranking(index, mode):
    everything = search(index, SearchRequest("harbour walls", mode=mode, limit=10))
    assert all(hit.path.startswith("drafts/") for hit in everything.results)
    response = search(
        index, SearchRequest("harbour walls", mode=mode, limit=10, exclude=("drafts/",))
    )
    paths = [hit.path for hit in response.results]
    assert len(paths) == 10  # filled from the files left, not cut from the drafts' top 10
    assert not any(path.startswith("drafts/") for path in paths)


def test_exclude_takes_globs_and_combines_with_paths(index):
    response = search(
        index,
        SearchRequest(
            "harbour", mode="keyword", paths=("pages/",), exclude=("**/*.log",), limit=50
        ),
    )
    paths = {hit.path for hit in response.results}
    assert paths == {f"pages/p{i:02d}.md" for i in range(12)}
    assert "not **/*.log" in response.filters["keyword"]


def test_an_exclude_filter_says_what_it_leaves_out():
    assert FileFilter(exclude=("drafts/",)).describe() == "all files but drafts/"
    assert FileFilter(("pages/",), exclude=("a", "b")).describe() == "pages/ and not a or b"
    assert FileFilter(exclude=("drafts/",)).active


def test_exclude_words_in_the_query_are_filters_too():
    parsed = parse_filter_words('harbour exclude:drafts/ path:pages/ exclude:"My Drafts/" walls')
    assert parsed.query == "harbour walls"
    assert parsed.filter == FileFilter(("pages/",), exclude=("drafts/", "My Drafts/"))
    assert parsed.filter.words() == ("pages/", "exclude:drafts/", 'exclude:"My Drafts/"')
    assert parse_filter_words("noexclude:x").query == "noexclude:x"  # only whole words
    settings = Settings(root=Path("/r"), index_dir=Path("/i"))
    request = SearchOptions(exclude=("**/*.log",)).request("harbour exclude:drafts/", settings)
    assert request.query == "harbour"
    assert request.exclude == ("**/*.log", "drafts/")  # the flag's, then the query's


def test_an_exclude_word_leaves_files_out_of_a_search(index):
    request = SearchOptions(limit=50).request("harbour exclude:drafts/", index.settings)
    paths = {hit.path for hit in search(index, request).results}
    assert paths and not any(path.startswith("drafts/") for path in paths)
