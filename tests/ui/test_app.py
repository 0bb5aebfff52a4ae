"""Pilot tests of the explorer UI on a copy of sample_docs with the fake embedder."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace

import pytest

from explorer.core.live.events import ModelState
from explorer.core.models import SearchMode
from explorer.core.retrieval.search import SearchRequest, search
from explorer.tui import themes
from explorer.tui.widgets.fuzzy_jump import FuzzyJump
from explorer.tui.widgets.help import HelpScreen
from explorer.tui.widgets.preview import TextView
from explorer.tui.widgets.results import ResultsList
from tests.fakes import FakeEmbedder
from tests.ui.conftest import type_query, wait_for, wait_indexed, wait_settled

SIZE = (120, 40)
pytestmark = pytest.mark.anyio


def result_paths(screen) -> list[str]:
    return [hit.path for hit in screen.results.hits]


async def test_results_follow_typing_with_highlighted_snippets(sample_copy, app_for):
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        assert screen.focused is screen.search_box.query_one("#query")
        await type_query(pilot, "backup")
        paths = result_paths(screen)
        assert "guides/backups.md" in paths[:3]
        assert screen.status.answered == "hybrid"
        top = screen.results.hits[0]
        assert top.passages and top.passages[0].highlights
        # More words narrow it down while typing (prefix on the last word).
        await type_query(pilot, " restor")
        assert "runbooks/restore-from-backup.md" in result_paths(screen)[:3]
        assert screen.results.shown_query == "backup restor"
        # A click on the second file's row opens it.
        second = screen.results.hits[1]
        row = screen.results._first_line[1]
        await pilot.click(ResultsList, offset=(4, 1 + row))
        await wait_for(pilot, lambda: screen.preview.path == second.path, what="the click")
        assert screen.results.highlighted == 1


async def test_a_letter_just_typed_after_a_word_waits_until_the_word_takes_shape(
    sample_copy, app_for
):
    # "backup s": the "s" is the start of a word, not the word "s" (as in "it's"), which most
    # passages hold; until it has three letters the results stay those of "backup".
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        screen.search_box.set_mode("keyword")
        await type_query(pilot, "backup ")
        before = [(hit.path, hit.score) for hit in screen.results.hits]
        await type_query(pilot, "s")
        assert screen.results.shown_query == "backup s"
        assert [(hit.path, hit.score) for hit in screen.results.hits] == before
        await type_query(pilot, "ch")  # "sch": a prefix now, and it changes the answer
        assert [(hit.path, hit.score) for hit in screen.results.hits] != before


async def test_a_word_typed_whole_is_ranked_before_the_next_key(
    sample_copy, app_for, phrases_scored
):
    # Once "backup " is answered, the pause before the next key scores "backup" alone; the
    # next word's first search then scores only its own phrase and gives the same answer.
    scored = phrases_scored
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        screen.search_box.set_mode("keyword")
        await type_query(pilot, "backup ")
        await wait_for(pilot, lambda: '"backup"' in scored, what="backup scored ahead")
        await type_query(pilot, "sch")
        assert screen.results.shown_query == "backup sch"
        assert scored == ['"backup"', '"sch" *']
        answer = [(hit.path, hit.score) for hit in screen.results.hits]
        request = SearchRequest("backup sch", SearchMode.KEYWORD, limit=len(answer), per_file=3)
        keyword_index = next(iter(screen.workspace.indexes.values()))
        keyword_index.keywords._derived.clear()  # ranked whole, as without the ranking ahead
        fresh = search(keyword_index, replace(request, prefix_last=True))
        assert [(hit.path, hit.score) for hit in fresh.results] == answer


async def test_no_word_is_ranked_ahead_once_the_next_key_came(sample_copy, app_for):
    # The ranking ahead is for the pause between keys: a key that came while its search ran
    # waits for that worker, which then ends at once.
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        workspace = screen.workspace
        search, rank_ahead = workspace.search, workspace.rank_words_ahead
        gates = {"b": threading.Event(), "backup ": threading.Event()}
        asked: list[str] = []
        ranked: list[str] = []

        def held_search(request):  # a search held until the test lets it answer
            asked.append(request.query)
            gate = gates.get(request.query)
            if gate is not None:
                gate.wait(10)
            return search(request)

        def counted_ahead(request):
            ranked.append(request.query)
            rank_ahead(request)

        workspace.search = held_search
        workspace.rank_words_ahead = counted_ahead
        screen.search_box.focus_query()
        await pilot.press(*"backup ")
        await wait_for(pilot, lambda: asked == ["b"], what="the first key's search")
        gates["b"].set()  # it answers after the other keys came
        await wait_for(pilot, lambda: asked == ["b", "backup "], what="the newest question")
        await pilot.press("s")  # while "backup " is searched
        gates["backup "].set()
        await wait_for(pilot, lambda: bool(ranked), what="a ranking ahead")
        assert screen.results.shown_query == "backup s"
        assert ranked == ["backup s"]


async def test_one_search_runs_at_a_time_and_the_newest_question_wins(sample_copy, app_for):
    # A search thread cannot be stopped: keys typed faster than searches answer must not pile
    # searches up side by side (each then slows the others down), and the last words typed
    # are the ones answered.
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        workspace = screen.workspace
        search = workspace.search
        running: list[int] = []
        most = [0]
        asked: list[str] = []
        lock = threading.Lock()

        def slow_search(request):
            with lock:
                running.append(1)
                most[0] = max(most[0], len(running))
                asked.append(request.query)
            try:
                time.sleep(0.4)  # slower than the keys come
                return search(request)
            finally:
                with lock:
                    running.pop()

        workspace.search = slow_search
        screen.search_box.focus_query()
        for key in "backup":
            await pilot.press(key)
            await pilot.pause(0.2)  # each key asks while an earlier search still runs
        await wait_for(pilot, lambda: screen.results.shown_query == "backup", what="results")
        assert most[0] == 1, asked
        assert asked[-1] == "backup" and len(asked) < len("backup"), asked  # stale ones skipped
        assert "guides/backups.md" in result_paths(screen)[:3]


async def test_results_scrollbar_follows_the_number_of_results(sample_copy, app_for):
    """The list's scrollable size changes without a screen layout; its scrollbar must still
    show, hide and reach the last result."""
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        results = screen.results
        await wait_settled(pilot)
        screen.search_box.set_mode("keyword")
        await type_query(pilot, "the")
        assert len(results.hits) > 5
        assert results.show_vertical_scrollbar and results.max_scroll_y > 0
        assert results.vertical_scrollbar.window_virtual_size == results.virtual_size.height
        screen.search_box.set_text("")
        await type_query(pilot, "vacuum")
        assert [hit.path for hit in results.hits] and len(results.hits) == 1
        await pilot.pause()
        assert not results.show_vertical_scrollbar
        assert results.max_scroll_y == 0 and results.scroll_y == 0
        screen.search_box.set_text("")
        await type_query(pilot, "the")
        results.focus()
        await pilot.press("end")
        await pilot.pause()
        last = len(results.hits) - 1
        assert results.highlighted == last
        bottom = results._first_line[last] + len(results._rows[last])
        assert results.scroll_y + results.scrollable_content_region.height >= bottom
        assert results.scroll_y == results.max_scroll_y > 0


async def test_letters_typed_right_after_slash_reach_the_search_box(sample_copy, app_for):
    """A terminal delivers fast typing in one read: ``/`` and the first letters of the query
    reach the app together, and none of them may be lost."""
    from textual import events

    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        await type_query(pilot, "backup")
        screen.results.focus()
        await pilot.pause()
        assert screen.focused is screen.results
        for key, character in [("slash", "/"), ("r", "r"), ("e", "e")]:
            app.post_message(events.Key(key, character))  # one burst: nothing handled between
        await wait_for(pilot, lambda: screen.search_box.text == "re", what="the typed letters")
        assert screen.focused is screen.search_box.query_one("#query")
        # In a text field "/" is a character, in the filter (paths) and in the query alike.
        await pilot.press("slash")
        assert screen.search_box.text == "re/"


async def test_down_keys_typed_right_after_leaving_the_search_box_move_in_the_results(
    sample_copy, app_for
):
    """Down leaves the search box for the results; the Downs that reach the app in the same
    read (a held or fast-typed key) must move the highlight there, not be lost."""
    from textual import events

    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        await type_query(pilot, "backup")
        assert len(screen.results.hits) >= 4
        for _ in range(3):
            app.post_message(events.Key("down", None))  # one burst: nothing handled between
        await wait_for(pilot, lambda: screen.results.highlighted == 2, 5, "two rows down")
        assert screen.focused is screen.results


async def test_enter_opens_result_at_its_passage_in_markdown_and_code(sample_copy, app_for):
    docs, _index = sample_copy
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        await type_query(pilot, "keyword")
        screen.search_box.set_mode("keyword")
        await wait_for(pilot, lambda: screen.status.answered == "keyword", what="keyword mode")
        await pilot.press("down")  # to the results
        assert screen.focused is screen.results
        await pilot.press("enter")
        hit = screen.results.hits[0]
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        first = hit.passages[0]
        assert screen.preview.path == hit.path
        assert screen.preview.passage == (first.start_line, first.end_line)
        await wait_for(pilot, screen.preview.passage_visible, 5, "the passage in view")
        if screen.preview.kind == "markdown":
            assert screen.preview.marked_blocks()
        # A code file: the text view scrolls to the line range.
        code = next(p for p in screen.file_tree.paths if p.endswith(".py"))
        lines = (docs / code).read_text().count("\n")
        start = max(1, lines - 5)
        screen.open_file(code, [(start, lines)])
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        view = screen.preview.query_one(TextView)
        assert screen.preview.kind == "code"
        assert view.line_count >= lines
        await wait_for(pilot, screen.preview.passage_visible, 5, "the passage in view")
        if lines > 40:
            assert view.top_line > 1


async def test_a_result_opens_at_the_line_inside_its_passage_it_names(sample_copy, app_for):
    """A result in an API manual names an entry whose signature stands inside its passage
    (``os.walk`` below the end of ``os.utime``): the preview opens there, the whole passage
    marked, rather than at the passage's first line; n/N go on from the passage."""
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        code = "src/tern/config.py"
        screen.open_file(code, [(20, 120), (200, 210)], 90)
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        view = screen.preview.query_one(TextView)
        assert screen.preview.passage == (20, 120)
        assert view.top_line == 87  # the line named, three rows down, as a passage's start
        screen.open_file(code, [(20, 120), (200, 210)], 20)
        await wait_for(pilot, lambda: view.top_line == 17, what="the passage's start")
        view.focus()
        await pilot.press("n")
        await wait_for(pilot, lambda: screen.preview.passage == (200, 210), what="n")
        assert view.top_line == 197


