"""Hybrid search: grouping, scores, filters applied before ranking, modes, explain and errors."""

from __future__ import annotations

import re
import threading
from dataclasses import replace

import numpy as np
import pytest

from explorer.api.answers import SearchAnswer
from explorer.core.indexing.indexer import Indexer
from explorer.core.models import SearchMode
from explorer.core.retrieval import search as search_module
from explorer.core.retrieval.agent_context import AgentAnswer, ContextOptions
from explorer.core.retrieval.query import QueryError, query_terms, word_matches
from explorer.core.retrieval.search import SearchRequest, VectorLeg, search
from explorer.core.store.index import Index
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.documents import API_PAGE
from tests.fakes import FakeEmbedder, edit_after_first_ranking, land_edit

WEAK = 12
STRONG = 30


def corpus() -> dict[str, str]:
    files = {}
    for i in range(WEAK):
        files[f"x/weak{i:02d}.md"] = (
            f"# Field note {i}\n\nNotes on gardening, rain, soil number {i} and compost; "
            "the neighbour once mentioned a telescope in passing, among many other words.\n"
        )
    for i in range(STRONG):
        files[f"other/strong{i:02d}.md"] = (
            f"# Telescope guide {i}\n\nTelescope lenses, telescope mirrors and telescope mounts: "
            f"telescope care for telescope owners, part {i}.\n"
        )
    files["guides/install.md"] = (
        "# Install\n\nInstall explorer with pip install explorer.\n\n"
        "## Linux\n\nOn Linux, install the package with apt and pip.\n\n"
        "## macOS\n\nOn macOS, install with brew, then pip install explorer.\n\n"
        "## Windows\n\nOn Windows, install Python first, then pip install explorer.\n"
    )
    files["guides/backup.md"] = (
        "# Backups\n\nBack up the database nightly.\n\n## Restore\n\n"
        "Restore a backup with the restore command; install nothing new.\n"
    )
    files["src/orbit.py"] = (
        "def compute_orbit(mass, radius):\n    return mass * radius\n\n\n"
        "class Satellite:\n    def launch(self):\n        return 'launched'\n"
    )
    # Many files with many matching chunks each, to exercise candidate expansion.
    for i in range(12):
        sections = "".join(
            f"\n## Part {part}\n\nQuokka habitat notes, quokka diet {part}.\n" for part in range(6)
        )
        files[f"zoo/animal{i:02d}.md"] = f"# Animal {i}\n" + sections
    return files


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One index over the corpus, shared by the module's read-only tests."""
    base = tmp_path_factory.mktemp("search")
    root = write_files(base / "root", corpus())
    settings = Settings.for_root(root, base / "index", model=FakeEmbedder.name)
    embedder = FakeEmbedder()
    index = Index(settings, embedder=embedder)
    Indexer(index).sync()
    yield index, embedder
    index.close()


@pytest.fixture(scope="module")
def index(built):
    return built[0]


def reopened(index: Index, **overrides) -> Index:
    """The same index opened with other search settings."""
    return Index(replace(index.settings, **overrides), embedder=FakeEmbedder())


def assert_well_formed(response, request: SearchRequest) -> None:
    paths = [hit.path for hit in response.results]
    assert len(paths) == len(set(paths)), "a file appears twice"
    assert len(paths) <= request.limit
    scores = [hit.score for hit in response.results]
    assert scores == sorted(scores, reverse=True)
    for hit in response.results:
        assert 1 <= len(hit.passages) <= request.per_file
        passage_scores = [p.score for p in hit.passages]
        assert passage_scores == sorted(passage_scores, reverse=True)
        assert hit.score == passage_scores[0]
        for passage in hit.passages:
            assert 0.0 <= passage.score <= 1.0
            assert passage.score >= request.min_score
            assert 1 <= passage.start_line <= passage.end_line


def run(index, query, **options):
    request = SearchRequest(query, **options)
    response = search(index, request)
    assert_well_formed(response, request)
    return response


# -- grouping, limits and scores ------------------------------------------------------------------
def test_hybrid_results_are_grouped_by_file_best_first(index):
    response = run(index, "install explorer on linux")
    assert response.mode == "hybrid"
    assert response.results[0].path == "guides/install.md"
    install = response.results[0]
    assert len(install.passages) == 3
    assert install.passages[0].heading.startswith("Install")
    assert install.title == "install"
    assert response.notes == []


def test_per_file_and_limit_are_respected(index):
    response = run(index, "install explorer on linux", per_file=1, limit=2)
    assert len(response.results) == 2
    assert all(len(hit.passages) == 1 for hit in response.results)


