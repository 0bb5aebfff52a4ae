"""The keyboard model (issue 30), typed as a user types: Esc from any pane leads back to the
search box and what is typed next searches; keys sent in one write (a fast typist, a paste, a
terminal's batch) reach the widget focused when each was pressed; no typed letter hands the
file to another program or quits.

Keys "sent in one write" are posted to the app together, before it handles the first: that is
how a terminal's read delivers them (Pilot's ``press`` waits for each key to be handled).
"""

from __future__ import annotations

import pytest
from textual import events
from textual.keys import _character_to_key

from explorer.tui.widgets.preview import FindBar, TextView
from tests.ui.conftest import type_query, wait_for, wait_settled
from tests.ui.test_daily_use import long_code, open_and_wait, reading
from tests.ui.test_preview_links import open_when_indexed as open_indexed
from tests.ui.test_several_folders import settle

SIZE = (120, 40)
pytestmark = pytest.mark.anyio
PANES = ("tree", "results", "preview", "links", "related")


@pytest.fixture
def opened(tmp_path, monkeypatch):
    """The file an opener (the system's and $EDITOR) writes the paths it is given to."""
    record = tmp_path / "opened.txt"
    opener = tmp_path / "opener.sh"
    opener.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> {record}\n')
    opener.chmod(0o755)
    monkeypatch.setenv("EXPLORER_OPENER", str(opener))
    monkeypatch.setenv("EDITOR", str(opener))
    return record


async def send_at_once(pilot, keys: str | list[str]) -> None:
    """Post ``keys`` (characters, or key names such as ``escape``) in one go, as one read of
    the terminal brings them, then let the app handle them."""
    app = pilot.app
    for key in keys:
        if len(key) == 1:
            app.post_message(events.Key(_character_to_key(key), key))
        else:
            app.post_message(events.Key(key, "\x1b" if key == "escape" else None))
    await pilot.pause()
    await pilot.pause()


async def focus_pane(pilot, pane: str) -> None:
    screen = pilot.app.screen
    screen.focus_pane(pane)
    await pilot.pause()
    await pilot.pause()


# -- Esc, then a word -------------------------------------------------------------------------
@pytest.mark.parametrize("pane", PANES)
async def test_esc_then_a_word_searches_from_every_pane_and_fires_nothing(
    sample_copy, app_for, opened, pane
):
    """The review's case: reading, Esc, then a new question typed at once. Before, the letters
    were the preview's commands (w wrapped, o ran the opener, e an editor)."""
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        await type_query(pilot, "backup")
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        await wait_for(pilot, lambda: screen.related.items, what="related files")
        await focus_pane(pilot, pane)
        assert screen.focused is not None and screen.focused.id != "query"
        wrap, path = screen.preview.wrap, screen.current_path
        await send_at_once(pilot, ["escape", *"webhook zone edit quit"])
        assert screen.focused is screen.search_box.query_one("#query")
        assert screen.search_box.text == "webhook zone edit quit"
        assert screen.preview.wrap == wrap and screen.maximized is None
        assert screen.current_path == path and app.is_running
        await pilot.pause(0.3)
        assert not opened.exists(), "a typed letter ran the opener or the editor"


async def test_esc_in_the_search_box_stays_there(sample_copy, app_for):
    """Esc leads to the search box from every pane; pressed there too, it stays (pressing it
    twice to be sure never leaves typing for a list's commands)."""
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        await type_query(pilot, "backup")
        await send_at_once(pilot, ["escape", "escape", *" job"])
        assert screen.focused is screen.search_box.query_one("#query")
        assert screen.search_box.text == "backup job"


async def test_a_zoomed_pane_and_esc_then_typing(sample_copy, app_for):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await reading(pilot, "guides/backups.md")
        await pilot.press("z")
        assert screen.maximized is screen.preview
        await send_at_once(pilot, ["escape", *"wow"])
        assert screen.maximized is None
        assert screen.search_box.text == "wow" and screen.preview.wrap


