"""Collections: several folders searched as one ranking, with collection and scope filters.

Two folders, each indexed on its own, are opened together and must rank as one index of a
folder holding both does (the reference is built here too, from the same files): same files,
same order, same scores. The folders' vocabularies are skewed on purpose: "proxy" fills one and
is rare in the other, so each index's own BM25 statistics would rank differently.
"""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from explorer.api.answers import SearchAnswer
from explorer.core.indexing.indexer import Indexer
from explorer.core.models import SearchMode
from explorer.core.retrieval.agent_context import AgentAnswer, ContextOptions
from explorer.core.retrieval.collections import (
    Collection,
    Collections,
    distinct_names,
    folder_name,
)
from explorer.core.retrieval.file_filter import parse_filter_words
from explorer.core.retrieval.keyword_scale import KeywordScale
from explorer.core.retrieval.merged_search import MergedPlan
from explorer.core.retrieval.query import QueryError, fts_phrases
from explorer.core.retrieval.related import related_files
from explorer.core.retrieval.scopes import CollectionsError, Scope
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.core.store.keyword_statistics import KeywordTable
from explorer.core.store.keywords import BM25_WEIGHTS
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder, edit_after_first_ranking

SERVER_WORDS = "proxy cache server upstream config location timeout buffer header".split()
GARDEN_WORDS = "garden compost soil rain tomato seed harvest mulch note".split()


def folder_files(words: list[str], count: int, rare: str, seed: int) -> dict[str, str]:
    """``count`` notes of ``words``, a few of which also mention ``rare``."""
    chance = random.Random(seed)
    files = {}
    for i in range(count):
        body = chance.choices(words, k=chance.randint(8, 90))
        if i % 9 == 0:
            body.insert(chance.randrange(len(body)), rare)
        title = " ".join(chance.choices(words, k=2))
        files[f"notes/n{i:03d}.md"] = f"# {title}\n\n{' '.join(body)}\n"
    files["README.md"] = f"# Read me\n\nThis folder holds notes on {words[0]} and {words[1]}.\n"
    files["tools/run.py"] = f"def {words[2]}():\n    return '{words[3]} {rare}'\n"
    return files


SERVERS = folder_files(SERVER_WORDS, 90, "compost", seed=1)
GARDEN = folder_files(GARDEN_WORDS, 40, "proxy", seed=2)

QUERIES = [
    "proxy",
    "compost proxy",
    "garden proxy cache",
    "upstream timeout header",
    "read me notes",
    "tomato harvest",
]


def build(root: Path, index_dir: Path, embedder: FakeEmbedder) -> Index:
    index = Index(Settings.for_root(root, index_dir, model=FakeEmbedder.name), embedder=embedder)
    Indexer(index).sync()
    return index


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """The two folders indexed on their own, and one folder holding both, indexed once."""
    base = tmp_path_factory.mktemp("collections")
    embedder = FakeEmbedder()
    servers = build(write_files(base / "one" / "servers", SERVERS), base / "i-servers", embedder)
    garden = build(write_files(base / "one" / "garden", GARDEN), base / "i-garden", embedder)
    both = {f"servers/{p}": t for p, t in SERVERS.items()} | {
        f"garden/{p}": t for p, t in GARDEN.items()
    }
    union = build(write_files(base / "union", both), base / "i-union", embedder)
    yield servers, garden, union
    for index in (servers, garden, union):
        index.close()


@pytest.fixture
def opened(folders):
    servers, garden, _union = folders
    scopes = [
        Scope("code", extensions=("py",), description="the scripts"),
        Scope("garden-notes", paths=("notes/",), collections=("garden",)),
    ]
    collections = Collections(
        [Collection("servers", servers), Collection("garden", garden)], scopes
    )
    yield collections
    collections._collections.clear()  # the module's fixture closes the indexes


def answer(response) -> list[tuple[str, float]]:
    return [(f"{hit.collection}/{hit.path}", hit.score) for hit in response.results]


@pytest.mark.parametrize("mode", list(SearchMode))
@pytest.mark.parametrize("query", QUERIES)
def test_two_folders_rank_as_one_folder_holding_both(folders, opened, query, mode) -> None:
    union = folders[2]
    request = SearchRequest(query, mode=mode, limit=15, per_file=2)
    expected = search(union, request)
    together = opened.search(request)
    assert answer(together) == [(hit.path, hit.score) for hit in expected.results]
    assert [[p.score for p in hit.passages] for hit in together.results] == [
        [p.score for p in hit.passages] for hit in expected.results
    ]


