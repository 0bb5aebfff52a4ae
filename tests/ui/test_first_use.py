"""What a new user met in the TUI (issue 11): each fix, as the user would check it."""

from __future__ import annotations

import re

import pytest

from explorer.tui.text_fit import distinct_paths, middle_path, plain_passage, wrap_path
from explorer.tui.widgets.fuzzy_jump import FuzzyJump
from explorer.tui.widgets.search_box import QUERY_PLACEHOLDER
from tests.timing import at_most_cpu_seconds
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
    """Enter marks the best passage; n and N then move down and up the file from it (as in
    less and vim), never back up the page by score."""
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        screen.search_box.set_mode("keyword")
        await type_query(pilot, "backup")
        await wait_for(pilot, lambda: screen.status.answered == "keyword", what="keyword")
        hit = next(h for h in screen.results.hits if len(h.passages) >= 2)
        screen.results.highlighted = screen.results.hits.index(hit)
        screen.results.focus()
        await pilot.press("enter")  # opens the result; the focus stays in the list
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        assert screen.focused is screen.results
        best = (hit.passages[0].start_line, hit.passages[0].end_line)
        in_file_order = sorted((p.start_line, p.end_line) for p in hit.passages)
        assert screen.preview.passage == best
        at = in_file_order.index(best)
        below = in_file_order[at + 1] if at + 1 < len(in_file_order) else in_file_order[0]
        await pilot.press("n")
        assert screen.preview.passage == below
        assert below[0] > best[0] or "from the top" in str(screen.preview.border_subtitle)
        await wait_for(pilot, screen.preview.passage_visible, 5, "the next passage in view")
        await pilot.press("N")
        assert screen.preview.passage == best
        assert screen.focused is screen.results  # still browsing the results
        # In the search box, n is a letter.
        screen.search_box.focus_query()
        await pilot.press("n")
        assert screen.search_box.text.endswith("n")
        assert screen.preview.passage == best


async def test_related_sidebar_shows_readable_paths_and_plain_passages(sample_copy, app_for):
    """Each related file takes three lines (issue 23: one took 8-9): its score and path on one
    line, shortened in the middle between whole names, then two lines of its passage as plain
    words, their indent kept."""
    app = app_for(sample_copy)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        related = screen.related
        await wait_settled(pilot)
        screen.open_file("runbooks/restore-from-backup.md")
        await wait_for(pilot, lambda: related.state == "ready", what="related files")
        assert related.border_subtitle == "runbooks/restore-from-backup.md"  # with its folder
        width = related.scrollable_content_region.width
        for number, item in enumerate(related.items):
            lines = related.get_option_at_index(number).prompt.plain.split("\n")
            assert 2 <= len(lines) <= 3, lines
            assert all(len(line) <= width for line in lines), lines
            score, shown = lines[0].split(" ", 1)
            assert re.fullmatch(r"\d\.\d\d", score)
            if "…" in shown:  # whole names on each side of the cut
                head, tail = shown.split("…")
                assert item.path.endswith(tail) and tail.startswith("/")
                assert item.path.startswith(head) and (not head or head.endswith("/"))
            else:
                assert shown == item.path
            assert all(line.startswith("  ") and line[2] != " " for line in lines[1:])
            passage = " ".join(line.strip() for line in lines[1:])
            if not item.path.endswith(".md"):
                continue  # other formats (code, reStructuredText) show as they are
            for markdown in ("](", "**", "`", "# ", "{{", "```"):
                assert markdown not in passage, passage


def test_paths_wrap_at_slashes_and_shorten_in_the_middle():
    assert wrap_path("notes/2026/03/2026-03-24-review.md", 20) == [
        "notes/2026/03/",
        "2026-03-24-review.md",
    ]
    assert wrap_path("guides/backups.md", 30) == ["guides/backups.md"]
    assert middle_path("guides/index.md", 30) == "guides/index.md"
    assert middle_path("docs/deep/guides/install/index.md", 24) == "docs/…/install/index.md"
    assert middle_path("nginx/admin-guide/web-server/reverse-proxy.md", 30) == (
        "nginx/…/reverse-proxy.md"
    )
    assert middle_path("notes/2026/03/2026-03-24-plugin-api-review.md", 20) == (
        "2026-03-24…review.md"
    )


def test_markdown_passages_read_as_plain_text():
    text = "## Restore\n\nRun **`tern restore`** as [the runbook](restore.md) says:\n\n- stop\n"
    assert plain_passage(text, "a.md") == "Restore Run tern restore as the runbook says: stop"
    # Hugo shortcodes, half a fence and reference links with no definition (nginx docs).
    hugo = (
        "{{% docs/note %}}See [Authenticators][] and [the API][api].{{% /docs/note %}}\n\n"
        "```nginx\nproxy_pass http://backend;\n"
    )
    assert (
        plain_passage(hugo, "a.md") == "See Authenticators and the API. proxy_pass http://backend;"
    )
    assert plain_passage('{{< tab name="x" >}}text{{< /tab >}}', "b.md") == "text"


def test_a_passage_of_thousands_of_blank_lines_reads_plain_at_once():
    """A chunk keeps a run of blank lines whole: the related pane read 16,000 of them in 3 s."""
    text = "Alpha\n" + "\n" * 16_000 + "Beta\n```py\ncode\n```\n"
    with at_most_cpu_seconds(0.5):
        assert plain_passage(text, "a.md") == "Alpha Beta code"
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


def test_paths_that_would_read_alike_keep_the_folder_that_tells_them_apart():
    """Seen on the nginx docs: two related files of one name under different folders both
    read `content/…/configuration-rules.md`."""
    paths = [
        "content/nginxaas/google/deploy/nginx-configuration/configuration-rules.md",
        "content/nginxaas/overview/nginx-configuration/configuration-rules.md",
        "guides/backups.md",
    ]
    assert [middle_path(p, 45) for p in paths[:2]] == ["content/…/configuration-rules.md"] * 2
    assert distinct_paths(paths, 45) == [
        "content/…/google/…/configuration-rules.md",
        "content/…/overview/…/configuration-rules.md",
        "guides/backups.md",
    ]
    narrow = distinct_paths(paths, 36)
    assert narrow[:2] == [
        "…/google/…/configuration-rules.md",
        "…/overview/…/configuration-rules.md",
    ]
    assert all(len(p) <= 36 for p in narrow)
