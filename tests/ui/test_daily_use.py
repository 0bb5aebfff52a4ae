"""A TUI for daily use (issue 23): each item as a user meets it, keys typed and the screen read.

Back and forward, recent files, sessions and query history, panes that follow the terminal's
width, zoom, the preview's reading keys and find in page, the outline, wrapping, result pages,
the related list after a hop, copying, opening with the system's app, the footer per pane, the
help, and what a score means.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from textual.widget import Widget

from explorer.tui.keys import key_groups
from explorer.tui.screens.main import MainScreen
from explorer.tui.widgets.footer import FittingFooter
from explorer.tui.widgets.fuzzy_jump import FuzzyJump
from explorer.tui.widgets.help import HelpScreen
from explorer.tui.widgets.outline import OutlineScreen
from explorer.tui.widgets.preview import SECTION_ROW, TextView
from explorer.tui.widgets.search_panel import RESULT_FILES, START_HINT
from tests.ui.conftest import type_query, wait_for, wait_settled

SIZE = (120, 40)
REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.anyio


async def open_and_wait(pilot, path: str, **kwargs) -> None:
    screen = pilot.app.screen
    screen.open_file(path, **kwargs)
    await wait_for(pilot, lambda: screen.preview.path == path and screen.preview.loaded)
    await pilot.pause()


def footer_keys(app) -> dict[str, str]:
    """What the footer offers now: {key as shown: description}."""
    return {key.key_display: key.description for key in app.screen.query_one(FittingFooter).keys}


def long_code(docs: Path, name: str = "long.py", functions: int = 300) -> str:
    """A code file long enough to page through: ``function_N`` at line 3N+1."""
    (docs / name).write_text(
        "".join(f"def function_{i}(x):\n    return x + {i}\n\n" for i in range(functions))
    )
    return name


def wide_code(docs: Path, lines: int = 200) -> str:
    """A code file whose every line is longer than the preview is wide (it wraps)."""
    (docs / "wide.py").write_text(
        "".join(f"v{i} = '" + "abcdefghij" * 30 + "'\n" for i in range(lines))
    )
    return "wide.py"


async def reading(pilot, path: str) -> TextView:
    """``path`` open in the preview, its text focused (the index opened first); its view."""
    screen = pilot.app.screen
    await wait_for(pilot, lambda: screen.index is not None)
    await open_and_wait(pilot, path)
    screen.preview.focus_content()
    await pilot.pause()
    return screen.preview.query_one(TextView)


# -- navigation history -----------------------------------------------------------------------
async def test_back_and_forward_return_to_the_files_and_the_places_read(sample_copy, app_for):
    docs, _index = sample_copy
    name = long_code(docs)
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        preview = screen.preview
        await reading(pilot, name)
        await pilot.press("space", "space", "j", "j")  # read down the file
        await pilot.pause()
        read_at = preview.position()
        assert read_at > 20
        await open_and_wait(pilot, "guides/backups.md")
        await open_and_wait(pilot, "runbooks/restore-from-backup.md")
        await pilot.press("alt+left")
        await wait_for(pilot, lambda: preview.path == "guides/backups.md" and preview.loaded)
        await pilot.press("alt+left")
        await wait_for(pilot, lambda: preview.path == name and preview.loaded)
        await pilot.pause()
        assert preview.position() == read_at  # where the user was reading, not the top
        await pilot.press("alt+right")
        await wait_for(pilot, lambda: preview.path == "guides/backups.md" and preview.loaded)
        # The one-key forms, from a pane that is not a text field.
        screen.file_tree.focus()
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: preview.path == "runbooks/restore-from-backup.md")
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: preview.path == "guides/backups.md")
        # Opening a file after going back drops what was ahead, as a browser does.
        await open_and_wait(pilot, "README.md")
        assert not screen.history.can_go_forward
        # In the search box [ and backspace are typed, not bound.
        screen.search_box.focus_query()
        await pilot.press("left_square_bracket")
        assert screen.search_box.text == "[" and preview.path == "README.md"


async def test_going_back_shows_the_page_read_before_with_no_loading_step(
    sample_copy, app_for, monkeypatch
):
    """A file read before and unchanged comes back from memory, at the place read: the preview
    never says "loading…" for it (a frame of its own before the page)."""
    docs, _index = sample_copy
    name = long_code(docs)
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        preview = screen.preview
        await reading(pilot, name)
        await pilot.press("space", "space")
        await pilot.pause()
        read_at = preview.position()
        await open_and_wait(pilot, "guides/backups.md")
        subtitles: list[str] = []
        shown = Widget.__dict__["border_subtitle"]  # Textual's descriptor, not a reactive

        class Recorded:
            def __get__(self, widget, owner=None):
                return shown.__get__(widget, owner)

            def __set__(self, widget, text):
                subtitles.append(str(text))
                shown.__set__(widget, text)

        monkeypatch.setattr(type(preview), "border_subtitle", Recorded())
        await pilot.press("alt+left")
        await wait_for(pilot, lambda: preview.path == name and preview.loaded)
        await pilot.pause()
        assert subtitles and "loading…" not in subtitles
        assert preview.position() == read_at
        # A file never opened before still says it is loading.
        subtitles.clear()
        await open_and_wait(pilot, "runbooks/restore-from-backup.md")
        assert "loading…" in subtitles


async def test_the_sidebar_keeps_its_rows_inert_until_the_new_file_s_rows_come(
    sample_copy, app_for, monkeypatch
):
    """Opening another file leaves the related list and the links on show until the new ones
    come (a quick answer changes each list once, not "finding…" then rows), Enter on a row left
    on show opens nothing, and an answer slower than NOTE_AFTER puts a note in their place."""
    import threading

    from explorer.tui.widgets import sidebar_panel
    from explorer.tui.workspace import Workspace

    app = app_for(sample_copy, watch=False)
    gate = threading.Event()
    gate.set()
    related = Workspace.related

    def held_related(workspace, path, limit):
        gate.wait(30)
        return related(workspace, path, limit)

    monkeypatch.setattr(Workspace, "related", held_related)
    monkeypatch.setattr(sidebar_panel, "NOTE_AFTER", 30.0)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        side = screen.related
        await wait_settled(pilot)
        await open_and_wait(pilot, "guides/backups.md")
        await wait_for(pilot, lambda: side.state == "ready" and screen.links.found is not None)
        before = [str(side.get_option_at_index(i).prompt) for i in range(side.option_count)]
        shown: list[list[str]] = []
        set_options = side.set_options

        def recording(options):
            shown.append([str(option.prompt) for option in options])
            return set_options(options)

        monkeypatch.setattr(side, "set_options", recording)
        await open_and_wait(pilot, "api/search.md")
        await wait_for(pilot, lambda: side.state == "ready" and side.source == "api/search.md")
        assert len(shown) == 1 and not any("Finding" in prompt for prompt in shown[0])
        assert screen.links.source == "api/search.md" and screen.links.found is not None

        # A slow answer: the rows stay, inert, then the note replaces them.
        monkeypatch.setattr(sidebar_panel, "NOTE_AFTER", 2.0)
        gate.clear()
        before = [str(side.get_option_at_index(i).prompt) for i in range(side.option_count)]
        screen.open_file("runbooks/restore-from-backup.md")
        await pilot.pause()
        assert [str(side.get_option_at_index(i).prompt) for i in range(side.option_count)] == before
        side.focus()
        side.highlighted = 0
        await pilot.press("enter")  # a row about the file left behind
        await pilot.pause()
        assert screen.preview.path == "runbooks/restore-from-backup.md"
        await wait_for(
            pilot,
            lambda: "Finding related files" in str(side.get_option_at_index(0).prompt),
            what="the note of a slow answer",
        )
        gate.set()
        await wait_for(pilot, lambda: side.state == "ready", what="the new rows")
        assert side.source == "runbooks/restore-from-backup.md"
        assert "runbooks/restore-from-backup.md" not in [item.path for item in side.items]


async def test_rows_that_come_as_the_note_falls_due_stay_on_show(sample_copy, app_for, monkeypatch):
    """Textual queues a timer's callback when its delay ends, and stopping the timer then does
    not unqueue it. An answer handled between the two must not be covered by the note it made
    unnecessary: CI once saw "Finding related files…" in place of ready rows."""
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        side = screen.related
        await wait_settled(pilot)
        await open_and_wait(pilot, "guides/backups.md")
        await wait_for(pilot, lambda: side.state == "ready", what="related files")
        due: list[object] = []
        set_timer = side.set_timer

        def queued_late(delay, callback=None, **kwargs):  # the delay ends at once, the call waits
            due.append(callback)
            return set_timer(3600, None, **kwargs)

        monkeypatch.setattr(side, "set_timer", queued_late)
        screen.open_file("runbooks/restore-from-backup.md")
        await wait_for(
            pilot,
            lambda: side.state == "ready" and side.source == "runbooks/restore-from-backup.md",
            what="the new rows",
        )
        rows = [str(side.get_option_at_index(i).prompt) for i in range(side.option_count)]
        assert due, "the panel set no note"
        for call in due:
            call()  # what Textual's queue runs after the rows came
        await pilot.pause()
        assert [str(side.get_option_at_index(i).prompt) for i in range(side.option_count)] == rows
        assert not any("Finding" in row for row in rows)


async def test_recent_files_are_a_picker_most_recent_first(sample_copy, app_for):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        for path in ("guides/backups.md", "api/search.md", "README.md"):
            await open_and_wait(pilot, path)
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: isinstance(app.screen, FuzzyJump))
        picker = app.screen
        assert [m.path for m in picker.matches] == ["api/search.md", "guides/backups.md"]
        assert picker.query_one("#fuzzy-dialog").border_title == "Recent files"
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: screen.preview.path == "guides/backups.md")


# -- sessions and query history ---------------------------------------------------------------
async def test_a_restart_continues_where_the_user_left(sample_copy, app_for):
    docs, _index = sample_copy
    name = long_code(docs)
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        screen.search_box.set_mode("keyword")
        screen.search_box.set_filter("guides/")
        await type_query(pilot, "backup")
        await pilot.press("enter")  # opens the best result, remembers the query
        await wait_for(pilot, lambda: screen.preview.loaded)
        await open_and_wait(pilot, name)
        screen.preview.focus_content()
        await pilot.press("space", "space")
        await pilot.pause()
        top = screen.preview.position()
        assert top > 10
        await pilot.press("ctrl+q")
    again = app_for(sample_copy, watch=False)
    async with again.run_test(size=SIZE) as pilot:
        screen = again.screen
        await wait_for(pilot, lambda: screen.preview.path == name and screen.preview.loaded)
        await pilot.pause()
        assert screen.preview.position() == top
        assert screen.search_box.text == "backup"
        assert screen.search_box.mode == "keyword"
        assert screen.search_box.filter_text == "guides/"
        await wait_for(pilot, lambda: screen.results.shown_query == "backup", what="results")
        assert all(hit.path.startswith("guides/") for hit in screen.results.hits)
        # The recent files came back too, and the tree shows the file once it has read it.
        assert screen.recent.paths[0] == name
        await wait_for(pilot, lambda: bool(screen.file_tree.paths), what="the tree")
        await pilot.pause()
        assert screen.file_tree.cursor_node.data.path == name


async def test_quitting_as_a_markdown_page_finishes_loading_quits_cleanly(sample_copy, app_for):
    """ctrl+q pressed as a Markdown page is opened: the page's load ends after the window's
    panes are taken down, and mounting the Markdown view into them raised a MountError, so
    explorer quit with a traceback and status 1 (the tmux smoke test, once in a CI run)."""
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.index is not None)
        screen.open_file("guides/backups.md")
        await pilot.press("ctrl+q")
    assert app.return_code == 0


async def test_a_restored_query_is_replaced_by_the_first_key_typed(sample_copy, app_for):
    """After a restart the last query is back, selected, as after Esc: somebody who types
    without looking starts a new query, not the old one with the new words glued on."""
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_settled(pilot)
        await type_query(pilot, "backup")
        await pilot.press("ctrl+q")
    again = app_for(sample_copy, watch=False)
    async with again.run_test(size=SIZE) as pilot:
        screen = again.screen
        await wait_for(pilot, lambda: screen.search_box.text == "backup", what="the query")
        await wait_settled(pilot)
        assert screen.focused is screen.search_box.query_one("#query")
        await pilot.press(*"webhook")
        assert screen.search_box.text == "webhook"
        await wait_for(pilot, lambda: screen.results.shown_query == "webhook", what="results")


async def test_sessions_can_be_turned_off(sample_copy, app_for, monkeypatch):
    monkeypatch.setenv("EXPLORER_NO_SESSION", "1")
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_settled(pilot)
        await type_query(pilot, "backup")
        await open_and_wait(pilot, "guides/backups.md")
        await pilot.press("ctrl+q")
    state = Path(os.environ["EXPLORER_STATE_DIR"])
    assert not any(state.rglob("*.json"))  # nothing written
    again = app_for(sample_copy, watch=False)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause(0.5)
        assert again.screen.search_box.text == ""
        assert again.screen.preview.path is None


async def test_session_files_live_in_the_state_dir_and_are_private(sample_copy, app_for):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_settled(pilot)
        await type_query(pilot, "backup")
        await pilot.press("ctrl+q")
    (saved,) = Path(os.environ["EXPLORER_STATE_DIR"]).rglob("*.json")
    assert saved.parent.name == "sessions" and saved.name.startswith("docs-")
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert '"query": "backup"' in saved.read_text()


async def test_up_and_down_walk_the_query_history(sample_copy, app_for):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        box = screen.search_box
        await wait_settled(pilot)
        await type_query(pilot, "backup")
        await pilot.press("down")  # leaving for the results keeps the query
        assert screen.focused is screen.results
        box.set_text("")
        await type_query(pilot, "restore")
        await pilot.press("enter")
        box.set_text("")
        await type_query(pilot, "webh")
        await pilot.press("up")
        assert box.text == "restore"
        await pilot.press("up")
        assert box.text == "backup"
        await pilot.press("up")  # the oldest: stays
        assert box.text == "backup"
        await pilot.press("down")
        assert box.text == "restore"
        await pilot.press("down")  # past the newest: what was being typed
        assert box.text == "webh"
        await wait_for(pilot, lambda: screen.results.shown_query == "webh")
        await pilot.press("down")  # not walking: Down leaves for the results
        assert screen.focused is screen.results


# -- layout -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("size", "tree", "sidebar"),
    [
        ((220, 60), True, True),
        ((160, 45), True, True),
        ((100, 30), False, True),
        ((70, 30), False, False),
    ],
)
async def test_panes_collapse_by_width(sample_copy, app_for, size, tree, sidebar):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=size) as pilot:
        screen = app.screen
        await pilot.pause()
        assert screen.file_tree.display is tree
        assert screen.query_one("#sidebar").display is sidebar
        centre = screen.query_one("#centre").size.width
        assert centre >= 50  # the search box and results keep room to read
        if sidebar:
            share = screen.query_one("#sidebar").size.width / size[0]
            assert 0.24 <= share <= 0.4  # a share of the terminal, not a fixed count


async def test_keys_toggle_the_panes_and_the_query_box_keeps_its_room(sample_copy, app_for):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        await pilot.pause()
        assert not screen.file_tree.display
        await pilot.press("f2")  # the tree comes back on demand
        await pilot.pause()
        assert screen.file_tree.display and screen.focused is screen.file_tree
        await pilot.press("ctrl+r")  # the sidebar goes
        await pilot.pause()
        assert not screen.query_one("#sidebar").display
        await pilot.press("f2")
        await pilot.pause()
        assert not screen.file_tree.display
        assert screen.search_box.query_one("#query").size.width >= 40  # it was ~10 at 100
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert screen.query_one("#sidebar").display


async def test_zoom_gives_the_focused_pane_the_whole_screen(sample_copy, app_for):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.index is not None)
        await open_and_wait(pilot, "guides/backups.md")
        screen.preview.focus_content()
        await pilot.pause()
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is screen.preview
        assert screen.preview.outer_size.width == SIZE[0]
        assert screen.preview.region.height >= SIZE[1] - 3  # all but the status bar and footer
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is None
        assert screen.preview.outer_size.width < SIZE[0] * 0.6  # its column again


async def test_zooming_keeps_the_line_the_reader_is_at(sample_copy, app_for):
    """Wrapped lines take fewer rows in a wider pane: the line at the top must stay there."""
    docs, _index = sample_copy
    (docs / "prose.txt").write_text(
        "".join(f"line {n} " + "words that go on " * 10 + "\n" for n in range(1, 200))
    )
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        preview = screen.preview
        await wait_for(pilot, lambda: screen.index is not None)
        await open_and_wait(pilot, "prose.txt")
        preview.focus_content()
        preview.go_to_line(80)
        await pilot.pause()
        assert preview.position() == 80
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is preview and preview.position() == 80
        await pilot.press("z")
        await pilot.pause()
        assert preview.position() == 80


# -- reading ----------------------------------------------------------------------------------
async def test_pager_keys_in_the_preview(sample_copy, app_for):
    docs, _index = sample_copy
    name = long_code(docs)
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        view = screen.preview.query_one(TextView)
        await reading(pilot, name)
        await pilot.press("j", "j", "j")
        assert view.top_line == 4
        await pilot.press("k")
        assert view.top_line == 3
        await pilot.press("space")
        page = view.scrollable_content_region.height - 1
        assert view.top_line == 3 + page
        await pilot.press("b")
        assert view.top_line == 3
        await pilot.press("G")
        assert view.bottom_line == view.line_count
        await pilot.press("g")
        assert view.top_line == 1


async def test_find_in_page_and_n_moves_down_from_where_the_reader_is(sample_copy, app_for):
    docs, _index = sample_copy
    name = long_code(docs)
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        preview = screen.preview
        await reading(pilot, name)
        await pilot.press("space", "space")  # read down a little first
        top = preview.position()
        await pilot.press("slash")
        assert screen.focused.id == "find"  # "/" finds in the page here
        await pilot.press(*"return x + 1")  # every function whose number starts with 1
        await pilot.press("enter")
        found = preview.found
        assert found and all("return x + 1" in preview.text_of(n, n) for n in found)
        first = preview.found[preview.found_index]
        assert first >= top  # the first match below the reader, not the first in the file
        assert first == min(n for n in found if n >= top)
        assert "match" in str(preview.border_subtitle)
        await pilot.press("n")
        second = preview.found[preview.found_index]
        assert second == min(n for n in found if n > first)
        await pilot.press("N", "N")
        assert preview.found[preview.found_index] == max(n for n in found if n < first)
        # Escape in the field with nothing typed ends the find: n is the passages' again.
        await pilot.press("slash")
        await pilot.press(*("backspace",) * len("return x + 1"), "escape")
        assert not preview.finding
        assert screen.focused is preview.query_one(TextView)


async def test_find_shows_a_match_far_down_a_line_taller_than_the_view(sample_copy, app_for):
    """One line can fill more rows than the view has (a table row of an HTML index page, a
    paragraph never broken): the find scrolls to the row of the match, not to the line's
    first row with the match out of sight below it."""
    docs, _index = sample_copy
    words = " ".join(f"entry{i} (in module m{i})" for i in range(600))
    (docs / "index-all.txt").write_text(f"Index\n{words} needle here {words}\nend\n")
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await reading(pilot, "index-all.txt")
        height = view.scrollable_content_region.height
        assert view.row_of(3) - view.row_of(2) > 3 * height  # line 2 is many screens tall
        await pilot.press("slash", *"needle", "enter")
        await pilot.pause()
        shown = [view.render_line(y).text for y in range(height)]
        assert any("needle" in row for row in shown), shown
        assert str(app.screen.preview.border_subtitle).startswith("L2 · match 1/1")


async def test_the_outline_lists_the_headings_and_goes_to_one(sample_copy, app_for):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.index is not None)
        await open_and_wait(pilot, "runbooks/restore-from-backup.md")
        screen.preview.focus_content()
        await pilot.pause()
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, OutlineScreen))
        outline = app.screen
        titles = [heading.title for heading in outline.headings]
        assert len(titles) >= 3
        last = outline.headings[-1]
        await pilot.press(*last.title.split()[0].lower())
        assert outline.shown and last in outline.shown
        outline.query_one("#outline-list").highlighted = outline.shown.index(last)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen)
        await pilot.pause()
        assert screen.preview.lines_visible(last.line, last.line)
        assert screen.preview.position() > 1


async def test_the_outline_of_an_api_manual_page_goes_to_one_of_its_functions(sample_copy, app_for):
    """A Sphinx page of 300 functions has a few headings: ``t`` lists its functions too, so
    typing a name and Enter goes to its signature on a 2,000-line page."""
    docs, _index = sample_copy
    functions = "".join(
        f'<dl class="py function"><dt class="sig sig-object py" id="tool.step{n}">'
        f'<span class="sig-prename descclassname">tool.</span>'
        f'<span class="sig-name descname">step{n}</span>(<em>size</em>)</dt>'
        f"<dd><p>Run step {n} of the pipeline.</p><p>Returns its size.</p></dd></dl>\n"
        for n in range(300)
    )
    (docs / "api.html").write_text(
        "<html><body><div role='main'><h1>tool</h1><h2>Functions</h2>"
        f"{functions}</div></body></html>",
        encoding="utf-8",
    )
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        view = await reading(pilot, "api.html")
        assert view.line_count > 1500
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, OutlineScreen))
        outline = app.screen
        assert len(outline.headings) == 302
        await pilot.press(*"step237")
        assert [h.title for h in outline.shown] == ["tool.step237"]
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen)
        await pilot.pause()
        line = outline.shown[0].line
        assert view.line_text(line).startswith("tool.step237(size)")
        assert screen.preview.lines_visible(line, line)
        # the border names where the reader is, as the outline would
        assert str(screen.preview.border_title) == "api.html › tool.step237"
        # a file opened mid-page and not scrolled: named once its headings are worked out
        await open_and_wait(pilot, "guides/backups.md", top=40)
        titled = lambda: " › " in str(screen.preview.border_title)  # noqa: E731
        await wait_for(pilot, titled, 5, "the section in the title")
        read = screen.preview.position(SECTION_ROW)  # a few rows under the top: the line read
        sections = [h for h in screen.preview.headings() if h.line <= read]
        assert str(screen.preview.border_title) == f"guides/backups.md › {sections[-1].title}"
        await open_and_wait(pilot, "api.html")  # kept: its headings may be worked out again
        await wait_for(pilot, titled, 5, "the section in the title")
        await pilot.press("G")  # the last page: the title names the top line's function
        above = [h.title for h in outline.headings if h.line <= view.line_at_row(SECTION_ROW)]
        assert above[-1].startswith("tool.step29")
        assert str(screen.preview.border_title) == f"api.html › {above[-1]}"
        await pilot.press("g")  # the top: the page's first sections
        above = [h.title for h in outline.headings if h.line <= view.line_at_row(SECTION_ROW)]
        assert above[-1] in ("tool", "Functions")
        assert str(screen.preview.border_title) == f"api.html › {above[-1]}"


async def test_an_outline_of_thousands_of_headings_opens_at_the_readers_and_narrows_to_any(
    sample_copy, app_for
):
    """A changelog of a thousand versions: the outline lists the headings around the reader's
    (a list measures every row it is given), says how many are above and below, and typing
    finds any of them."""
    from explorer.tui.widgets.outline import ROWS_SHOWN

    docs, _index = sample_copy
    count = ROWS_SHOWN * 4
    versions = "".join(f"## Version {n}\n\nFixed bug {n}.\n\n" for n in range(count, 0, -1))
    (docs / "CHANGELOG.md").write_text("# Changelog\n\n" + versions)
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await reading(pilot, "CHANGELOG.md")
        await pilot.press("G")  # the oldest versions, at the end
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, OutlineScreen))
        outline = app.screen
        rows = outline.options
        assert rows.option_count == ROWS_SHOWN + 1  # the headings above are counted in a row
        assert "headings above" in str(rows.get_option_at_index(0).prompt)
        at = outline.chosen(rows.highlighted)
        assert at is not None and at <= screen.preview.position(below=1)
        assert outline.chosen(0) is None
        await pilot.press("up")
        assert outline.chosen(rows.highlighted) < at  # the keys move among headings
        await pilot.press(*f"version {count}")  # the newest, far above the list
        assert [h.title for h in outline.shown] == [f"Version {count}"]
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen)
        await pilot.pause()
        assert screen.preview.lines_visible(3, 3)


def rows_on_screen(options) -> range:
    """The rows of a picker's list the reader sees: those scrolled to, less any its dialog
    cuts off below (every row here is one line high)."""
    dialog = options.parent
    assert dialog.region.bottom <= options.screen.region.bottom  # the whole dialog in the window
    shown = min(options.region.bottom, dialog.content_region.bottom) - options.region.y
    return range(options.scroll_offset.y, options.scroll_offset.y + max(0, shown))


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_a_picker_shows_its_highlighted_row_deep_in_a_long_list(sample_copy, app_for, size):
    """``t`` deep in a long page opens the outline with the reader's heading highlighted *and
    shown*; Down through the go-to list keeps the highlight in sight. The lists were taller
    than their dialogs could hold, so their last rows were cut off: a 516-page PDF's outline
    opened with its highlight on section 10, five rows below the dialog's edge, and at 80x24
    the go-to list hid every row after the 12th."""
    docs, _index = sample_copy
    sections = "".join(f"## Section {n}\n\n" + "Some text.\n\n" * 8 for n in range(1, 229))
    (docs / "manual.md").write_text("# Manual\n\n" + sections)
    for n in range(40):
        (docs / f"notes/note-{n:02}.md").parent.mkdir(exist_ok=True)
        (docs / f"notes/note-{n:02}.md").write_text(f"# Note {n}\n")
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=size) as pilot:
        screen = app.screen
        await reading(pilot, "manual.md")
        await pilot.press(":", *"2330", "enter")  # in section 130
        await pilot.pause()
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, OutlineScreen))
        await pilot.pause()
        outline = app.screen
        rows = outline.options
        at = outline.chosen(rows.highlighted)
        assert at is not None and at <= screen.preview.position(below=1)
        assert rows.highlighted > 100  # section 130 of 228, far down the list
        assert rows.highlighted in rows_on_screen(rows)
        # and the headings around it: a third of the way down the list, not its last row
        assert {rows.highlighted - 3, rows.highlighted + 3} <= set(rows_on_screen(rows))
        await pilot.press("down", "down", "down")
        assert rows.highlighted in rows_on_screen(rows)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, FuzzyJump))
        await pilot.press(*"note")
        await pilot.pause()
        jump = app.screen.query_one("#fuzzy-list")
        for _ in range(30):
            await pilot.press("down")
            assert jump.highlighted in rows_on_screen(jump)


async def test_go_to_file_in_a_large_tree_takes_every_key_and_opens_the_typed_file(
    sample_copy, app_for, monkeypatch
):
    """Past :data:`MATCHED_AT_ONCE` files the go-to list is matched on a thread: the field
    shows each key as it comes, the list follows the last, and Enter typed before it caught
    up opens the best match of what was typed, not of the list still shown."""
    from explorer.tui.widgets.fuzzy_jump import MATCHED_AT_ONCE

    docs, _index = sample_copy
    (docs / "many").mkdir()
    for n in range(MATCHED_AT_ONCE + 200):
        (docs / "many" / f"entry-{n:04}.md").write_text(f"# Entry {n}\n")
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: len(screen.file_tree.paths) > MATCHED_AT_ONCE, 60)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, FuzzyJump))
        jump = app.screen
        await pilot.press(*"entry-0042")
        assert jump.query_one("#fuzzy-input").value == "entry-0042"
        await wait_for(pilot, lambda: jump.listed_for == "entry-0042", what="the list")
        assert jump.matches[0].path == "many/entry-0042.md"
        monkeypatch.setattr(jump, "_show_if_current", lambda *_args: None)  # never caught up
        await pilot.press("backspace", "backspace", *"17")
        assert jump.matches[0].path == "many/entry-0042.md"  # what the list still shows
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen)
        await wait_for(pilot, lambda: screen.preview.path == "many/entry-0017.md")


async def test_a_files_headings_are_read_once_for_its_outline(sample_copy, app_for, monkeypatch):
    """The loading worker works a page's headings out while the page is read, so ``t`` parses
    nothing (a long page's take 100-200 ms); ``t`` again, or after going away and back, lists
    the same headings without parsing the page again."""
    import threading

    from explorer.tui.widgets import preview as preview_module

    page = "runbooks/restore-from-backup.md"
    parsed: list[tuple[str, bool]] = []
    headings = preview_module.markdown_headings

    def counted(text, line_offset=0):
        parsed.append((text, threading.current_thread() is threading.main_thread()))
        return headings(text, line_offset)

    monkeypatch.setattr(preview_module, "markdown_headings", counted)
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.index is not None)
        await open_and_wait(pilot, page)
        text = (sample_copy[0] / page).read_text().rstrip()
        await wait_for(pilot, lambda: any(text.endswith(seen.strip()) for seen, _ in parsed))
        listed = []
        for _ in range(2):
            screen.preview.focus_content()
            await pilot.pause()
            await pilot.press("t")
            await wait_for(pilot, lambda: isinstance(app.screen, OutlineScreen))
            listed.append(app.screen.headings)
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is screen)
            if len(listed) > 1:
                continue
            await open_and_wait(pilot, "guides/backups.md")
            await pilot.press("alt+left")
            await wait_for(pilot, lambda: screen.preview.path == page)
            await wait_for(pilot, lambda: screen.preview.loaded)
        of_page = [on_main for seen, on_main in parsed if text.endswith(seen.strip())]
        assert of_page == [False]  # once, by the loading worker
        assert listed[0] == listed[1] and len(listed[0]) >= 3


async def test_long_lines_wrap_or_scroll_sideways(sample_copy, app_for):
    docs, _index = sample_copy
    (docs / "wide.py").write_text("x = 1\n" + "y = '" + "abcdefghij" * 40 + "'\nz = 3\n")
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await reading(pilot, "wide.py")
        assert view.virtual_size.height > 3  # the long line continues on the rows under it
        shown = [view.render_line(y).text for y in range(view.virtual_size.height)]
        width = view.scrollable_content_region.width
        assert all(len(line) == width for line in shown)
        wrapped = "".join(line[view._gutter :] for line in shown[1:-1]).replace(" ", "")
        assert wrapped == "y='" + "abcdefghij" * 40 + "'"  # all of it, nothing cut
        await pilot.press("w")
        await pilot.pause()
        assert view.virtual_size.height == 3  # one row a line: the long one is cut at the edge
        cut = view.render_line(1).text
        assert len(cut) == view.scrollable_content_region.width
        assert "abcdefghij" * 40 not in cut
        await pilot.press("l")
        assert view.scroll_x > 0  # sideways


async def test_zooming_a_wrapped_page_shows_no_sideways_scrollbar(sample_copy, app_for):
    """Wrapped lines never scroll sideways, so no horizontal scrollbar comes and goes while a
    zoom wraps them anew (it cost a layout of its own); with wrapping off it is there."""
    docs, _index = sample_copy
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        view = await reading(pilot, wide_code(docs))
        seen: list[bool] = []
        view.watch(view, "show_horizontal_scrollbar", lambda shown: seen.append(shown), init=False)
        for _ in range(4):
            await pilot.press("z")
            await pilot.pause(0.1)
        assert seen == []
        await pilot.press("w")
        await pilot.pause(0.1)
        assert seen == [True]  # the lines cut at the edge scroll sideways


async def test_a_zoom_wraps_the_page_for_its_new_width_before_it_is_drawn(sample_copy, app_for):
    """Zooming the preview wraps its rows for the zoomed width as the key is handled, so the
    first frame at that width draws them (not the old rows, wrapped again a layout later), and
    the line at the top stays there, both ways."""
    docs, _index = sample_copy
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        view = await reading(pilot, wide_code(docs))
        screen.preview.go_to_line(120)
        await pilot.pause()
        top = view.top_line
        for _ in range(2):  # in, then out
            rows = view.virtual_size.height
            screen.action_zoom()
            wrapped = view.virtual_size.height  # before any layout at the new width
            await pilot.pause(0.2)
            assert wrapped != rows and view.virtual_size.height == wrapped
            assert view.top_line == top


# -- results ----------------------------------------------------------------------------------
async def test_results_page_on_past_the_first_page_and_keys_move(sample_copy, app_for):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        results = screen.results
        await wait_settled(pilot)
        screen.search_box.set_mode("keyword")
        await type_query(pilot, "the")
        await wait_for(pilot, lambda: screen.status.answered == "keyword")
        assert len(results.hits) == RESULT_FILES and results.has_more
        await pilot.press("down")  # leave the box
        assert screen.focused is results
        await pilot.press("j", "j", "k")
        assert results.highlighted == 1
        await pilot.press("end")
        last = results.hits[-1].path
        await pilot.press("j")  # past the last: the next page
        await wait_for(pilot, lambda: len(results.hits) > RESULT_FILES, what="the next page")
        assert results.hits[RESULT_FILES - 1].path == last
        assert results.highlighted == RESULT_FILES  # on the first result of the new page
        await pilot.press("escape")  # back to the search box, the query selected
        assert screen.focused is screen.search_box.query_one("#query")
        await pilot.press("q")  # typed here (a new query in place of the selected one)
        assert screen.search_box.text == "q"
        await pilot.press("escape")  # Esc leads to the search box: there it stays
        await pilot.press("q")  # no key typing a word quits
        assert screen.search_box.text == "qq" and app.is_running
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0 and not app.is_running


async def test_the_start_hint_does_not_send_a_typist_to_question_mark(sample_copy, app_for):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await pilot.pause()
        assert screen.focused is screen.search_box.query_one("#query")
        assert screen.results.message == START_HINT
        assert "? shows help" not in START_HINT and "Down" in START_HINT
        await pilot.press("down", "question_mark")  # what the hint says works
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))


async def test_scores_say_what_they_mean_in_each_mode(sample_copy, app_for):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        results = screen.results
        await wait_settled(pilot)
        await type_query(pilot, "backup")
        meanings = {}
        for mode in ("hybrid", "semantic", "keyword"):
            screen.search_box.set_mode(mode)
            await wait_for(pilot, lambda mode=mode: results.shown_mode == mode, what=mode)
            meanings[mode] = str(results.border_title)
            assert str(results.tooltip).lower().startswith(mode)
        assert "average" in meanings["hybrid"]
        assert "cosine" in meanings["semantic"]
        assert "BM25" in meanings["keyword"]


# -- the sidebar ------------------------------------------------------------------------------
async def test_after_a_hop_through_related_the_cursor_is_on_the_first_neighbour(
    sample_copy, app_for
):
    """Opening a file from Related reloaded the list with nothing highlighted, so Down then
    Enter opened the first neighbour: often the page just left."""
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        related = screen.related
        await wait_settled(pilot)
        await open_and_wait(pilot, "guides/backups.md")
        await wait_for(pilot, lambda: related.state == "ready")
        related.focus()
        await pilot.pause()
        hop = related.items[0].path
        await pilot.press("enter")
        await wait_for(pilot, lambda: related.source == hop and related.state == "ready")
        assert related.highlighted == 0
        second = related.items[1].path
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: screen.preview.path == second, what="the second neighbour")


async def test_six_related_files_fit_at_45_rows(sample_copy, app_for):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        related = screen.related
        await wait_settled(pilot)
        await open_and_wait(pilot, "guides/backups.md")
        await wait_for(pilot, lambda: related.state == "ready" and screen.links.found is not None)
        await pilot.pause(0.1)
        height = related.scrollable_content_region.height
        shown = [related.render_line(y).text for y in range(height)]
        starts = [line for line in shown if line[:4].replace(".", "").isdigit()]
        assert len(starts) >= 6, shown


async def test_tree_names_too_long_are_cut_in_the_middle(tmp_path, app_for):
    docs = tmp_path / "docs"
    (docs / "languages").mkdir(parents=True)
    for ending in ("python", "golang"):
        name = f"getting-started-with-the-language-and-its-tools-{ending}.md"
        (docs / "languages" / name).write_text(f"# Getting started {ending}\n\nText.\n")
    app = app_for((docs, tmp_path / "index"), watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        tree = app.screen.file_tree
        await wait_for(pilot, lambda: len(tree.paths) == 2)
        await pilot.pause(0.2)
        shown = [tree.render_line(y).text.rstrip() for y in range(3)]
        names = [line for line in shown if "getting" in line]
        assert len(names) == 2 and names[0] != names[1], shown
        assert all("…" in line for line in names), shown
        assert names[0].endswith("golang.md") and names[1].endswith("python.md")


# -- copy and open ----------------------------------------------------------------------------
async def test_copy_path_line_path_and_passage(sample_copy, app_for):
    docs, _index = sample_copy
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        screen.search_box.set_mode("keyword")
        await type_query(pilot, "backup")
        await pilot.press("down")  # in the results: the highlighted result
        hit = screen.results.hits[0]
        best = hit.passages[0]
        await pilot.press("c")
        assert app.clipboard == f"{hit.path}:{best.start_line}"
        await pilot.press("C")
        assert app.clipboard == hit.path
        await pilot.press("p")
        lines = (docs / hit.path).read_text().split("\n")
        assert app.clipboard == "\n".join(lines[best.start_line - 1 : best.end_line])
        # In the preview: the marked passage's place.
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.preview.loaded)
        screen.preview.focus_content()
        await pilot.pause()
        await pilot.press("c")
        assert app.clipboard == f"{hit.path}:{best.start_line}"


async def test_ctrl_o_opens_the_file_with_the_systems_opener(
    sample_copy, app_for, tmp_path, monkeypatch
):
    docs, _index = sample_copy
    record = tmp_path / "opened.txt"
    opener = tmp_path / "opener.sh"
    opener.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {record}\n')
    opener.chmod(0o755)
    monkeypatch.setenv("EXPLORER_OPENER", str(opener))
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.index is not None)
        await open_and_wait(pilot, "guides/backups.md")
        screen.preview.focus_content()
        await pilot.press("ctrl+o")
        await wait_for(pilot, record.exists, what="the opener")
    assert record.read_text() == str(docs.resolve() / "guides/backups.md")


async def test_a_missing_opener_is_one_line(sample_copy, app_for, monkeypatch):
    monkeypatch.setenv("EXPLORER_OPENER", "/no/such/opener")
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.index is not None)
        await open_and_wait(pilot, "guides/backups.md")
        screen.preview.focus_content()
        await pilot.press("ctrl+o")
        await pilot.pause()
        texts = [str(n.message) for n in app._notifications]
        assert any("cannot run /no/such/opener" in text for text in texts), texts


# -- the footer and the help ------------------------------------------------------------------
async def test_the_footer_shows_the_focused_panes_keys(sample_copy, app_for):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        await type_query(pilot, "backup")
        in_box = footer_keys(app)
        assert in_box.get("^t") == "Mode" and "?" not in in_box and "/" not in in_box
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.preview.loaded)
        in_results = footer_keys(app)
        assert in_results.get("enter", in_results.get("⏎")) == "Open"
        assert "t" not in in_results and in_results.get("?") == "Help"
        screen.preview.focus_content()
        await pilot.pause()
        in_preview = footer_keys(app)
        for key, description in [("/", "Find"), ("n", "Next"), ("t", "Outline"), ("w", "Wrap")]:
            assert in_preview.get(key) == description, in_preview


async def test_a_click_on_a_footer_key_presses_it_and_the_mouse_over_it_says_what_it_does(
    sample_copy, app_for
):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        footer = screen.query_one(FittingFooter)
        line = footer.render_line(0).text
        at = line.index("^t Mode")
        assert footer.key_at(at + 3).description == "Mode"
        assert footer.key_at(len(line) - 1).palette  # the palette's key ends the line
        before = screen.search_box.mode
        await pilot.hover(FittingFooter, offset=(at + 1, 0))
        assert footer.tooltip and "hybrid" in str(footer.tooltip)
        await pilot.click(FittingFooter, offset=(at + 1, 0))
        await pilot.pause()
        assert screen.search_box.mode != before


async def test_help_and_readme_list_every_key_grouped_by_pane(sample_copy, app_for):
    groups = key_groups(MainScreen.BINDINGS)
    assert [group.pane for group in groups][:3] == [
        "Anywhere",
        "Anywhere but a text field",
        "Search box",
    ]
    readme = (REPO / "README.md").read_text()
    tui = readme[readme.index("## The explorer (TUI)") : readme.index("## Using it from scripts")]
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        help_text = app.screen.query_one("#help-text").source
    for group in groups:
        assert f"**{group.pane}**" in help_text and f"**{group.pane}**" in tui
        for key in group.keys:
            assert f"| `{key.keys}` | {key.does} |" in help_text
            assert f"| `{key.keys}` | {key.does} |" in tui, key


async def test_the_help_page_scrolls_at_once(sample_copy, app_for):
    """End, Home and the page keys in the help move it at once: Textual animates a scroll by
    default, and the help's End took over half a second to get there. (Pilot's ``press``
    waits for animations to end, so the keys are posted as a terminal sends them.)"""
    import asyncio

    from textual import events

    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("down", "question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        page = app.screen.query_one("#help-dialog")
        await wait_for(pilot, lambda: page.max_scroll_y > 50, what="the help laid out")
        for key, where in (
            ("end", lambda: page.max_scroll_y),
            ("home", lambda: 0),
            ("pagedown", lambda: page.scrollable_content_region.height),
        ):
            app.post_message(events.Key(key, None))
            await asyncio.sleep(0.1)  # six frames; an animated scroll is far from done
            assert page.scroll_y == where(), key


# -- worker failures --------------------------------------------------------------------------
async def test_a_failing_worker_is_said_in_its_pane_and_in_one_notification(
    sample_copy, app_for, monkeypatch
):
    from explorer.core.retrieval import related as core_related

    def broken(*_args, **_kwargs):
        raise RuntimeError("the vectors went away")

    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        monkeypatch.setattr(core_related, "related_files", broken)
        await open_and_wait(pilot, "guides/backups.md")
        await wait_for(pilot, lambda: screen.related.state == "empty", what="the failure")
        shown = screen.related.get_option_at_index(0).prompt.plain
        assert shown == "Cannot show this: RuntimeError: the vectors went away"
        texts = [str(n.message) for n in app._notifications]
        assert texts.count("RuntimeError: the vectors went away") == 1
        assert app.is_running
