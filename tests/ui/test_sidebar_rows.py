"""Pilot tests of the sidebar lists' rows: every line of a row stays on screen, unwrapped,
whatever order the links and related workers answer in, and a refreshed related list stays where
the user scrolled it.

Related rows are laid out for the list's width (three lines: path, two of the passage); rows
measured before the list's scrollbar took its cell would wrap and push their last line off.
"""

from __future__ import annotations

import re
import threading
from dataclasses import replace

import pytest
from textual.app import App, ComposeResult

from explorer.core.ingest.references import ReferenceKind
from explorer.core.retrieval import related as core_related
from explorer.core.retrieval.links import FileLinks, Link, LinkState
from explorer.tui.widgets.links import LinksList
from explorer.tui.widgets.related import related_prompt
from tests.ui.conftest import wait_for, wait_settled

ROW_START = re.compile(r"\d\.\d\d \S+")
ROW_LINES = 3
"""The first line of a related row: its score (whatever the method gives) and its path."""
SHORT = (120, 18)
"""A terminal short enough for the related list to scroll by more than one row."""
OPENED = "runbooks/restore.md"
pytestmark = pytest.mark.anyio


def visible_lines(widget) -> list[str]:
    """The text of the lines ``widget`` shows now (what a user reads in it)."""
    height = widget.scrollable_content_region.height
    return [widget.render_line(y).text.rstrip() for y in range(height)]


def first_visible_line(widget) -> str:
    return visible_lines(widget)[0]


async def _open_with_links_first(pilot, monkeypatch, padded: bool = False) -> None:
    """Open :data:`OPENED`, holding its related files back until its links are on screen
    (the order a loaded machine often gives: the links query is quicker). ``padded``: list
    every file a passage's nearest held, evidence or not (a list long enough to scroll)."""
    screen = pilot.app.screen
    links_shown = threading.Event()
    real = core_related.related_files

    def late_related_files(*args, **kwargs):
        links_shown.wait(10)
        if padded:
            kwargs["tuning"] = replace(core_related.DEFAULT_TUNING, needs_evidence=False)
        return real(*args, **kwargs)

    monkeypatch.setattr(core_related, "related_files", late_related_files)
    screen.open_file(OPENED)
    await wait_for(pilot, lambda: screen.links.found is not None, what="links")
    await pilot.pause(0.1)  # the links list takes its height; the related list its new size
    links_shown.set()
    await wait_for(pilot, lambda: screen.related.state == "ready", what="related files")
    await pilot.pause(0.1)


def prompt_lines(related, number: int) -> list[str]:
    return related.get_option_at_index(number).prompt.plain.split("\n")


async def test_related_rows_keep_their_last_line_when_they_arrive_after_the_links(
    snapshot_copy, app_for, monkeypatch
):
    """The rows were measured before the scrollbar narrowed the list, so each row's last
    line wrapped and was cut off."""
    app = app_for(snapshot_copy)
    async with app.run_test(size=SHORT) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        await _open_with_links_first(pilot, monkeypatch)
        related = screen.related
        assert related.items[0].path == "guides/backups.md"
        assert related.show_vertical_scrollbar
        lines = visible_lines(related)
        first, second = prompt_lines(related, 0), prompt_lines(related, 1)
        assert len(first) == ROW_LINES
        assert lines[: len(first)] == [line.rstrip() for line in first], lines
        assert ROW_START.fullmatch(lines[len(first)]), lines
        assert lines[len(first)] == second[0].rstrip()