async def test_no_typed_letter_opens_edits_or_quits(sample_copy, app_for, opened):
    """o, e and q typed in the preview do nothing; ctrl+o and ctrl+e hand the file over."""
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await reading(pilot, "guides/backups.md")
        await pilot.press("o", "e", "q")
        await pilot.pause(0.3)
        assert app.is_running and not opened.exists()
        await pilot.press("ctrl+o")
        await wait_for(pilot, opened.exists, what="the opener")
    assert opened.read_text().strip().endswith("guides/backups.md")


# -- find -------------------------------------------------------------------------------------
async def test_slash_and_a_word_in_one_write_finds(sample_copy, app_for):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        preview = screen.preview
        await reading(pilot, long_code(sample_copy[0]))
        await send_at_once(pilot, "/function_42")
        bar = preview.query_one(FindBar)
        assert bar.value == "function_42"
        assert preview.found == [127]
        # Enter keeps the match and gives the keys back to the page, at once: n steps.
        await send_at_once(pilot, ["enter", "g", "n"])
        assert screen.focused is preview.query_one(TextView) and bar.value == "function_42"
        assert preview.found_index == 0 and preview.lines_visible(127, 127)


async def test_one_esc_closes_find(sample_copy, app_for):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        preview = screen.preview
        await reading(pilot, long_code(sample_copy[0]))
        await pilot.press("slash", *"return")
        await pilot.press("escape")
        assert not preview.query_one(FindBar).display
        assert screen.focused is preview.query_one(TextView)
        assert preview.finding  # what it found stays for n / N
        await pilot.press("escape")  # the next Esc: the search box
        assert screen.focused is screen.search_box.query_one("#query")


# -- zoom, Tab and the border -----------------------------------------------------------------
def long_markdown(docs, name: str = "long.md", sections: int = 60) -> str:
    """A Markdown page of ``sections`` headings, each over a paragraph long enough to wrap."""
    body = "".join(
        f"## Section {n}\n\nParagraph {n}: " + "words that wrap at any width " * 12 + "\n\n"
        for n in range(1, sections + 1)
    )
    (docs / name).write_text("# Long\n\n" + body)
    return name


async def test_zoom_keeps_the_top_line_of_a_markdown_page(sample_copy, app_for):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        preview = screen.preview
        await reading(pilot, long_markdown(sample_copy[0]))
        line = next(h.line for h in preview.headings() if h.title == "Section 30")
        preview.go_to_line(line)
        await pilot.pause()
        top = preview.position()
        assert abs(top - line) <= 2  # the heading, or the blank line and paragraph before
        for _ in range(4):  # zoom in, out, in, out: the same line each time
            await pilot.press("z")
            await pilot.pause()
            await pilot.pause()
            assert preview.position() == top
        assert screen.maximized is None


async def test_a_key_read_with_the_zoom_moves_the_zoomed_page(sample_copy, app_for):
    """``z`` then ``G`` in one read of the terminal: the zoom put the page back at the line it
    had at its top once the new layout was drawn, after G had gone to the end: G was lost."""
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        preview = screen.preview
        await reading(pilot, long_markdown(sample_copy[0]))
        assert preview.position() <= 2
        for key in ("z", "G"):  # as a terminal's one read delivers them: no frame between
            app.post_message(events.Key(key, key))
        await pilot.pause()
        await pilot.pause()
        assert screen.maximized is preview
        last = preview.query_one(TextView).line_count
        assert preview.lines_visible(last, last)
        await pilot.press("g")
        for key in ("z", "G"):  # and back, to the narrower pane
            app.post_message(events.Key(key, key))
        await pilot.pause()
        await pilot.pause()
        assert screen.maximized is None and preview.lines_visible(last, last)


@pytest.mark.parametrize("pane", ["links", "related", "tree", "results"])
async def test_every_pane_zooms_to_the_whole_screen_and_back(sample_copy, app_for, pane):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        await open_and_wait(pilot, "design/0001-why-sqlite.md")
        await wait_for(pilot, lambda: screen.links.found is not None, what="the links")
        await focus_pane(pilot, pane)
        widget = screen.focused
        await pilot.press("z")
        await pilot.pause()
        zoomed = screen.maximized
        assert zoomed is not None and widget in (zoomed, *zoomed.walk_children())
        assert zoomed.outer_size.height >= 45 - 2  # all but the status bar and the footer
        assert zoomed.outer_size.width == 160
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is None and screen.focused is widget


