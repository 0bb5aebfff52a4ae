"""The live index when the ground moves (issue 21): a file replaced by a folder of the same name
(and back), and a root deleted under it that comes back. Fake embedder, real watchdog."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from explorer.core.live.writer import (
    FilesChangedEvent,
    LiveIndex,
    RootState,
    RootStateEvent,
)
from explorer.core.retrieval.search import SearchRequest, search
from tests.conftest import wait_until, write_files
from tests.fakes import FakeEmbedder

pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")

FILES = {
    "notes.md": "# Notes\n\nThe old file talks about quokkaharbor.\n",
    "docs.md/a.md": "# A\n\nA page of a folder named like a file: lemurlantern.\n",
    "other.md": "# Other\n\nAnother page about ibisgarden.\n",
}


class Events(list):
    """The live index's events, in order (appended on its writer thread)."""

    def root_states(self) -> list[RootState]:
        return [event.state for event in list(self) if isinstance(event, RootStateEvent)]


def keyword_paths(live: LiveIndex, word: str) -> set[str]:
    found = search(live.index, SearchRequest(word, mode="keyword", limit=50)).results
    return {hit.path for hit in found}


@pytest.fixture
def live(tmp_path: Path, settings_for):
    root = write_files(tmp_path / "root", FILES)
    events = Events()
    index = LiveIndex(settings_for(root), events.append, FakeEmbedder(), debounce_seconds=0.1)
    index.start()
    assert index.wait_idle(20)
    yield index, events
    index.stop()


def test_a_file_replaced_by_a_folder_leaves_the_index(live) -> None:
    index, _events = live
    root = index.settings.root
    assert keyword_paths(index, "quokkaharbor") == {"notes.md"}
    os.remove(root / "notes.md")
    os.mkdir(root / "notes.md")
    (root / "notes.md" / "inside.md").write_text("# Inside\n\nNow a folder with wombatferry.\n")
    assert wait_until(lambda: keyword_paths(index, "wombatferry") == {"notes.md/inside.md"}, 10)
    assert wait_until(lambda: keyword_paths(index, "quokkaharbor") == set(), 5)
    assert "notes.md" not in index.index.keywords.files()


def test_a_folder_replaced_by_a_file_leaves_the_index(live, tmp_path: Path) -> None:
    index, _events = live
    root = index.settings.root
    assert keyword_paths(index, "lemurlantern") == {"docs.md/a.md"}
    shutil.move(root / "docs.md", tmp_path / "moved-away")  # one event: the folder moved out
    (root / "docs.md").write_text("# Docs\n\nNow a file about pangolinpier.\n")
    assert wait_until(lambda: keyword_paths(index, "pangolinpier") == {"docs.md"}, 10)
    assert wait_until(lambda: keyword_paths(index, "lemurlantern") == set(), 5)
    assert set(index.index.keywords.files()) == {"docs.md", "notes.md", "other.md"}


def test_a_deleted_root_is_reported_and_followed_when_it_comes_back(live) -> None:
    index, events = live
    root = index.settings.root
    shutil.rmtree(root)
    assert wait_until(lambda: events.root_states() == [RootState.MISSING], 5)
    assert index.root_missing
    message = next(e for e in events if isinstance(e, RootStateEvent)).message
    assert str(root) in message and "gone" in message
    # The index keeps what it held (a folder unmounted or moved away is no reason to lose it).
    assert keyword_paths(index, "ibisgarden") == {"other.md"}
    write_files(root, {"back.md": "# Back\n\nThe folder is back with tapirmeadow.\n"})
    assert wait_until(lambda: events.root_states() == [RootState.MISSING, RootState.PRESENT], 5)
    assert wait_until(lambda: keyword_paths(index, "tapirmeadow") == {"back.md"}, 10)
    assert keyword_paths(index, "ibisgarden") == set()  # re-synced: the old files are gone
    assert not index.root_missing
    # The writer tells of the re-sync once it has committed it: the event may follow the search.

    def resync() -> FilesChangedEvent | None:
        changed = [e for e in list(events) if isinstance(e, FilesChangedEvent)]
        return next((e for e in reversed(changed) if "back.md" in e.paths), None)

    assert wait_until(lambda: resync() is not None, 5)
    assert "other.md" in resync().paths  # the files gone with the folder are told too
    (root / "later.md").write_text("# Later\n\nWatched again: okapiorchard.\n")
    assert wait_until(lambda: keyword_paths(index, "okapiorchard") == {"later.md"}, 10)


def test_a_root_moved_away_and_back_is_watched_again(live, tmp_path: Path) -> None:
    index, events = live
    root = index.settings.root
    root.rename(tmp_path / "elsewhere")
    assert wait_until(lambda: events.root_states() == [RootState.MISSING], 5)
    (tmp_path / "elsewhere").rename(root)
    assert wait_until(lambda: events.root_states() == [RootState.MISSING, RootState.PRESENT], 5)
    assert index.wait_idle(10)
    assert keyword_paths(index, "ibisgarden") == {"other.md"}  # nothing was lost meanwhile
    (root / "other.md").write_text("# Other\n\nEdited after the return: civetcanyon.\n")
    assert wait_until(lambda: keyword_paths(index, "civetcanyon") == {"other.md"}, 10)


def test_a_root_swapped_for_a_new_folder_between_two_looks_is_re_synced(live) -> None:
    index, events = live
    root = index.settings.root
    shutil.rmtree(root)
    write_files(root, {"new.md": "# New\n\nA new folder at once: marmotquay.\n"})  # within 1 s
    assert wait_until(lambda: keyword_paths(index, "marmotquay") == {"new.md"}, 10)
    assert RootState.PRESENT in events.root_states()
    (root / "newer.md").write_text("# Newer\n\nStill watched: dingoterrace.\n")
    assert wait_until(lambda: keyword_paths(index, "dingoterrace") == {"newer.md"}, 10)