def test_rows_crowded_into_a_few_files_rank_deeper_before_they_are_fused(
    tmp_path, monkeypatch, fused_keyword_rows
) -> None:
    """Each collection's best "quokka" rows lie in three long files: the merged keyword
    search passes over the depths that hold fewer files than it shows, fuses once, and
    answers as one folder holding both folders does."""
    long_files = {
        f"long/l{i}.md": "# Long\n"
        + "".join(f"\n## Part {part}\n\nQuokka, quokka notes {part}.\n" for part in range(8))
        for i in range(3)
    }
    short_files = {
        f"short/s{i:02d}.md": f"# Short {i}\n\nA quokka once, among words of note {i}.\n"
        for i in range(12)
    }
    first = long_files | dict(list(short_files.items())[:6])
    second = dict(list(short_files.items())[6:])
    embedder = FakeEmbedder()

    def built(files: dict[str, str], name: str) -> Index:
        index = build(write_files(tmp_path / name, files), tmp_path / f"i-{name}", embedder)
        index.close()
        return Index(replace(index.settings, candidates=5), embedder=embedder)

    one, two = built(first, "one"), built(second, "two")
    both = {f"one/{p}": t for p, t in first.items()} | {f"two/{p}": t for p, t in second.items()}
    union = built(both, "union")
    fused = fused_keyword_rows
    request = SearchRequest("quokka", mode=SearchMode.KEYWORD, limit=10, prefix_last=True)
    try:
        collections = Collections([Collection("one", one), Collection("two", two)])
        together = collections.search(request)
        assert len(fused) == 1  # 5 and 20 rows: the long files alone
        monkeypatch.setattr(MergedPlan, "keyword_leg_too_narrow", lambda *args: False)
        assert answer(collections.search(request)) == answer(together)
        assert len(fused) == 1 + 3
        expected = search(union, request)
    finally:
        for index in (one, two, union):
            index.close()
    assert len(together.results) == 10
    assert answer(together) == [(hit.path, hit.score) for hit in expected.results]


def test_each_index_on_its_own_scale_would_rank_otherwise(folders, opened) -> None:
    """What the shared BM25 scale corrects: "proxy" is common among the servers' notes and rare
    in the garden's, so the garden's own index weighs it far more."""
    union = folders[2]
    differs = 0
    for query in QUERIES:
        request = SearchRequest(query, mode=SearchMode.KEYWORD, limit=15)
        expected = [(hit.path, hit.score) for hit in search(union, request).results]
        differs += answer(opened.search(request, shared_scale=False)) != expected
    assert differs >= 3


def test_the_shared_scale_gives_fts5s_own_bm25_of_one_table(folders) -> None:
    servers, garden, union = folders
    phrases = fts_phrases("garden proxy cache")
    scale = KeywordScale(
        {"servers": servers.keywords.statistics, "garden": garden.keywords.statistics},
        KeywordTable.CHUNKS,
        phrases,
    )
    stats = garden.keywords.statistics
    ids = garden.keywords.chunk_ids()
    rowids = stats.chunk_rowids(ids)
    rescored = scale.rescore("garden", list(rowids.values()))
    weights = ", ".join(map(str, BM25_WEIGHTS))
    db = sqlite3.connect(union.keywords.path)
    rows = db.execute(
        f"SELECT c.path, c.ord, -bm25(chunks_fts, {weights}) FROM chunks_fts"
        " JOIN chunks c ON c.rowid = chunks_fts.rowid WHERE chunks_fts MATCH ?",
        (" OR ".join(phrases),),
    ).fetchall()
    db.close()
    expected = {(path, ordinal): score for path, ordinal, score in rows}
    places = garden.keywords.chunks_by_id(ids)
    got = {
        ("garden/" + places[cid].path, places[cid].ord): rescored[rowids[cid]]
        for cid in ids
        if rowids[cid] in rescored
    }
    assert got and set(got) == {key for key in expected if key[0].startswith("garden/")}
    for key, score in got.items():
        assert score == pytest.approx(expected[key], rel=1e-9)