@pytest.mark.parametrize("pane", ["links", "related"])
async def test_a_list_entered_with_tab_has_a_row_for_enter(sample_copy, app_for, pane):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        source = "design/0001-why-sqlite.md"
        await open_and_wait(pilot, source)
        await wait_for(pilot, lambda: screen.links.found is not None, what="the links")
        await wait_for(pilot, lambda: screen.related.items, what="related files")
        screen.preview.focus_content()
        await pilot.pause()
        target = screen.links if pane == "links" else screen.related
        for _ in range(8):
            if screen.focused is target:
                break
            await pilot.press("tab")
        assert screen.focused is target
        assert target.highlighted is not None
        assert target.row_target(target.highlighted) is not None
        await send_at_once(pilot, ["enter"])
        await wait_for(pilot, lambda: screen.current_path != source, what="a row opened")


# -- history ----------------------------------------------------------------------------------
async def test_back_and_forward_survive_a_restart(sample_copy, app_for):
    docs, _index = sample_copy
    name = long_code(docs)
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await reading(pilot, "guides/backups.md")
        await open_and_wait(pilot, name)
        screen.preview.focus_content()
        await pilot.press("space", "space")
        top = screen.preview.position()
        await open_and_wait(pilot, "api/webhooks.md")
        await pilot.press("left_square_bracket")  # back to long.py, at the line read
        await wait_for(pilot, lambda: screen.current_path == name and screen.preview.loaded)
        await pilot.press("ctrl+q")
    again = app_for(sample_copy, watch=False)
    async with again.run_test(size=SIZE) as pilot:
        screen = again.screen
        await wait_for(pilot, lambda: screen.preview.path == name and screen.preview.loaded)
        await pilot.pause()
        assert screen.preview.position() == top
        screen.preview.focus_content()
        await pilot.press("right_square_bracket")  # forward is kept too
        await wait_for(pilot, lambda: screen.current_path == "api/webhooks.md")
        await pilot.press("left_square_bracket", "left_square_bracket")
        await wait_for(pilot, lambda: screen.current_path == "guides/backups.md")
        await pilot.pause()
        await pilot.press("left_square_bracket")  # nothing before: the status bar says so
        assert "back: nothing before this place" in screen.status.render().plain
        assert screen.current_path == "guides/backups.md"


# -- following links from the keyboard --------------------------------------------------------
FILLER = "".join(f"Line {n} of filler so the heading is far down.\n\n" for n in range(60))
VAULT = {
    ".obsidian/app.json": "{}\n",
    "Start.md": (
        "# Start\n\nFirst [[Target#Deep Heading]], then [[Target#^para42]],\n"
        "a [markdown link](Target.md#deep-heading) and [[Nowhere]].\n"
    ),
    "Target.md": (
        "# Target\n\n" + FILLER + "## Deep Heading\n\nUnder it.\n\n" + FILLER + "A block. ^para42\n"
    ),
}


async def open_when_indexed(pilot, screen, path: str) -> None:
    await open_indexed(pilot, screen, path)
    await wait_for(pilot, lambda: screen.links.found is not None, what="the links")
    screen.preview.focus_content()
    await pilot.pause()


@pytest.mark.parametrize(
    ("typed", "heading"),
    [("deep", "## Deep Heading"), ("para42", "A block. ^para42"), ("md#deep", "## Deep Heading")],
)
async def test_f_lists_the_pages_links_and_enter_follows_one_to_its_anchor(
    tmp_path, typed, heading
):
    from explorer.tui.app import make_app
    from explorer.tui.widgets.link_picker import LinkPicker
    from tests.conftest import write_files
    from tests.fakes import FakeEmbedder

    root = write_files(tmp_path / "vault", VAULT)
    target_line = VAULT["Target.md"].split("\n").index(heading) + 1
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder(), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await open_when_indexed(pilot, screen, "Start.md")
        await send_at_once(pilot, ["f", *typed])  # the picker takes what is typed at once
        assert isinstance(app.screen, LinkPicker)
        picker = app.screen
        assert [link.line for link in picker.links] == sorted(link.line for link in picker.links)
        states = {link.raw: str(link.state) for link in picker.links}
        assert states["[[Nowhere]]"] == "missing" and len(states) == 4
        assert picker.query_one("#links-input").value == typed
        assert len(picker.shown) == 1 + (typed == "deep")  # narrowed as typed
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.current_path == "Target.md" and screen.preview.loaded)
        await pilot.pause()
        assert screen.preview.lines_visible(target_line, target_line)
        assert screen.preview.position() > 1


