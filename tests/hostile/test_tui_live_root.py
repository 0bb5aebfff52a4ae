"""The TUI when the ground moves (issue 21): a file that becomes a folder leaves the tree and the
results; a root deleted under the app is said in the status bar, and its return is followed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from explorer.tui.app import make_app
from tests.conftest import write_files
from tests.fakes import FakeEmbedder
from tests.ui.conftest import type_query, wait_for

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning"),
]
SIZE = (120, 40)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def result_paths(screen) -> list[str]:
    return [hit.path for hit in screen.results.hits]


async def test_a_file_that_becomes_a_folder_leaves_the_tree_and_the_results(tmp_path: Path):
    root = write_files(
        tmp_path / "root",
        {"notes.md": "# Notes\n\nquokkaharbor\n", "other.md": "# Other\n\nibisgarden\n"},
    )
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: set(screen.file_tree.paths) == {"notes.md", "other.md"})
        os.remove(root / "notes.md")
        os.mkdir(root / "notes.md")
        (root / "notes.md" / "inside.md").write_text("# Inside\n\nwombatferry\n")
        await wait_for(
            pilot,
            lambda: set(screen.file_tree.paths) == {"notes.md/inside.md", "other.md"},
            10,
            "the tree to show the folder's file instead of the file",
        )
        await type_query(pilot, "quokkaharbor")
        assert "notes.md" not in result_paths(screen)  # (meaning may still rank the others)


async def test_a_deleted_root_is_said_and_its_return_followed(tmp_path: Path) -> None:
    root = write_files(tmp_path / "root", {"one.md": "# One\n\nibisgarden\n"})
    app = make_app(root, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: screen.file_tree.paths == ["one.md"])
        shutil.rmtree(root)
        await wait_for(
            pilot,
            lambda: "is gone" in screen.status.index_text,
            5,
            "the status bar to say the folder is gone",
        )
        assert "waiting for it to come back" in screen.status.index_text
        write_files(root, {"back.md": "# Back\n\ntapirmeadow\n"})
        await wait_for(
            pilot,
            lambda: screen.file_tree.paths == ["back.md"],
            10,
            "the tree to show the folder that came back",
        )
        await wait_for(pilot, lambda: "is gone" not in screen.status.index_text, 5)
        await type_query(pilot, "tapirmeadow")
        assert result_paths(screen) == ["back.md"]
