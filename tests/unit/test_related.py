"""Related files: nearest other files by meaning, each explained by a pair of passages."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from explorer.api.answers import RelatedAnswer
from explorer.core.indexing.indexer import Indexer
from explorer.core.models import FileState
from explorer.core.retrieval.related import (
    DEFAULT_TUNING,
    FileNotIndexed,
    NoVectorYet,
    RelatedError,
    link_list_share,
    related_files,
)
from explorer.core.retrieval.related_structure import folder_structure, is_release_notes
from explorer.core.store.index import Index
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder

CORPUS = {
    "space/telescopes.md": "# Telescopes\n\nTelescope lenses gather starlight from distant"
    " galaxies.\n\n## Mirrors\n\nReflecting telescope mirrors focus starlight.\n",
    "space/planets.md": "# Planets\n\nPlanets orbit stars; telescope images show distant planets."
    "\n\n## Moons\n\nMoons orbit planets and reflect starlight.\n",
    "space/galaxies.md": "# Galaxies\n\nDistant galaxies hold billions of stars and starlight.\n",
    "kitchen/bread.md": "# Bread\n\nKnead the dough, let the yeast rise, bake the bread.\n\n"
    "## Flour\n\nStrong flour makes chewy bread dough.\n",
    "kitchen/pasta.md": "# Pasta\n\nBoil salted water, cook the pasta dough until tender.\n",
    "kitchen/soup.py": "def make_soup(water, salt):\n    '''Boil water with salt.'''\n"
    "    return water + salt\n",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    base = tmp_path_factory.mktemp("related")
    root = write_files(base / "root", CORPUS)
    (root / "blob.txt").write_bytes(b"\x00\x01binary")
    settings = Settings.for_root(root, base / "index", model=FakeEmbedder.name)
    # A wide fake embedder: fewer hash collisions, so topics separate clearly.
    opened = Index(settings, embedder=FakeEmbedder(dimension=1024))
    Indexer(opened).sync()
    yield opened
    opened.close()


def lines_of(index, path: str) -> list[str]:
    return (index.settings.root / path).read_text(encoding="utf-8").splitlines()


PADDED = replace(DEFAULT_TUNING, needs_evidence=False)
"""Every file a source passage's nearest held is listed, evidence or not."""


@pytest.mark.parametrize("path", sorted(CORPUS))
@pytest.mark.parametrize("tuning", [DEFAULT_TUNING, PADDED], ids=["default", "padded"])
def test_related_never_returns_the_file_itself(index, path, tuning):
    related = related_files(index, path, limit=10, tuning=tuning)
    paths = [r.path for r in related]
    assert path not in paths
    assert len(paths) == len(set(paths))
    if tuning is PADDED:
        assert len(paths) == len(CORPUS) - 1
    scores = [r.score for r in related]
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize(
    ("path", "family"),
    [("space/telescopes.md", "space/"), ("kitchen/bread.md", "kitchen/")],
)
def test_nearest_file_shares_the_topic(index, path, family):
    related = related_files(index, path, limit=2)
    assert len(related) == 2
    assert related[0].path.startswith(family)


def test_passage_pair_is_inside_each_file(index):
    source = "space/telescopes.md"
    source_lines = lines_of(index, source)
    for other in related_files(index, source, limit=10):
        other_lines = lines_of(index, other.path)
        for passage, lines in (
            (other.source_passage, source_lines),
            (other.related_passage, other_lines),
        ):
            assert 1 <= passage.start_line <= passage.end_line <= len(lines)
            shown = " ".join(lines[passage.start_line - 1 : passage.end_line])
            assert " ".join(passage.text.split()) in " ".join(shown.split())


def test_pair_explains_the_match(index):
    first = related_files(index, "space/planets.md", limit=1)[0]
    assert first.path.startswith("space/")
    shared = set(first.source_passage.text.lower().split()) & set(
        first.related_passage.text.lower().split()
    )
    assert shared & {"starlight.", "stars", "telescope", "distant", "starlight"}


def test_limit_is_respected(index):
    assert len(related_files(index, "kitchen/pasta.md", limit=3, tuning=PADDED)) == 3
    assert len(related_files(index, "kitchen/pasta.md", limit=3)) <= 3