async def test_a_passage_taller_than_the_view_opens_at_the_words_asked_for(sample_copy, app_for):
    """A result's passage taller than the preview opens at the line of the query's words
    (from its start they were out of sight: ``boot_delay`` 15 lines into a 22-line passage of
    the kernel's parameters, in a 7-row preview), the passage still marked; a passage that
    fits is shown from its start. Found by a real search, and n/N the same way."""
    docs, _index = sample_copy
    filler = [f"setting_{n}    does nothing of note, number {n}" for n in range(30)]
    filler[24] = "flux_capacitor_delay=    how long the capacitor waits"
    (docs / "params.txt").write_text("Parameters\n\n" + "\n".join(filler) + "\n")
    app = app_for(sample_copy)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        screen.search_box.set_mode("keyword")
        await type_query(pilot, "flux_capacitor_delay")
        hit = screen.results.hits[0]
        assert hit.path == "params.txt"
        passage = hit.passages[0]
        assert passage.match_line == 27  # the 25th line of the list, after two lines
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: screen.preview.path == "params.txt")
        await wait_for(pilot, lambda: screen.preview.loaded)
        view = screen.preview.query_one(TextView)
        assert screen.preview.passage == (passage.start_line, passage.end_line)
        assert view.top_line < 27 <= view.bottom_line  # the words asked for in sight
        assert view.top_line > passage.start_line  # the passage's start would not show them
        # A Markdown page's section of short paragraphs: the paragraph holding the words.
        paragraphs = [f"Paragraph {n} says little of note." for n in range(14)]
        paragraphs[11] = "The warp_coil_limit is set here."
        (docs / "engine.md").write_text("# Engine\n\n" + "\n\n".join(paragraphs) + "\n")
        await wait_indexed(pilot, screen, "engine.md")
        screen.search_box.set_text("")
        await type_query(pilot, "warp_coil_limit")
        hit = screen.results.hits[0]
        assert hit.path == "engine.md"
        line = hit.passages[0].match_line
        assert line == 25
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: screen.preview.path == "engine.md" and screen.preview.loaded)
        await pilot.pause()
        assert screen.preview.lines_visible(line, line)
        # A passage that fits the view opens at its start, though its words are further in.
        code = "src/tern/config.py"
        screen.open_file(code, [(20, 30), (200, 260)], 20, focus={(20, 30): 21, (200, 260): 250})
        await wait_for(pilot, lambda: screen.preview.path == code and screen.preview.loaded)
        assert view.top_line == 17
        view.focus()
        await pilot.press("n")  # a passage taller than the view: its words' line
        await wait_for(pilot, lambda: screen.preview.passage == (200, 260), what="n")
        assert view.top_line == 247