async def test_a_page_of_thousands_of_links_opens_its_picker_at_once_and_narrows_to_any(
    tmp_path,
):
    """A manual's table of contents links thousands of pages: the picker lists the first
    ones (a list measures every row it is given), says how many more there are, and typing
    finds any of them, the last too."""
    from explorer.tui.app import make_app
    from explorer.tui.widgets.link_picker import ROWS_SHOWN, LinkPicker
    from tests.conftest import write_files
    from tests.fakes import FakeEmbedder

    count = ROWS_SHOWN * 5
    pages = {f"part/page{n}.md": f"# Page {n}\n\nText of page {n}.\n" for n in range(count)}
    contents = "# Contents\n\n" + "".join(f"- [Page {n}](part/page{n}.md)\n" for n in range(count))
    root = write_files(tmp_path / "docs", {"contents.md": contents, **pages})
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder(), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await open_when_indexed(pilot, screen, "contents.md")
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, LinkPicker))
        picker = app.screen
        assert len(picker.links) == count
        rows = picker.options
        assert rows.option_count == ROWS_SHOWN + 1
        assert f"{count - ROWS_SHOWN:,} more" in str(rows.get_option_at_index(ROWS_SHOWN).prompt)
        assert picker.chosen(ROWS_SHOWN) is None  # the line saying so leads nowhere
        assert f"{count} of {count} links" in str(picker.query_one("#links-dialog").border_subtitle)
        await pilot.press(*f"page{count - 1}.md")
        assert [link.target for link in picker.shown] == [f"part/page{count - 1}.md"]
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.current_path == f"part/page{count - 1}.md")


# -- the key table ----------------------------------------------------------------------------
def test_the_readme_key_table_is_the_generated_one():
    from pathlib import Path

    from explorer.tui.key_table import key_table, with_key_table

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert with_key_table(readme) == readme, (
        "run python -m explorer.tui.key_table --write README.md"
    )
    assert "| `ctrl+o` |" in key_table() and "| `o` |" not in key_table()
    assert "| `q` |" not in key_table() and "| `f` | The page's links" in key_table()


# -- small terminals --------------------------------------------------------------------------
@pytest.mark.parametrize("pane", ["query", "results", "preview", "link picker"])
async def test_at_80x24_the_footer_and_the_status_bar_show_only_whole_words(
    sample_copy, app_for, pane
):
    from explorer.tui.widgets.footer import FittingFooter

    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        screen.search_box.set_filter("guides/ api/ design/")
        await type_query(pilot, "backup restore")
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        if pane == "query":
            screen.search_box.focus_query()
        elif pane == "link picker":  # the footer under a picker
            await focus_pane(pilot, "preview")
            await pilot.press("f")
        else:
            await focus_pane(pilot, pane)
        await pilot.pause(0.2)
        footer = screen.query_one(FittingFooter)
        line = footer.render_line(0).text
        shown = footer.shown
        assert len(shown) >= 3, line  # a few of the pane's keys, and the palette's
        offered = [key for key in footer.keys if not key.palette]
        assert shown[:-1] == offered[: len(shown) - 1], line  # the first keys, in order
        assert shown[-1].palette, line
        assert len(line) == 80, line  # the palette's key ends the line at the edge
        drawn = [f"{key.key_display} {key.description}".strip() for key in shown]
        at = 0
        for text in drawn:  # each key whole, in order
            found = line.find(text, at)
            assert found >= 0, (text, line)
            at = found + len(text)
        assert line.replace("▏", " ").split() == " ".join(drawn).split(), line  # nothing else
        status = screen.status
        await pilot.pause()
        shown_status = status.render().plain
        assert len(shown_status) <= status.size.width, shown_status
        for part in shown_status.split(" │ "):  # every part whole: one of the bar's own parts
            assert part.strip(), shown_status
        assert not shown_status.rstrip().endswith("│"), shown_status