def test_json_shape(index):
    neighbours = related_files(index, "kitchen/pasta.md", limit=1)
    data = RelatedAnswer.build("kitchen/pasta.md", neighbours).to_json()
    assert data["path"] == "kitchen/pasta.md"
    [item] = data["related"]
    assert set(item) == {
        "path",
        "title",
        "score",
        "source_passage",
        "related_passage",
        "linked",
        "why",
        "signals",
    }
    assert item["linked"] is False and item["why"] == neighbours[0].reasons.text()
    assert set(item["source_passage"]) == {"heading", "start_line", "end_line", "excerpt"}
    assert item["source_passage"]["excerpt"] == neighbours[0].source_passage.text
    assert "page" not in item["source_passage"]  # a page only in a paged document (PDF)


@pytest.mark.parametrize("path", ["nope.md", "space", "../outside.md"])
def test_unknown_file_is_a_related_error(index, path):
    with pytest.raises(FileNotIndexed, match="not in the index"):
        related_files(index, path)


def test_skipped_file_has_no_neighbours_and_says_why(index):
    with pytest.raises(NoVectorYet, match="binary") as caught:
        related_files(index, "blob.txt")
    assert caught.value.state == FileState.SKIPPED and caught.value.reason.startswith("binary")


def test_limit_below_one_is_an_error(index):
    with pytest.raises(RelatedError, match="^limit must be at least 1$"):
        related_files(index, "kitchen/pasta.md", limit=0)


def test_file_without_vectors_yet_is_an_error(tmp_path, settings_for, fake_embedder):
    root = write_files(tmp_path / "root", {"a.md": "alpha words\n", "b.md": "beta words\n"})
    index = Index(settings_for(root), embedder=fake_embedder)
    try:
        Indexer(index).sync(embed=False)
        with pytest.raises(NoVectorYet) as caught:
            related_files(index, "a.md")
        assert caught.value.state == FileState.PENDING
        assert f"run `{index.settings.repair_command}` to finish embedding" in str(caught.value)
    finally:
        index.close()


def test_single_file_has_no_related_files(tmp_path, settings_for, fake_embedder):
    root = write_files(tmp_path / "root", {"only.md": "# Only\n\nlonely words\n"})
    index = Index(settings_for(root), embedder=fake_embedder)
    try:
        Indexer(index).sync()
        assert related_files(index, "only.md") == []
    finally:
        index.close()


# -- the method of issue 10: passage pairs, length, more like this --------------------------------
CACHE_SECTIONS = {
    "Keys": "Cache keys combine the request method, host and path; a custom key adds cookies.",
    "Expiry": "Cached responses expire after max age; stale entries are revalidated with etags.",
    "Purge": "Purging removes cached entries by key prefix through the admin endpoint.",
}
UNRELATED_SECTIONS = [
    "Log rotation compresses old files nightly and keeps thirty days.",
    "Worker processes pin to cores; connection limits follow file descriptors.",
    "TLS certificates renew automatically sixty days before they lapse.",
    "Health probes mark upstream servers down after three failures.",
    "Rate limits count requests per client address in a sliding window.",
    "Access control lists allow or deny networks by prefix.",
]
BREAD = "# Bread\n\n## Dough\n\nKnead the dough and let the yeast rise.\n\n## Baking\n\nBake it.\n"


def markdown(title: str, sections: list[tuple[str, str]]) -> str:
    return f"# {title}\n\n" + "\n".join(f"## {head}\n\n{text}\n" for head, text in sections)


@pytest.fixture
def indexed(tmp_path):
    """Index ``files`` with a wide fake embedder; returns the open index (closed after)."""
    opened: list[Index] = []

    def build(files: dict[str, str], **settings) -> Index:
        root = write_files(tmp_path / "root", files)
        index_settings = Settings.for_root(
            root, tmp_path / "index", model=FakeEmbedder.name, **settings
        )
        index = Index(index_settings, embedder=FakeEmbedder(dimension=1024))
        opened.append(index)
        Indexer(index).sync()
        return index

    yield build
    for index in opened:
        index.close()


def test_a_one_line_stub_does_not_crowd_out_a_real_page(indexed):
    # The stub's one line mixes the source's words, so its vector is nearest to the mean of
    # the source's passages (the old method put it first); the CDN page shares every passage.
    cdn = [
        (f"{head} at the edge", text + " Edge nodes apply it.")
        for head, text in CACHE_SECTIONS.items()
    ]
    cdn += [("Regions", UNRELATED_SECTIONS[0]), ("Billing", UNRELATED_SECTIONS[1])]
    index = indexed(
        {
            "caching.md": markdown("Caching", list(CACHE_SECTIONS.items())),
            "stub.md": "# Caching\n\nCache keys, expiry, purge.\n",
            "cdn.md": markdown("CDN edge caching", cdn),
            "bread.md": BREAD,
        }
    )
    related = related_files(index, "caching.md", limit=3)
    paths = [r.path for r in related]
    assert paths[0] == "cdn.md"
    stub = next(r for r in related if r.path == "stub.md")
    assert stub.score <= related[0].score - 0.25