async def test_related_sidebar_follows_the_open_file(sample_copy, app_for):
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        screen.file_tree.focus()
        screen.file_tree.reveal("guides/backups.md")
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.related.state == "ready", what="related files")
        assert screen.related.source == "guides/backups.md"
        neighbours = [item.path for item in screen.related.items]
        assert "guides/backups.md" not in neighbours
        assert any("backup" in path for path in neighbours[:4])
        # Selecting a neighbour opens it at its explaining passage.
        first = screen.related.items[0]
        screen.related.focus()
        screen.related.highlighted = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.preview.path == first.path, what="the neighbour")
        passage = first.related_passage
        assert screen.preview.passage == (passage.start_line, passage.end_line)
        await wait_for(pilot, lambda: screen.related.source == first.path, what="re-related")


def link_rows(links) -> list[tuple[str, int | None, bool]]:
    return [(row.path, row.line, row.exists) for row in links.rows if row is not None]


async def test_links_section_shows_links_and_backlinks_and_opens_them(sample_copy, app_for):
    docs, _index = sample_copy
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        screen.open_file("runbooks/failed-backups.md")
        links = screen.links
        await wait_for(pilot, lambda: links.found is not None, what="the links")
        assert links.source == "runbooks/failed-backups.md"
        assert links.parent is screen.related.parent  # both in the sidebar, separate lists
        outgoing = [link.target for link in links.found.outgoing]
        assert "guides/backups.md" in outgoing
        backlinks = [(link.source, link.line) for link in links.found.backlinks]
        assert ("guides/backups.md", 18) in backlinks
        # The rows show both sections under their own headers.
        prompts = [str(links.get_option_at_index(i).prompt) for i in range(links.option_count)]
        assert prompts[0] == f"Links to ({len(outgoing)})"
        assert f"Linked from ({len(backlinks)})" in prompts
        # Enter on a backlink opens the linking file at the link's line.
        links.focus()
        await pilot.pause()
        row = link_rows(links).index(("guides/backups.md", 18, True)) + 2  # after two headers
        links.highlighted = row
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.preview.path == "guides/backups.md", what="backlink")
        assert screen.preview.passage == (18, 18)
        await wait_for(pilot, lambda: links.source == "guides/backups.md", what="its links")
        # Enter on an outgoing link opens its target.
        await wait_for(pilot, lambda: links.found is not None, what="the links")
        links.focus()
        links.highlighted = 1
        target = links.rows[1].path
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.preview.path == target, what="the link target")
        # A file that starts linking here shows among the backlinks with no key pressed, and a
        # link to a file that does not exist is marked missing.
        screen.open_file("guides/backups.md")
        await wait_for(pilot, lambda: links.source == "guides/backups.md", what="links again")
        (docs / "notes" / "see-backups.md").write_text(
            "# See\n\nRead [backups](../guides/backups.md) and [gone](../guides/gone.md).\n"
        )
        await wait_for(
            pilot,
            lambda: ("notes/see-backups.md", 3, True) in link_rows(links),
            10,
            "the new backlink",
        )
        screen.open_file("notes/see-backups.md")
        await wait_for(
            pilot,
            lambda: ("guides/gone.md", None, False) in link_rows(links),
            what="the missing link",
        )
        links.focus()
        links.highlighted = 2
        await pilot.press("enter")  # a missing target: a warning, nothing opened
        await pilot.pause()
        assert screen.preview.path == "notes/see-backups.md"


