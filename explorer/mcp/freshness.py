"""How far the index is behind the folder, for every answer the server gives.

Two questions, two costs:

- *Which files changed on disk and are not indexed yet?* (an answer's ``stale``) takes a stat
  walk of the root (:func:`~explorer.core.indexing.disk_state.compare_with_disk`: 40 ms for
  the 1,252 nginx docs, 60-110 ms for a vault of 2,648 notes). :class:`Freshness` keeps the
  last walk until something moves: a file-system event under the root (its own watcher, with
  no debounce, so an edit counts at once) or a write to the index (the manifest's version).
  Without a watcher (the watch limit reached) every answer walks.
- *Did these result files change since they were indexed?* (a file's ``stale``) is asked of
  each file itself, a stat per path (:func:`~explorer.core.ingest.scanner.scan_path`), always
  exact.

The folder itself may go while the server runs (deleted, or moved away: a watch follows the
folder it was set on, wherever it goes). Every comparison starts with a stat of the root: while
it is gone, every file of the index counts as deleted and ``stale`` names the folder
(``folders_gone``), so the tools leave its files out (:meth:`Freshness.folder_gone`); when a
folder is there again (the same one back, or another), that folder is watched and compared.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

from explorer.api.answers import STALE_PATHS_SHOWN, Staleness
from explorer.core.indexing.disk_state import compare_with_disk, scan_rules
from explorer.core.ingest.documents import ScannedFile
from explorer.core.ingest.scanner import ScanRules, scan_path
from explorer.core.live.watcher import IndexWatcher
from explorer.core.live.writer import RootIdentity, root_identity
from explorer.core.models import FileState
from explorer.core.settings import IndexSettings
from explorer.core.store.keywords import KeywordIndex
from explorer.core.store.manifest_records import DiskChanges

log = logging.getLogger(__name__)


class Freshness:
    """Compares the folder with an index's manifest, keeping the comparison while nothing
    moves."""

    def __init__(self, settings: IndexSettings) -> None:
        self.settings = settings
        self._rules: ScanRules = scan_rules(settings)
        self._lock = threading.Lock()
        self._generation = 0
        self._kept: tuple[tuple[int, tuple[int, int]], tuple[DiskChanges, Staleness]] | None = None
        self._watcher: IndexWatcher | None = None
        self._watching = False
        self._root: RootIdentity | None = root_identity(settings.root)
        """The folder served: its identity when the server started, or since it came back."""

    def start(self) -> None:
        """Watch the root; without a watcher (an error is logged) every answer walks it."""
        self._watching = True
        watcher = IndexWatcher(
            self.settings.root,
            self._moved,
            (self.settings.index_dir,),
            debounce_seconds=0.0,
            max_wait_seconds=0.0,
        )
        try:
            watcher.start()
        # watchdog fails in platform ways (the inotify watch limit, a vanished root): answers
        # stay exact, each one walking the folder.
        except Exception:
            log.warning(
                "cannot watch %s; every answer compares the folder anew",
                self.settings.root,
                exc_info=True,
            )
            return
        if watcher.polling_note is not None:
            # A polled tree is seen seconds late: answers stay exact by walking it instead.
            watcher.stop()
            log.warning("%s; every answer compares the folder anew", watcher.polling_note)
            return
        self._watcher = watcher

    def stop(self) -> None:
        self._watching = False
        self._stop_watcher()

    def _stop_watcher(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    def _moved(self, _paths: set[str]) -> None:
        with self._lock:
            self._generation += 1

    def changes(self, keywords: KeywordIndex) -> DiskChanges:
        """How the folder differs from the manifest now."""
        return self._compare(keywords)[0]

    def staleness(self, keywords: KeywordIndex, seen: Iterable[str] = ()) -> Staleness:
        """An answer's ``stale``: what changed on disk, and what waits for its vectors.

        ``seen``: the answer's files that :meth:`changed_files` found changed a moment
        before. The index may have caught up with one of them in between; the answer's hit
        still holds the old text, so it is counted (as edited) all the same: a file marked
        stale is always in the count."""
        changes, staleness = self._compare(keywords)
        missed = set(seen) - {*changes.edited, *changes.new, *changes.deleted}
        if not missed:
            return staleness
        paths = sorted({*(staleness.paths or ()), *missed})
        return staleness.model_copy(
            update={
                "files": staleness.files + len(missed),
                "edited": (staleness.edited or 0) + len(missed),
                "paths": paths[:STALE_PATHS_SHOWN],
            }
        )

    def folder_gone(self) -> bool:
        """True while the root is no folder (deleted or moved away since the server started)."""
        self._follow_root()
        return self._root is None

    def _follow_root(self) -> None:
        """Notice the root gone, back or replaced by another folder (one stat): the folder now
        at the root is watched and compared from then on (a watch follows the folder it was
        set on, wherever it is moved)."""
        now = root_identity(self.settings.root)
        with self._lock:
            if now == self._root:
                return
            self._root = now
            self._generation += 1
        log.warning(
            "%s %s", self.settings.root, "is gone" if now is None else "is another folder now"
        )
        if self._watching:
            self._stop_watcher()
            if now is not None:
                self.start()

    def _compare(self, keywords: KeywordIndex) -> tuple[DiskChanges, Staleness]:
        """The comparison, walked again only when the folder or the index moved."""
        self._follow_root()
        with self._lock:
            generation = self._generation
        key = (generation, keywords.manifest_version())
        kept = self._kept
        if self._watcher is not None and kept is not None and kept[0] == key:
            return kept[1]
        records = keywords.files()
        waiting = keywords.counts()[FileState.PENDING]
        try:
            changes = None if self._root is None else compare_with_disk(self.settings, records)
        except OSError:  # the root went while it was walked
            changes = None
        if changes is None:  # every file of a folder that is gone is gone
            states = {path: record.state for path, record in records.items()}
            changes = DiskChanges(deleted=sorted(records), states=states)
            gone = Staleness.build(changes, waiting).model_copy(
                update={"folders_gone": [str(self.settings.root)]}
            )
            return changes, gone
        compared = (changes, Staleness.build(changes, waiting))
        self._kept = (key, compared)
        return compared

    def changed_files(self, keywords: KeywordIndex, paths: Iterable[str]) -> set[str]:
        """Those of ``paths`` whose file on disk is not the one the index holds (edited,
        deleted, or not indexed at all)."""
        wanted = sorted(set(paths))
        records = keywords.files_by_path(wanted)
        changed = set()
        for path in wanted:
            record = records.get(path)
            found = scan_path(self._rules, path, self.settings.max_file_bytes)
            if record is None or not isinstance(found, ScannedFile):
                if record is None or record.state in (FileState.FRESH, FileState.PENDING):
                    changed.add(path)
                continue
            if (record.size, record.mtime_ns) != (found.size, found.mtime_ns):
                changed.add(path)
        self._forget_if_unaware(changed)
        return changed

    def _forget_if_unaware(self, changed: set[str]) -> None:
        """Drop the kept comparison when it does not know of a change just seen by a stat (the
        watcher's event may come a moment later): an answer's ``stale`` then counts what its
        hits say (ask :meth:`changed_files` before :meth:`staleness`)."""
        kept = self._kept
        if kept is None or not changed:
            return
        known = kept[1][0]
        if not changed <= {*known.edited, *known.new, *known.deleted}:
            with self._lock:
                if self._kept is kept:
                    self._kept = None