def test_several_strong_passage_matches_beat_one_close_average(indexed):
    # The handbook holds the source's three sections among six others (its mean vector is far
    # from the source's); the overview blends the source's words in every passage (its mean
    # is close, but no passage is). Related pages share passages, not averages.
    handbook = list(CACHE_SECTIONS.items())
    handbook += [(f"Topic {n}", text) for n, text in enumerate(UNRELATED_SECTIONS)]
    overview = [
        ("In short", "Caching: keys, expiry and purge of cached entries, briefly."),
        ("Why", "Cache keys and max age decide what is cached; purge when stale."),
        ("More", "Cached responses, custom keys, etags and the admin endpoint."),
    ]
    index = indexed(
        {
            "caching.md": markdown("Caching", list(CACHE_SECTIONS.items())),
            "handbook.md": markdown("Operations handbook", handbook),
            "overview.md": markdown("Caching overview", overview),
            "bread.md": BREAD,
        }
    )
    related = related_files(index, "caching.md", limit=3)
    assert [r.path for r in related][:2] == ["handbook.md", "overview.md"]
    # the explaining pair is one of the shared sections, found in both files
    first = related[0]
    assert first.related_passage.heading.endswith(tuple(CACHE_SECTIONS))
    assert first.source_passage.heading.endswith(tuple(CACHE_SECTIONS))


def test_scores_spread_over_the_whole_range(index):
    # the nearest file scores high, files about something else score (next to) nothing
    related = related_files(index, "space/telescopes.md", limit=10, tuning=PADDED)
    by_path = {r.path: r.score for r in related}
    assert related[0].path.startswith("space/") and related[0].score >= 0.3
    assert by_path["kitchen/bread.md"] <= 0.05 and by_path["kitchen/pasta.md"] <= 0.05
    # listed by default only with some evidence, and then with the same score
    for other in related_files(index, "space/telescopes.md", limit=10):
        assert other.score == by_path[other.path]


def test_a_long_file_still_finds_neighbours_past_its_own_passages(indexed):
    # 60 near-identical passages of its own come back first from the vector store for each
    # passage; the neighbours must still be found and the file itself never listed.
    long_text = markdown(
        "Mirrors",
        [
            (f"Mirror {n}", f"Polished telescope mirror number {n} reflects starlight.")
            for n in range(60)
        ],
    )
    index = indexed(
        {
            "mirrors.md": long_text,
            "lenses.md": "# Lenses\n\nTelescope lenses and mirrors gather starlight.\n\n"
            "## Coatings\n\nMirror coatings reflect starlight for the telescope.\n",
            "bread.md": BREAD,
        }
    )
    related = related_files(index, "mirrors.md", limit=5)
    assert [r.path for r in related][0] == "lenses.md"
    assert "mirrors.md" not in {r.path for r in related}


def test_passages_without_vectors_yet_take_no_part(indexed):
    index = indexed(
        {
            "caching.md": markdown("Caching", list(CACHE_SECTIONS.items())),
            "cdn.md": markdown("CDN caching", list(CACHE_SECTIONS.items())),
            "proxy.md": markdown("Proxy caching", list(CACHE_SECTIONS.items())[1:]),
            "bread.md": BREAD,
        }
    )
    # As if embedding had not reached them yet: the source's first passages, and every
    # passage of the CDN page.
    source_ids = index.keywords.chunk_ids("caching.md")
    waiting, embedded = source_ids[:2], source_ids[2:]
    index.vectors.delete_chunks(waiting)
    index.vectors.delete_chunks(index.keywords.chunk_ids("cdn.md"))
    related = related_files(index, "caching.md", limit=3)
    # The source answers from its embedded passages; a file without vectors waits its turn.
    assert [r.path for r in related][0] == "proxy.md"
    assert "cdn.md" not in {r.path for r in related}
    chunks = index.keywords.chunks_by_id(embedded)
    starts = {chunk.start_line for chunk in chunks.values()}
    assert all(r.source_passage.start_line in starts for r in related)