def test_every_result_names_its_collection_and_a_path_of_its_folder(folders, opened) -> None:
    servers, garden, _union = folders
    response = opened.search(SearchRequest("read me notes", limit=20))
    names = {hit.collection for hit in response.results}
    assert names == {"servers", "garden"}
    readmes = [hit for hit in response.results if hit.path == "README.md"]
    assert {hit.collection for hit in readmes} == {"servers", "garden"}  # one path, two folders
    for hit in response.results:
        index = {"servers": servers, "garden": garden}[hit.collection]
        assert (index.settings.root / hit.path).is_file()
        chunks = index.keywords.chunks_by_id([p.chunk_id for p in hit.passages])
        assert all(chunks[p.chunk_id].path == hit.path for p in hit.passages)
    data = SearchAnswer.build(AgentAnswer(response, ContextOptions())).to_json()
    assert all(result["collection"] in ("servers", "garden") for result in data["results"])
    json.dumps(data)


def test_a_search_of_one_index_names_no_collection(folders) -> None:
    response = search(folders[0], SearchRequest("proxy"))
    data = SearchAnswer.build(AgentAnswer(response, ContextOptions())).to_json()
    assert data["results"] and all("collection" not in result for result in data["results"])


def test_collection_filter_keeps_only_those(opened) -> None:
    response = opened.search(SearchRequest("proxy", collections=("GARDEN",), limit=50))
    assert response.results and {hit.collection for hit in response.results} == {"garden"}
    assert "collection garden" in response.filters["keyword"]
    with pytest.raises(
        QueryError, match=r"no collection 'nowhere' is open \(open: servers, garden"
    ):
        opened.search(SearchRequest("proxy", collections=("nowhere",)))


def test_a_filter_narrows_what_is_ranked_never_how_it_is_scored(opened) -> None:
    """Keeping one collection gives its passages the BM25 the search of both gives them (the
    scale is every open collection's, as a filter in one index keeps the index's statistics)."""

    def bm25(response) -> dict[tuple[str, str], float | None]:
        return {
            (hit.collection, passage.chunk_id): passage.keyword_score
            for hit in response.results
            for passage in hit.passages
        }

    request = SearchRequest("compost proxy", mode=SearchMode.KEYWORD, limit=50, per_file=9)
    both = bm25(opened.search(request))
    kept = bm25(opened.search(replace(request, collections=("garden",))))
    assert kept and {name for name, _id in kept} == {"garden"}
    assert all(both[key] == score for key, score in kept.items() if key in both)
    assert len(set(kept) & set(both)) >= 5


def test_path_filter_applies_in_every_folder(opened) -> None:
    response = opened.search(SearchRequest("notes", paths=("tools/",), limit=20))
    assert {(hit.collection, hit.path) for hit in response.results} == {
        ("servers", "tools/run.py"),
        ("garden", "tools/run.py"),
    }


def test_scopes_keep_their_files(opened) -> None:
    code = opened.search(SearchRequest("proxy compost", scopes=("code",), limit=20))
    assert {(h.collection, h.path) for h in code.results} == {
        ("servers", "tools/run.py"),
        ("garden", "tools/run.py"),
    }
    garden_notes = opened.search(SearchRequest("proxy", scopes=("garden-notes",), limit=50))
    assert garden_notes.results
    assert all(
        h.collection == "garden" and h.path.startswith("notes/") for h in garden_notes.results
    )
    either = opened.search(SearchRequest("proxy", scopes=("code", "garden-notes"), limit=50))
    assert {h.collection for h in either.results} == {"servers", "garden"}
    with pytest.raises(QueryError, match="no scope 'nope' \\(scopes: code, garden-notes\\)"):
        opened.search(SearchRequest("proxy", scopes=("nope",)))


def test_nothing_matching_is_a_note_not_an_error(opened) -> None:
    response = opened.search(SearchRequest("proxy", paths=("nowhere/",)))
    assert response.results == []
    assert response.notes == ["no indexed file matches nowhere/"]


def test_query_words_name_collections_and_scopes() -> None:
    parsed = parse_filter_words('proxy collection:notes scope:curator collection:"docs" tag:x ')
    assert parsed.query == "proxy "
    assert parsed.collections == ("notes", "docs")
    assert parsed.scopes == ("curator",)
    assert parsed.filter.tags == ("x",)


def test_adding_an_indexed_folder_embeds_nothing(folders, tmp_path) -> None:
    servers, garden, _union = folders
    counting = FakeEmbedder()
    opened = Collections.open(
        [("servers", servers.settings), ("garden", garden.settings)], embedder=counting
    )
    try:
        assert opened.search(SearchRequest("compost proxy")).results
        assert counting.documents_embedded == 0 and counting.queries_embedded == 1
        opened.remove("garden")
        assert opened.names == ["servers"]
        opened.add(Collection("garden", Index.open_existing(garden.settings, counting)))
        assert {h.collection for h in opened.search(SearchRequest("tomato")).results} >= {"garden"}
        assert counting.documents_embedded == 0
    finally:
        opened.close()