@pytest.mark.parametrize("key, field", [("slash", "find"), ("colon", "go-to")])
async def test_a_field_and_its_keys_in_the_footer_come_in_one_frame(
    sample_copy, app_for, key, field
):
    """Opening the find or go-to field, and closing it, changes the footer in the frame that
    shows the change: never a frame with the field and the page's keys, or the page and the
    field's keys."""
    from textual.widgets import Input

    from explorer.tui.widgets.footer import FittingFooter

    app = app_for(sample_copy, watch=False)
    frames: list[tuple[bool, tuple[str, ...]]] = []
    composed = app._display

    def display(screen, update) -> None:
        if update is not None and screen is app.screen and screen.query(FittingFooter):
            bar = screen.preview.query_one(f"#{field}", Input)
            shown = screen.query_one(FittingFooter).shown
            frames.append((bar.display, tuple(key.description for key in shown)))
        composed(screen, update)

    app._display = display  # type: ignore[method-assign]
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        screen.open_file("guides/backups.md")
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        await focus_pane(pilot, "preview")
        await pilot.pause(0.3)
        footer = screen.query_one(FittingFooter)
        page_keys = tuple(key.description for key in footer.shown)
        frames.clear()
        await pilot.press(key)
        await pilot.pause(0.3)
        field_keys = tuple(key.description for key in footer.shown)
        await pilot.press("escape")
        await pilot.pause(0.3)
    assert "Find" in page_keys and "Find" not in field_keys, (page_keys, field_keys)
    with_field = [keys for open_, keys in frames if open_]
    without = [keys for open_, keys in frames if not open_]
    assert with_field and without, frames
    assert set(with_field) == {field_keys}, frames
    assert set(without) == {page_keys}, frames


async def test_the_tree_forced_on_at_80_columns_is_readable(sample_copy, app_for):
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        assert not screen.file_tree.display
        await pilot.press("f2")
        await pilot.pause()
        tree = screen.file_tree
        assert tree.display and screen.focused is tree
        assert tree.outer_size.width >= 24
        rows = [tree.render_line(y).text.strip() for y in range(tree.size.height)]
        assert any("getting-started.md" in row or "backups.md" in row for row in rows), rows


# -- several folders --------------------------------------------------------------------------
async def test_each_folder_of_a_window_says_where_it_is(tmp_path):
    """Two folders named ``en`` and ``src``: each node names its collection and where it is,
    and the status bar gives the whole path when the cursor is on it."""
    from explorer.settings.config import NamedFolder, Settings
    from explorer.tui.app import ExplorerApp
    from tests.conftest import write_files
    from tests.fakes import FakeEmbedder
    from tests.ui.conftest import FAKE_MODEL

    site = write_files(tmp_path / "site" / "content" / "en", {"intro.md": "# Intro\n\nHello.\n"})
    code = write_files(tmp_path / "tool" / "src", {"main.md": "# Main\n\nCode notes.\n"})
    folders = [
        NamedFolder("en", Settings.for_root(site, tmp_path / "i1", model=FAKE_MODEL)),
        NamedFolder("src", Settings.for_root(code, tmp_path / "i2", model=FAKE_MODEL)),
    ]
    app = ExplorerApp(folders, embedder=FakeEmbedder(), watch=False)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = app.screen
        tree = screen.file_tree
        await settle(pilot)  # both indexes open: the tree's nodes are the folders'
        assert len(tree.root.children) == 2
        labels = [str(node.label) for node in tree.root.children]
        assert labels[0].startswith("en  ") and "site/content/en" in labels[0], labels
        assert labels[1].startswith("src  ") and "tool/src" in labels[1], labels
        screen.set_focus(tree)
        await pilot.pause()
        said = {f"src: {code.resolve()}", f"src: {code}"}

        def says_src() -> bool:
            if any(text in screen.status.render().plain for text in said):
                return True
            # The cursor arrives at the node (again: a read of the manifest may move it, or it
            # got there before the tree had the focus, when nothing is said).
            tree.move_cursor(tree.root.children[0])
            tree.move_cursor(tree.root.children[1])
            return False

        await wait_for(pilot, says_src, 10, "the folder's path in the status bar")