def test_the_keyword_signal_uses_the_files_distinctive_terms(indexed):
    index = indexed(
        {
            "a.md": "# Alpha\n\nThe zorblax widget tunes the frobnicator.\n\nThe widget is blue.\n",
            "b.md": "# Beta\n\nEvery zorblax needs a frobnicator nearby.\n",
            "c.md": "# Gamma\n\nThe widget is blue and the widget is round.\n",
            **{f"more/{n}.md": f"# Note {n}\n\nThe widget is the colour {n}.\n" for n in range(6)},
        }
    )
    terms = index.keywords.distinctive_terms("a.md", 5)
    assert {"zorblax", "frobnic"} <= set(terms)  # stemmed as the index stems them
    assert not {"the", "is", "widget"} & set(terms)  # in most chunks: not distinctive
    hits = index.keywords.more_like_this(terms, 10, exclude_path="a.md")
    assert hits and hits[0][1] == "b.md"
    assert "a.md" not in {path for _cid, path, _score in hits}


# -- issue 31: boilerplate counts less, structure counts, each file says why ---------------------
PUBLISH = (
    "Publish",
    "Publish the function: zip the handler, upload the archive to the bucket, create a"
    " version, point the alias at it and test the invocation from the console.",
)


def test_a_passage_copied_into_many_files_counts_less_than_one_of_its_own(indexed):
    # The source ends with a "Publish" section copied, word for word, into four pages about
    # other things; expiry.md shares one paraphrased section and nothing copied. Before, the
    # four copies outranked it on their identical section; a passage with near copies in
    # four files is boilerplate, and explains little.
    files = {
        "caching.md": markdown("Caching", [*CACHE_SECTIONS.items(), PUBLISH]),
        "expiry.md": markdown(
            "Expiry",
            [
                ("Max age", "Responses expire after max age and then revalidate."),
                ("Regions", UNRELATED_SECTIONS[5]),
            ],
        ),
        "proxy.md": markdown(
            "Proxy caching",
            [next(iter(CACHE_SECTIONS.items())), ("Regions", UNRELATED_SECTIONS[0])],
        ),
        "bread.md": BREAD,
    }
    for n in range(4):
        files[f"lambda{n}.md"] = markdown(
            f"Lambda {n}", [PUBLISH, ("Topic", UNRELATED_SECTIONS[n + 1])]
        )
    index = indexed(files)
    related = related_files(index, "caching.md", limit=6)
    paths = [r.path for r in related]
    copies = [p for p in paths if p.startswith("lambda")]
    assert len(copies) == 4
    assert paths.index("expiry.md") < min(paths.index(p) for p in copies)


def test_passage_weight_falls_as_near_copies_fill_the_neighbours():
    from explorer.core.retrieval.related import passage_weight

    assert passage_weight(0, 40) == passage_weight(1, 40) == 1.0
    weights = [passage_weight(n, 40) for n in (2, 4, 10, 40)]
    assert weights == sorted(weights, reverse=True)
    assert 0.7 < weights[0] < 1.0 and weights[-1] < 0.05


LINKED_CORPUS = {
    # source: links to b; c links to the source; d2 and the source are cited by hub
    "docs/a.md": "---\ntags: [optics, rare]\n---\n# Lenses\n\n"
    "Telescope lenses gather starlight. See [mirrors](b.md).\n\n## Coatings\n\n"
    "Lens coatings cut glare from starlight.\n",
    "docs/b.md": "# Mirrors\n\nTelescope mirrors gather starlight too.\n",
    "notes/c.md": "# Eyepieces\n\nEyepieces of a telescope magnify starlight. Back to"
    " [lenses](../docs/a.md).\n",
    "notes/d2.md": "# Filters\n\nFilters and lens coatings cut glare from starlight.\n",
    "notes/e2.md": "---\ntags: [rare]\n---\n# Mounts\n\nMounts hold telescope lenses steady.\n",
    "notes/f.md": "# Domes\n\nTelescope domes shelter starlight observers.\n",
    # twins of d2 and e2, without the co-citation or the tag (and first by name)
    "notes/d1.md": "# Filters\n\nFilters and lens coatings cut glare from starlight.\n",
    "notes/e1.md": "# Mounts\n\nMounts hold telescope lenses steady.\n",
    "hub.md": "# Optics\n\n- [Lenses](docs/a.md)\n- [Filters](notes/d2.md)\n",
    "kitchen/bread.md": BREAD,
}


@pytest.fixture
def linked(indexed):
    return indexed(LINKED_CORPUS)


def by_path(related):
    return {r.path: r for r in related}