async def test_tabbing_into_the_related_list_lets_enter_open_the_first_neighbour(
    sample_copy, app_for
):
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        screen.open_file("guides/backups.md")
        await wait_for(pilot, lambda: screen.related.state == "ready", what="related files")
        assert screen.related.highlighted == 0  # new rows: the cursor is on the first
        screen.file_tree.focus()  # the first stop of the focus chain (left to right)...
        await pilot.pause()
        await pilot.press("shift+tab")  # ...and before it the last one: the related list
        assert screen.focused is screen.related
        first = screen.related.items[0]
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.preview.path == first.path, what="the neighbour")


async def test_no_vectors_yet_state(tmp_path, app_for):
    docs = tmp_path / "fresh"
    docs.mkdir()
    (docs / "one.md").write_text("# One\n\nBackups run every night.\n")

    class SlowEmbedder(FakeEmbedder):
        gate = threading.Event()

        def load_document_model(self, chunks: int | None = None) -> None:
            self.gate.wait(20)

    embedder = SlowEmbedder()
    app = app_for((docs, tmp_path / "index"), embedder=embedder)
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            await wait_for(pilot, lambda: "one.md" in screen.file_tree.paths, what="the tree")
            assert screen.file_tree.state_of("one.md") == "pending"
            await type_query(pilot, "backups")
            assert result_paths(screen) == ["one.md"]
            assert screen.status.answered == "keyword"
            screen.open_file("one.md")
            await wait_for(
                pilot,
                lambda: screen.related.state == "empty" and "vector" in _related_text(screen),
                what="the no-vectors state",
            )
            embedder.gate.set()
            await wait_for(
                pilot, lambda: screen.file_tree.state_of("one.md") == "fresh", what="fresh"
            )
            await wait_for(pilot, lambda: screen.status.answered == "hybrid", what="hybrid")
    finally:
        SlowEmbedder.gate.set()


