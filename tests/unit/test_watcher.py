"""IndexWatcher: real watchdog on tmp_path; batches are awaited with a deadline, never a sleep."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from explorer.core.live.watcher import IndexWatcher
from tests.conftest import wait_until

# watchdog warns (harmlessly) when a new folder's watch is added twice in a race with its walk.
pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")


class Recorder:
    """Collects the batches a watcher hands over."""

    def __init__(self) -> None:
        self.batches: list[set[str]] = []
        self._lock = threading.Lock()

    def __call__(self, paths: set[str]) -> None:
        with self._lock:
            self.batches.append(set(paths))

    @property
    def seen(self) -> set[str]:
        with self._lock:
            return set().union(*self.batches) if self.batches else set()

    def has(self, *paths: str) -> Callable[[], bool]:
        return lambda: set(paths) <= self.seen

    def clear(self) -> None:
        with self._lock:
            self.batches.clear()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "old.md").write_text("old\n")
    (folder / "keep.md").write_text("keep\n")
    return folder


@pytest.fixture
def watch(root: Path):
    """Start a watcher on ``root`` (extra keyword arguments go to IndexWatcher)."""
    started: list[IndexWatcher] = []

    def make(**options) -> tuple[IndexWatcher, Recorder]:
        recorder = Recorder()
        options.setdefault("debounce_seconds", 0.1)
        watcher = IndexWatcher(root, recorder, **options)
        watcher.start()
        started.append(watcher)
        return watcher, recorder

    yield make
    for watcher in started:
        watcher.stop()


def test_create_modify_delete(root, watch):
    _, rec = watch()
    (root / "new.md").write_text("hello\n")
    assert wait_until(rec.has("new.md"))
    rec.clear()
    with open(root / "keep.md", "a") as handle:
        handle.write("more\n")
    assert wait_until(rec.has("keep.md"))
    rec.clear()
    (root / "docs" / "old.md").unlink()
    assert wait_until(rec.has("docs/old.md"))
    assert "docs" not in rec.seen  # folder "modified" events are dropped


def test_moves_report_both_ends(root, watch):
    _, rec = watch()
    (root / "keep.md").rename(root / "docs" / "kept.md")
    assert wait_until(rec.has("keep.md", "docs/kept.md"))
    rec.clear()
    (root / "docs").rename(root / "guides")
    assert wait_until(rec.has("docs", "guides"))


def test_folder_created_and_deleted(root, watch):
    _, rec = watch()
    (root / "new" / "deep").mkdir(parents=True)
    (root / "new" / "deep" / "a.md").write_text("a\n")
    assert wait_until(rec.has("new", "new/deep/a.md"))
    rec.clear()
    (root / "new" / "deep" / "a.md").unlink()
    (root / "new" / "deep").rmdir()
    assert wait_until(rec.has("new/deep", "new/deep/a.md"))


@pytest.mark.parametrize("temp_name", ["notes.md.swp", ".notes.md~", "notes.md.tmp"])
def test_temp_file_then_rename_save(root, watch, temp_name):
    (root / "notes.md").write_text("first\n")
    _, rec = watch()
    temp = root / temp_name
    temp.write_text("second\n")
    os.replace(temp, root / "notes.md")
    assert wait_until(rec.has("notes.md"))
    assert (root / "notes.md").read_text() == "second\n"


def test_burst_gives_few_batches(root, watch):
    _, rec = watch(debounce_seconds=0.2, max_wait_seconds=2.0)
    expected = set()
    for number in range(300):
        rel = f"burst/d{number % 10}/file{number}.md"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"file {number}\n")
        expected.add(rel)
    assert wait_until(lambda: expected <= rec.seen, timeout=10)
    assert len(rec.batches) <= 5, [len(b) for b in rec.batches]


def test_long_stream_still_flushes(root, watch):
    _, rec = watch(debounce_seconds=0.3, max_wait_seconds=0.5)
    deadline = time.monotonic() + 1.5
    number = 0
    while time.monotonic() < deadline and not rec.batches:
        (root / f"stream{number}.md").write_text("x\n")
        number += 1
        time.sleep(0.05)  # a steady stream, quicker than the debounce
    assert rec.batches, "the max wait must flush a batch while events keep coming"


def test_index_dir_and_git_ignored(root, watch):
    index_dir = root / ".explorer-index"
    index_dir.mkdir()
    (root / ".git").mkdir()
    _, rec = watch(ignored_dirs=(index_dir,))
    (index_dir / "index.sqlite").write_text("db\n")
    (index_dir / "chroma").mkdir()
    (index_dir / "chroma" / "data.bin").write_text("bin\n")
    (root / ".git" / "HEAD").write_text("ref\n")
    (root / "marker.md").write_text("marker\n")
    assert wait_until(rec.has("marker.md"))
    assert all(not p.startswith((".explorer-index", ".git")) for p in rec.seen), rec.seen


def test_callback_errors_do_not_stop_the_watcher(root, watch):
    calls: list[set[str]] = []

    def flaky(paths: set[str]) -> None:
        calls.append(paths)
        if len(calls) == 1:
            raise RuntimeError("boom")

    watcher = IndexWatcher(root, flaky, debounce_seconds=0.05)
    watcher.start()
    try:
        (root / "one.md").write_text("1\n")
        assert wait_until(lambda: len(calls) >= 1)
        (root / "two.md").write_text("2\n")
        assert wait_until(lambda: any("two.md" in c for c in calls))
    finally:
        watcher.stop()


def test_start_and_stop_are_idempotent_and_quick(root):
    watcher = IndexWatcher(root, lambda _paths: None)
    watcher.stop()  # before start: harmless
    watcher = IndexWatcher(root, lambda _paths: None)
    watcher.start()
    watcher.start()
    assert watcher.running
    started = time.monotonic()
    watcher.stop()
    watcher.stop()
    assert time.monotonic() - started < 1.0
    assert not watcher.running
    assert all(t.name != "explorer-watch-debounce" for t in threading.enumerate())
