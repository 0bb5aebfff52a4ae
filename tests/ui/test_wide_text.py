"""Chinese, Japanese and Korean names and text in the TUI: each character takes two cells, and
every pane stays aligned; keyword search, its highlights, find in page and go to file match
words of text written without spaces, and accents are folded."""

from __future__ import annotations

import io

import pytest
from rich.cells import cell_len
from rich.console import Console

from explorer.tui.widgets.fuzzy_jump import FuzzyJump
from explorer.tui.widgets.results import MATCH_STYLE
from tests.conftest import write_files
from tests.ui.conftest import _build, _copy, type_query, wait_for, wait_settled

SIZE = (120, 36)
pytestmark = pytest.mark.anyio

FILES = {
    "文档/备份策略说明.md": "# 备份策略\n\n每天晚上对数据库做一次快照，"
    "然后把备份复制到另一台服务器。重跑gen-itgc后检查日志。\n",
    "文档/設定/サンドボックスの再起動手順.md": "# 設定の手順\n\n"
    "サンドボックスを再起動してから設定を確認してください。\n",
    "notes/데이터베이스_백업_안내.md": "# 백업 안내\n\n데이터베이스를 매일 백업합니다.\n",
    "notes/Zürich café.md": "# Café notes\n\nWe were running the benchmark at the café in"
    " Zürich.\n",
    "文档/长文.md": "# 数据库快照与恢复\n\n## 概述\n\n"
    + "本文说明如何对数据库做快照，以及如何从快照恢复。快照是数据库在某一时刻的完整副本。" * 4
    + "\n",
}


@pytest.fixture(scope="module")
def built_wide(tmp_path_factory):
    source = write_files(tmp_path_factory.mktemp("wide-source") / "docs", FILES)
    return _build(source, tmp_path_factory.mktemp("wide-built"))


@pytest.fixture
def wide_copy(built_wide, tmp_path):
    return _copy(built_wide, tmp_path)


def screen_lines(app) -> list[list[str]]:
    """The screen as the terminal shows it, one list of cells per row (a wide character, then
    "" for its second cell). Rendered as ``App.export_screenshot`` renders it (the compositor is
    Textual's own; this fails loudly if it goes)."""
    width, height = app.size
    console = Console(
        width=width, height=height, file=io.StringIO(), force_terminal=True, record=True
    )
    console.print(app.screen._compositor.render_update(full=True))
    rows = []
    for line in console.export_text().split("\n")[:height]:
        cells: list[str] = []
        for char in line:
            cells.extend([char] + [""] * (cell_len(char) - 1))
        rows.append(cells)
    return rows


def assert_aligned(app, widgets) -> None:
    """Every row is the terminal's width, and each bordered pane's left and right borders stand
    in their columns on every row of the pane."""
    width, _height = app.size
    rows = screen_lines(app)
    for number, cells in enumerate(rows):
        line = "".join(cells)
        assert len(cells) <= width, f"row {number} is {len(cells)} cells: {line!r}"
    for widget in widgets:
        region = widget.region
        for y in range(region.y, region.bottom):
            cells = rows[y] + [" "] * (width - len(rows[y]))
            left, right = cells[region.x], cells[region.right - 1]
            line = "".join(cells)
            assert left in "│╭╰├", f"{widget.id}: row {y} left border moved: {line!r}"
            assert right in "│╮╯┤", f"{widget.id}: row {y} right border moved: {line!r}"


def marked(results) -> list[str]:
    """The text the results list marks as matching the query."""
    found = []
    for row in results._rows:
        for line in row:
            found.extend(
                line.plain[span.start : span.end]
                for span in line.spans
                if span.style == MATCH_STYLE
            )
    return found


async def keyword_search(pilot, query: str) -> list[str]:
    """Type ``query`` in keyword mode (once the index settled); the paths of the results."""
    screen = pilot.app.screen
    await wait_settled(pilot)
    screen.search_box.set_mode("keyword")
    await type_query(pilot, query)
    return [hit.path for hit in screen.results.hits]


async def go_to_file(pilot, keys: str) -> str:
    """Go to the file ``keys`` find first (ctrl+p); its path, once the preview shows it."""
    app, screen = pilot.app, pilot.app.screen
    await pilot.press("ctrl+p")
    await wait_for(pilot, lambda: isinstance(app.screen, FuzzyJump), what="go to file")
    await pilot.press(*keys)
    first: str = app.screen.matches[0].path
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.screen is screen, what="the dialog to close")
    await wait_for(pilot, lambda: screen.preview.loaded, what="the preview")
    assert screen.preview.path == first
    return first


async def test_wide_names_and_text_keep_every_pane_aligned(wide_copy, app_for):
    app = app_for(wide_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        paths = await keyword_search(pilot, "数据库")
        assert paths == ["文档/长文.md", "文档/备份策略说明.md"]
        assert "数据库" in marked(screen.results)
        assert await go_to_file(pilot, "再起動") == "文档/設定/サンドボックスの再起動手順.md"
        await pilot.pause(0.3)
        panes = [screen.file_tree, screen.results, screen.preview, screen.links, screen.related]
        assert all(pane.display and pane.region.area for pane in panes)
        assert_aligned(app, panes)
        tree = screen.file_tree.region
        names = [
            "".join(cells[tree.x + 1 : tree.right - 1]).strip()
            for cells in screen_lines(app)[tree.y : tree.bottom]
        ]
        korean = next(name for name in names if "데이" in name)
        assert "…" in korean and korean.endswith("내.md"), "a long name is cut in its middle"

        screen.preview.find("再起動")
        assert screen.preview.found == [3]


async def test_accents_are_folded_in_search_find_and_go_to_file(wide_copy, app_for):
    app = app_for(wide_copy)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert await keyword_search(pilot, "zurich cafe") == ["notes/Zürich café.md"]
        assert {"Zürich", "café"} <= set(marked(screen.results))
        assert await go_to_file(pilot, "zurich") == "notes/Zürich café.md"
        screen.preview.find("cafe")
        assert screen.preview.found == [1, 3]