def _related_text(screen) -> str:
    option = screen.related.get_option_at_index(0) if screen.related.option_count else None
    return str(getattr(option.prompt, "plain", option.prompt)) if option else ""


async def test_keyword_results_first_while_the_query_model_loads(sample_copy, app_for):
    gate = threading.Event()

    class SlowQueryEmbedder(FakeEmbedder):
        def load_query_path(self) -> None:
            gate.wait(20)

    app = app_for(sample_copy, embedder=SlowQueryEmbedder())
    try:
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            await wait_for(pilot, lambda: screen.index is not None, what="the index")
            await type_query(pilot, "backup")
            assert screen.status.answered == "keyword"
            assert screen.status.requested == "hybrid"
            assert screen.status.index_state.model is ModelState.LOADING
            assert "guides/backups.md" in result_paths(screen)[:3]
            gate.set()
            await wait_for(pilot, lambda: screen.status.answered == "hybrid", what="hybrid")
            assert screen.status.index_state.model is ModelState.READY
    finally:
        gate.set()


async def test_mode_toggle_and_path_filter_from_the_keyboard(sample_copy, app_for):
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        await type_query(pilot, "rotate secrets")
        assert screen.status.answered == "hybrid"
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: screen.status.answered == "semantic", what="semantic")
        assert screen.search_box.mode == "semantic"
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: screen.status.answered == "keyword", what="keyword")
        await pilot.press("ctrl+t")
        await wait_for(pilot, lambda: screen.status.answered == "hybrid", what="hybrid again")
        assert screen.search_box.border_subtitle == "hybrid"  # the mode, in the box's border
        # Path filters: typed in the box, then in the field.
        screen.search_box.set_text("")
        await type_query(pilot, "backup path:runbooks/")
        paths = result_paths(screen)
        assert paths and all(p.startswith("runbooks/") for p in paths)
        assert screen.status.filters == ("runbooks/",)
        # The filter field, reached with ctrl+f.
        screen.search_box.set_text("backup")
        await pilot.press("ctrl+f")
        await pilot.press(*"guides/")
        await wait_for(
            pilot,
            lambda: (
                result_paths(screen) and all(p.startswith("guides/") for p in result_paths(screen))
            ),
            what="filtered results",
        )
        assert screen.status.filters == ("guides/",)