def test_limit_is_filled_even_when_files_have_many_matching_chunks(index):
    """Few candidates per leg, many matching chunks per file: the search widens until it has
    ``limit`` files."""
    small = reopened(index, candidates=5)
    try:
        response = run(small, "quokka habitat", limit=10, mode="keyword")
        assert len(response.results) == 10
        assert all(hit.path.startswith("zoo/") for hit in response.results)
    finally:
        small.close()


def test_a_keyword_search_passes_over_depths_that_hold_too_few_files(
    index, monkeypatch, fused_keyword_rows
):
    """Rows crowded into a few files (each zoo file holds 6 quokka passages): the keyword
    search ranks deeper before it fuses, and answers as fusing at every depth does."""
    small = reopened(index, candidates=5)
    fused = fused_keyword_rows
    try:
        request = SearchRequest("quokka habitat", mode="keyword", limit=10)
        skipping = search(small, request)
        assert len(fused) == 1  # 5 and 20 rows hold fewer than 10 files: fused at 80
        monkeypatch.setattr(
            search_module._OneIndexPlan, "keyword_leg_too_narrow", lambda *args: False
        )
        every_depth = search(small, request)
        assert fused[1:] == [5, 20, fused[0]]  # every depth fused: 5, 20, then 80
    finally:
        small.close()
    assert len(skipping.results) == 10
    assert skipping.results == every_depth.results


def test_highlights_mark_query_words_in_result_snippets(index):
    response = run(index, "restore backup")
    passage = response.results[0].passages[0]
    assert response.results[0].path == "guides/backup.md"
    marked = [passage.snippet[s:e].lower() for s, e in passage.highlights]
    assert marked and all(word.startswith(("restor", "backup")) for word in marked)


def test_a_word_being_typed_is_marked_where_the_keyword_leg_found_it(index):
    """While typing, "quok" finds the quokka notes by prefix: the snippets mark "quokka" (a
    word of four letters was marked only whole, so nothing was)."""
    response = run(index, "quok", mode="keyword", prefix_last=True)
    assert response.results
    for hit in response.results:
        passage = hit.passages[0]
        assert {passage.snippet[s:e].lower() for s, e in passage.highlights} == {"quokka"}
    typed = run(index, "restore bac", mode="keyword", prefix_last=True).results[0].passages[0]
    marked = [typed.snippet[s:e].lower() for s, e in typed.highlights]
    assert any(word.startswith("bac") for word in marked), marked
    assert all(word.startswith(("restor", "bac")) for word in marked), marked
    whole = run(index, "restore bac ", mode="keyword", prefix_last=True).results
    assert (
        whole
        and all(  # a space ends the word: "bac" is a word, as typed
            not hit.passages[0].snippet[s:e].lower().startswith("bac")
            for hit in whole
            for s, e in hit.passages[0].highlights
        )
    )


def test_passage_positions_match_the_file(index):
    response = run(index, "macos brew", mode="keyword")
    passage = response.results[0].passages[0]
    text = (index.settings.root / "guides/install.md").read_text()
    assert passage.heading == "Install > macOS"
    assert "brew" in text[passage.start_char : passage.end_char]
    lines = text.splitlines()
    assert "macOS" in lines[passage.start_line - 1]
    assert passage.end_line <= len(lines)


# -- path filters are applied before ranking -------------------------------------------------------
@pytest.mark.parametrize("candidates", [200, 20])
@pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
def test_path_filter_applies_before_ranking(index, candidates, mode):
    unfiltered = run(index, "telescope", limit=10, mode=mode)
    assert not any(hit.path.startswith("x/") for hit in unfiltered.results)

    scoped = reopened(index, candidates=candidates)
    try:
        response = run(scoped, "telescope", paths=("x/",), limit=10, mode=mode)
    finally:
        scoped.close()
    assert len(response.results) == 10
    assert all(hit.path.startswith("x/") for hit in response.results)


def test_filters_name_the_scope_of_both_legs(index):
    response = run(index, "telescope", paths=("x/",))
    assert set(response.filters) == {"keyword", "vector"}
    for description in response.filters.values():
        assert f"{WEAK} files matching x/" in description
    everything = run(index, "telescope")
    assert all("all files" in d for d in everything.filters.values())


def test_glob_filter_in_search(index):
    response = run(index, "telescope", paths=("other/strong0[0-4].md", "x/weak1*.md"), limit=50)
    expected = {f"other/strong0{i}.md" for i in range(5)} | {"x/weak10.md", "x/weak11.md"}
    assert {hit.path for hit in response.results} == expected


def test_filter_matching_no_file_gives_no_results_and_says_why(index):
    response = run(index, "telescope", paths=("nowhere/",))
    assert response.results == []
    assert response.notes == ["no indexed file matches nowhere/"]


