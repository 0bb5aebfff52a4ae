"""Untrusted text in the TUI: names, titles and file contents carrying terminal escape sequences
are shown escaped in every widget, and nothing raw reaches the screen."""

from __future__ import annotations

import pytest
from textual.widgets import Markdown

from explorer.tui.index_state import IndexState
from explorer.tui.widgets.fuzzy_jump import FuzzyJump
from explorer.tui.widgets.preview import TextView
from tests.escapes import (
    CORPUS_NAME_SHOWN,
    EVIL_CODE_PATH,
    EVIL_PATH,
    KEPT,
    WORD,
    assert_no_raw_controls,
    write_hostile,
)
from tests.hostile.corpus import ESCAPE_NAME
from tests.ui.conftest import _build, _copy, type_query, wait_for, wait_settled

SIZE = (140, 45)
SHOWN_NAME = r"evil\x1b]0;PWNED\x07\x1b[2J.md"
pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def built_hostile(tmp_path_factory):
    source = write_hostile(tmp_path_factory.mktemp("hostile-source") / "docs")
    return _build(source, tmp_path_factory.mktemp("hostile-built"))


@pytest.fixture
def hostile_copy(built_hostile, tmp_path):
    return _copy(built_hostile, tmp_path)


def _plain(content) -> str:
    return getattr(content, "plain", str(content))


async def test_escape_sequences_show_escaped_in_every_widget(hostile_copy, app_for):
    app = app_for(hostile_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_settled(pilot)
        # The file tree: the name is spelled out, not obeyed.
        label = screen.file_tree._files[EVIL_PATH].label.plain
        assert label == SHOWN_NAME
        assert screen.file_tree._files[ESCAPE_NAME].label.plain == CORPUS_NAME_SHOWN
        # The results: path, heading and snippet.
        await type_query(pilot, WORD)
        rows = {
            hit.path: row
            for hit, row in zip(screen.results.hits, screen.results._rows, strict=True)
        }
        shown = "\n".join(_plain(line) for line in rows[EVIL_PATH])
        assert_no_raw_controls(shown)
        assert f"notes/{SHOWN_NAME}" in shown
        # The Markdown preview: title in the border, text in the document.
        screen.open_file(EVIL_PATH, [(4, 6)])
        await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
        assert screen.preview.kind == "markdown"
        source = screen.preview.query_one(Markdown).source
        assert_no_raw_controls(source)
        assert r"\x1b]8;;http://evil.example/" in source and r"\x9b31m" in source
        assert all(kept in source for kept in KEPT) and "\t" in source
        assert screen.preview.passage_visible()  # lines still line up with the passages
        blocks = "\n".join(_plain(block._content) for block in screen.preview.marked_blocks())
        assert r"\x1b[2Jgrazes" in blocks
        assert_no_raw_controls(str(screen.preview.border_title))
        # The related sidebar of a neighbour names the hostile file escaped.
        screen.open_file("guides/backup.md")
        await wait_for(pilot, lambda: screen.related.state == "ready", what="related files")
        prompts = "\n".join(
            _plain(screen.related.get_option_at_index(i).prompt)
            for i in range(screen.related.option_count)
        )
        assert_no_raw_controls(prompts)
        assert r"evil\x1b]0;PWN" in prompts  # a long name is cut in the middle to fit
        # The code view: each line escaped, tabs and emoji kept.
        screen.open_file(EVIL_CODE_PATH, [(4, 4)])
        await wait_for(pilot, lambda: screen.preview.loaded, what="the code preview")
        view = screen.preview.query_one(TextView)
        lines = [_plain(line) for line in view._lines]
        assert_no_raw_controls("\n".join(lines))
        assert r"\x1b[2J\x1b]8;;" in lines[3] and "café 🦓" in lines[3]
        assert r"\u202ecomment" in lines[3]
        # Quick open (ctrl+p).
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, FuzzyJump), what="quick open")
        await pilot.press(*"evil")
        jump = app.screen
        options = jump.query_one("#fuzzy-list")
        prompts = [
            _plain(options.get_option_at_index(i).prompt) for i in range(options.option_count)
        ]
        assert any(prompt.startswith(f"notes/{SHOWN_NAME}  Evil \\x1b]0;") for prompt in prompts)
        assert_no_raw_controls("\n".join(prompts))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, what="the dialog to close")
        # Status bar and notifications: error texts name files.
        screen.status.index_state = IndexState(error=f"cannot read {EVIL_PATH}")
        assert SHOWN_NAME in screen.status.render().plain
        app.notify(f"no such file in this folder: {EVIL_PATH}", title=f"[b]{EVIL_PATH}")
        await pilot.pause()
        note = app._notifications.last if hasattr(app._notifications, "last") else None
        note = note or list(app._notifications)[-1]
        assert SHOWN_NAME in note.message and note.title.startswith("[b]notes/")
        assert_no_raw_controls(note.message + note.title)
        # And nothing raw anywhere on the screen.
        screenshot = app.export_screenshot()
        assert_no_raw_controls(screenshot)
        assert "PWNED" in screenshot