def test_each_file_names_the_signals_that_put_it_there(linked):
    from explorer.core.retrieval.related import Signal

    found = by_path(related_files(linked, "docs/a.md", limit=10))
    assert found["docs/b.md"].linked is True
    assert found["docs/b.md"].reasons.signals[:2] == (Signal.LINKED, Signal.SAME_SECTION)
    assert found["notes/c.md"].linked is False
    assert Signal.LINKS_HERE in found["notes/c.md"].reasons.signals
    assert Signal.CITED_TOGETHER in found["notes/d2.md"].reasons.signals
    assert found["notes/e2.md"].reasons.tags == ("rare",)
    assert "tagged #rare" in found["notes/e2.md"].reasons.text()
    assert Signal.SHARED_PASSAGES in found["docs/b.md"].reasons.signals
    assert found["docs/b.md"].reasons.text().startswith("linked · same section · ")


def test_co_citation_and_a_rare_tag_lift_a_file_over_its_twin(linked):
    # notes/d2.md is cited with the source by hub.md, notes/e2.md shares its rare tag; their
    # twins say the same words with neither, and come after them
    paths = [r.path for r in related_files(linked, "docs/a.md", limit=12)]
    assert paths.index("notes/d2.md") < paths.index("notes/d1.md")
    assert paths.index("notes/e2.md") < paths.index("notes/e1.md")


def test_the_explanation_reads_as_a_line():
    from explorer.core.retrieval.related import Reasons, Signal

    reasons = Reasons(
        (Signal.LINKED, Signal.SAME_SECTION, Signal.SHARED_PASSAGES), shared_passages=3
    )
    assert reasons.text() == "linked · same section · 3 shared passages"
    one = Reasons((Signal.SHARED_TAGS, Signal.SHARED_PASSAGES), 1, ("nginx", "ssl", "tls"))
    assert one.text() == "tagged #nginx, #ssl… · 1 shared passage"
    assert Reasons().text() == ""


def test_unlinked_lists_only_the_files_the_source_does_not_link_to(linked):
    every = by_path(related_files(linked, "docs/a.md", limit=10))
    unlinked = related_files(linked, "docs/a.md", limit=10, unlinked=True)
    assert "docs/b.md" in every and "docs/b.md" not in by_path(unlinked)
    assert all(not r.linked for r in unlinked)
    assert "notes/c.md" in by_path(unlinked)  # it links here; the source does not link back
    # each with the pair of passages a link would join
    pair = by_path(unlinked)["notes/c.md"]
    assert "starlight" in pair.source_passage.text and "starlight" in pair.related_passage.text


def test_a_section_landing_page_counts_less_than_its_pages(indexed):
    page = "# Caching\n\n" + " ".join(CACHE_SECTIONS.values()) + "\n"
    index = indexed(
        {
            "guide/caching.md": markdown("Caching", list(CACHE_SECTIONS.items())),
            "guide/_index.md": page,
            "other/cache.md": page,
            "kitchen/bread.md": BREAD,
        }
    )
    paths = [r.path for r in related_files(index, "guide/caching.md", limit=3)]
    # the same text: as a page of another section it ranks above the section's landing page
    assert paths.index("other/cache.md") < paths.index("guide/_index.md")


@pytest.mark.parametrize("factor", [0.5, 1.0])
def test_release_notes_count_less_unless_the_page_links_to_them(indexed, factor):
    """Release notes say, one entry each, a little of every page: the same words in a page of
    their own rank above them (with the factor at 1 the name decides the tie, and the release
    notes come first). A page that links to them, and release notes among themselves, are
    not touched."""
    page = "# Caching\n\n" + " ".join(CACHE_SECTIONS.values()) + "\n"
    index = indexed(
        {
            "guide/caching.md": markdown("Caching", list(CACHE_SECTIONS.items())),
            "guide/upgrade.md": "# Upgrade\n\nRead the [release notes](../notes/releases.md).\n",
            "notes/releases.md": page,
            "notes/whatsnew-2.md": page,
            "other/cache.md": page,
            "kitchen/bread.md": BREAD,
        }
    )
    tuning = replace(DEFAULT_TUNING, release_notes_factor=factor)
    paths = [r.path for r in related_files(index, "guide/caching.md", limit=4, tuning=tuning)]
    assert (paths.index("other/cache.md") < paths.index("notes/releases.md")) == (factor < 1)
    structure = folder_structure(index)
    assert structure.evidence("guide/caching.md", "notes/releases.md").release_notes
    assert not structure.evidence("guide/upgrade.md", "notes/releases.md").release_notes
    assert not structure.evidence("notes/whatsnew-2.md", "notes/releases.md").release_notes
    assert not structure.evidence("notes/releases.md", "other/cache.md").release_notes