async def test_a_late_refresh_keeps_the_related_list_where_the_user_scrolled_it(
    snapshot_copy, app_for, monkeypatch
):
    """Files embedded meanwhile refresh the open file's related list (at most once a second);
    the refresh must not jump the list back to its top under the user's eyes."""
    app = app_for(snapshot_copy)
    async with app.run_test(size=SHORT) as pilot:
        screen = app.screen
        related = screen.related
        await wait_settled(pilot)
        await _open_with_links_first(pilot, monkeypatch, padded=True)
        assert first_visible_line(related).endswith(" guides/backups.md")
        assert related.max_scroll_y >= ROW_LINES
        related.scroll_to(y=ROW_LINES, animate=False)
        await pilot.pause(0.1)
        scrolled = first_visible_line(related)
        assert related.scroll_y == ROW_LINES and ROW_START.fullmatch(scrolled)
        refreshed = related.items
        screen.load_related(OPENED, refresh=True)  # what a files_embedded event does
        await wait_for(pilot, lambda: related.items is not refreshed, what="the refresh")
        await pilot.pause(0.1)
        assert related.scroll_y == ROW_LINES
        assert first_visible_line(related) == scrolled
        # Another file's neighbours start at their top.
        screen.open_file("guides/install.md")
        await wait_for(
            pilot,
            lambda: related.source == "guides/install.md" and related.state == "ready",
            what="install.md's related files",
        )
        await pilot.pause(0.1)
        assert related.scroll_y == 0


class LinksApp(App):
    """The links list alone, the sidebar's width and a few rows high."""

    CSS = "LinksList { width: 38; height: 8; }"

    def compose(self) -> ComposeResult:
        yield LinksList()


def _file_links(path: str, count: int) -> FileLinks:
    outgoing = [
        Link(
            path,
            line,
            ReferenceKind.LINK,
            f"[n]({line}.md)",
            f"notes/{line}.md",
            LinkState.RESOLVED,
        )
        for line in range(1, count + 1)
    ]
    return FileLinks(path, True, outgoing, [])


async def test_links_read_again_stay_where_the_user_scrolled_them():
    """Any changed file reloads the open file's links (its backlinks may come from it); the
    list must not jump back to its top, while another file's links start at theirs."""
    app = LinksApp()
    async with app.run_test(size=(60, 12)) as pilot:
        links = app.query_one(LinksList)
        links.show_links("index.md", _file_links("index.md", 20))
        await pilot.pause()
        links.scroll_to(y=10, animate=False)
        await pilot.pause()
        assert first_visible_line(links).startswith("→ notes/10.md")
        links.show_links("index.md", _file_links("index.md", 21))
        await pilot.pause()
        assert links.scroll_y == 10
        assert first_visible_line(links).startswith("→ notes/10.md")
        links.load(None, "other.md")  # another file: its links are read afresh
        links.show_links("other.md", _file_links("other.md", 20))
        await pilot.pause()
        assert links.scroll_y == 0
        assert first_visible_line(links).startswith("Links to (20)")


async def test_link_rows_say_which_lead_nowhere_and_which_lead_outside_the_root():
    app = LinksApp()
    async with app.run_test(size=(60, 12)) as pilot:
        links = app.query_one(LinksList)
        outgoing = [
            Link("a.md", 3, ReferenceKind.LINK, "b/", "b.md", LinkState.RESOLVED),
            Link("a.md", 4, ReferenceKind.LINK, "../blog/", "/blog/", LinkState.OUTSIDE_ROOT),
            Link("a.md", 5, ReferenceKind.EMBED, "![[x.png]]", "x.png", LinkState.MISSING),
        ]
        links.show_links("a.md", FileLinks("a.md", True, outgoing, []))
        await pilot.pause()
        lines = visible_lines(links)
        assert lines[1] == "→ b.md  L3"
        assert lines[2].startswith("→ /blog/  L4 outside the root")
        assert lines[3].startswith("→ x.png  L5 embed missing")