# -- min score, explain, modes --------------------------------------------------------------
def test_min_score_hides_weaker_passages(index):
    everything = run(index, "telescope", limit=50)
    cut = 0.6
    assert any(hit.score < cut for hit in everything.results)
    strong = run(index, "telescope", limit=50, min_score=cut)
    assert strong.results
    assert all(p.score >= cut for hit in strong.results for p in hit.passages)
    assert len(strong.results) < len(everything.results)


def _best_bm25(response) -> float:
    scores = [
        p.keyword_score for hit in response.results for p in hit.passages if p.keyword_rank == 1
    ]
    assert scores, "the keyword leg's best passage is among the results"
    return scores[0]


def test_explain_fields(index):
    response = run(index, "install explorer on linux", limit=50, per_file=50)
    data = SearchAnswer.build(AgentAnswer(response, ContextOptions()), explain=True).to_json()
    passage = data["results"][0]["passages"][0]
    keys = ("keyword_rank", "keyword_score", "vector_rank", "vector_similarity", "file_similarity")
    for key in (*keys, "file_keyword_score", "fused"):
        assert key in passage["explain"]
    assert passage["explain"]["keyword_rank"] >= 1 and passage["explain"]["vector_rank"] >= 1
    assert passage["explain"]["file_similarity"] is not None
    assert passage["explain"]["file_keyword_score"] > 0
    assert passage["explain"]["fused"] == pytest.approx(passage["score"], abs=1e-3)
    data = data["explain"]
    # The rule, with this query's own numbers: how much of the query the keyword leg's best
    # passages hold, how far the legs agree, and so the keyword leg's weight.
    assert "z(meaning)" in data["fusion"] and "x words" in data["fusion"]
    assert "meaning = (cosine + 0.5 x file cosine) / 1.5" in data["fusion"]
    assert "words = (z(BM25) + 1 x z(file BM25)) / 2" in data["fusion"]
    numbers = re.search(
        r"this query: coverage 0\.67, agreement ([0-9.]+), keyword weight ([0-9.]+)$",
        data["fusion"],
    )  # no "explorer"
    assert numbers, data["fusion"]
    agreement, weight = float(numbers[1]), float(numbers[2])
    assert 0.0 <= agreement <= 1.0
    assert weight == pytest.approx(0.5 * max((2 / 3) ** 3, agreement), abs=0.01)
    covered = run(index, "pip install explorer").fusion  # one passage holds all three words
    assert re.search(
        r"this query: coverage 1\.00, agreement [0-9.]+, keyword weight 0\.5$", covered
    )
    lookup = run(index, "compute_orbit").fusion
    assert lookup.startswith(
        "logistic(0.2 x z(meaning) + 0.8 x max(coverage^3, agreement) x words)"
    )
    assert lookup.endswith("(the query names only identifiers)")
    plain = SearchAnswer.build(AgentAnswer(response, ContextOptions())).to_json()
    assert "explain" not in plain and "explain" not in plain["results"][0]["passages"][0]
    assert not set(keys) & set(plain["results"][0]["passages"][0])


def test_convex_fusion_mixes_cosine_and_relative_bm25(index):
    convex = reopened(
        index,
        fusion="convex",
        semantic_weight=0.7,
        keyword_confidence=0.0,
        file_weight=0.0,
        file_keyword_weight=0.0,
    )
    try:
        response = run(convex, "install explorer on linux", limit=50, per_file=50)
    finally:
        convex.close()
    assert response.fusion == "0.7 x cosine + 0.3 x BM25/best BM25"
    best = _best_bm25(response)
    for hit in response.results:
        assert hit.score == hit.passages[0].score
        for passage in hit.passages:
            # A passage the vector leg did not return shows (and counts) its measured cosine.
            assert passage.vector_similarity is not None
            relative = 0.0 if passage.keyword_score is None else passage.keyword_score / best
            expected = 0.7 * max(0.0, passage.vector_similarity) + 0.3 * relative
            assert passage.score == pytest.approx(expected, abs=1e-3)


def test_a_passage_the_vector_leg_missed_shows_its_measured_cosine(built):
    index, embedder = built
    # Two candidates widen to 32 per leg: the vector leg then stops among passages with some
    # cosine, so a keyword hit at cosine 0 is missed for sure. With 3 (widening to 48) the leg
    # reached the passages tied at 0, and which of them it returned was the HNSW graph's choice.
    few = reopened(index, candidates=2)
    try:
        response = run(few, "install explorer on linux", limit=50, per_file=50)
    finally:
        few.close()
    missed = [
        p
        for hit in response.results
        for p in hit.passages
        if p.vector_rank is None and p.keyword_rank is not None
    ]
    assert missed, "with 2 candidates per leg some keyword hits are not among the vector hits"
    stored = index.vectors.chunk_vectors([p.chunk_id for p in missed])
    query = embedder.embed_query("install explorer on linux")
    for passage in missed:
        cosine = float(np.dot(np.asarray(stored[passage.chunk_id]), query))
        assert passage.vector_similarity == pytest.approx(cosine, abs=1e-3)


