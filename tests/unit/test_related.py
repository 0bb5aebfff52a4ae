"""Related files: nearest other files by meaning, each explained by a pair of passages."""

from __future__ import annotations

import pytest

from explorer.config import Settings
from explorer.core.index import Index
from explorer.core.indexer import Indexer
from explorer.core.related import RelatedError, related_files
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


@pytest.mark.parametrize("path", sorted(CORPUS))
def test_related_never_returns_the_file_itself(index, path):
    related = related_files(index, path, limit=10)
    paths = [r.path for r in related]
    assert path not in paths
    assert len(paths) == len(set(paths)) == len(CORPUS) - 1
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
    assert len(related_files(index, "kitchen/pasta.md", limit=3)) == 3


def test_json_shape(index):
    data = related_files(index, "kitchen/pasta.md", limit=1)[0].as_json()
    assert set(data) == {"path", "title", "score", "source_passage", "related_passage"}
    assert set(data["source_passage"]) == {"heading", "start_line", "end_line", "text"}


@pytest.mark.parametrize("path", ["nope.md", "space", "../outside.md"])
def test_unknown_file_is_a_related_error(index, path):
    with pytest.raises(RelatedError, match="not in the index"):
        related_files(index, path)


def test_skipped_file_has_no_neighbours_and_says_why(index):
    with pytest.raises(RelatedError, match="binary"):
        related_files(index, "blob.txt")


def test_limit_below_one_is_an_error(index):
    with pytest.raises(RelatedError, match="--limit"):
        related_files(index, "kitchen/pasta.md", limit=0)


def test_file_without_vectors_yet_is_an_error(tmp_path, settings_for, fake_embedder):
    root = write_files(tmp_path / "root", {"a.md": "alpha words\n", "b.md": "beta words\n"})
    index = Index(settings_for(root), embedder=fake_embedder)
    try:
        Indexer(index).sync(embed=False)
        with pytest.raises(RelatedError, match="run explorer index"):
            related_files(index, "a.md")
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
