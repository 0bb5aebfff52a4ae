"""What a window keeps when its folders change (a folder added to or removed from a running
TUI): the navigation history and the recent files follow the new paths, and the status bar
folds every folder's index state into one line."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.core.live.events import ModelState, ProgressEvent
from explorer.core.models import SyncPhase
from explorer.tui.history import NavigationHistory, Place, RecentFiles
from explorer.tui.index_state import IndexState, combined


def test_history_follows_renamed_paths_and_drops_closed_ones() -> None:
    history = NavigationHistory()
    for path in ("a.md", "gone/b.md", "c.md", "gone/d.md", "e.md"):
        history.visit(Place(path))
    history.back()
    history.back()  # on c.md, with two places ahead
    history.rename(lambda path: None if path.startswith("gone/") else f"docs/{path}")
    assert [place.path for place in history.places] == ["docs/a.md", "docs/c.md", "docs/e.md"]
    assert history.current == Place("docs/c.md")
    assert history.back() == Place("docs/a.md")
    assert history.forward() == Place("docs/c.md")
    assert history.forward() == Place("docs/e.md")


def test_history_of_only_closed_places_is_empty() -> None:
    history = NavigationHistory()
    history.visit(Place("gone/a.md"))
    history.rename(lambda _path: None)
    assert history.current is None and not history.can_go_back


def test_recent_files_follow_and_stay_distinct() -> None:
    recent = RecentFiles(["notes/x.md", "docs/y.md", "docs/z.md"])
    recent.rename(lambda path: path.removeprefix("docs/") if path.startswith("docs/") else None)
    assert recent.paths == ["y.md", "z.md"]


def test_the_status_folds_every_folders_state() -> None:
    embedding = ProgressEvent(SyncPhase.EMBED, chunks_done=5, chunks_total=10)
    done = ProgressEvent(SyncPhase.DONE)
    folders = {
        "docs": IndexState(opened=True, progress=done, document_model=ModelState.READY),
        "vault": IndexState(
            opened=True,
            progress=embedding,
            document_model=ModelState.LOADING,
            root_missing="the folder is gone",
        ),
    }
    shown = combined(IndexState(vectors=7), folders)
    assert shown.progress is embedding  # the folder still at work
    assert shown.document_model is ModelState.LOADING
    assert shown.root_missing == "vault: the folder is gone"
    assert shown.opened and shown.vectors == 7
    failed = {"docs": IndexState(error="cannot open"), "vault": IndexState(error="locked")}
    assert combined(IndexState(), failed).error == "docs: cannot open; vault: locked"
    one = combined(IndexState(), {"docs": IndexState(error="cannot open")})
    assert one.error == "cannot open"  # one folder names no folder


def test_a_window_gaining_and_losing_a_folder_renames_its_paths(tmp_path) -> None:
    from explorer.settings.config import NamedFolder, Settings
    from explorer.tui.workspace import Workspace

    docs, notes = tmp_path / "docs", tmp_path / "notes"
    docs.mkdir()
    notes.mkdir()
    workspace = Workspace.of(Settings.for_root(docs, tmp_path / "i1"))
    assert workspace.window_path("docs", "guides/a.md") == "guides/a.md"
    added = workspace.folder_at(notes)
    assert added.name == "notes" and added.settings.model == workspace.first.settings.model
    renamed = workspace.add_folder(added)
    assert renamed("guides/a.md") == "docs/guides/a.md"
    with pytest.raises(ExplorerError, match="open already"):
        workspace.folder_at(notes)
    with pytest.raises(ExplorerError, match="open already"):
        workspace.add_folder(NamedFolder("other", added.settings))
    folder, renamed = workspace.remove_folder("docs")
    assert folder.name == "docs"
    assert renamed("notes/x.md") == "x.md"
    assert renamed("docs/guides/a.md") is None
    with pytest.raises(ExplorerError, match="last folder"):
        workspace.remove_folder("notes")
