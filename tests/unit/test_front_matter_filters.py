"""Front matter in use: tag and version filters before ranking, shown in results, typed as words."""

from __future__ import annotations

import sqlite3
from dataclasses import replace

import pytest

from explorer.core.indexing.indexer import Indexer
from explorer.core.retrieval.file_filter import FileFilter, parse_filter_words
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import DATABASE_NAME, Index
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder

TAGGED = 12
PLAIN = 30


def corpus() -> dict[str, str]:
    """Many untagged files that match "lighthouse" strongly, and weaker tagged ones."""
    files = {}
    for i in range(TAGGED):
        version = "1.5" if i % 2 else "1.4"
        files[f"tagged/note{i:02d}.md"] = (
            f"---\ntitle: Note {i}\ndescription: A coastal note, number {i}.\n"
            f"tags: [Coast, walk{i % 3}]\nversion: '{version}'\n---\n\n# Note {i}\n\n"
            "A walk along the shore; a lighthouse was seen far off, among other sights.\n"
        )
    for i in range(PLAIN):
        files[f"plain/light{i:02d}.md"] = (
            f"# Lighthouse {i}\n\nLighthouse lamps, lighthouse keepers and lighthouse towers, "
            f"lighthouse part {i}.\n"
        )
    files["other/guide.md"] = (
        "---\ntags: coast, ferry\nversion: 2.0\n---\n\n# Ferry\n\nThe ferry leaves at nine.\n"
    )
    return files


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    base = tmp_path_factory.mktemp("filters")
    root = write_files(base / "root", corpus())
    settings = Settings.for_root(root, base / "index", model=FakeEmbedder.name)
    index = Index(settings, embedder=FakeEmbedder())
    Indexer(index).sync()
    yield index
    index.close()


def run(index, query, **options):
    return search(index, SearchRequest(query=query, **options))


def folder_index(tmp_path, files: dict[str, str], embed: bool = True) -> Index:
    """An index (fake embedder) of ``files`` written under ``tmp_path``, synced."""
    root = write_files(tmp_path / "root", files)
    index = Index(Settings.for_root(root, tmp_path / "index", model="fake"), FakeEmbedder())
    Indexer(index).sync(embed=embed)
    return index


def as_an_older_explorer_left_it(index: Index, *statements: str) -> Index:
    """Close ``index``, take its fields and links tables away (after ``statements``), as an
    explorer from before them left the database, and open it again."""
    settings = index.settings
    index.close()
    with sqlite3.connect(settings.index_dir / DATABASE_NAME) as db:
        for statement in statements:
            db.execute(statement)
        db.executescript("DROP TABLE file_fields; DROP TABLE links;")
        db.execute("DELETE FROM meta WHERE key = 'links_complete'")
    return Index(settings, FakeEmbedder())


@pytest.mark.parametrize("candidates", [200, 10])
@pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
def test_tag_filter_applies_before_ranking_in_both_legs(index, mode, candidates):
    unfiltered = run(index, "lighthouse", mode=mode, limit=10)
    assert not any(hit.path.startswith("tagged/") for hit in unfiltered.results)

    scoped = Index(replace(index.settings, candidates=candidates), embedder=FakeEmbedder())
    try:
        response = run(scoped, "lighthouse", mode=mode, limit=10, tags=("coast",))
    finally:
        scoped.close()
    # The limit is filled from tagged files only, though untagged ones match better.
    assert len(response.results) == 10
    assert all(hit.path.startswith("tagged/") for hit in response.results)


def test_tags_compare_case_insensitively_and_several_mean_any(index):
    response = run(index, "lighthouse ferry", limit=50, tags=("COAST",))
    assert {hit.path for hit in response.results} == {
        *(f"tagged/note{i:02d}.md" for i in range(TAGGED)),
        "other/guide.md",
    }
    either = run(index, "lighthouse ferry", limit=50, tags=("walk1", "ferry"))
    expected = {f"tagged/note{i:02d}.md" for i in range(TAGGED) if i % 3 == 1}
    assert {hit.path for hit in either.results} == expected | {"other/guide.md"}


def test_version_filter_and_its_combination_with_tags_and_paths(index):
    v15 = run(index, "lighthouse ferry", limit=50, versions=("1.5",))
    assert {hit.path for hit in v15.results} == {
        f"tagged/note{i:02d}.md" for i in range(TAGGED) if i % 2
    }
    # A number in YAML (version: 2.0) is matched as it was written... as YAML read it.
    assert [hit.path for hit in run(index, "ferry", versions=("2.0",)).results] == [
        "other/guide.md"
    ]
    both = run(index, "lighthouse", limit=50, versions=("1.5",), tags=("walk0",))
    assert {hit.path for hit in both.results} == {"tagged/note03.md", "tagged/note09.md"}
    with_path = run(index, "lighthouse ferry", limit=50, tags=("coast",), paths=("other/",))
    assert [hit.path for hit in with_path.results] == ["other/guide.md"]


