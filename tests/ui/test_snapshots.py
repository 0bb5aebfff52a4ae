"""Snapshots of the main layouts on a small fixed corpus (tests/ui/corpus), at a small, a
common and a large terminal (100x30, 160x45, 220x60): the panes collapse and widen with it.

Deterministic by construction: the fake embedder, a fixed corpus copied to a folder named
``docs`` (the only part of its path on screen), no timings in the status bar, and every picture
taken once the index has settled. Update with ``pytest tests/ui --snapshot-update``.
"""

from __future__ import annotations

import pytest
from textual.widgets import Input

from tests.ui.conftest import type_query, wait_for, wait_settled

SIZE = (160, 45)
SIZES = [(100, 30), (160, 45), (220, 60)]


async def _settle(pilot) -> None:
    pilot.app.screen.status.show_timings = False
    await wait_settled(pilot)
    _steady_cursors(pilot)
    await pilot.pause(0.1)


async def _titled(pilot) -> None:
    """The preview's headings worked out, so its title names its section (they are worked out
    on a thread a moment after the file shows: a picture taken before would differ)."""
    await wait_for(pilot, lambda: pilot.app.screen.preview.headings_known)
    await pilot.pause(0.1)


def _steady_cursors(pilot) -> None:
    """A blinking cursor would make the picture depend on the moment it is taken."""
    for box in pilot.app.screen.query(Input):
        box.cursor_blink = False


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_start_layout(snap_compare, snapshot_copy, app_for, size):
    async def run_before(pilot):
        await _settle(pilot)

    assert snap_compare(app_for(snapshot_copy), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_search_and_open_result(snap_compare, snapshot_copy, app_for, size):
    async def run_before(pilot):
        await _settle(pilot)
        screen = pilot.app.screen
        screen.search_box.set_mode("keyword")
        await type_query(pilot, "snapshot restore")
        await wait_for(pilot, lambda: screen.status.answered == "keyword")
        await pilot.press("enter")  # opens the best result and focuses the list
        await wait_for(pilot, lambda: screen.preview.loaded)
        await wait_for(pilot, lambda: screen.related.state == "ready")
        await wait_for(pilot, lambda: screen.links.found is not None)
        await _titled(pilot)

    assert snap_compare(app_for(snapshot_copy), terminal_size=size, run_before=run_before)


def test_zoomed_preview_with_a_find(snap_compare, snapshot_copy, app_for):
    async def run_before(pilot):
        await _settle(pilot)
        screen = pilot.app.screen
        screen.open_file("guides/backups.md")
        await wait_for(pilot, lambda: screen.preview.loaded)
        screen.preview.focus_content()
        await pilot.pause()
        await pilot.press("z", "slash", *"backup", "enter")
        await _titled(pilot)

    assert snap_compare(app_for(snapshot_copy), terminal_size=SIZE, run_before=run_before)


def test_outline_dialog(snap_compare, snapshot_copy, app_for):
    async def run_before(pilot):
        await _settle(pilot)
        screen = pilot.app.screen
        screen.open_file("guides/backups.md")
        await wait_for(pilot, lambda: screen.preview.loaded)
        screen.preview.focus_content()
        await pilot.pause()
        await pilot.press("t")
        _steady_cursors(pilot)
        await pilot.pause(0.1)

    assert snap_compare(app_for(snapshot_copy), terminal_size=SIZE, run_before=run_before)


def test_code_preview_with_a_user_theme(snap_compare, snapshot_copy, app_for):
    async def run_before(pilot):
        await _settle(pilot)
        pilot.app.theme = "tern-dusk"
        screen = pilot.app.screen
        screen.open_file("src/app.py", [(11, 13)])
        await wait_for(pilot, lambda: screen.preview.loaded)
        await wait_for(pilot, lambda: screen.related.state == "ready")
        await wait_for(pilot, lambda: screen.links.found is not None)
        screen.preview.focus_content()
        await _titled(pilot)

    assert snap_compare(app_for(snapshot_copy), terminal_size=SIZE, run_before=run_before)


def test_fuzzy_jump_dialog(snap_compare, snapshot_copy, app_for):
    async def run_before(pilot):
        await _settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"rest")
        _steady_cursors(pilot)
        await pilot.pause(0.1)

    assert snap_compare(app_for(snapshot_copy), terminal_size=SIZE, run_before=run_before)


def test_help_screen(snap_compare, snapshot_copy, app_for):
    async def run_before(pilot):
        await _settle(pilot)
        await pilot.press("down", "question_mark")
        await pilot.pause(0.2)

    assert snap_compare(app_for(snapshot_copy), terminal_size=SIZE, run_before=run_before)
