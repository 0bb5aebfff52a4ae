"""A live index: one background writer thread keeps an :class:`Index` in step with its root.

The writer takes the write lock. If another process holds it (``explorer index`` in another
terminal), a ``writer`` event says so, the index serves reads, and the writer tries again every
second; once it holds the lock it goes on as usual. It starts the watcher *before* scanning so no
change is lost (changes made during the initial sync are queued and applied after it), runs the
keyword phase of a full sync (``files_changed``), embeds (``model_state``, ``progress``,
``files_embedded`` as files become fresh, ``vectors_ready``), then applies the watcher's batches
one at a time: keywords first, then their embedding. With vectors on a Chroma server, a lost
server pauses embedding (``vectors_state`` unavailable; keyword updates go on), the writer asks
the server every few seconds while idle, and when it answers again (``vectors_state`` available)
the waiting chunks are embedded. Embedding yields between model batches as soon as paths are
queued, and the model loads on a helper thread, so an edit made during a long embedding is
keyword-searchable after the debounce plus one model batch; and no model batch starts while
another live index of the process reads files into its keyword index (keywords first across a
window's folders, :class:`~explorer.core.indexing.embed_priority.KeywordPasses`). What is
embedded first follows :meth:`LiveIndex.focus`: the open file, its keyword neighbours, the
search results, the browsed folder, then the newest files (see
:mod:`explorer.core.indexing.embed_priority`); a user interface only posts the hint, the writer
embeds.

The root itself may go: a folder deleted or moved away is noticed within a second
(``root_state`` missing); the writer stops watching, leaves the index as it is (search answers
from what it holds) and looks for the folder every second. When a folder of that name is there
again (the same one moved back, or a new one), or when the root is swapped for another folder
between two looks, it watches the new folder, re-syncs it (``root_state`` present, then
``files_changed``) and embeds what changed.

``on_event`` runs on the writer thread and should return quickly (a GUI hands events to its own
thread); an exception it raises is logged and ignored.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, replace

from explorer.core.embed.embedder import Embedder
from explorer.core.indexing.embed_priority import KEYWORD_PASSES, EmbeddingPriority, Focus
from explorer.core.indexing.indexer import Indexer
from explorer.core.indexing.report import IndexReport, Progress
from explorer.core.live.events import (
    ErrorEvent,
    FilesChangedEvent,
    FilesEmbeddedEvent,
    LiveEvent,
    ModelState,
    ModelStateEvent,
    ProgressEvent,
    RootState,
    RootStateEvent,
    VectorsReadyEvent,
    VectorsStateEvent,
    WriterEvent,
    WriterState,
    one_line,
)
from explorer.core.live.readiness import EmbeddingReadiness
from explorer.core.live.watcher import IndexWatcher
from explorer.core.models import FileState, SyncPhase
from explorer.core.settings import IndexSettings
from explorer.core.store.index import Index, IndexBusy
from explorer.core.store.manifest_records import FileRecord
from explorer.core.store.vectors import VectorStoreUnavailable

__all__ = [
    "ErrorEvent",
    "FilesChangedEvent",
    "FilesEmbeddedEvent",
    "Focus",
    "LiveEvent",
    "LiveIndex",
    "ModelStateEvent",
    "ProgressEvent",
    "RootState",
    "RootStateEvent",
    "VectorsReadyEvent",
    "VectorsStateEvent",
    "WriterEvent",
]

log = logging.getLogger(__name__)

LIVE_EMBED_BATCH = 16
"""Most chunks per model call: the writer checks for new batches between calls, so this bounds
how long an edit waits behind the embedding (16 keeps nearly the full model throughput)."""
LOCK_RETRY_SECONDS = 1.0
"""How often a reader asks again for the write lock another process holds."""
SERVER_PROBE_SECONDS = 2.0
"""How often an idle writer checks that the Chroma server (if any) still answers."""
ROOT_PROBE_SECONDS = 1.0
"""How often an idle writer checks that the root is still the folder it watches (one stat)."""

RootIdentity = tuple[int, int]
"""A folder's device and inode: a new folder of the same name has another."""


LIVE_HOLDER = "a live explorer index"
"""The holder name of a live index whose owner gives none."""