def test_typing_again_measures_from_cached_vectors_with_the_same_results(built):
    index, _embedder = built
    few = reopened(index, candidates=3)
    try:
        first = run(few, "install explorer on linux", limit=50, per_file=50)
        asked: list[list[str]] = []
        chunks = few.vectors._chunks
        original_get = chunks.get

        def counting_get(*args, **kwargs):
            asked.append(list(kwargs.get("ids") or []))
            return original_get(*args, **kwargs)

        chunks.get = counting_get
        again = run(few, "install explorer on linux", limit=50, per_file=50)
    finally:
        few.close()
    assert again.results == first.results
    assert not [ids for ids in asked if ids], "the second search fetched vectors again"


def test_a_rewritten_chunk_vector_is_not_served_from_the_cache(built):
    index, _embedder = built
    response = run(index, "install explorer on linux", limit=5)
    passage = response.results[0].passages[0]
    path = response.results[0].path
    before = np.asarray(index.vectors.chunk_vectors([passage.chunk_id])[passage.chunk_id])
    changed = -before
    index.vectors.upsert_chunks([passage.chunk_id], changed[None, :], [path])
    try:
        after = index.vectors.chunk_vectors([passage.chunk_id])[passage.chunk_id]
        assert np.allclose(after, changed, atol=1e-5)
    finally:
        index.vectors.upsert_chunks([passage.chunk_id], before[None, :], [path])
    assert np.allclose(index.vectors.chunk_vectors([passage.chunk_id])[passage.chunk_id], before)


def test_an_identifier_puts_the_file_that_holds_it_first(index):
    response = run(index, "compute_orbit")
    assert response.results[0].path == "src/orbit.py"


def test_unknown_fusion_is_a_query_error(index):
    odd = reopened(index, fusion="average")
    try:
        with pytest.raises(QueryError, match="unknown fusion 'average'"):
            search(odd, SearchRequest("telescope"))
    finally:
        odd.close()


def test_rrf_fusion_scores_fused_ranks_over_the_best_possible(index):
    rrf_index = reopened(index, fusion="rrf")
    try:
        response = run(rrf_index, "install explorer on linux", limit=50)
        for hit in response.results:
            for passage in hit.passages:
                expected = sum(
                    1 / (60 + rank)
                    for rank in (passage.keyword_rank, passage.vector_rank)
                    if rank is not None
                )
                assert passage.fused == pytest.approx(expected / (2 / 61), abs=1e-3)
                assert passage.score == pytest.approx(passage.fused, abs=1e-3)
        assert "reciprocal rank fusion" in response.fusion
    finally:
        rrf_index.close()


def test_semantic_score_is_the_cosine_blended_with_the_files(built):
    index, embedder = built
    query = "telescope lenses and mirrors"
    response = run(index, query, mode="semantic", limit=5)
    vector = embedder.embed_query(query)
    passages = [p for hit in response.results for p in hit.passages]
    stored = index.vectors.chunk_vectors([p.chunk_id for p in passages])
    for hit in response.results:
        chunk_vectors = index.vectors.chunk_vectors(index.keywords.chunk_ids(hit.path))
        mean = np.mean([np.asarray(v) for v in chunk_vectors.values()], axis=0)
        file_cosine = float(np.dot(mean / np.linalg.norm(mean), vector))
        for passage in hit.passages:
            cosine = float(np.dot(np.asarray(stored[passage.chunk_id]), vector))
            assert passage.file_similarity == pytest.approx(file_cosine, abs=1e-3)
            expected = (cosine + 0.3 * file_cosine) / 1.3
            assert passage.score == pytest.approx(max(0.0, expected), abs=1e-3)


def test_semantic_score_is_the_cosine_similarity_without_file_weight(built):
    index, embedder = built
    plain = reopened(index, file_weight=0.0)
    query = "telescope lenses and mirrors"
    try:
        response = run(plain, query, mode="semantic", limit=5)
    finally:
        plain.close()
    vector = embedder.embed_query(query)
    passages = [p for hit in response.results for p in hit.passages]
    stored = index.vectors.chunk_vectors([p.chunk_id for p in passages])
    for passage in passages:
        cosine = float(np.dot(np.asarray(stored[passage.chunk_id]), vector))
        assert passage.score == pytest.approx(max(0.0, cosine), abs=1e-3)
        assert passage.keyword_rank is None
    assert "keyword" not in response.filters


