"""A result file leads with its own text, not with a list of links to other pages: a "Related"
section whose link titles hold the question's words scored as a page's best passage, and Enter
opened the page there. A PDF's contents and index pages are lists too, of page numbers."""

from __future__ import annotations

import pytest

from explorer.core.indexing.indexer import Indexer
from explorer.core.models import SearchMode
from explorer.core.retrieval.passage_order import is_link_list, is_reference_list, link_share
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.documents import make_pdf
from tests.fakes import FakeEmbedder
from tests.timing import at_most_cpu_seconds

RUNBOOK = """# Restoring from a backup

Stop the service, then restore the newest snapshot with the restore command and start again.
Check the restored database before you let users back in.

## Related

- [Backups](../guides/backups.md)
- [Restoring a backup by hand](manual-restore.md)
- [[Backup retention]]
"""


def test_link_lists_are_told_from_text() -> None:
    related = "## Related\n\n- [Backups](a.md)\n- [Restore a backup](b.md)\n"
    assert is_link_list(related)
    assert is_link_list("See [[Backup retention]] and [[Restore drills]].")
    prose = (
        "Restore the newest snapshot with the restore command, as the [backups guide](a.md) "
        "explains, then check the database and start the service again."
    )
    assert not is_link_list(prose)
    assert not is_link_list("[one link](a.md) alone")  # a single link is no list
    assert link_share("# Only a heading\n") == 0.0


def test_a_list_whose_links_are_known_by_line_is_a_link_list() -> None:
    """Text read from HTML keeps no link syntax; its references' lines tell a table of
    contents from prose that links a word on every line."""
    contents = "Data Types\n\n- datetime\n- calendar\n- collections\n- heapq\n"
    assert not is_link_list(contents)  # no syntax: nothing to see without the lines
    assert is_link_list(contents, link_lines={3, 4, 5, 6}, first_line=1)
    assert is_link_list(contents, link_lines={13, 14, 15}, first_line=11)  # a later passage
    assert not is_link_list(contents, link_lines={3}, first_line=1)  # one link is no list
    assert not is_link_list(contents, link_lines={23, 24, 25, 26}, first_line=1)  # elsewhere
    prose = (
        "The datetime module supplies classes for manipulating dates and times, as the\n"
        "calendar module does for whole calendars; arithmetic on dates is supported while\n"
        "the focus of the implementation is on efficient attribute extraction for output.\n"
    )
    assert not is_link_list(prose, link_lines={1, 2, 3}, first_line=1)  # sentences, not items
    steps = "- datetime\n- calendar\n- collections\n- heapq\n"
    assert not is_link_list(steps, link_lines={1}, first_line=1)


@pytest.fixture
def index(tmp_path):
    root = write_files(tmp_path / "docs", {"runbooks/restore.md": RUNBOOK})
    settings = Settings.for_root(root, tmp_path / "index", model=FakeEmbedder.name)
    opened = Index(settings, embedder=FakeEmbedder())
    Indexer(opened).sync()
    yield opened
    opened.close()


def test_a_file_leads_with_its_text_before_its_related_links(index) -> None:
    request = SearchRequest("restore backup", SearchMode.KEYWORD, limit=5, per_file=3)
    [hit] = search(index, request).results
    headings = [passage.heading for passage in hit.passages]
    assert headings[0] == "Restoring from a backup", headings
    assert "Related" in headings[-1]
    # Only the order of the file's passages changes: its score is its best passage's.
    assert hit.score == max(passage.score for passage in hit.passages)


def test_passages_that_tie_as_shown_keep_their_order() -> None:
    """Scores are shown to 4 places; passages equal there stay in the order search gave them
    (by position), as before any link list is weighed."""
    from dataclasses import dataclass

    from explorer.core.retrieval.passage_order import content_first

    @dataclass
    class Scored:
        score: float
        text: str

    first = Scored(0.81241, "Restore the newest snapshot.")
    second = Scored(0.81244, "Check the restored rows.")  # both shown as 0.8124
    links = Scored(0.85, "- [Backups](a.md)\n- [Restore](b.md)\n")
    ordered = content_first([links, first, second], lambda passage: passage.text)
    assert ordered == [first, second, links]


CONTENTS = """Contents
1 Arrays of integers 3
1.1 Creating an array . . . . . . . . . . . . . . . . . . . . . . 3
1.2 Setting an entry . . . . . . . . . . . . . . . . . . . . . . . 4
1.3 Reading an entry . . . . . . . . . . . . . . . . . . . . . . . 4
"""
INDEX_PAGE = """Index
\\intarray_gset:Nnn . . . . . . . . 237
\\intarray_item:Nn . . . .
. . . . . 238, 241
\\intarray_new:Nn . . . . 236, 1172,
1180, 1184
"""


def test_a_pdfs_contents_and_index_are_lists_of_references() -> None:
    assert is_reference_list(CONTENTS)
    assert is_reference_list(INDEX_PAGE)
    assert is_reference_list("\\tl_set:Nn g326, g535\n\\tl_put:Nn h785, h790\n\\tl_new:N 12, 14\n")
    config = "server {\n    listen 80;\n    worker_processes 4;\n    keepalive_timeout 65\n}\n"
    assert not is_reference_list(config)
    prose = (
        "Arrays of integers are created with a size of 300 entries, set one at a time in\n"
        "constant time, and read back by position. Chapter 4 explains the bounds, and the\n"
        "ellipsis... in an error message stands for the rest of the array.\n"
    )
    assert not is_reference_list(prose)
    assert not is_reference_list("1.1 Creating an array . . . . . . . 3\n")  # one line is no list


def test_a_manual_leads_with_the_page_that_documents_a_name_not_its_index(tmp_path) -> None:
    """An index page holds the name once per entry and scored above the page documenting it;
    the result now opens on the documentation, and the file keeps its score."""
    pages = [
        CONTENTS.splitlines(),
        [
            "1.2 Setting an entry",
            "\\intarray_gset:Nnn stores the value of an integer expression in the array",
            "at the position given; the position must lie between one and the array's size.",
        ],
        ["Index", *INDEX_PAGE.splitlines()[1:], "\\intarray_gset:cnn . . . . . . . . 237"],
    ]
    root = tmp_path / "docs"
    root.mkdir()
    (root / "manual.pdf").write_bytes(make_pdf(pages))
    settings = Settings.for_root(root, tmp_path / "index", model=FakeEmbedder.name)
    opened = Index(settings, embedder=FakeEmbedder())
    try:
        Indexer(opened).sync()
        request = SearchRequest("intarray_gset", SearchMode.KEYWORD, limit=5, per_file=3)
        [hit] = search(opened, request).results
    finally:
        opened.close()
    assert [passage.page for passage in hit.passages][:1] == [2], hit.passages
    assert hit.score == max(passage.score for passage in hit.passages)
    index_snippets = [p.snippet for p in hit.passages if p.page == 3]
    assert index_snippets and " … 237" in index_snippets[0], index_snippets


def test_a_hostile_line_of_numbers_is_read_in_linear_time() -> None:
    """A line of ``1, 1, 1, …`` ending in a word made the page-list pattern backtrack in time
    squared (a second for 12,000 characters); only a line's end is read for its pages."""

    line = "1, " * 20_000 + "x"
    with at_most_cpu_seconds(1):
        assert is_reference_list((line + "\n") * 3 + "7, 9\n" * 3)