@pytest.mark.parametrize("bound", [DEFAULT_TUNING.release_notes_listed, None])
def test_a_series_of_release_notes_takes_one_place_in_the_list(indexed, bound):
    """A manual's "what's new" pages, one a version, each name a module in passing: a page
    they all match lists the best of them and, in the other places, pages of its own subject.
    Notes the page links to are the writer's choice and stay."""
    page = "# Caching\n\n" + " ".join(CACHE_SECTIONS.values()) + "\n"
    notes = {f"whatsnew/3.{minor}.md": page for minor in range(1, 5)}
    index = indexed(
        {
            "guide/caching.md": markdown("Caching", list(CACHE_SECTIONS.items())),
            "guide/purging.md": "# Purging\n\n" + CACHE_SECTIONS["Purge"] + "\n\n"
            "See [3.1](../whatsnew/3.1.md) and [3.2](../whatsnew/3.2.md).\n",
            "other/cache.md": page,
            "kitchen/bread.md": BREAD,
            **notes,
        }
    )
    tuning = replace(DEFAULT_TUNING, release_notes_listed=bound)
    listed = [r.path for r in related_files(index, "guide/caching.md", limit=5, tuning=tuning)]
    series = [path for path in listed if path.startswith("whatsnew/")]
    assert "other/cache.md" in listed
    assert len(series) == (1 if bound == 1 else 4)
    # the page linking two of them lists both: it sends its reader there
    linking = [r.path for r in related_files(index, "guide/purging.md", limit=5)]
    assert {"whatsnew/3.1.md", "whatsnew/3.2.md"} <= set(linking)
    # and release notes among themselves are a series a reader walks
    among = [r.path for r in related_files(index, "whatsnew/3.1.md", limit=5)]
    assert len([path for path in among if path.startswith("whatsnew/")]) == 3


def directory_corpus(pages: int) -> dict[str, str]:
    """``pages`` pages of one manual, each of its own subject, and a table of contents
    (``contents.md``) linking them all, one title a line."""
    subjects = [f"Module{n} reads and writes format{n} records" for n in range(pages)]
    files = {
        f"library/module{n}.md": f"# Module{n}\n\n{subject}. It keeps"
        f" its format{n} caches warm.\n\n## Details\n\nThe module{n} option{n} tunes format{n}.\n"
        for n, subject in enumerate(subjects)
    }
    files["contents.md"] = "# Contents\n\n" + "".join(
        f"- [Module{n}: {subject}](library/module{n}.md)\n" for n, subject in enumerate(subjects)
    )
    return files


@pytest.mark.parametrize("factor", [DEFAULT_TUNING.directory_factor, 1.0])
def test_a_table_of_contents_of_the_whole_folder_is_not_a_related_file(indexed, factor):
    """A page linking to a large share of the files (a table of contents, a general index)
    matches every page it lists, by a line and a link each: it is how a reader finds pages,
    not a page about any one of them."""
    index = indexed(directory_corpus(45))
    structure = folder_structure(index)
    assert structure.is_directory("contents.md")
    assert structure.evidence("library/module3.md", "contents.md").directory
    assert not structure.evidence("contents.md", "library/module3.md").directory
    tuning = replace(DEFAULT_TUNING, directory_factor=factor)
    listed = [r.path for r in related_files(index, "library/module3.md", limit=3, tuning=tuning)]
    assert ("contents.md" in listed) is (factor == 1.0)
    # however long the list asked for: counting nothing, it is not padded with the directory
    every = [r.path for r in related_files(index, "library/module3.md", limit=60, tuning=tuning)]
    assert ("contents.md" in every) is (factor == 1.0)


def test_a_small_folders_readme_linking_every_page_is_no_directory(indexed):
    """Below ``DIRECTORY_LINKS`` files a page linking them all is a small folder's guide."""
    index = indexed(directory_corpus(12))
    assert not folder_structure(index).is_directory("contents.md")
    listed = [r.path for r in related_files(index, "library/module3.md", limit=3)]
    assert "contents.md" in listed


@pytest.mark.parametrize(
    ("path", "notes"),
    [
        ("CHANGELOG.md", True),
        ("docs/release-notes/v1.2.md", True),
        ("content/nginx/releases.md", True),
        ("whatsnew/3.7.html", True),
        ("NEWS", True),
        ("docs/whats_new.rst", True),
        ("guides/backups.md", False),
        ("news-feed.md", False),
        ("notes/release-plan.md", False),
    ],
)
def test_release_notes_are_known_by_their_names(path, notes):
    assert is_release_notes(path) is notes