async def test_the_border_tells_the_lines_in_view_after_keys_and_an_outline_jump(
    sample_copy, app_for
):
    from explorer.tui.widgets.outline import OutlineScreen

    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        preview = screen.preview
        await reading(pilot, long_markdown(sample_copy[0]))
        await pilot.pause()

        def in_view() -> str:
            return str(preview.border_subtitle)

        assert (
            "view L1–" in in_view()
            and f"of {len(preview.text_of(1, 10**6).split(chr(10)))}" in in_view()
        )
        await pilot.press("space")
        await pilot.pause()
        assert f"view L{preview.position()}–" in in_view() and preview.position() > 1
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, OutlineScreen))
        await pilot.press(*"section 50", "enter")
        await wait_for(pilot, lambda: app.screen is screen)
        await pilot.pause()
        line = next(h.line for h in preview.headings() if h.title == "Section 50")
        top = preview.position()
        assert abs(top - line) <= 2
        assert f"view L{top}–" in in_view(), in_view()


@pytest.mark.parametrize("width", [21, 26, 30, 45])
def test_related_rows_of_different_files_never_read_alike(width):
    """Two versions of a page (nic/ and nic/lts/): every folder of one is in the other, and
    the name is long; each read `installation-with-helm.md` at 26 columns."""
    from explorer.tui.text_fit import distinct_paths

    paths = [
        "content/nic/installation/installing-nic/installation-with-helm.md",
        "content/nic/lts/installation/installing-nic/installation-with-helm.md",
    ]
    shown = distinct_paths(paths, width)
    assert shown[0] != shown[1], shown
    assert all(len(path) <= width for path in shown)
    assert "lts" in shown[1]


async def test_characters_a_pane_binds_are_typed_in_the_search_box(sample_copy, app_for):
    """``/``, ``?``, ``[`` and ``z`` are keys of the panes, and characters of a query."""
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await reading(pilot, "guides/backups.md")
        await send_at_once(pilot, ["escape", *"path:a/b?[z] c"])
        assert screen.search_box.text == "path:a/b?[z] c"
        assert app.screen is screen and screen.maximized is None
        assert screen.current_path == "guides/backups.md"


async def test_esc_and_a_word_in_one_read_of_a_real_terminal(sample_copy, app_for):
    """A terminal sends Esc and the letter right after it in one read as ``alt+w`` (seen under
    tmux: ``send-keys Escape webhook``); it is Esc, then w."""
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await reading(pilot, "guides/backups.md")
        top = screen.preview.position()
        app.post_message(events.Key("alt+w", "w"))
        await send_at_once(pilot, "ebhook")
        assert screen.search_box.text == "webhook"
        assert screen.preview.wrap and screen.preview.position() == top


@pytest.mark.parametrize(("read_as", "word"), [("ctrl+left", "backup"), ("ctrl+right", "find")])
async def test_esc_and_a_b_or_f_in_one_read_are_not_a_word_move(
    sample_copy, app_for, read_as, word
):
    """Textual reads Esc then b (f) in one read as ctrl+left (ctrl+right), the word moves of
    some terminals: out of a text field they are Esc, then the letter (seen under tmux: Esc
    then "backup" in the results copied a path with its c)."""
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await reading(pilot, "guides/backups.md")
        top = screen.preview.position()
        app.post_message(events.Key(read_as, None))
        await send_at_once(pilot, word[1:])
        assert screen.search_box.text == word
        assert screen.preview.position() == top
        # In the search box ctrl+left stays the word move it is there.
        await pilot.press("ctrl+left")
        assert screen.search_box.text == word


@pytest.mark.parametrize(("read_as", "letter"), [("ctrl+right", "f"), ("ctrl+left", "b")])
async def test_esc_and_b_or_f_in_one_read_in_the_search_box_type_the_letter(
    sample_copy, app_for, read_as, letter
):
    """In the search box, Esc then b or f in one read (ctrl+left or ctrl+right) is Esc, which
    stays, then the letter, wherever the word move would not move: a restored query, selected,
    is replaced (seen in tmux: Esc, "free will" gave "malayalam scriptree will"), an empty box
    is typed in; with the cursor inside the text it stays the word move."""
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.index is not None)
        box = screen.search_box
        box.set_text("malayalam script", selected=True)
        box.focus_query()
        await pilot.pause()
        app.post_message(events.Key(read_as, None))
        await send_at_once(pilot, "ree will")
        assert box.text == f"{letter}ree will"
        box.set_text("")
        await pilot.pause()
        app.post_message(events.Key(read_as, None))
        await send_at_once(pilot, "ind")
        assert box.text == f"{letter}ind"
        box.set_text("alpha beta")
        field = screen.query_one("#query")
        field.cursor_position = 5
        await pilot.pause()
        await pilot.press(read_as)
        assert box.text == "alpha beta" and field.cursor_position != 5