def test_results_carry_description_and_tags(index):
    hit = run(index, "lighthouse", tags=("walk2",), limit=1).results[0]
    assert hit.description.startswith("A coastal note, number ")
    assert hit.tags[0] == "Coast" and hit.tags[1] == "walk2"
    plain = run(index, "lighthouse", paths=("plain/",), limit=1).results[0]
    assert plain.description == "" and plain.tags == []


def test_a_filter_matching_nothing_says_so(index):
    response = run(index, "lighthouse", tags=("nowhere",), versions=("9",))
    assert response.results == []
    assert response.notes == ["no indexed file matches tag nowhere and version 9"]
    scope = run(index, "lighthouse", tags=("coast",)).filters["keyword"]
    assert f"{TAGGED + 1} files matching tag coast" in scope


def test_an_edited_or_deleted_file_changes_what_the_filter_allows(tmp_path):
    files = {
        "a.md": "---\ntags: [alpha]\n---\n\n# A\n\nShared words here.\n",
        "b.md": "---\ntags: [beta]\n---\n\n# B\n\nShared words here.\n",
    }
    index = folder_index(tmp_path, files)
    root = index.settings.root
    try:
        indexer = Indexer(index)
        assert index.keywords.facts.paths_with("tag", ["alpha"]) == {"a.md"}
        (root / "b.md").write_text("---\ntags: [alpha]\n---\n\n# B\n\nShared words.\n")
        (root / "a.md").unlink()
        indexer.update_paths(["a.md", "b.md"])
        assert index.keywords.facts.paths_with("tag", ["alpha"]) == {"b.md"}
        assert index.keywords.facts.paths_with("tag", ["beta"]) == set()
    finally:
        index.close()


def test_an_index_made_before_the_fields_table_is_migrated_on_open(tmp_path):
    index = as_an_older_explorer_left_it(folder_index(tmp_path, corpus(), embed=False))
    try:
        response = run(index, "ferry", mode="keyword", tags=("ferry",))
        assert [hit.path for hit in response.results] == ["other/guide.md"]
    finally:
        index.close()


def test_a_tag_that_holds_a_comma_is_one_tag(tmp_path):
    files = {
        "ml.md": '---\ntags: ["Data, AI", ops]\n---\n\n# Models\n\nShared words here.\n',
        "data.md": "---\ntags: [data]\n---\n\n# Data\n\nShared words here.\n",
    }
    index = folder_index(tmp_path, files)
    try:
        typed = parse_filter_words('shared words tag:"data, ai"')
        whole = run(index, typed.query, tags=typed.filter.tags)
        assert [hit.path for hit in whole.results] == ["ml.md"]
        assert whole.results[0].tags == ["Data, AI", "ops"]
        part = run(index, "shared words", tags=("data",))
        assert [hit.path for hit in part.results] == ["data.md"]
        assert run(index, "shared words", tags=("ai",)).results == []
    finally:
        index.close()


def test_tags_an_older_explorer_stored_comma_joined_still_filter_one_by_one(tmp_path):
    index = as_an_older_explorer_left_it(
        folder_index(tmp_path, {"a.md": "# A\n\nShared words here.\n"}),
        """UPDATE files SET metadata = '{"tags": "alpha, beta"}'""",
    )
    try:
        hits = run(index, "shared", tags=("beta",)).results
        assert [hit.path for hit in hits] == ["a.md"] and hits[0].tags == ["alpha", "beta"]
    finally:
        index.close()


def test_filter_words_are_taken_out_of_the_query():
    parsed = parse_filter_words("restore tag:backup path:guides/ version:1.5 tag:Ops data ")
    assert parsed.query == "restore data "
    assert parsed.filter == FileFilter(("guides/",), ("backup", "Ops"), ("1.5",))
    assert parse_filter_words("tag: half typed").filter == FileFilter()


def test_a_quoted_filter_value_may_hold_spaces():
    parsed = parse_filter_words('models tag:"Data, AI" path:"My Notes/" version:1.5 notes')
    assert parsed.query == "models notes"
    assert parsed.filter == FileFilter(("My Notes/",), ("Data, AI",), ("1.5",))
    assert parsed.filter.words() == ('"My Notes/"', 'tag:"Data, AI"', "version:1.5")
    typing = parse_filter_words('models tag:"Data, A')
    assert typing.query.strip() == "models" and typing.filter.tags == ("Data, A",)
    assert parse_filter_words('tag:"" x').filter == FileFilter()
    assert parse_filter_words("tag: half typed").query == "half typed"
    # Only whole words: "retag:x" and "mytag:x" are searched as they are.
    assert parse_filter_words("retag:x").query == "retag:x"
    assert parse_filter_words("plain words").filter.active is False


def test_filter_describe_and_words():
    file_filter = FileFilter(("guides/",), ("a", "b"), ("1.5",))
    assert file_filter.describe() == "guides/ and tags a or b and version 1.5"
    assert file_filter.words() == ("guides/", "tag:a", "tag:b", "version:1.5")
    assert FileFilter((), ("",), (" ",)).describe() == "tag '' and version ' '"
