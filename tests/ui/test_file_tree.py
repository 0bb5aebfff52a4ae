"""The file tree at scale: a manifest reload applies only what changed, a sorted fill is linear.

At 11,000 files (benchmarks/scale.py) each reload walked every node on the UI thread (0.1-0.4 s,
every second while indexing) and the first fill compared each new node with all its siblings.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from rich.style import Style
from textual.app import App, ComposeResult

import explorer.tui.widgets.file_tree as file_tree
from explorer.tui.widgets.file_tree import FileTree

pytestmark = pytest.mark.anyio


@dataclass(frozen=True)
class Record:
    state: str
    reason: str = ""


class TreeApp(App):
    def compose(self) -> ComposeResult:
        yield FileTree("root")


def manifest(folders: int, files: int, state: str = "fresh") -> dict[str, Record]:
    return {
        f"f{folder:02d}/sub/n{number:04d}.md": Record(state)
        for folder in range(folders)
        for number in range(files)
    } | {f"f{folder:02d}/top{folder}.md": Record(state) for folder in range(folders)}


@pytest.fixture
def counted(monkeypatch):
    """How many times the tree compared two entries' sort keys."""
    calls = []
    original = file_tree._sort_key
    monkeypatch.setattr(file_tree, "_sort_key", lambda e: calls.append(1) or original(e))
    return calls


async def test_a_sorted_first_fill_compares_each_node_about_once(counted):
    records = manifest(5, 400)
    async with TreeApp().run_test() as pilot:
        tree = pilot.app.query_one(FileTree)
        tree.set_files(records)
        assert tree.paths == sorted(records)
        assert len(counted) < 4 * len(records)  # was ~n²/2 per folder: 400,000 here
        folder = tree.root.children[0]
        names = [str(child.label) for child in folder.children]
        assert names == ["sub", "top0.md"]  # folders first, still


async def test_a_reload_applies_only_the_difference(counted):
    records = manifest(5, 400, state="pending")
    async with TreeApp().run_test() as pilot:
        tree = pilot.app.query_one(FileTree)
        tree.set_files(records)
        counted.clear()
        tree.set_files(dict(records))
        assert counted == []  # nothing changed, nothing compared or re-marked
        changed = dict(records)
        changed["f01/sub/n0007.md"] = Record("fresh")
        del changed["f03/top3.md"]
        changed["f03/a-new.md"] = Record("failed", "parse error")
        tree.set_files(changed)
        assert tree.state_of("f01/sub/n0007.md") == "fresh"
        assert tree.state_of("f01/sub/n0008.md") == "pending"
        assert tree.state_of("f03/top3.md") is None
        assert tree.state_of("f03/a-new.md") == "failed"
        assert tree.paths == sorted(changed)
        names = [str(child.label) for child in tree.root.children[3].children]
        assert names == ["sub", "a-new.md"]
        tree.set_files({})
        assert tree.paths == [] and not tree.root.children


async def test_a_labels_width_is_counted_as_it_is_drawn():
    """Textual measures every line when the tree is built; the tree counts a label's cells
    without drawing it (17,000 labels of a flat folder held the screen for a second), and
    counts them as they are drawn: a file's mark, a folder's icon, a name cut in the middle."""
    records = manifest(3, 4) | {
        "f00/sub/" + "a-very-long-note-name-" * 6 + ".md": Record("pending"),
        "f01/skipped.bin": Record("skipped", "binary"),
        "漢字のノート/メモ.md": Record("fresh"),
    }
    for width in (24, 40, 100):
        async with TreeApp().run_test(size=(width, 30)) as pilot:
            tree = pilot.app.query_one(FileTree)
            tree.set_files(records)
            for path in records:
                tree.reveal(path)
            await pilot.pause()
            nodes, stack = [], list(tree.root.children)
            while stack:
                node = stack.pop()
                nodes.append(node)
                stack.extend(node.children)
            assert len(nodes) > len(records)
            for node in nodes:
                drawn = tree.render_label(node, Style(), Style()).cell_len
                assert tree.get_label_width(node) == drawn, (width, str(node.label))


async def test_files_added_among_thousands_find_their_place_by_halving(counted):
    """A checkout adds 2,000 files to a folder of 5,000: each new node found its place by
    walking the folder from its first child (1.9 s on the UI thread); now by halving it, in
    the same order as before."""
    records = {f"notes/n-{number:05d}.md": Record("fresh") for number in range(5000)}
    added = {
        f"notes/{kind}-{number:05d}.md": Record("pending")
        for number in range(1000)
        for kind in "am"
    }
    async with TreeApp().run_test() as pilot:
        tree = pilot.app.query_one(FileTree)
        tree.set_files(records)
        counted.clear()
        tree.set_files(records | added)
        assert len(counted) < 40 * len(added)  # ~log2(7,000) each; walking: ~6,000,000
        names = [str(child.label) for child in tree.root.children[0].children]
        assert names == [path.rsplit("/", 1)[1] for path in sorted(records | added)]
        assert tree.state_of("notes/m-00999.md") == "pending"


class NarrowTreeApp(App):
    CSS = "FileTree { width: 24; height: 12; }"

    def compose(self) -> ComposeResult:
        yield FileTree("root")


async def test_a_file_revealed_in_a_folder_of_long_names_is_not_under_the_scrollbar():
    """Opening a note of a vault showed the tree scrolled to the row above it: the folder
    opened for it held names wider than the pane, and the scrollbar that came for them covered
    the bottom row, where the reveal had put the file."""
    records = {
        f"notes/A long title of a note, number {n:03d}.md": Record("fresh") for n in range(90)
    }
    records |= {f"z{n}.md": Record("fresh") for n in range(3)}
    async with NarrowTreeApp().run_test(size=(80, 24)) as pilot:
        tree = pilot.app.query_one(FileTree)
        tree.set_files(records)
        await pilot.pause()
        wanted = "notes/A long title of a note, number 040.md"
        tree.reveal(wanted)
        await pilot.pause()
        await pilot.pause()
        assert tree.show_horizontal_scrollbar
        line = tree.cursor_line
        assert tree.cursor_node is not None and tree.cursor_node.data.path == wanted
        rows = tree.scrollable_content_region.height
        assert tree.scroll_offset.y <= line < tree.scroll_offset.y + rows