async def test_keys_typed_while_a_jumped_to_file_loads_are_the_previews(sample_copy, app_for):
    """ctrl+p, a name, Enter and at once a reading key: the key is the preview's, not the
    search box's (the focus waited for the file to load, so the letters became a query)."""
    from explorer.tui.widgets.fuzzy_jump import FuzzyJump

    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.index is not None and screen.file_tree.paths)
        await open_and_wait(pilot, "guides/backups.md")
        screen.search_box.focus_query()
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, FuzzyJump))
        await pilot.press(*"0001-why")
        await send_at_once(pilot, ["enter", "w"])
        await wait_for(
            pilot, lambda: screen.preview.loaded and screen.current_path != "guides/backups.md"
        )
        assert screen.search_box.text == ""
        assert not screen.preview.wrap  # w: the preview's key
        assert screen.preview in screen.focused.ancestors


def test_history_read_back_drops_what_is_gone_or_malformed():
    from explorer.tui.history import NavigationHistory, Place

    history = NavigationHistory()
    for place in (Place("a.md", 3), Place("gone.md"), Place("b.md", 9, ((4, 6),), 4)):
        history.visit(place)
    history.visit(Place("b.md", 9, ((4, 6),), 4))  # the same place again: not a new one
    history.back()
    data = history.to_data()
    data["places"].append({"path": 7})  # wrong shape
    again = NavigationHistory.from_data(data, lambda path: path != "gone.md")
    assert again.places == [Place("a.md", 3), Place("b.md", 9, ((4, 6),), 4)]
    assert again.current == Place("a.md", 3)  # gone.md was current: the place before it
    assert NavigationHistory.from_data({"places": "x"}, bool).places == []


async def test_a_sphinx_ref_followed_from_f_lands_on_its_labels_section(tmp_path):
    """A reStructuredText page's ``:ref:`` leads to the page that marks the label, at the
    label's line (its section), not at the page's top; and a file opened at a line from a
    page too short to scroll is scrolled there (Textual scrolled no view without a
    scrollbar, and the short page's view had none)."""
    from explorer.tui.app import make_app
    from explorer.tui.widgets.link_picker import LinkPicker
    from tests.conftest import write_files
    from tests.fakes import FakeEmbedder

    filler = "".join(
        f"Paragraph {n} of the guide, before its tuning section.\n\n" for n in range(60)
    )
    guide = f"Guide\n=====\n\n{filler}.. _tuning-knobs:\n\nTuning\n------\n\nTurn the knobs.\n"
    start = "Start\n=====\n\nRead :ref:`the tuning section <Tuning-Knobs>` first.\n"
    root = write_files(tmp_path / "docs", {"start.rst": start, "guide.rst": guide})
    label = guide.split("\n").index(".. _tuning-knobs:") + 1
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder(), watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await open_when_indexed(pilot, screen, "start.rst")
        await send_at_once(pilot, ["f"])
        assert isinstance(app.screen, LinkPicker)
        assert [link.raw for link in app.screen.links] == ["Tuning-Knobs"]
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.current_path == "guide.rst" and screen.preview.loaded)
        await pilot.pause()
        assert screen.preview.lines_visible(label, label + 3)
        assert screen.preview.position() > 1

        screen.open_file("start.rst")
        await wait_for(pilot, lambda: screen.current_path == "start.rst" and screen.preview.loaded)
        screen.open_file("guide.rst", line=40)
        await wait_for(pilot, lambda: screen.current_path == "guide.rst" and screen.preview.loaded)
        await pilot.pause()
        assert screen.preview.lines_visible(40, 40) and screen.preview.position() > 1
