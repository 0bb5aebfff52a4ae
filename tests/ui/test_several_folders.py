"""A window on several folders (issue 25), as a user meets it: each folder a top-level node of
the tree under its collection name, one ranking over every folder, links within a folder,
related files across them, a live index per folder, a folder added to and removed from the
running window, and the session of the set of folders.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from explorer.settings.config import NamedFolder, Settings
from explorer.tui.app import ExplorerApp
from explorer.tui.widgets.folder_prompt import FolderPrompt
from explorer.tui.widgets.fuzzy_jump import FuzzyJump
from tests.fakes import FakeEmbedder
from tests.ui.conftest import FAKE_MODEL, type_query, wait_for

SIZE = (140, 40)
pytestmark = pytest.mark.anyio


def notes_folder(base: Path) -> Path:
    """A second folder: a few notes, one linking to another, one word only it holds."""
    notes = base / "notes"
    (notes / "garden").mkdir(parents=True)
    (notes / "garden" / "compost.md").write_text(
        "# Compost\n\nThe zucchiniwort heap turns kitchen scraps into soil.\n\n"
        "See [watering](watering.md) for the schedule.\n"
    )
    (notes / "garden" / "watering.md").write_text(
        "# Watering\n\nWater the beds at dawn; zucchiniwort likes it damp.\n"
    )
    (notes / "backups.md").write_text(
        "# Backup policy at home\n\nBackups of the photo library go to a disk every Sunday.\n"
    )
    return notes


def named(name: str, root: Path, index_dir: Path) -> NamedFolder:
    return NamedFolder(name, Settings.for_root(root, index_dir, model=FAKE_MODEL))


def window(sample_copy, tmp_path: Path, **kwargs) -> ExplorerApp:
    docs, index_dir = sample_copy
    notes = notes_folder(tmp_path / "second")
    folders = [named("docs", docs, index_dir), named("notes", notes, tmp_path / "notes-index")]
    return ExplorerApp(folders, embedder=FakeEmbedder(), **kwargs)


def all_settled(screen) -> bool:
    """Every folder's index is open and idle, the query path warm and the tree read."""
    lives = [screen.lives.get(folder.name) for folder in screen.workspace.folders]
    return (
        all(live is not None and not live.busy for live in lives)
        and screen.state.semantic_ready
        and screen.state.counts.get("pending", 1) == 0
        and bool(screen.file_tree.paths)
    )


async def settle(pilot, timeout: float = 30.0) -> None:
    screen = pilot.app.screen
    await wait_for(pilot, lambda: all_settled(screen), timeout, "every folder to settle")


async def enter_path(pilot, path: Path) -> None:
    """Give the folder prompt ``path`` and press enter. The field is filled with all of it but
    its last character, which is typed, as the enter is: a path under pytest's tmp_path is some
    80 characters, and each key the pilot presses waits for the app to go idle (typing both
    paths of the test key by key took 10 of its 17 s)."""
    await wait_for(pilot, lambda: bool(pilot.app.screen.query("#folder-input")), what="the field")
    field = pilot.app.screen.query_one("#folder-input", Input)
    text = str(path)
    field.value = text[:-1]
    field.cursor_position = len(field.value)
    await pilot.press(text[-1], "enter")


def top_level(screen) -> list[str]:
    """The collection names of the tree's top-level nodes (each followed by where it is)."""
    return [str(node.label).split("  ", 1)[0] for node in screen.file_tree.root.children]


async def test_each_folder_is_a_node_and_one_ranking_spans_them(sample_copy, tmp_path):
    app = window(sample_copy, tmp_path, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(pilot)
        assert top_level(screen) == ["docs", "notes"]
        assert "docs/guides/backups.md" in screen.file_tree.paths
        assert "notes/garden/compost.md" in screen.file_tree.paths
        assert screen.search_box.border_title == "Search · docs + notes"
        # The status bar counts the chunks of both folders.
        own = [screen.workspace.index_of(name).keywords.counts() for name in ("docs", "notes")]
        assert screen.state.counts["chunks"] == sum(counts["chunks"] for counts in own)
        assert own[1]["chunks"] > 0

        screen.search_box.set_mode("keyword")
        await type_query(pilot, "backup")
        paths = [hit.path for hit in screen.results.hits]
        folders = {path.split("/", 1)[0] for path in paths}
        assert folders == {"docs", "notes"}, paths
        assert "notes/backups.md" in paths
        assert all(screen.workspace.is_file(path) for path in paths)

        # Enter opens a file of the second folder from its window path.
        index = paths.index("notes/backups.md")
        screen.results.focus()
        screen.results.highlighted = index
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.preview.path == "notes/backups.md")
        await wait_for(pilot, lambda: screen.preview.loaded)
        assert "photo library" in screen.preview.text_of(1, 5)