def test_collections_of_different_models_are_refused(folders, tmp_path) -> None:
    servers = folders[0]
    other = Settings.for_root(tmp_path / "other", tmp_path / "i-other", model="another-model")
    write_files(tmp_path / "other", {"a.md": "# A\n\nproxy words\n"})
    index = Index(other, embedder=FakeEmbedder())
    index.keywords.set_meta("model", "another-model")
    opened = Collections([Collection("servers", servers)])
    with pytest.raises(CollectionsError, match="collections must share one model"):
        opened.add(Collection("other", index))
    index.close()


def test_names_and_folders_are_distinct(folders) -> None:
    servers, garden, _union = folders
    opened = Collections([Collection("servers", servers)])
    with pytest.raises(CollectionsError, match="two collections are named 'Servers'"):
        opened.add(Collection("Servers", garden))
    with pytest.raises(CollectionsError, match="is open already, as collection 'servers'"):
        opened.add(Collection("again", servers))
    with pytest.raises(CollectionsError, match="collection name 'my notes'"):
        opened.add(Collection("my notes", garden))


def test_folder_names() -> None:
    assert folder_name(Path("/home/me/My Notes")) == "My-Notes"
    assert distinct_names([Path("/a/work/docs"), Path("/a/play/docs"), Path("/a/notes")]) == [
        "work-docs",
        "play-docs",
        "notes",
    ]
    assert distinct_names([Path("/x/docs")], taken=["docs"]) == ["x-docs"]
    assert distinct_names([Path("/docs")], taken=["docs"]) == ["docs-2"]
    assert distinct_names([Path("/a/x/docs"), Path("/b/x/docs")]) == ["a-x-docs", "b-x-docs"]


def test_status_per_collection(opened) -> None:
    statuses = opened.status()
    assert [s.name for s in statuses] == ["servers", "garden"]
    assert statuses[0].status.indexed == len(SERVERS)
    assert statuses[1].name == "garden" and statuses[1].status.indexed == len(GARDEN)


def test_links_stay_in_their_collection(tmp_path) -> None:
    embedder = FakeEmbedder()
    first = build(
        write_files(
            tmp_path / "a", {"index.md": "# A\n\nSee [guide](guide.md).\n", "guide.md": "# G\n"}
        ),
        tmp_path / "ia",
        embedder,
    )
    second = build(
        write_files(tmp_path / "b", {"guide.md": "# Other guide\n"}), tmp_path / "ib", embedder
    )
    opened = Collections([Collection("a", first), Collection("b", second)])
    try:
        assert [link.target for link in opened.links("a", "index.md").outgoing] == ["guide.md"]
        assert [link.source for link in opened.links("a", "guide.md").backlinks] == ["index.md"]
        assert opened.links("b", "guide.md").backlinks == []
    finally:
        opened.close()


TOPICS = {
    "comet": "comet tail ice nucleus orbit sun perihelion coma dust",
    "bread": "bread dough yeast flour oven crust knead proof loaf",
    "river": "river delta flood bank current silt estuary meander",
    "violin": "violin bow string rosin bridge tuning peg scroll",
}


def topic_files(seed: int, topics: list[str], per_topic: int) -> dict[str, str]:
    chance = random.Random(seed)
    files = {}
    for topic in topics:
        words = TOPICS[topic].split()
        for i in range(per_topic):
            sections = "\n\n".join(
                f"## Part {part}\n\n{' '.join(chance.choices(words, k=40))}" for part in range(3)
            )
            files[f"{topic}/{topic}-{i}.md"] = f"# {topic.title()} {i}\n\n{sections}\n"
    return files


@pytest.fixture(scope="module")
def neighbours(tmp_path_factory):
    base = tmp_path_factory.mktemp("related-across")
    embedder = FakeEmbedder()
    science = build(
        write_files(base / "science", topic_files(1, ["comet", "river"], 4)), base / "i1", embedder
    )
    kitchen = build(
        write_files(base / "kitchen", topic_files(2, ["bread", "comet", "violin"], 3)),
        base / "i2",
        embedder,
    )
    yield science, kitchen
    science.close()
    kitchen.close()


def test_related_files_of_one_collection_are_related_files(neighbours) -> None:
    science, _kitchen = neighbours
    one = Collections([Collection("science", science)])
    for path in ("comet/comet-0.md", "river/river-2.md"):
        expected = related_files(science, path, 5)
        found = one.related("science", path, 5)
        assert [(n.collection, n.related) for n in found] == [("science", r) for r in expected]
    one._collections.clear()


