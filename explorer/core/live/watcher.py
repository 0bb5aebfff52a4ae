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

When the system's inotify limits are reached (``fs.inotify.max_user_watches`` on a big tree, or
``fs.inotify.max_user_instances``), the watcher polls the tree instead (:data:`POLL_SECONDS`,
skipping ``.git`` and the ignored folders) and says why in :attr:`IndexWatcher.polling_note`: the
index stays current, a little later, and is never silently stale.

The watcher knows nothing about the index: deciding which paths matter is the consumer's job.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from watchdog import events as wd_events
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserverVFS

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

POLL_SECONDS = 5.0
"""How often a tree too big for the system's inotify limits is polled for changes."""

_INOTIFY_LIMITS = {
    errno.ENOSPC: "fs.inotify.max_user_watches",
    errno.EMFILE: "fs.inotify.max_user_instances",
}
"""The errors inotify gives when a limit is reached, and the setting that raises that limit."""


def _limit_setting(error: BaseException) -> str | None:
    """The sysctl setting whose limit ``error`` reports, or None for any other failure."""
    if isinstance(error, OSError) and error.errno is not None:
        return _INOTIFY_LIMITS.get(error.errno)
    return None


def _inotify_limit_reached(folder: Path) -> str | None:
    """The inotify limit setting that is exhausted now, probed with one watch of our own.

    watchdog gives up quietly on the folders it cannot watch below a root (only the root's own
    failure is raised), so a tree bigger than the limit would be half watched and silently
    stale. One watch more, on a fresh inotify instance, tells whether the limit was reached.
    None on other systems, or when the probe itself cannot run.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init1(os.O_CLOEXEC)
        if fd < 0:
            return _INOTIFY_LIMITS.get(ctypes.get_errno())
        try:
            if libc.inotify_add_watch(fd, os.fsencode(folder), _IN_ATTRIB) < 0:
                return _INOTIFY_LIMITS.get(ctypes.get_errno())
        finally:
            os.close(fd)
    except (OSError, AttributeError):  # no libc symbol, or a closed descriptor
        return None
    return None


_IN_ATTRIB = 0x4
"""The inotify event mask the probe's watch asks for (any mask will do)."""


def _setting_value(setting: str) -> str:
    """The current value of a sysctl ``setting`` (``"?"`` where it cannot be read)."""
    try:
        return Path("/proc/sys", *setting.split(".")).read_text().strip()
    except OSError:
        return "?"


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
        self.polling_note: str | None = None
        """Set by :meth:`start` when the tree is polled rather than watched: one line saying why
        (the inotify limit reached, naming the setting) and how often it is polled."""

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
        try:
            self._observer = self._observe(Observer(timeout=0.2))
        except OSError as error:
            setting = _limit_setting(error)
            if setting is None:
                self.stop()
                raise
            self._start_polling_or_stop(setting)
            return
        except BaseException:
            self.stop()
            raise
        setting = _inotify_limit_reached(self.root)
        if setting is not None:
            _stop_quietly(self._observer)  # half a tree's watches, given back to the system
            self._start_polling_or_stop(setting)

    def _observe(self, observer: BaseObserver) -> BaseObserver:
        """Schedule the root on ``observer`` and start it; a failed observer is stopped."""
        observer.schedule(
            _Handler(self), str(self.root), recursive=True, event_filter=_WANTED_TYPES
        )
        try:
            observer.start()
        except BaseException:
            _stop_quietly(observer)
            raise
        return observer

    def _start_polling_or_stop(self, setting: str) -> None:
        try:
            self._start_polling(setting)
        except BaseException:
            self.stop()
            raise

    def _start_polling(self, setting: str) -> None:
        """Watch the tree by polling it, since inotify's ``setting`` limit is reached."""
        observer = PollingObserverVFS(os.stat, self._listdir, polling_interval=POLL_SECONDS)
        self._observer = self._observe(observer)
        self.polling_note = (
            f"the system's inotify limit is reached ({setting} = {_setting_value(setting)}): "
            f"{self.root} is kept current by polling every {POLL_SECONDS:g} s; raise the limit "
            f"(sysctl {setting}=...) for instant updates"
        )
        log.warning("%s", self.polling_note)

    def _listdir(self, folder: str | None) -> Iterator[os.DirEntry[str]]:
        """The entries of ``folder`` that polling looks at: not ``.git`` nor ignored folders."""
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False) and self._relative(entry.path) is None:
                    continue
                yield entry

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
            _stop_quietly(observer)
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


def _stop_quietly(observer: BaseObserver) -> None:
    """Stop ``observer`` and join its thread; watchdog's emitters fail in platform ways while
    stopping, and stopping must not raise."""
    try:
        observer.stop()
        if observer.is_alive():
            observer.join()
    except Exception:
        log.exception("stopping the file observer failed")