def test_keyword_mode_top_score_is_one(index):
    response = run(index, "telescope mirrors", mode="keyword", limit=50)
    assert response.results[0].score == 1.0
    assert all(hit.score <= 1.0 for hit in response.results)
    assert all(p.vector_rank is None for hit in response.results for p in hit.passages)
    assert "vector" not in response.filters


def test_keyword_mode_finds_nothing_for_absent_words(index):
    response = run(index, "qwertyuiop", mode="keyword")
    assert response.results == []


def test_hybrid_without_keyword_matches_still_answers_by_meaning(index):
    response = run(index, "qwertyuiop asdfghjkl")
    assert response.results
    assert any("no keyword matches" in note for note in response.notes)
    assert all(p.keyword_rank is None for hit in response.results for p in hit.passages)
    # With no keyword leg the score is the cosine similarity itself, not 0.7 of it.
    for hit in response.results:
        for passage in hit.passages:
            assert passage.score == pytest.approx(max(0.0, passage.vector_similarity), abs=1e-3)


def test_prefix_last_finds_a_partly_typed_word(index):
    assert run(index, "quokk", mode="keyword").results == []
    response = run(index, "quokk", mode="keyword", prefix_last=True)
    assert response.results and all(hit.path.startswith("zoo/") for hit in response.results)


def test_a_letter_taking_shape_moves_neither_leg(index, monkeypatch):
    """While typing, "telescope s" asks both legs what "telescope" asks: the keyword leg leaves
    the letter out until the word has three, and the query's vector is made without it."""
    embedded: list[str] = []
    embed = index.embedder.embed_query

    def recorded(text: str):
        embedded.append(text)
        return embed(text)

    monkeypatch.setattr(index.embedder, "embed_query", recorded)

    def answer(text: str) -> list[tuple[str, float]]:
        response = run(index, text, mode="hybrid", prefix_last=True)
        return [(hit.path, hit.score) for hit in response.results]

    assert answer("telescope s") == answer("telescope ")
    assert [text.strip() for text in embedded] == ["telescope", "telescope"]
    assert answer("telescope sat") != answer("telescope ")  # three letters: a word to search
    assert embedded[-2] == "telescope sat"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"mode": "fuzzy"}, "unknown mode"),
        ({"limit": 0}, "limit and per_file must be"),
        ({"per_file": 0}, "per_file must be"),
        ({"offset": -1}, "offset must be 0 or more"),
        ({"min_score": 2.0}, "min_score must be"),
        ({"min_score": -0.1}, "min_score must be"),
    ],
)
def test_bad_requests_are_query_errors(index, options, message):
    with pytest.raises(QueryError, match=message):
        search(index, SearchRequest("telescope", **options))


def test_query_terms_feed_highlights_not_stopwords(index):
    response = run(index, "how to install on the linux", mode="keyword")
    terms = set(query_terms("install linux"))
    for hit in response.results:
        for passage in hit.passages:
            for start, end in passage.highlights:
                word = passage.snippet[start:end].lower()
                assert any(word.startswith(term[:4]) for term in terms), word


def test_the_response_says_what_the_vector_leg_gave(index, tmp_path, settings_for, fake_embedder):
    hybrid = run(index, "telescope")
    assert hybrid.vector_leg == VectorLeg.ANSWERED and hybrid.answered_by == SearchMode.HYBRID
    assert run(index, "telescope", mode="keyword").vector_leg == VectorLeg.NOT_ASKED
    answer = SearchAnswer.build(AgentAnswer(hybrid, ContextOptions()), explain=True).to_json()
    assert "vector_leg" not in answer and "vector_leg" not in answer["explain"]  # notes say it
    root = write_files(tmp_path / "fresh", {"a.md": "# Alpha\n\ntelescope mirror\n"})
    keywords_only = Index(settings_for(root), embedder=fake_embedder)
    try:
        Indexer(keywords_only).sync(embed=False)
        early = run(keywords_only, "telescope")
    finally:
        keywords_only.close()
    assert early.vector_leg == VectorLeg.EMPTY and early.answered_by == SearchMode.KEYWORD
    assert [hit.path for hit in early.results] == ["a.md"]