class LiveIndex:
    """Owns one Index: initial sync in the background, then the watcher; one writer thread.

    Loading the model and following the vector server are its :class:`EmbeddingReadiness`'s.
    """

    def __init__(
        self,
        settings: IndexSettings,
        on_event: Callable[[LiveEvent], None],
        embedder: Embedder | None = None,
        watch: bool = True,
        debounce_seconds: float = 0.25,
        max_wait_seconds: float = 1.0,
        holder: str = LIVE_HOLDER,
    ) -> None:
        """Open the index of ``settings`` (SQLite at once; Chroma and the model lazily).

        ``holder`` names the process in the write lock, for another writer that finds the
        index busy ("the explorer TUI", "the explorer MCP server")."""
        settings = replace(settings, embed_batch=min(settings.embed_batch, LIVE_EMBED_BATCH))
        self.settings = settings
        self.holder = holder
        self.index = Index(settings, embedder)
        self.priority = EmbeddingPriority(keyword_passes=KEYWORD_PASSES)
        """What the user looks at: the writer embeds it first (once no other live index of the
        process is reading files into its keyword index)."""
        self._on_event = on_event
        self._watch = watch
        self._timing = (debounce_seconds, max_wait_seconds)
        self._cond = threading.Condition()  # guards _queue, _busy, _lifecycle, the model's load
        self._queue: set[str] = set()
        self._busy = False
        self._stop = threading.Event()
        self._interrupt = threading.Event()  # set when paths are queued: embedding yields
        self._lifecycle = "new"  # -> started -> stopped
        self._thread: threading.Thread | None = None
        self._read_only = False
        self._readiness = EmbeddingReadiness(self.index, settings.model, self._emit, self._cond)
        self._embed_needed = False
        self._rankings_needed = False
        """The keyword table changed: its frequent rankings are to be kept again (before
        embedding, which can take an hour)."""
        self._awaiting: set[str] = set()
        self._initial_sent = False
        self._before: dict[str, _Signature] = {}
        self._next_probe = 0.0  # when the idle writer next asks a Chroma server if it answers
        self._watcher: IndexWatcher | None = None
        self._watched_root: RootIdentity | None = None
        """The root folder being followed (None: it is missing)."""
        self._root_missing = False
        self._root_lost = False
        """Set by the watcher when the watched root is deleted (a new one may reuse its inode)."""

    # -- public -------------------------------------------------------------------------------
    def start(self) -> None:
        """Launch the writer thread and return at once; a no-op after the first call."""
        with self._cond:
            if self._lifecycle != "new":
                return
            self._lifecycle, self._busy = "started", True
        self._thread = threading.Thread(target=self._run, name="explorer-live-writer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Cancel at the next step, stop the watcher, join the writer, close the index.

        Idempotent; well under a second unless a batch of files is being read.
        """
        with self._cond:
            if self._lifecycle == "stopped":
                return
            self._lifecycle = "stopped"
            self._stop.set()
            self._interrupt.set()
            self._cond.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        self.index.close()

    def enqueue(self, rel_paths: Iterable[str]) -> None:
        """Queue root-relative paths (files or folders) as if the watcher had reported them."""
        paths = set(rel_paths)
        if paths:
            with self._cond:
                self._queue |= paths
                self._interrupt.set()
                self._cond.notify_all()

    def focus(self, focus: Focus) -> None:
        """Embed what ``focus`` names first; safe from any thread, returns at once.

        Only a hint: the writer thread reorders its pending chunks at its next model batch.
        """
        self.priority.set_focus(focus)

    def user_typed(self) -> None:
        """The user typed a key of a search: no model batch starts until they pause; safe from
        any thread, returns at once."""
        self.priority.note_typing()

    def wait_idle(self, timeout: float) -> bool:
        """True once nothing is queued and no work runs (changes still in the watcher's
        debounce window are not seen); False if ``timeout`` passes first."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._busy or self._queue:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return True

    @property
    def busy(self) -> bool:
        """True while the writer syncs, applies a batch, embeds, or has paths queued."""
        with self._cond:
            return self._busy or bool(self._queue)

    @property
    def read_only(self) -> bool:
        """True while another process holds the write lock: this index only serves reads."""
        return self._read_only

    @property
    def root_missing(self) -> bool:
        """True while the root folder is gone (the writer waits for it to come back)."""
        return self._root_missing

    @property
    def vectors_available(self) -> bool:
        """False while the Chroma server does not answer (keyword search goes on)."""
        return not self._readiness.vectors_down

    # -- the writer thread --------------------------------------------------------------------
    def _run(self) -> None:
        try:
            self._before = {p: _signature(r) for p, r in self.index.keywords.files().items()}
            if not self._take_write_lock():
                return
            for note in self.index.notes:  # an older index upgraded as it opened: said once
                self._emit(ErrorEvent(note))
            indexer = Indexer(self.index, self.priority)
            self._watched_root = root_identity(self.settings.root)
            if self._watch and self._watched_root is not None:
                self._watcher = self._start_watcher()
            self._initial_sync(indexer)
            self._loop(indexer)
        # The top of the writer thread: whatever escapes is logged and said in one line; the
        # thread ends cleanly and the index still serves reads.
        except Exception as error:
            log.exception("the live index writer failed")
            self._emit(ErrorEvent(one_line(error)))
        finally:
            self._stop_watcher()
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def _take_write_lock(self) -> bool:
        """Hold the write lock, waiting (as a reader) while another process has it."""
        waited = False
        while not self._stop.is_set():
            try:
                self.index.acquire_write_lock(self.holder, live=True)
            except IndexBusy as error:
                if not waited:
                    self._read_only = waited = True
                    with self._cond:  # waiting is not work: wait_idle() returns meanwhile
                        self._busy = False
                        self._cond.notify_all()
                    self._emit(WriterEvent(WriterState.WAITING, f"read-only: {one_line(error)}"))
                self._stop.wait(LOCK_RETRY_SECONDS)
                continue
            except OSError as error:
                self._read_only = True
                self._emit(ErrorEvent(f"cannot lock the index: {one_line(error)}"))
                return False
            if waited:
                with self._cond:
                    self._busy = True
                self._read_only = False
                self._emit(
                    WriterEvent(WriterState.WRITING, "the other writer finished; keeping it live")
                )
            return True
        return False

    def _start_watcher(self) -> IndexWatcher | None:
        debounce, max_wait = self._timing
        watcher = IndexWatcher(
            self.settings.root,
            self.enqueue,
            (self.settings.index_dir,),
            debounce,
            max_wait,
            on_root_gone=self._on_root_gone,
        )
        try:
            watcher.start()
        # watchdog's observers fail in platform ways (the inotify watch limit, a root that
        # vanished, a missing backend): the index goes on without live updates.
        except Exception as error:  # noqa: BLE001 - see above
            self._emit(ErrorEvent(f"cannot watch {self.settings.root}: {one_line(error)}"))
            return None
        if watcher.polling_note is not None:
            self._emit(ErrorEvent(watcher.polling_note))
        return watcher

    def _stop_watcher(self) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()

    # -- the root folder ----------------------------------------------------------------------
    def _on_root_gone(self) -> None:
        """The watcher saw the root deleted (on its thread): the writer follows at once."""
        with self._cond:
            self._root_lost = True
            self._interrupt.set()
            self._cond.notify_all()

    def _root_changed(self) -> bool:
        """True if the root is not the folder being watched (deleted, gone, or another one)."""
        return self._root_lost or root_identity(self.settings.root) != self._watched_root

    def _follow_root(self, indexer: Indexer) -> None:
        """The root went missing, came back or was swapped: say so, wait or re-sync."""
        now = root_identity(self.settings.root)
        if now is None:
            self._root_gone()
            return
        self._stop_watcher()
        self._watched_root, self._root_missing = now, False
        with self._cond:
            self._root_lost = False
            self._queue.clear()  # a full sync follows: it sees every change
        if self._watch:
            self._watcher = self._start_watcher()
        self._emit(RootStateEvent(RootState.PRESENT, f"{self.settings.root} is back: re-syncing"))
        self._before = {p: _signature(r) for p, r in self.index.keywords.files().items()}
        self._initial_sent = False
        self._initial_sync(indexer)

    def _root_gone(self) -> None:
        """Stop watching and say so once; the index keeps what it holds."""
        self._stop_watcher()
        with self._cond:
            self._root_lost = False
            self._queue.clear()
        self._watched_root = None
        if self._root_missing:
            return  # said already
        self._root_missing = True
        self._emit(
            RootStateEvent(
                RootState.MISSING,
                f"{self.settings.root} is gone (deleted or moved): waiting for it to come back",
            )
        )

    def _wait_for_root(self) -> None:
        """Sleep until the root is back (checked every :data:`ROOT_PROBE_SECONDS`) or stop."""
        with self._cond:
            self._busy = False  # waiting is not work: wait_idle() returns meanwhile
            self._cond.notify_all()
        while not self._stop.is_set() and root_identity(self.settings.root) is None:
            self._stop.wait(ROOT_PROBE_SECONDS)
        with self._cond:
            self._busy = True

    def _initial_sync(self, indexer: Indexer) -> None:
        """The keyword phase of a full sync; ``files_changed`` as soon as keywords are done."""
        self._embed_needed = True
        self._rankings_needed = True
        try:
            with KEYWORD_PASSES.running():
                report = indexer.sync(progress=self._progress, cancel=self._stop, embed=False)
        # The writer's boundary around a whole sync (stores, disk, the parsers): whatever
        # fails is logged and said, and the index keeps serving what it holds.
        except Exception as error:
            if root_identity(self.settings.root) is None:
                self._root_gone()  # it went while it was scanned: wait for it
                return
            log.exception("the initial sync failed")
            self._emit(ErrorEvent(f"initial sync failed: {one_line(error)}"))
            return
        if report.vectors_unavailable:  # keywords are done; vectors wait for the server
            self._readiness.reconcile_needed = True
            self._readiness.vectors_lost(VectorStoreUnavailable(report.vectors_unavailable))
        if not report.cancelled and not self._stop.is_set():
            self._keywords_done()  # when the sync had no file to report progress on

    def _keywords_done(self) -> None:
        if self._initial_sent:
            return
        self._initial_sent = True
        after = self.index.keywords.files()
        changed = set(self._before.keys() - after.keys())
        changed |= {p for p, r in after.items() if r.state == FileState.PENDING}
        changed |= {p for p, r in after.items() if self._before.get(p) != _signature(r)}
        self._before = {}
        self._awaiting |= changed
        self._emit(FilesChangedEvent(frozenset(changed), initial=True))

    def _loop(self, indexer: Indexer) -> None:
        """Apply queued batches first, embed when there are none, sleep when idle."""
        worked = True
        while not self._stop.is_set():
            if self._root_missing:
                self._wait_for_root()
                if not self._stop.is_set():
                    self._follow_root(indexer)
                continue
            if self._root_changed():
                self._follow_root(indexer)
                continue
            with self._cond:
                batch, self._queue = self._queue, set()
            if batch:
                self._apply_batch(indexer, batch)
            elif self._rankings_needed:
                self._keep_rankings(indexer)
            elif self._embed_needed and not self._readiness.vectors_down and self._model_usable():
                self._embed(indexer)
            else:
                loading = self._embed_needed and self._readiness.model == ModelState.LOADING
                if worked and not loading:
                    self._emit(ProgressEvent(SyncPhase.DONE))
                with self._cond:
                    self._busy = loading
                    self._cond.notify_all()
                    while not (
                        self._queue or self._stop.is_set() or self._readiness.load_finished()
                    ):
                        if self._root_changed():
                            break  # the loop follows it
                        if not self.index.shared_vectors:
                            self._cond.wait(ROOT_PROBE_SECONDS)
                            continue
                        remaining = self._next_probe - time.monotonic()
                        if remaining <= 0:
                            break  # time to ask the server
                        self._cond.wait(min(remaining, ROOT_PROBE_SECONDS))
                    self._busy = True
                shared = self.index.shared_vectors
                if shared and not self._stop.is_set() and time.monotonic() >= self._next_probe:
                    self._next_probe = time.monotonic() + SERVER_PROBE_SECONDS
                    if self._readiness.probe_server(indexer.vector_phase):
                        self._embed_needed = self._readiness.model != ModelState.FAILED
                worked = False
                continue
            worked = True

    def _apply_batch(self, indexer: Indexer, batch: set[str]) -> None:
        """Keywords only; the batch's vectors follow in the next embedding pass."""
        try:
            with KEYWORD_PASSES.running():
                indexer.update_paths(batch, embed=False, cancel=self._stop)
        # Same boundary for a batch: one bad batch must not stop the writer.
        except Exception as error:
            log.exception("updating %d paths failed", len(batch))
            self._emit(ErrorEvent(f"update failed: {one_line(error)}"))
            return
        self._emit(FilesChangedEvent(frozenset(batch)))
        self._rankings_needed = True
        if self._readiness.model != ModelState.FAILED:
            self._awaiting |= batch
            self._embed_needed = True

    def _keep_rankings(self, indexer: Indexer) -> None:
        """Keep the frequent words' rankings for the keyword table as it is now, until done
        or until queued paths or stop interrupt (then after the next batch)."""
        with self._cond:
            if self._queue or self._stop.is_set():
                return
            self._interrupt.clear()
        try:
            kept = indexer.keep_rankings(self._interrupt)
        # A search without them ranks as it always did: a failure costs speed, never results.
        except Exception:
            log.exception("keeping the frequent rankings failed")
            kept = 0
        if kept is not None:
            self._rankings_needed = False

    def _embed(self, indexer: Indexer) -> None:
        """Embed pending chunks until done, or until queued paths or stop interrupt."""
        with self._cond:
            if self._queue or self._stop.is_set():
                return
            self._interrupt.clear()
        report = IndexReport()
        try:
            indexer.vector_phase.embed_pending(
                report, self._progress, cancel=self._interrupt, finished=self._files_embedded
            )
        except VectorStoreUnavailable as error:  # the chunks stay pending until it is back
            self._readiness.vectors_lost(error)
            return
        # Embedding runs the model library and the store: whatever else fails, the keyword
        # index stays live and embedding is tried again after the next batch.
        except Exception as error:
            log.exception("embedding failed")
            self._emit(ErrorEvent(f"embedding failed: {one_line(error)}"))
            self._embed_needed = False  # tried again after the next batch
            return
        if not report.cancelled:
            self._embed_needed = False
            if self._awaiting:
                self._emit(VectorsReadyEvent(frozenset(self._awaiting)))
                self._awaiting = set()

    def _model_usable(self) -> bool:
        """True if embedding may run now; a model that failed to load ends the waiting."""
        usable = self._readiness.model_usable()
        if self._readiness.model == ModelState.FAILED:
            self._embed_needed = False
            self._awaiting.clear()
        return usable

    def _files_embedded(self, paths: list[str]) -> None:
        self._emit(FilesEmbeddedEvent(frozenset(paths)))

    # -- plumbing -----------------------------------------------------------------------------
    def _progress(self, progress: Progress) -> None:
        if progress.phase == SyncPhase.DONE:
            return  # the writer says "done" itself, once it is really idle
        self._emit(ProgressEvent(**asdict(progress)))
        if progress.phase == SyncPhase.KEYWORDS and progress.files_done == progress.files_total:
            self._keywords_done()  # the sync goes on to open Chroma; keywords are ready now

    def _emit(self, event: LiveEvent) -> None:
        try:
            self._on_event(event)
        # The listener is the caller's code: a faulty one must not stop the writer.
        except Exception:
            log.exception("a live index listener failed on a %s event", event.kind)


_Signature = tuple[str, FileState, str, int, float]


def root_identity(root: os.PathLike[str] | str) -> RootIdentity | None:
    """The device and inode of the folder ``root`` (links followed), or None if it is none."""
    try:
        info = os.stat(root)
    except OSError:
        return None
    if not os.path.isdir(root):
        return None
    return (info.st_dev, info.st_ino)


def _signature(record: FileRecord) -> _Signature:
    """What tells a manifest row's content apart (a new mtime alone does not)."""
    return (record.hash, record.state, record.reason, record.chunk_count, record.updated_at)