async def test_a_page_of_thousands_of_links_lists_the_first_and_counts_the_rest():
    """A manual's table of contents links to 14,000 places (and a hub is linked from as
    many): the headers count them all, the first :data:`ROWS_SHOWN` each way are listed and a
    row says how many more there are and where to see them."""
    from explorer.tui.widgets.links import ROWS_SHOWN

    app = LinksApp()
    async with app.run_test(size=(60, 12)) as pilot:
        links = app.query_one(LinksList)
        many = ROWS_SHOWN + 37
        outgoing = [
            Link("toc.md", n, ReferenceKind.LINK, f"p{n}.md", f"p{n}.md", LinkState.RESOLVED)
            for n in range(1, many + 1)
        ]
        backlinks = [
            Link(f"p{n}.md", 2, ReferenceKind.LINK, "toc.md", "toc.md", LinkState.RESOLVED)
            for n in range(1, many + 1)
        ]
        links.show_links("toc.md", FileLinks("toc.md", True, outgoing, backlinks))
        await pilot.pause()
        prompts = [links.get_option_at_index(i).prompt.plain for i in range(links.option_count)]
        assert prompts[0] == f"Links to ({many})"
        assert prompts[ROWS_SHOWN].startswith(f"→ p{ROWS_SHOWN}.md")
        assert prompts[ROWS_SHOWN + 1] == "  … 37 more (f in the page lists all)"
        assert prompts[ROWS_SHOWN + 2] == f"Linked from ({many})"
        assert prompts[-1] == "  … 37 more (explorer links FILE)"
        assert links.option_count == 2 * ROWS_SHOWN + 4
        assert links.rows[ROWS_SHOWN + 1] is None and links.rows[-1] is None  # lead nowhere


def test_a_related_row_whose_name_fills_the_line_keeps_its_folder():
    """A name too long to leave room for any folder is shown under its folder (two files of one
    name read alike otherwise); the row stays three lines, each within the width."""
    passage = core_related.PassageRef("Rate limiting", 10, 12, "Limit the rate of requests.")
    rows = {
        path: related_prompt(core_related.RelatedFile(path, "", 0.42, passage, passage), 40)
        for path in (
            "content/nginx/admin-guide/security-controls/controlling-access-proxied-tcp.md",
            "content/nginx/admin-guide/load-balancer/controlling-access-proxied-tcp.md",
            "guides/backups.md",
        )
    }
    tcp, balancer, short = (row.plain.split("\n") for row in rows.values())
    assert tcp[:2] == ["0.42 content/…/security-controls/", "  controlling-access-proxied-tcp.md"]
    assert balancer[0] == "0.42 content/…/load-balancer/"
    assert short[0] == "0.42 guides/backups.md"  # a path that fits keeps its one line
    assert all(len(lines) == ROW_LINES and max(map(len, lines)) <= 40 for lines in (tcp, short))


def test_a_related_row_says_why_and_that_the_file_is_linked_already():
    """The row's second line names the signals (a file the open one links to starts with
    ``linked``); the passage keeps the third. Under a long name's folder line, the signals
    lead the passage's line. Three lines either way, each within the width."""
    passage = core_related.PassageRef("Rate limiting", 10, 12, "Limit the rate of requests.")
    reasons = core_related.Reasons(
        (
            core_related.Signal.LINKED,
            core_related.Signal.SAME_SECTION,
            core_related.Signal.SHARED_PASSAGES,
        ),
        shared_passages=3,
    )

    def row(path: str, width: int = 48) -> list[str]:
        item = core_related.RelatedFile(path, "", 0.42, passage, passage, True, reasons)
        return related_prompt(item, width).plain.split("\n")

    short = row("guides/backups.md")
    assert short == [
        "0.42 guides/backups.md",
        "  linked · same section · 3 shared passages",
        "  Rate limiting · Limit the rate of requests.",
    ]
    long = row("content/nginx/admin-guide/security-controls/controlling-access-proxied-tcp.md", 40)
    assert long[1] == "  controlling-access-proxied-tcp.md"
    assert long[2].startswith("  linked · same section · 3 shared")
    assert len(long) == len(short) == ROW_LINES
    assert max(map(len, short)) <= 48 and max(map(len, long)) <= 40


def test_a_link_pickers_row_ends_within_the_dialog_and_names_the_file():
    """In an 80-column terminal a vault note five folders deep took four rows of the link
    picker: its target is shortened in the middle to end the row, keeping the note's name."""
    from explorer.tui.widgets.link_picker import link_prompt

    deep = "04. Organized Knowledge/Science/Mathematics/Computer Science/AI/AI Algorithms.md"
    link = Link(
        "AI Basics.md", 37, ReferenceKind.LINK, "[[AI Algorithms]]", deep, LinkState.RESOLVED
    )
    row = link_prompt(link, 66).plain
    assert len(row) <= 66 and row.endswith("/AI Algorithms.md") and "…" in row
    assert link_prompt(link).plain.endswith(deep)  # with no width: whole