async def test_a_folder_with_a_space_is_filtered_by_a_quoted_path(sample_copy, app_for):
    docs, _index_dir = sample_copy
    for folder in ("My Notes", "notes"):
        (docs / folder).mkdir(exist_ok=True)
        (docs / folder / "pantry.md").write_text("# Pantry\n\nThe pantry holds quince jam.\n")
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        await type_query(pilot, "quince jam")
        assert {"My Notes/pantry.md", "notes/pantry.md"} <= set(result_paths(screen))
        screen.search_box.set_text("")
        await type_query(pilot, 'quince jam path:"My Notes/"')
        assert result_paths(screen) == ["My Notes/pantry.md"]
        assert screen.status.filters == ('"My Notes/"',)
        screen.search_box.set_text("quince jam")
        await pilot.press("ctrl+f")
        await pilot.press(*'"My Notes/"')
        await wait_for(
            pilot, lambda: result_paths(screen) == ["My Notes/pantry.md"], what="field filter"
        )


async def test_tag_and_version_words_filter_the_results(sample_copy, app_for):
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        await type_query(pilot, "snapshot tag:backup")
        assert set(result_paths(screen)) == {
            "guides/backups.md",
            "runbooks/restore-from-backup.md",
            "runbooks/failed-backups.md",
            "notes/2026/01/2026-01-27-incident-review-backup-gap.md",
        }
        assert screen.status.filters == ("tag:backup",)
        await type_query(pilot, " version:1.5 path:runbooks/")
        assert set(result_paths(screen)) == {
            "runbooks/restore-from-backup.md",
            "runbooks/failed-backups.md",
        }
        assert screen.status.filters == ("runbooks/", "tag:backup", "version:1.5")
        screen.action_clear_filter()
        await wait_for(pilot, lambda: screen.status.filters == (), what="filters cleared")
        assert screen.search_box.text == "snapshot"
        await type_query(pilot, ' tag:"on call"')
        await wait_for(pilot, lambda: screen.status.filters == ('tag:"on call"',), what="quoted")
        screen.action_clear_filter()
        await wait_for(pilot, lambda: screen.status.filters == (), what="quoted tag cleared")
        assert screen.search_box.text == "snapshot"


async def test_fuzzy_jump_opens_a_file(sample_copy, app_for):
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, FuzzyJump), what="quick open")
        await pilot.press(*"gsta")
        jump = app.screen
        assert jump.matches[0].path == "guides/getting-started.md"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen, what="the dialog to close")
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        assert screen.preview.path == "guides/getting-started.md"
        assert screen.current_path == "guides/getting-started.md"


async def test_ui_follows_files_changed_on_disk(sample_copy, app_for):
    docs, _index = sample_copy
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        screen.search_box.set_mode("keyword")  # by meaning, any query finds something
        await type_query(pilot, "zanzibar")
        assert result_paths(screen) == []
        # Create: the tree and the results follow with no key pressed.
        new = docs / "notes" / "zanzibar.md"
        new.write_text("# Zanzibar\n\nThe zanzibar ferry leaves at noon.\n")
        await wait_for(pilot, lambda: "notes/zanzibar.md" in screen.file_tree.paths, 5, "created")
        await wait_for(pilot, lambda: result_paths(screen) == ["notes/zanzibar.md"], 5, "result")
        # Edit the open file: the preview reloads.
        screen.open_file("notes/zanzibar.md")
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        new.write_text(
            "# Zanzibar\n\nThe zanzibar ferry now leaves at dawn.\n\n## Tickets\n\nAt the pier.\n"
        )
        await wait_for(
            pilot,
            lambda: screen.preview.loaded and "Tickets" in _markdown_text(screen),
            5,
            "the edited file",
        )
        # Move: the old path goes, the new one comes.
        moved = docs / "guides" / "zanzibar-ferry.md"
        new.rename(moved)
        await wait_for(
            pilot,
            lambda: (
                "guides/zanzibar-ferry.md" in screen.file_tree.paths
                and "notes/zanzibar.md" not in screen.file_tree.paths
            ),
            5,
            "moved",
        )
        await wait_for(
            pilot, lambda: result_paths(screen) == ["guides/zanzibar-ferry.md"], 5, "moved result"
        )
        # Delete.
        moved.unlink()
        await wait_for(
            pilot, lambda: "guides/zanzibar-ferry.md" not in screen.file_tree.paths, 5, "gone"
        )
        await wait_for(pilot, lambda: result_paths(screen) == [], 5, "no result")


def _markdown_text(screen) -> str:
    from textual.widgets import Markdown

    return screen.preview.query_one(Markdown).source