def test_related_files_cross_collections(neighbours) -> None:
    science, kitchen = neighbours
    both = Collections([Collection("science", science), Collection("kitchen", kitchen)])
    found = both.related("science", "comet/comet-0.md", 8)
    places = [(n.collection, n.related.path) for n in found]
    assert ("science", "comet/comet-0.md") not in places
    comets = {place for place in places if place[1].startswith("comet/")}
    assert {name for name, _path in comets} == {"science", "kitchen"}
    assert all(place[1].startswith("comet/") for place in places[: len(comets)])
    assert found[0].collection in ("science", "kitchen")
    both._collections.clear()


def reopened(index: Index, **overrides) -> Index:
    """The same index, read with other search settings."""
    return Index(replace(index.settings, **overrides), embedder=FakeEmbedder(), read_only=True)


@pytest.mark.parametrize("query", ["compost proxy", "garden proxy cache", "tomato header"])
def test_few_candidates_are_still_the_best_of_all(folders, query) -> None:
    """With room for only 8 keyword candidates, an index's own 8 best are not always its best
    on the shared scale: it is asked for more until no passage it left out could enter."""
    servers, garden, union = (reopened(index, candidates=8) for index in folders)
    both = Collections([Collection("servers", servers), Collection("garden", garden)])
    try:
        request = SearchRequest(query, mode=SearchMode.KEYWORD, limit=8, per_file=1)
        expected = [(hit.path, hit.score) for hit in search(union, request).results]
        assert answer(both.search(request)) == expected
    finally:
        both.close()
        union.close()


def test_the_bound_holds_for_every_row(folders) -> None:
    servers, garden, _union = folders
    for query in QUERIES:
        phrases = fts_phrases(query)
        stats = {"servers": servers.keywords.statistics, "garden": garden.keywords.statistics}
        scale = KeywordScale(stats, KeywordTable.CHUNKS, phrases)
        for name, index in (("servers", servers), ("garden", garden)):
            hits = index.keywords.search(" OR ".join(phrases), 10_000)
            rowids = stats[name].chunk_rowids([cid for cid, _p, _s in hits])
            shared = scale.rescore(name, list(rowids.values()))
            for cid, _path, own in hits:
                assert shared[rowids[cid]] <= scale.bound(name, own) + 1e-9


def test_a_search_of_one_index_refuses_collection_filters(folders) -> None:
    with pytest.raises(QueryError, match="collection: and scope: filters need a search over"):
        search(folders[0], SearchRequest("proxy", collections=("servers",)))
    with pytest.raises(QueryError, match="collection: and scope: filters need a search over"):
        search(folders[0], SearchRequest("proxy", scopes=("code",)))


def test_a_file_updated_while_several_folders_are_searched_stays_in_the_answer(
    tmp_path, monkeypatch
):
    """The live index replaces a file's chunks after its folder's keyword leg was ranked (on a
    thread of the pool) and before the passages are read (on the search's thread): the answer
    still holds the file as the ranking saw it."""
    embedder = FakeEmbedder()
    one_files = {f"star{i}.md": f"# Star {i}\n\nA telescope for star {i}.\n" for i in range(3)}
    two_files = {f"moon{i}.md": f"# Moon {i}\n\nA telescope for moon {i}.\n" for i in range(3)}
    one_root = write_files(tmp_path / "one", one_files)
    two_root = write_files(tmp_path / "two", two_files)
    one = build(one_root, tmp_path / "i-one", embedder)
    two = build(two_root, tmp_path / "i-two", embedder)
    try:
        updated = edit_after_first_ranking(
            monkeypatch, one, one_root, "star0.md", "# Star 0\n\nNo optics here any more.\n"
        )
        collections = Collections([Collection("one", one), Collection("two", two)])
        request = SearchRequest("telescope", mode=SearchMode.KEYWORD)
        response = collections.search(request)
        assert updated, "the search ranked the first folder's keyword leg"
        found = {(hit.collection, hit.path) for hit in response.results}
        assert found == {("one", p) for p in one_files} | {("two", p) for p in two_files}
        star0 = next(hit for hit in response.results if hit.path == "star0.md")
        assert "telescope" in star0.passages[0].snippet.casefold()
        monkeypatch.undo()
        after = collections.search(request)
        assert ("one", "star0.md") not in {(hit.collection, hit.path) for hit in after.results}
    finally:
        one.close()
        two.close()