def contents_page(title: str, entries: dict[str, str]) -> str:
    items = "".join(f'<li><a href="{href}">{text}</a></li>' for href, text in entries.items())
    return f"<html><body><h1>{title}</h1><ul>{items}</ul></body></html>"


@pytest.mark.parametrize("factor", [DEFAULT_TUNING.contents_factor, 1.0])
def test_a_contents_page_counts_less_than_a_page_of_its_own(indexed, factor):
    """A manual's table of contents (HTML: its links known by line, not by syntax) lists the
    source's sections and links to it; a page of another folder says the same in prose. The
    prose page ranks first, although the contents page has the link; with the factor at 1
    the contents page would win."""
    sections = {
        "caching.html#keys": "Cache keys: request method, host",
        "caching.html#expiry": "Cached responses: max age, etags",
        "caching.html#purge": "Purging cached entries by key prefix",
        "../kitchen/bread.html": "Bread dough and yeast",
    }
    prose = "<p>" + " ".join(sections.values()) + "</p>"
    body = "".join(f"<h2>{head}</h2><p>{text}</p>" for head, text in CACHE_SECTIONS.items())
    index = indexed(
        {
            "guide/caching.html": f"<html><body><h1>Caching</h1>{body}</body></html>",
            "guide/contents.html": contents_page("Contents", sections),
            "other/cache.html": f"<html><body><h1>Notes</h1>{prose}</body></html>",
            "kitchen/bread.html": "<html><body><h1>Bread</h1><p>Knead it.</p></body></html>",
        }
    )
    structure = folder_structure(index)
    assert link_list_share(index, "guide/contents.html", structure) == 1.0
    assert link_list_share(index, "other/cache.html", structure) == 0.0
    tuning = replace(DEFAULT_TUNING, contents_factor=factor)
    found = related_files(index, "guide/caching.html", limit=3, tuning=tuning)
    paths = [r.path for r in found]
    prose_first = paths.index("other/cache.html") < paths.index("guide/contents.html")
    assert prose_first == (factor < 1.0), paths


def test_a_file_with_nothing_but_words_in_common_is_not_listed(indexed):
    # Ten mirrors of the source's sections set each source passage's background high; the
    # piano page shares words ("keys", "custom", "host") in another sense and stands above no
    # background; bread.md shares only the source's folder. Neither is listed, and the list is
    # shorter than asked rather than padded with them.
    files = {
        "guide/caching.md": markdown("Caching", list(CACHE_SECTIONS.items())),
        "guide/bread.md": BREAD,
        "piano.md": markdown(
            "Piano", [("Keys", "Piano keys: by custom the host tunes them before the evening.")]
        ),
    }
    for n in range(10):
        sections = [(head, f"{text} Mirror {n}.") for head, text in CACHE_SECTIONS.items()]
        files[f"mirrors/mirror{n}.md"] = markdown(f"Caching mirror {n}", sections)
    index = indexed(files)
    listed = {r.path for r in related_files(index, "guide/caching.md", limit=20)}
    assert "piano.md" not in listed
    assert "guide/bread.md" in listed  # a folder of two files ties them
    assert len(listed) < len(files) - 1
    # both were candidates: without the rule they fill the list
    every = {r.path for r in related_files(index, "guide/caching.md", limit=20, tuning=PADDED)}
    assert {"piano.md", "guide/bread.md"} <= every
    # a folder larger than ``small_folder`` ties nothing
    large = replace(DEFAULT_TUNING, small_folder=1)
    listed = {r.path for r in related_files(index, "guide/caching.md", limit=20, tuning=large)}
    assert "guide/bread.md" not in listed and "piano.md" not in listed


def test_a_link_a_tag_or_a_pair_above_background_is_evidence():
    from explorer.core.retrieval.related import _Pairs, has_evidence
    from explorer.core.retrieval.related_structure import Evidence

    pairs = _Pairs(DEFAULT_TUNING)
    pairs.add("above.md", 0.02, "s1", "o1")
    pairs.add("below.md", 0.0, "s1", "o2")
    nothing = Evidence()
    assert has_evidence(pairs, "above.md", nothing, DEFAULT_TUNING)
    assert not has_evidence(pairs, "below.md", nothing, DEFAULT_TUNING)
    for found in (
        Evidence(links_to=True),
        Evidence(linked_from=True),
        Evidence(cited_together=0.1),
        Evidence(links_alike=0.1),
        Evidence(tags=("rare",), tag_weight=0.5),
        Evidence(same_section=1 / math.log2(1 + 5)),  # a folder of five files
    ):
        assert has_evidence(pairs, "below.md", found, DEFAULT_TUNING), found
    # one of a folder of hundreds of notes ties nothing
    assert not has_evidence(
        pairs, "below.md", Evidence(same_section=1 / math.log2(1 + 500)), DEFAULT_TUNING
    )