async def test_bad_theme_file_gives_a_notification_and_the_default(tmp_path, sample_copy, app_for):
    user_themes = themes.user_themes_dir()
    user_themes.mkdir(parents=True)
    (user_themes / "broken.toml").write_text('name = "broken"\nprimary = "not-a-colour"\n')
    themes.save_preference("theme", "broken")
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.theme == themes.DEFAULT_THEME
        await wait_for(
            pilot,
            lambda: any("broken.toml" in n.message for n in app._notifications),
            what="the broken-theme notification",
        )
        assert "tern-dusk" in app.available_themes  # the shipped files still load


async def test_theme_choice_persists(sample_copy, app_for):
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        app.theme = "tern-dusk"
        await pilot.pause()
    assert json.loads(themes.preferences_path().read_text())["theme"] == "tern-dusk"
    again = app_for(sample_copy)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert again.theme == "tern-dusk"


async def test_help_palette_and_small_messages(sample_copy, app_for):
    app = app_for(sample_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await pilot.press("down")  # leave the search box: "?" is a key, not a character
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, what="help to close")
        titles = {command.title for command in app.get_system_commands(screen)}
        for title in ("Go to file", "Search mode: keyword", "Edit file", "Help", "Theme"):
            assert title in titles
        # "e" with no file open says what to do.
        screen.file_tree.focus()
        await pilot.press("ctrl+e")
        await wait_for(
            pilot,
            lambda: any("open a file first" in n.message for n in app._notifications),
            what="the 'open a file first' notification",
        )
        # "?" typed in the search box is text, not help; a query of no words explains itself.
        screen.search_box.focus_query()
        await pilot.press(*"!!?")
        assert screen.search_box.text == "!!?"
        assert app.screen is screen
        await wait_for(pilot, lambda: screen.index is not None, what="the index")
        await wait_for(pilot, lambda: "no words" in screen.results.message, what="a message")
        await pilot.pause(0.2)
        assert screen.results.hits == []
        assert screen.status.answered is None


async def test_large_files_open_without_freezing(sample_copy, app_for):
    docs, _index = sample_copy
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.index is not None, what="the index")
        # Written after the start (no watcher): the preview alone is under test.
        big_md = docs / "big.md"
        big_md.write_text(
            "".join(f"## Section {i}\n\nParagraph {i} about backups.\n\n" for i in range(4000))
        )
        big_py = docs / "big.py"
        big_py.write_text(
            "".join(f"def function_{i}(x):\n    return x + {i}\n\n" for i in range(6000))
        )
        assert big_md.stat().st_size > 150_000 and big_py.stat().st_size > 150_000
        screen.open_file("big.md", [(3001, 3003)])
        await wait_for(pilot, lambda: screen.preview.loaded, 10, "the big markdown")
        assert screen.preview.kind == "code"  # shown as highlighted source past the limit
        await wait_for(pilot, screen.preview.passage_visible, 5, "the passage in view")
        screen.open_file("big.py", [(17000, 17002)])
        await wait_for(pilot, lambda: screen.preview.loaded, 10, "the big code file")
        await wait_for(pilot, screen.preview.passage_visible, 5, "the passage in view")
        # The UI answers while the colours are computed.
        screen.search_box.focus_query()
        await pilot.press("x")
        assert screen.search_box.text == "x"


async def test_index_written_by_another_process_is_read_only_until_it_finishes(
    sample_copy, app_for
):
    from explorer.core.store.index import Index
    from explorer.settings.config import Settings

    docs, index_dir = sample_copy
    holder = Index(Settings.for_root(docs, index_dir, model=FakeEmbedder.name))
    holder.acquire_write_lock()
    try:
        app = app_for(sample_copy)
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            await wait_for(pilot, lambda: screen.state.read_only, what="the read-only state")
            assert "read-only" in screen.status.index_text
            # notify() posts a message: the notification lands a moment after the state.
            await wait_for(
                pilot,
                lambda: any("being written" in n.message for n in app._notifications),
                what="the notification that another process writes the index",
            )
            screen.search_box.set_mode("keyword")
            await type_query(pilot, "backup")
            assert "guides/backups.md" in result_paths(screen)[:3]
            holder.close()  # the other writer finishes: the app takes over and says so
            await wait_for(pilot, lambda: not screen.state.read_only, what="the writable state")
            await wait_for(
                pilot,
                lambda: "read-only" not in screen.status.index_text,
                what="the status without read-only",
            )
    finally:
        holder.close()