async def test_collection_word_keeps_one_folder(sample_copy, tmp_path):
    app = window(sample_copy, tmp_path, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(pilot)
        screen.search_box.set_mode("keyword")
        await type_query(pilot, "backup collection:notes")
        paths = [hit.path for hit in screen.results.hits]
        assert paths and all(path.startswith("notes/") for path in paths), paths
        screen.search_box.set_text("backup collection:nowhere")
        await wait_for(pilot, lambda: "no collection 'nowhere'" in screen.results.message)
        assert not screen.results.hits


async def test_links_stay_in_their_folder_and_related_files_cross(sample_copy, tmp_path):
    app = window(sample_copy, tmp_path, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(pilot)
        screen.open_file("notes/garden/compost.md")
        links = screen.links
        await wait_for(pilot, lambda: links.found is not None, what="the links")
        assert [link.target for link in links.found.outgoing] == ["notes/garden/watering.md"]
        target = links.row_target(1)
        assert target is not None and target.path == "notes/garden/watering.md"
        # A link clicked in the preview resolves within the folder too.
        screen._link_followed(
            screen.workspace.destination("notes/garden/compost.md", "watering.md")
        )
        await wait_for(pilot, lambda: screen.preview.path == "notes/garden/watering.md")

        related = screen.related
        screen.open_file("notes/backups.md")
        await wait_for(pilot, lambda: related.source == "notes/backups.md" and related.items)
        folders = {item.path.split("/", 1)[0] for item in related.items}
        assert "docs" in folders, [item.path for item in related.items]
        assert all(screen.workspace.is_file(item.path) for item in related.items)


async def test_the_live_index_follows_every_folder(sample_copy, tmp_path):
    app = window(sample_copy, tmp_path, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(pilot)
        notes = screen.workspace.folder("notes").settings.root
        (notes / "garden" / "seeds.md").write_text("# Seeds\n\nQuillberry seeds sprout in May.\n")
        await wait_for(
            pilot,
            lambda: "notes/garden/seeds.md" in screen.file_tree.paths,
            timeout=20,
            what="the new note in the tree",
        )
        screen.search_box.set_mode("keyword")
        await type_query(pilot, "quillberry")
        assert [hit.path for hit in screen.results.hits] == ["notes/garden/seeds.md"]


async def test_a_folder_is_added_to_a_running_window_and_removed(sample_copy, tmp_path, app_for):
    notes = notes_folder(tmp_path / "second")
    app = app_for(sample_copy, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: all_settled(screen), 30, "the first folder")
        screen.open_file("guides/backups.md", line=3)
        await wait_for(pilot, lambda: screen.preview.loaded)
        screen.open_file("api/search.md")
        await wait_for(pilot, lambda: screen.preview.path == "api/search.md")

        screen.action_add_folder()
        await wait_for(pilot, lambda: isinstance(app.screen, FolderPrompt))
        await enter_path(pilot, tmp_path / "no-such-folder")
        await pilot.pause()
        assert isinstance(app.screen, FolderPrompt)  # a bad path is said, and nothing closes
        assert "no such folder" in str(app.screen.query_one("#folder-message").render())
        await enter_path(pilot, notes)
        await wait_for(pilot, lambda: app.screen is screen)

        # The window's paths now name their folder: the open file, the history, the tree.
        assert screen.current_path == "docs/api/search.md"
        assert screen.preview.path == "docs/api/search.md"
        await settle(pilot)
        assert top_level(screen) == ["docs", "notes"]
        assert screen.search_box.border_title == "Search · docs + notes"
        screen.preview.focus_content()
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: screen.preview.path == "docs/guides/backups.md")
        screen.search_box.set_mode("keyword")
        await type_query(pilot, "zucchiniwort")
        hits = [hit.path for hit in screen.results.hits]
        assert set(hits) == {"notes/garden/compost.md", "notes/garden/watering.md"}

        # Removing it brings the single folder's paths back.
        screen.action_remove_folder()
        await wait_for(pilot, lambda: isinstance(app.screen, FuzzyJump))
        await pilot.press(*"notes", "enter")
        await wait_for(pilot, lambda: app.screen is screen and not screen.workspace.several)
        assert screen.current_path == "guides/backups.md"
        assert screen.search_box.border_title == "Search · docs"
        await wait_for(pilot, lambda: top_level(screen)[:1] != ["docs"], what="the tree")
        assert "guides/backups.md" in screen.file_tree.paths
        assert not any(path.startswith("notes/garden") for path in screen.file_tree.paths)
        await wait_for(pilot, lambda: not screen.results.hits, what="no notes results")


async def test_the_window_reopens_where_the_user_left(sample_copy, tmp_path):
    app = window(sample_copy, tmp_path, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await settle(pilot)
        screen.search_box.set_mode("keyword")
        await type_query(pilot, "zucchiniwort")
        screen.open_file("notes/garden/watering.md")
        await wait_for(pilot, lambda: screen.preview.loaded)
        await pilot.press("ctrl+q")
    docs, index_dir = sample_copy
    notes = tmp_path / "second" / "notes"
    folders = [named("notes", notes, tmp_path / "notes-index"), named("docs", docs, index_dir)]
    again = ExplorerApp(folders, embedder=FakeEmbedder(), watch=False)
    async with again.run_test(size=SIZE) as pilot:
        screen = again.screen
        await wait_for(pilot, lambda: screen.preview.path == "notes/garden/watering.md")
        assert screen.search_box.text == "zucchiniwort"
        assert screen.recent.paths[0] == "notes/garden/watering.md"
