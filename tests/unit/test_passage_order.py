"""A result file leads with its own text, not with a list of links to other pages: a "Related"
section whose link titles hold the question's words scored as a page's best passage, and Enter
opened the page there."""

from __future__ import annotations

import pytest

from explorer.core.indexing.indexer import Indexer
from explorer.core.models import SearchMode
from explorer.core.retrieval.passage_order import is_link_list, link_share
from explorer.core.retrieval.search import SearchRequest, search
from explorer.core.store.index import Index
from explorer.settings.config import Settings
from tests.conftest import write_files
from tests.fakes import FakeEmbedder

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