def _pages_and_a_passing_mention(tmp_path, **overrides) -> Index:
    """A page about walruses (each long section names them and their tusks once) and a dental
    page with one shorter passage that names walrus tusks once."""
    filler = " ".join(f"coastal{n} survey{n} notes{n}" for n in range(60))
    walrus = "".join(
        f"\n## {topic}\n\nThe walrus {text}. {filler}\n"
        for topic, text in (
            ("Habitat", "hauls out on sea ice; its tusks mark it"),
            ("Diet", "eats clams; its tusks rake the sea floor"),
            ("Climbing", "hooks its tusks into the ice"),
            ("Herds", "gathers in large herds, tusks out"),
            ("Calves", "calf grows its first tusks in a year"),
            ("Sound", "sings under water, tusks and all"),
        )
    )
    teeth = "".join(f"\n## {topic}\n\nBrush and floss. {filler}\n" for topic in ("Care", "Gums"))
    root = write_files(
        tmp_path / "root",
        {
            "animals/pinnipeds.md": "# Northern pinnipeds\n" + walrus,
            "health/teeth.md": "# Teeth\n"
            + teeth
            + "\n## Odd teeth\n\nWalrus tusks are teeth. "
            + filler[: len(filler) // 2],
            **{
                f"misc/note{n}.md": f"# Note {n}\n\nRain, soil and compost {n}.\n"
                for n in range(20)
            },
        },
    )
    settings = Settings.for_root(root, tmp_path / "index", model=FakeEmbedder.name, **overrides)
    index = Index(settings, embedder=FakeEmbedder())
    Indexer(index).sync()
    return index


@pytest.mark.parametrize("mode", [SearchMode.KEYWORD, SearchMode.HYBRID])
def test_a_page_about_the_words_beats_one_passage_that_names_them(tmp_path, mode):
    index = _pages_and_a_passing_mention(tmp_path)
    plain = reopened(index, file_keyword_weight=0.0, file_weight=0.0)
    page, mention = "animals/pinnipeds.md", "health/teeth.md"

    def order(searched: Index) -> list[str]:
        found = search(searched, SearchRequest("walrus tusks", mode=mode)).results
        return [hit.path for hit in found if hit.path in (page, mention)]

    try:
        assert order(plain) == [mention, page], "by its best passage alone, the mention wins"
        assert order(index) == [page, mention]
        hits = {hit.path: hit for hit in search(index, SearchRequest("walrus tusks")).results}
        assert (
            hits[page].passages[0].file_keyword_score > hits[mention].passages[0].file_keyword_score
        )
    finally:
        plain.close()
        index.close()


def test_keyword_scores_mix_the_passage_and_its_file_each_over_the_best(tmp_path):
    index = _pages_and_a_passing_mention(tmp_path)
    try:
        response = search(index, SearchRequest("walrus", mode=SearchMode.KEYWORD, per_file=9))
        passages = [p for hit in response.results for p in hit.passages]
        best = max(p.keyword_score for p in passages)
        best_file = max(p.file_keyword_score for p in passages)
        for p in passages:
            expected = (p.keyword_score / best + p.file_keyword_score / best_file) / 2
            assert p.score == pytest.approx(expected, abs=1e-3)
        assert max(p.score for p in passages) <= 1.0
    finally:
        index.close()


@pytest.mark.parametrize("mode", list(SearchMode))
def test_a_search_parses_its_query_once(index, monkeypatch, mode):
    """Every stage (the FTS5 expression, the lookup test, coverage, highlights) reads one parsed
    Query: the text is split into words and pieces once per search (issue 24: five times)."""
    from explorer.core.retrieval import query

    calls = {"keyword_pieces": 0, "query_terms": 0}
    for name in calls:
        real = getattr(query, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(query, name, counted)
    response = search(index, SearchRequest("install the package on linux", mode=mode))
    assert response.results
    assert calls == {"keyword_pieces": 1, "query_terms": 1}


def test_while_a_folder_is_embedded_files_that_hold_the_words_are_not_outranked_by_any_vector(
    tmp_path, settings_for, fake_embedder
):
    """Files embedded first say nothing of snapshots, though one comes near by meaning (the
    fake embedder hears "snaps" in "snapshoot"); the notes about snapshots, added after, wait
    for their vectors. Hybrid search still puts the notes first, and says why."""
    unrelated = {
        f"manual/page{i:02d}.md": f"# Page {i}\n\nTypesetting hyphenation rules, fonts and "
        f"margins, chapter {i}, with footnotes and a bibliography.\n"
        for i in range(30)
    }
    unrelated["manual/photo.md"] = "# Photos\n\nA snapshoot of the garden at dawn.\n"
    root = write_files(tmp_path / "docs", unrelated)
    index = Index(settings_for(root), embedder=fake_embedder)
    try:
        Indexer(index).sync()
        notes = {
            f"notes/snap{i}.md": f"# Snapshot {i}\n\nTake a snapshot of the volume before an "
            f"upgrade; the snapshot is kept {i + 2} days.\n"
            for i in range(4)
        }
        write_files(root, notes)
        Indexer(index).update_paths(sorted(notes), embed=False)
        response = run(index, "snapshot")
    finally:
        index.close()
    assert response.vector_leg == VectorLeg.ANSWERED
    assert {hit.path for hit in response.results[:4]} == set(notes)
    assert "0% of the keyword leg's best passages have vectors yet" in response.fusion


def test_a_hybrid_search_ranks_its_keyword_leg_while_the_query_is_embedded(built, monkeypatch):
    index, embedder = built
    ranking = threading.Event()
    ranked_calls = []
    real_ranked = index.keywords._ranked

    def ranked(match, limit):
        ranked_calls.append(match)
        ranking.set()
        return real_ranked(match, limit)

    seen_while_embedding = []
    real_embed = embedder.embed_query

    def embed_query(text):
        seen_while_embedding.append(ranking.wait(5))  # the keyword leg starts meanwhile
        return real_embed(text)

    monkeypatch.setattr(index.keywords, "_ranked", ranked)
    monkeypatch.setattr(embedder, "embed_query", embed_query)
    response = search(index, SearchRequest("compost rain", mode=SearchMode.HYBRID))
    assert seen_while_embedding == [True]
    assert len(ranked_calls) == 1  # ranked once, ahead; the leg itself read what was kept
    assert response.results[0].path.startswith("x/weak")
    assert response.vector_leg is VectorLeg.ANSWERED


def test_what_fails_while_the_query_is_embedded_reaches_the_searcher():
    from explorer.core.retrieval.search import embedded_while

    def fails(_text):
        raise QueryError("the model failed")

    def works():
        return None

    with pytest.raises(QueryError, match="model failed"):
        embedded_while(fails, "q", works)

    def also_fails():
        raise QueryError("the keyword index failed")

    with pytest.raises(QueryError, match="keyword index failed"):
        embedded_while(fails, "q", also_fails)
    vector = np.ones(3)
    assert embedded_while(lambda _t: vector, "q", works) is vector


def test_a_result_in_an_api_page_names_the_entry_its_words_stand_in(tmp_path):
    """A manual's page of functions is cut at its sections, so one passage holds several
    entries: a result names the one its snippet's words stand in (``Module Contents >
    csv.DictReader``), in the CLI's JSON as ``entry``; a Markdown passage names none."""
    root = write_files(
        tmp_path / "root",
        {"library/csv.html": API_PAGE, "notes.md": "# Notes\n\nA reader object of my own.\n"},
    )
    settings = Settings.for_root(root, tmp_path / "index", model=FakeEmbedder.name)
    index = Index(settings, embedder=FakeEmbedder())
    try:
        Indexer(index).sync()
        asked = {
            "map each row": "csv.DictReader",
            "field names": "fieldnames",
            "return a new list": "PyList_New",
            "run the command": "-c <command>",
            "set of rules": "dialect",
        }
        for query, entry in asked.items():
            response = run(index, query, mode=SearchMode.KEYWORD)
            hit = next(hit for hit in response.results if hit.path == "library/csv.html")
            assert hit.passages[0].entry == entry, query
            passage = hit.passages[0]
            assert passage.label.endswith(f" > {entry}"), passage.label
            # The result opens at the entry's signature, inside its passage.
            [chunk] = index.keywords.chunks_by_id([passage.chunk_id]).values()
            signature = chunk.text.split("\n")[passage.opens_at - chunk.start_line]
            assert entry.split(" ")[0].split(".")[-1] in signature, signature
            data = SearchAnswer.build(AgentAnswer(response, ContextOptions())).to_json()
            shown = next(h for h in data["results"] if h["path"] == "library/csv.html")
            assert shown["passages"][0]["entry"] == entry
        response = run(index, "reader object of my own", mode=SearchMode.KEYWORD)
        assert response.results[0].path == "notes.md"
        assert response.results[0].passages[0].entry == ""
        assert (
            response.results[0].passages[0].opens_at == response.results[0].passages[0].start_line
        )
        data = SearchAnswer.build(AgentAnswer(response, ContextOptions())).to_json()
        assert "entry" not in data["results"][0]["passages"][0]
    finally:
        index.close()


def test_a_passage_matched_by_meaning_alone_names_the_entry_that_fills_most_of_it():
    """No word of the query in the passage (a semantic match): the innermost entry holding at
    least half its lines names it, else none (a passage of many short entries)."""
    from explorer.core.ingest.documents import EntrySpan
    from explorer.core.store.manifest_records import StoredChunk

    walk, fwalk = EntrySpan("os.walk", 1, 30), EntrySpan("os.fwalk", 32, 60)
    member = EntrySpan("Walker.step", 12, 24)
    text = "\n".join(f"line {n}" for n in range(10, 31))

    def chunk(*entries: EntrySpan) -> StoredChunk:
        return StoredChunk(
            "c", "os.html", 0, "Files", 10, 30, 0, len(text), text, "", None, entries
        )

    def named(passage: StoredChunk, terms: list[str]) -> str | None:
        entry = search_module.named_entry(passage, word_matches(passage.text, terms))
        return entry.title if entry is not None else None

    assert named(chunk(walk, member), ["tree"]) == "Walker.step"
    assert named(chunk(walk), ["tree"]) == "os.walk"
    short = [EntrySpan(f"os.O_{n}", 10 + 2 * n, 11 + 2 * n) for n in range(10)]
    assert named(chunk(*short), ["tree"]) is None
    assert named(chunk(*short), ["14"]) == "os.O_2"
    assert named(chunk(walk, fwalk), []) == "os.walk"


def _star_notes(tmp_path):
    """Four notes on telescopes, indexed with the fake model: (the notes, root, index)."""
    notes = {f"notes/star{i}.md": f"# Star {i}\n\nA telescope for star {i}.\n" for i in range(4)}
    root = write_files(tmp_path / "root", notes)
    settings = Settings.for_root(root, tmp_path / "index", model=FakeEmbedder.name)
    index = Index(settings, embedder=FakeEmbedder())
    Indexer(index).sync()
    return notes, root, index


def test_a_file_updated_while_a_search_reads_stays_in_its_answer(tmp_path, monkeypatch):
    """The live index replaces a file's chunks between the keyword ranking and the reading of
    the passages ranked: the answer still holds the file, as the ranking saw it."""
    notes, root, index = _star_notes(tmp_path)
    try:
        updated = edit_after_first_ranking(
            monkeypatch, index, root, "notes/star0.md", "# Star 0\n\nNo optics here any more.\n"
        )
        response = search(index, SearchRequest("telescope", mode=SearchMode.KEYWORD))
        assert updated, "the search ranked its keyword leg"
        assert sorted(hit.path for hit in response.results) == sorted(notes)
        star0 = next(hit for hit in response.results if hit.path == "notes/star0.md")
        assert "telescope" in star0.passages[0].snippet.casefold()
        monkeypatch.undo()
        after = search(index, SearchRequest("telescope", mode=SearchMode.KEYWORD))
        assert "notes/star0.md" not in {hit.path for hit in after.results}
    finally:
        index.close()


def test_a_readers_search_lets_other_threads_read_the_index_meanwhile(built):
    """A read-only index (another process writes) holds one connection under a lock; a
    search's view of one commit must not hold that lock while it waits for the query's vector
    from another thread, which may read the index too (it did, and the search never
    returned: the CLI's hybrid search over two folders hung)."""
    index, _embedder = built
    reader = Index(index.settings, embedder=FakeEmbedder(), read_only=True)
    real_embed = reader.embedder.embed_query

    def embed_reading_the_index(text):
        reader.keywords.get_meta("model")  # as a model's cached export is looked up
        return real_embed(text)

    reader.embedder.embed_query = embed_reading_the_index
    answers = []
    worker = threading.Thread(
        target=lambda: answers.append(
            search(reader, SearchRequest("compost rain", mode=SearchMode.HYBRID))
        ),
        daemon=True,
    )
    worker.start()
    worker.join(20)
    assert not worker.is_alive(), "the search never returned"  # (closing would wait too)
    reader.close()
    assert answers[0].results[0].path.startswith("x/weak")


def test_what_a_view_of_an_older_commit_reads_is_not_kept_for_the_newer_one(tmp_path):
    """A value computed in a view (a search's one commit) after a write landed is that commit's:
    the next search, after the view, reads the table as it is now, not the older value."""
    from explorer.core.store.keyword_statistics import KeywordTable

    _notes, root, index = _star_notes(tmp_path)
    try:
        keywords = index.keywords
        before = keywords.statistics.totals(KeywordTable.CHUNKS)
        with keywords.one_view():
            keywords.file("notes/star0.md")  # the view reads: its commit is fixed
            land_edit(index, root, "notes/star9.md", "# Star 9\n\nMany more words " * 20 + "\n")
            seen_in_view = keywords.statistics.totals(KeywordTable.CHUNKS)
        now = keywords.statistics.totals(KeywordTable.CHUNKS)
        assert seen_in_view == before  # the view's commit
        assert now.rows == before.rows + 1 and now.tokens > before.tokens
    finally:
        index.close()
