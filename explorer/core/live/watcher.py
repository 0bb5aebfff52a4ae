"""Watch a root for file changes and hand them over in debounced batches.

:class:`IndexWatcher` runs a recursive watchdog observer on the root. Every relevant raw event
(created, modified, attribute change, deleted, moved: both ends of a move; for folders created,
deleted, moved and attribute changes) is turned into a root-relative POSIX path and put in a
pending set. A debouncer thread hands the set to ``on_batch`` once no event has arrived for
``debounce_seconds``, or at the latest ``max_wait_seconds`` after the first event of a burst, so a
steady stream of changes still flushes regularly. A ``git checkout`` of 500 files therefore gives
one or a few batches, and an editor's "write a temp file, rename it over the original" save ends
with the original name in a batch (the rename's destination).

Folder *modified* events are dropped: they only say that an entry of the folder changed, and that
entry has its own event. A folder's *attribute* change is kept: a ``chmod`` may make its files
readable or not. Events under ``.git/``, under ``ignored_dirs`` (such as an index
folder kept inside the root) and inside any explorer index folder under the root (recognised
by its files, :func:`~explorer.core.ingest.scanner.is_index_folder`) are dropped too.

Paths are index keys (:func:`~explorer.core.ingest.root_paths.path_key`): a file name that is not
UTF-8 arrives escaped, never as a string that cannot be encoded.

The root's own deletion is no path of the batch: it calls ``on_root_gone`` at once (the watch
is dead from then on; a folder of the same name made next is not watched).

The watcher knows nothing about the index: deciding which paths matter is the consumer's job.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from watchdog import events as wd_events
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from explorer.core.ingest.root_paths import disk_path, path_key
from explorer.core.ingest.scanner import is_index_folder

log = logging.getLogger(__name__)

BatchCallback = Callable[[set[str]], None]

_WANTED_TYPES = [
    getattr(wd_events, name)
    for name in (
        "FileCreatedEvent",
        "FileModifiedEvent",
        "FileAttribEvent",  # watchdog >= 5 only: a touch or chmod
        "FileDeletedEvent",
        "FileMovedEvent",
        "DirCreatedEvent",
        "DirDeletedEvent",
        "DirMovedEvent",
        "DirAttribEvent",  # a chmod that makes a folder readable or not
    )
    if hasattr(wd_events, name)
]
"""Event classes asked of the observer; opens, closes and folder modifications are left out."""


class _Handler(FileSystemEventHandler):
    """Forwards every raw event to the watcher."""

    def __init__(self, watcher: IndexWatcher) -> None:
        super().__init__()
        self._watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        self._watcher._on_raw_event(event)


class IndexWatcher:
    """Turns file-system events under ``root`` into debounced batches of relative paths."""

    def __init__(
        self,
        root: Path,
        on_batch: BatchCallback,
        ignored_dirs: Sequence[Path] = (),
        debounce_seconds: float = 0.25,
        max_wait_seconds: float = 1.0,
        on_root_gone: Callable[[], None] | None = None,
    ) -> None:
        """Watch ``root``; call ``on_batch(paths)`` from the debouncer thread.

        ``paths`` are root-relative with forward slashes; they may name files or folders, and
        may no longer exist. ``ignored_dirs`` are absolute folders whose events are dropped.
        ``on_root_gone`` is called on the observer's thread when the root itself is deleted.
        """
        self.root = Path(root).absolute()
        self.on_batch = on_batch
        self.on_root_gone = on_root_gone
        self.debounce_seconds = debounce_seconds
        self.max_wait_seconds = max(max_wait_seconds, debounce_seconds)
        self._prefixes = self._root_prefixes()
        self._ignored = self._relative_ignored(ignored_dirs)
        self._cond = threading.Condition()
        self._pending: set[str] = set()
        self._first_at = 0.0
        self._last_at = 0.0
        self._stopping = False
        self._observer: BaseObserver | None = None
        self._thread: threading.Thread | None = None
        self._state = "new"  # new -> running -> stopped
        self._state_lock = threading.Lock()

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        """Start the observer and the debouncer; a no-op if already started.

        Raises ``OSError`` when the root cannot be watched (for example the inotify watch limit
        is reached); the watcher is then stopped and may not be started again.
        """
        with self._state_lock:
            if self._state != "new":
                return
            self._state = "running"
        self._thread = threading.Thread(
            target=self._debounce_loop, name="explorer-watch-debounce", daemon=True
        )
        self._thread.start()
        observer = Observer(timeout=0.2)
        observer.schedule(
            _Handler(self), str(self.root), recursive=True, event_filter=_WANTED_TYPES
        )
        self._observer = observer
        try:
            observer.start()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop watching and join both threads; pending paths are dropped. Idempotent."""
        with self._state_lock:
            if self._state == "stopped":
                return
            self._state = "stopped"
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        observer, self._observer = self._observer, None
        if observer is not None:
            try:
                observer.stop()
                if observer.is_alive():
                    observer.join()
            # watchdog's emitters fail in platform ways while stopping; stopping must not raise.
            except Exception:
                log.exception("stopping the file observer failed")
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    @property
    def running(self) -> bool:
        return self._state == "running"

    # -- events -------------------------------------------------------------------------------
    def _on_raw_event(self, event: FileSystemEvent) -> None:
        """Called on the observer's thread: note the event's paths and wake the debouncer."""
        if event.event_type not in ("created", "modified", "attrib", "deleted", "moved"):
            return
        if event.is_directory and event.event_type == "modified":
            return
        if event.event_type in ("deleted", "moved") and self._is_root(event.src_path):
            if self.on_root_gone is not None:
                self.on_root_gone()
            return
        paths = [event.src_path]
        if event.event_type == "moved":
            paths.append(event.dest_path)
        relative = {rel for rel in map(self._relative, paths) if rel is not None}
        if not relative:
            return
        now = time.monotonic()
        with self._cond:
            if not self._pending:
                self._first_at = now
            self._last_at = now
            self._pending |= relative
            self._cond.notify_all()

    def _is_root(self, raw: str | bytes) -> bool:
        """True if the event path ``raw`` is the root itself."""
        path = os.fsdecode(raw).rstrip(os.sep)
        return any(path == prefix.rstrip(os.sep) for prefix in self._prefixes)

    def _relative(self, raw: str | bytes) -> str | None:
        """The root-relative POSIX path of an event path, or None if it is to be ignored."""
        if not raw:
            return None
        path = os.fsdecode(raw)
        for prefix in self._prefixes:
            if path.startswith(prefix):
                rel = path[len(prefix) :]
                break
        else:
            return None
        rel = path_key(rel.replace(os.sep, "/").strip("/"))  # a name that is not UTF-8 too
        if not rel:
            return None
        parts = rel.split("/")
        if ".git" in parts:
            return None
        for ignored in self._ignored:
            if rel == ignored or rel.startswith(ignored + "/"):
                return None
        for depth in range(1, len(parts)):  # inside another index (a writer busy in it)
            if is_index_folder(os.path.join(self.root, disk_path("/".join(parts[:depth])))):
                return None
        return rel

    def _debounce_loop(self) -> None:
        """Wait for a quiet spell (or the longest wait), then hand the pending paths over."""
        while True:
            with self._cond:
                while not self._stopping and not self._pending:
                    self._cond.wait()
                if self._stopping:
                    return
                now = time.monotonic()
                due = min(
                    self._last_at + self.debounce_seconds, self._first_at + self.max_wait_seconds
                )
                if now < due:
                    self._cond.wait(due - now)
                    continue
                batch, self._pending = self._pending, set()
            try:
                self.on_batch(batch)
            # The consumer is the caller's code: a failing one must not stop the watcher.
            except Exception:
                log.exception("the watcher's batch callback failed for %d paths", len(batch))

    # -- path set-up --------------------------------------------------------------------------
    def _root_prefixes(self) -> list[str]:
        """Spellings of the root that event paths may start with, longest first."""
        spellings = {str(self.root), os.path.realpath(self.root)}
        return sorted((s.rstrip(os.sep) + os.sep for s in spellings), key=len, reverse=True)

    def _relative_ignored(self, ignored_dirs: Sequence[Path]) -> list[str]:
        """``ignored_dirs`` as root-relative POSIX prefixes (those outside the root dropped)."""
        found: set[str] = set()
        bases = {self.root, Path(os.path.realpath(self.root))}
        for folder in ignored_dirs:
            candidates = {Path(folder).absolute(), Path(os.path.realpath(folder))}
            for candidate in candidates:
                for base in bases:
                    try:
                        rel = candidate.relative_to(base).as_posix()
                    except ValueError:
                        continue
                    if rel not in ("", "."):
                        found.add(rel)
        return sorted(found)