def test_a_backlink_to_a_page_every_page_links_to_can_count_less():
    # thirty module pages link to one platform table; a guide and its topic link once
    from explorer.core.retrieval.related_structure import FolderStructure, LinkDamping

    modules = [f"module{i}.md" for i in range(30)]
    links = [(page, "specs.md") for page in modules] + [("guide.md", "topic.md")]
    links += [("index.md", "specs.md"), ("index.md", "module0.md")]
    paths = [*modules, "specs.md", "guide.md", "topic.md", "index.md"]
    structure = FolderStructure.build(paths, links, {})
    by_source = LinkDamping(backlink_by_source=True, cocitation_by_source=True)
    default = structure.evidence("specs.md", "module0.md")
    damped = structure.evidence("specs.md", "module0.md", by_source)
    assert default.linked_from and damped.linked_from
    assert default.link_weight == 1.0 and damped.link_weight < 0.7
    assert 0.0 < damped.cited_together < default.cited_together
    # a page linked from one page keeps the whole weight of that link
    assert structure.evidence("topic.md", "guide.md", by_source).link_weight == 1.0
    # a lower threshold damps more
    harder = LinkDamping(backlink_by_source=True, source_hub_links=1)
    assert structure.evidence("specs.md", "module0.md", harder).link_weight < damped.link_weight


def test_a_file_held_by_one_passage_pair_and_nothing_else_can_count_less():
    from explorer.core.retrieval.related import _Pairs, rank
    from explorer.core.retrieval.related_structure import Evidence

    pairs = _Pairs(DEFAULT_TUNING)
    for source_id in ("s0", "s1", "s2", "s3"):
        pairs.background[source_id], pairs.weight[source_id] = 0.0, 1.0
    pairs.add("lone.md", 0.2, "s0", "l0")  # one strong pair: 0.2 / 2
    pairs.add("linked.md", 0.2, "s1", "k0")  # the same, and it links to the source
    pairs.add("two.md", 0.12, "s0", "t0")  # two pairs: (0.12 + 0.06) / 2
    pairs.add("two.md", 0.06, "s1", "t1")
    assert [pairs.above_background(p) for p in ("lone.md", "two.md")] == [1, 2]
    files = ["lone.md", "linked.md", "two.md"]
    lengths = dict.fromkeys(files, 10_000)
    evidence = {"linked.md": Evidence(linked_from=True)}
    no_words = replace(DEFAULT_TUNING, keyword_weight=0.0, linked_from_weight=0.0)

    def order(tuning):
        return [p for _s, p in rank(files, pairs, {}, lengths, evidence, 2, tuning)]

    assert order(no_words) == ["linked.md", "lone.md", "two.md"]
    lone = replace(no_words, lone_pair_factor=0.5, lone_pair_passages=4)
    assert order(lone) == ["linked.md", "two.md", "lone.md"]  # a link is a tie: not lone
    # a source of fewer passages than lone_pair_passages: one pair is much of it
    assert order(replace(lone, lone_pair_passages=5)) == ["linked.md", "lone.md", "two.md"]


def test_every_neighbour_says_why_it_is_listed(index, linked):
    """A neighbour let in by a passage pair too weak to count as a shared passage, or by a
    weak co-citation, said nothing (9 % of the vault's neighbours): what let it in is named."""
    for source_index in (index, linked):
        for path in source_index.keywords.paths():
            if not path.endswith(".md"):
                continue
            for neighbour in related_files(source_index, path, limit=10):
                assert neighbour.reasons.text(), f"{path} -> {neighbour.path}: no reason"


def test_a_weak_pair_or_co_citation_is_named_when_nothing_stronger_is():
    from explorer.core.retrieval.related import Signal, reasons
    from explorer.core.retrieval.related_structure import Evidence

    assert reasons(None, 0, paired=True).text() == "close in meaning"
    weak = Evidence(cited_together=0.1)
    assert reasons(weak, 0, paired=True).signals == (Signal.CITED_TOGETHER, Signal.CLOSE_IN_MEANING)
    strong = Evidence(links_to=True, cited_together=0.1)
    assert reasons(strong, 2, paired=True).text() == "linked · 2 shared passages"
    assert reasons(None, 0).text() == ""  # nothing let it in: never listed
