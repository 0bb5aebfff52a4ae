"""What a new user met in the TUI (issue 11): each fix, as the user would check it."""

from __future__ import annotations

import re

import pytest

from explorer.tui.widgets.fuzzy_jump import FuzzyJump
from explorer.tui.widgets.related import plain_passage, short_path, wrap_path
from explorer.tui.widgets.search_box import QUERY_PLACEHOLDER
from tests.ui.conftest import type_query, wait_for, wait_settled

SIZE = (120, 40)
pytestmark = pytest.mark.anyio


def visible_results(results) -> int:
    """How many results are entirely inside the results pane."""
    top, height = int(results.scroll_y), results.scrollable_content_region.height
    shown = 0
    for number, row in enumerate(results._rows):
        first = results._first_line[number]
        if first >= top and first + len(row) <= top + height:
            shown += 1
    return shown


async def test_a_new_mode_starts_its_results_at_the_top(sample_copy, app_for):
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        results = screen.results
        await wait_settled(pilot)
        await type_query(pilot, "backup restore")
        assert screen.status.answered == "hybrid"
        results.focus()
        await pilot.press("end")  # the user looks at the last results...
        await pilot.pause()
        assert results.highlighted == len(results.hits) - 1 and results.scroll_y > 0
        await pilot.press("ctrl+t")  # ...and switches to search by meaning
        await wait_for(pilot, lambda: screen.status.answered == "semantic", what="semantic")
        await pilot.pause()
        assert results.highlighted == 0
        assert results.scroll_y == 0
        # The same question answered again (e.g. files changed) keeps the user's place.
        await pilot.press("down", "down")
        chosen = results.hits[2].path
        screen.search_panel.search_again()
        await wait_for(pilot, lambda: results.shown_query is not None, what="the answer")
        await pilot.pause(0.3)
        assert results.hits[results.highlighted].path == chosen


async def test_n_steps_through_passages_right_after_enter_on_a_result(sample_copy, app_for):
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        screen.search_box.set_mode("keyword")
        await type_query(pilot, "backup")
        await wait_for(pilot, lambda: screen.status.answered == "keyword", what="keyword")
        hit = screen.results.hits[0]
        assert len(hit.passages) >= 2
        await pilot.press("enter")  # opens the best result; the focus goes to the list
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        assert screen.focused is screen.results
        spans = [(p.start_line, p.end_line) for p in hit.passages]
        assert screen.preview.passage == spans[0]
        await pilot.press("n")
        assert screen.preview.passage == spans[1]
        await wait_for(pilot, screen.preview.passage_visible, 5, "the next passage in view")
        await pilot.press("N")
        assert screen.preview.passage == spans[0]
        assert screen.focused is screen.results  # still browsing the results
        # In the search box, n is a letter.
        screen.search_box.focus_query()
        await pilot.press("n")
        assert screen.search_box.text.endswith("n")
        assert screen.preview.passage == spans[0]


async def test_related_sidebar_shows_readable_paths_and_plain_passages(sample_copy, app_for):
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        related = screen.related
        await wait_settled(pilot)
        screen.open_file("runbooks/restore-from-backup.md")
        await wait_for(pilot, lambda: related.state == "ready", what="related files")
        assert related.border_subtitle == "runbooks/restore-from-backup.md"  # with its folder
        width = related.scrollable_content_region.width
        for number, item in enumerate(related.items):
            lines = related.get_option_at_index(number).prompt.plain.split("\n")
            # The path's own continuation lines are indented past the score; the heading by two.
            heading = next(i for i, line in enumerate(lines) if re.match(r"  \S", line))
            assert all(len(line) <= width for line in lines[:heading]), lines  # never cut
            shown_path = "".join(line.strip() for line in lines[:heading]).split(" ", 1)[1]
            assert shown_path == item.path  # whole, broken only after a "/"
            passage = lines[-1]
            if not item.path.endswith(".md"):
                continue  # other formats (code, reStructuredText) show as they are
            for markdown in ("](", "**", "`", "# "):
                assert markdown not in passage, passage


def test_paths_wrap_at_slashes_and_shorten_keeping_the_folder():
    assert wrap_path("notes/2026/03/2026-03-24-review.md", 20) == [
        "notes/2026/03/",
        "2026-03-24-review.md",
    ]
    assert wrap_path("guides/backups.md", 30) == ["guides/backups.md"]
    assert all(len(line) <= 12 for line in wrap_path("a/very-long-folder-name/x.md", 12))
    assert short_path("guides/index.md", 30) == "guides/index.md"
    assert short_path("docs/deep/guides/install/index.md", 24) == "…/install/index.md"
    assert short_path("notes/2026/03/2026-03-24-plugin-api-review.md", 20) == (
        "2026-03-24…review.md"
    )


def test_markdown_passages_read_as_plain_text():
    text = "## Restore\n\nRun **`tern restore`** as [the runbook](restore.md) says:\n\n- stop\n"
    assert plain_passage(text, "a.md") == "Restore Run tern restore as the runbook says: stop"
    code = "def run(*args):\n    return args  # **kept**"
    assert plain_passage(code, "tool.py") == "def run(*args): return args # **kept**"


async def test_quick_open_matches_titles_too(sample_copy, app_for):
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, FuzzyJump), what="quick open")
        await pilot.press(*"only database")  # words of a title, not of a file name
        jump = app.screen
        assert jump.matches[0].path == "design/0001-why-sqlite.md"
        prompt = jump.query_one("#fuzzy-list").get_option_at_index(0).prompt.plain
        assert prompt.startswith("design/0001-why-sqlite.md")
        assert "SQLite as the only database" in prompt  # the title beside the path
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.current_path == "design/0001-why-sqlite.md")


async def test_a_tall_terminal_shows_more_results(sample_copy, app_for):
    app = app_for(sample_copy)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        screen.search_box.set_mode("keyword")
        await type_query(pilot, "the")
        assert len(screen.results.hits) >= 10
        assert visible_results(screen.results) >= 6  # it was 3 at this size


async def test_the_search_box_says_search_once(sample_copy, app_for):
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        box = app.screen.search_box
        label = str(box.border_title)
        placeholder = box.query_one("#query").placeholder
        assert placeholder == QUERY_PLACEHOLDER
        assert f"{label} {placeholder}".lower().count("search") == 1
        assert "path:" in placeholder
        await pilot.pause()
