"""One root's index: the keyword index and manifest, the vector store and the model, together.

Opening an :class:`Index` is cheap: the SQLite database opens at once, while Chroma and the
model load on first use. The write lock makes sure only one process changes an index at a time.

Several processes may read one index while another writes it. SQLite (WAL) gives each reader
whole transactions. A local Chroma client, though, caches the HNSW graph it loaded, so it sees
no vector written by another process afterwards — and, worse, would write its stale graph back.
Hence: taking the write lock reopens the client, and a reader reopens it (at most every few
seconds) when the writer's ``vectors_epoch`` counter in SQLite has moved.

Readers (:meth:`Index.open_existing`) open both stores read-only, so a read-only index directory
can be searched. A writer (:meth:`Index.open_for_writing`) checks both stores as it opens them;
a damaged one is set aside (see :mod:`explorer.core.store.damaged_store`) and rebuilt from the
other.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from explorer.core.embed.embedder import Embedder, SentenceTransformerEmbedder, load_embedder
from explorer.core.embed.export_cache import EXPORT_DIR_NAME
from explorer.core.errors import ExplorerError
from explorer.core.models import FileState
from explorer.core.private_files import OpenEntry, make_private_dirs, open_entries, tighten
from explorer.core.settings import IndexSettings
from explorer.core.store.chroma_server import parse_server_url
from explorer.core.store.damaged_store import Repair, Store, set_aside
from explorer.core.store.embedding_ledger import VECTORS_EPOCH
from explorer.core.store.index_files import (
    CHROMA_DIR_NAME as CHROMA_DIR_NAME,
)
from explorer.core.store.index_files import (
    DATABASE_NAME as DATABASE_NAME,
)
from explorer.core.store.index_files import (
    LOCK_NAME as LOCK_NAME,
)
from explorer.core.store.index_files import (
    ROOT_META as ROOT_META,
)
from explorer.core.store.index_files import (
    check_index_dir,
    is_index_entry,
)
from explorer.core.store.keywords import (
    UPGRADE_NOTE,
    KeywordIndex,
    KeywordIndexDamaged,
)
from explorer.core.store.manifest_records import DiskChanges
from explorer.core.store.vectors import (
    CHROMA_DATABASE,
    VectorStore,
    VectorStoreDamaged,
    VectorStoreMissing,
    VectorStoreUnavailable,
    check_database,
)
from explorer.core.store.write_lock import LockBusy, WriteLock

LIVE_MARK = " [live]"
"""Follows a live holder's name in the lock file (see :func:`_take`): a live index keeps the
index current while it runs, so the advice to another writer is not to wait for it."""
SKIPPED_LISTED = 100
"""Skipped files ``status`` names with their reasons (the rest are counted)."""
READER_REFRESH_SECONDS = 2.0
"""A reader reopens a local Chroma client written by another process at most this often."""
TIGHTENED_META = "permissions_tightened"
"""Meta key: when a writer last took the group and other bits off the index, and how many."""
OPEN_EXAMPLES = 5
"""Open files or folders named by ``status`` (the rest are counted)."""


class IndexBusy(ExplorerError):
    """Another process holds the index's write lock."""


class NoIndex(ExplorerError):
    """The folder has not been indexed yet."""


class IndexReadOnly(ExplorerError):
    """The index cannot be written (its folder or database is read-only); it can be read."""


@dataclass(frozen=True)
class Permissions:
    """Whether other users of the machine can read the index (see
    :mod:`explorer.core.private_files`)."""

    open_count: int = 0
    """Files and folders of the index (and the application's folders above it) with a group
    or other permission bit."""
    examples: tuple[str, ...] = ()
    """The first few of them, as ``index.sqlite 0644``."""
    tightened: str = ""
    """When a writer last made an open index private, and how many entries it changed."""

    @property
    def private(self) -> bool:
        return self.open_count == 0


@dataclass(frozen=True)
class Status:
    """What ``explorer status`` reports about an index."""

    root: str
    index_dir: str
    indexed: int
    stale: int
    skipped: int
    failed: int
    skip_reasons: dict[str, int]
    chunks: int
    vectors: int
    model: str
    vector_store: str
    """``local`` or ``server``."""
    vector_location: str
    """The Chroma directory or server URL."""
    vectors_available: bool
    """False when the server does not answer; ``vectors`` then counts what SQLite recorded."""
    vectors_problem: str
    """Why the vectors are not available (unreachable, damaged), else empty."""
    dimension: int | None
    store_bytes: int
    last_update: float | None
    needs_rebuild: bool
    rebuild_reason: str
    waiting_for_vectors: int = 0
    """Stale files that are in the keyword index and wait for their vectors."""
    edited: int = 0
    """Files edited on disk since the last index run (counted only when the disk was checked)."""
    new: int = 0
    """Files on disk the index does not hold yet."""
    deleted: int = 0
    """Files the index holds that are gone from disk."""
    disk_checked: bool = False
    """True when the folder was compared with the manifest (a stat walk)."""
    skipped_files: tuple[tuple[str, str], ...] = ()
    """``(path, reason)`` of skipped and failed files (the first :data:`SKIPPED_LISTED`, by
    path): ``("manual.pdf", "unreadable: encrypted PDF")``."""
    missing_chunks: int = 0
    """Files the manifest holds as indexed whose chunks are missing from the database (they
    count as stale: ``explorer index`` indexes them again)."""
    vectors_missing: int = 0
    """Chunks recorded as embedded whose vectors the store lacks (all of them when the store
    is gone); their files count as waiting for vectors."""
    index_command: str = ""
    """The command that brings this index up to date (with ``--index-dir`` when needed)."""
    permissions: Permissions = field(default_factory=Permissions)
    other_types: dict[str, int] = field(default_factory=dict)
    """Files of the folder no format reads, by extension (``.svg``) or name (counted only when
    the disk was checked)."""


class Index:
    """The stores and the model of one root, opened lazily."""

    def __init__(
        self,
        settings: IndexSettings,
        embedder: Embedder | None = None,
        read_only: bool = False,
        write_lock: WriteLock | None = None,
    ) -> None:
        """Open the keyword index at once (Chroma and the model on first use).

        ``read_only`` never writes either store. With a held ``write_lock`` (see
        :meth:`open_for_writing`) a damaged keyword index is set aside and rebuilt. A writer
        refuses an index directory that is a folder of other files
        (:class:`~explorer.core.store.index_files.IndexDirRefused`).
        """
        if not read_only:
            check_index_dir(settings.root, settings.index_dir)
        self.settings = settings
        self.read_only = read_only
        self.repairs: list[Repair] = []
        """Damaged stores this writer set aside and replaced, oldest first."""
        self.notes: list[str] = []
        """What else this writer changed as it opened the index, one line each (the keyword
        tables of an older index rebuilt)."""
        self.tightened: list[OpenEntry] = []
        """Files and folders that other users could read until this writer took the lock."""
        self._write_lock = write_lock or WriteLock(settings.index_dir / LOCK_NAME)
        self._vectors: VectorStore | None = None
        self._vectors_damage: VectorStoreDamaged | None = None
        self._damage_epoch: str | None = None
        """The writer's vectors epoch when the damage was found: a repair moves it."""
        self._embedder = embedder
        self._vectors_lock = threading.Lock()
        self._embedder_lock = threading.Lock()
        self._vectors_epoch: str | None = None
        self._vectors_opened_at = 0.0
        if self._write_lock.held:
            self.tightened = self._make_private()
        self.keywords = self._open_keywords()
        if self.keywords.upgraded:
            self.notes.append(UPGRADE_NOTE)
        self._note_tightened()
        if self._write_lock.held:
            self.record_root()

    @classmethod
    def open_existing(cls, settings: IndexSettings, embedder: Embedder | None = None) -> Index:
        """Open an index that must already exist, read-only (for search, related, status)."""
        if not (settings.index_dir / DATABASE_NAME).exists():
            raise NoIndex(
                f"{settings.root} has no index at {settings.index_dir}; "
                f"run: {settings.repair_command}"
            )
        return cls(settings, embedder, read_only=True)

    @classmethod
    def open_for_writing(
        cls,
        settings: IndexSettings,
        embedder: Embedder | None = None,
        holder: str = "explorer index",
        check_model: bool = False,
    ) -> Index:
        """Take the write lock (or raise :class:`IndexBusy`), then open the stores, checking
        each: a damaged one is set aside and rebuilt (listed in :attr:`repairs`).

        ``check_model`` loads the model's tokenizer first, so a model that cannot load is
        one error (:class:`~explorer.core.embed.embedder.ModelUnavailable`) before anything
        is created or stored. Raises :class:`IndexReadOnly` when the index cannot be written.
        """
        if check_model:
            embedder = embedder or _load_embedder(settings)
            embedder.token_spans("a model check")
        check_index_dir(settings.root, settings.index_dir)  # before anything is written there
        lock = WriteLock(settings.index_dir / LOCK_NAME)
        try:
            make_private_dirs(settings.index_dir)
            _take(lock, settings, holder)
        except OSError as error:
            if error.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise
            raise _read_only(settings, error.strerror or str(error)) from None
        try:
            return cls(settings, embedder, write_lock=lock)
        except sqlite3.OperationalError as error:
            lock.release()
            if getattr(error, "sqlite_errorcode", 0) & 0xFF != sqlite3.SQLITE_READONLY:
                raise
            raise _read_only(settings, str(error)) from None
        except BaseException:
            lock.release()
            raise

    def _make_private(self) -> list[OpenEntry]:
        """Take the group and other bits off an index made by an older explorer (the write
        lock held): off what explorer made, never off the user's files beside it; what could
        not be changed stays for ``status`` to report."""
        settings = self.settings
        tightened, _refused = tighten(settings.index_dir, settings.private_parents, is_index_entry)
        return tightened

    def _note_tightened(self) -> None:
        """Record in the index when and how much :meth:`_make_private` tightened."""
        if self.tightened and not self.read_only:
            self.keywords.set_meta(
                TIGHTENED_META, json.dumps({"at": time.time(), "entries": len(self.tightened)})
            )

    def record_root(self) -> None:
        """Record the folder this index is of (every writer does, the TUI's and the MCP
        server's live index included: the resident reader and ``--index-dir`` alone read it);
        an index built before it was recorded gets it on its next write."""
        root = str(self.settings.root)
        if self.keywords.get_meta(ROOT_META) != root:
            self.keywords.set_meta(ROOT_META, root)

    @property
    def repair_command(self) -> str:
        """The command that repairs this index, as a damage message tells the user."""
        return self.settings.repair_command

    def _open_keywords(self) -> KeywordIndex:
        path = self.settings.index_dir / DATABASE_NAME
        if not self._write_lock.held:
            return KeywordIndex(path, self.read_only, self.repair_command)
        try:
            keywords = KeywordIndex(path, repair_command=self.repair_command, check_first=True)
            if keywords.found_empty:  # cut to zero bytes: nothing to keep, filled anew
                self.repairs.append(Repair(Store.KEYWORDS, "the file was empty", None))
            return keywords
        except KeywordIndexDamaged as damage:
            self._set_aside_keywords(damage)
            return KeywordIndex(path, repair_command=self.repair_command)

    def _set_aside_keywords(self, damage: KeywordIndexDamaged) -> None:
        path = self.settings.index_dir / DATABASE_NAME
        files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
        self.repairs.append(
            set_aside(self.settings.index_dir, files, Store.KEYWORDS, damage.reason)
        )

    def repair(self, damage: KeywordIndexDamaged | VectorStoreDamaged) -> None:
        """Set the damaged store aside and open a fresh one in its place (write lock held).

        A fresh keyword index is filled by the next sync, which reuses every vector whose
        chunk id it writes again; a fresh vector store makes every chunk wait for a vector.
        """
        if not self._write_lock.held:
            raise damage
        if isinstance(damage, KeywordIndexDamaged):
            self.keywords.close(rest=False)
            self._set_aside_keywords(damage)
            self.keywords = KeywordIndex(
                self.settings.index_dir / DATABASE_NAME, repair_command=self.repair_command
            )
            return
        with self._vectors_lock:
            self._replace_vectors(damage)

    def _replace_vectors(self, damage: VectorStoreDamaged) -> VectorStore:
        """Set the damaged local store aside, open an empty one, and mark every chunk as
        waiting for its vector (``_vectors_lock`` held)."""
        if self._vectors is not None:
            self._vectors.close()
            self._vectors = None
        directory = self.settings.index_dir / CHROMA_DIR_NAME
        self.repairs.append(
            set_aside(self.settings.index_dir, [directory], Store.VECTORS, damage.reason)
        )
        self.keywords.ledger.reset_embedded()
        self._vectors_damage = None
        self._vectors = VectorStore(directory, repair_command=self.repair_command)
        return self._vectors

    @property
    def shared_vectors(self) -> bool:
        """True when vectors live on a Chroma server (chosen by ``settings.chroma_url``)."""
        return bool(self.settings.chroma_url)

    @property
    def vector_location(self) -> str:
        if self.settings.chroma_url:
            return parse_server_url(self.settings.chroma_url).url
        return str(self.settings.index_dir / CHROMA_DIR_NAME)

    @property
    def vectors(self) -> VectorStore:
        """The vector store, opened on first use (raises VectorStoreUnavailable if a server
        does not answer; the next use tries again).

        A damaged local store raises :class:`VectorStoreDamaged` for a reader (again without
        opening it, until a writer has written vectors since); a writer sets it aside and
        opens an empty one.
        """
        with self._vectors_lock:
            if self._vectors_damage is not None:
                if self.keywords.get_meta(VECTORS_EPOCH) == self._damage_epoch:
                    raise self._vectors_damage
                self._vectors_damage = None  # repaired meanwhile: open it again
            if self._vectors is None:
                epoch = self.keywords.get_meta(VECTORS_EPOCH)
                if self.settings.chroma_url:
                    address = parse_server_url(self.settings.chroma_url)
                    self._vectors = VectorStore(address=address, model=self.settings.model)
                else:
                    self._vectors = self._open_local_vectors()
                self._vectors_epoch, self._vectors_opened_at = epoch, time.monotonic()
            elif not self._write_lock.held and not self._vectors.shared:
                self._refresh_reader()
            return self._vectors

    def _open_local_vectors(self) -> VectorStore:
        """The local store; a writer checks it first and replaces a damaged one. A store that
        is gone while the keyword index records vectors in it is :class:`VectorStoreMissing`
        to a reader; a writer opens an empty one and embeds every chunk again."""
        directory = self.settings.index_dir / CHROMA_DIR_NAME
        writer = self._write_lock.held
        try:
            if not (directory / CHROMA_DATABASE).exists() and self.keywords.ledger.any_embedded():
                lost = self.keywords.counts()["embedded"]
                if writer:
                    self.keywords.ledger.reset_embedded()
                    reason = f"{lost} chunks lacked their vectors"
                    self.repairs.append(Repair(Store.VECTORS, reason, None))
                else:
                    raise VectorStoreMissing(directory, lost, self.repair_command)
            if writer:
                check_database(directory, self.repair_command)
            store = VectorStore(
                directory, read_only=self.read_only, repair_command=self.repair_command
            )
            if writer:
                store.count_chunks()  # loads the vector segments: damage there shows now
            return store
        except VectorStoreDamaged as damage:
            if not writer:
                self._vectors_damage = damage
                self._damage_epoch = self.keywords.get_meta(VECTORS_EPOCH)
                raise
            return self._replace_vectors(damage)

    def _refresh_reader(self) -> None:
        """Reopen a local client another process has written to since it was opened."""
        assert self._vectors is not None
        epoch = self.keywords.get_meta(VECTORS_EPOCH)
        if epoch == self._vectors_epoch:
            return
        if time.monotonic() - self._vectors_opened_at < READER_REFRESH_SECONDS:
            return
        self._vectors.reopen()
        self._vectors_epoch, self._vectors_opened_at = epoch, time.monotonic()

    @property
    def embedder(self) -> Embedder:
        with self._embedder_lock:  # not the vectors' lock: the model loads while Chroma opens
            if self._embedder is None:
                self._embedder = _load_embedder(self.settings)
            return self._embedder

    # -- the write lock -----------------------------------------------------------------------
    @property
    def holds_write_lock(self) -> bool:
        return self._write_lock.held

    def acquire_write_lock(self, holder: str = "explorer index", live: bool = False) -> None:
        """Take the one-writer lock, or raise :class:`IndexBusy` at once.

        ``holder`` names this process to another that finds the index busy; a ``live`` holder
        (a live index: the TUI, the MCP server) keeps the index current while it runs, and the
        other is told so instead of to wait. A vector store
        opened before the lock is reopened: another writer may have changed it meanwhile. An
        index opened read-only reopens both stores for writing.
        """
        if self._write_lock.held:
            return
        _take(self._write_lock, self.settings, holder, live)
        self.tightened = self._make_private()
        if self.read_only:  # a reader that writes after all (`related` embedding a file)
            self.read_only = False
            self.keywords.close()
            self.keywords = KeywordIndex(
                self.settings.index_dir / DATABASE_NAME, repair_command=self.repair_command
            )
            if self.keywords.upgraded:
                self.notes.append(UPGRADE_NOTE)
            with self._vectors_lock:
                if self._vectors is not None and not self._vectors.shared:
                    self._vectors.close()  # opened read-only: the writer opens its own
                    self._vectors = None
            self._note_tightened()
            self.record_root()
            return
        self._note_tightened()
        self.record_root()
        with self._vectors_lock:
            if self._vectors is not None and not self._vectors.shared:
                self._vectors.reopen()

    def release_write_lock(self) -> None:
        """Let another process write; the lock file goes with the lock."""
        self._write_lock.release()

    # -- status -------------------------------------------------------------------------------
    def status(self, count_vectors: bool = True, disk: DiskChanges | None = None) -> Status:
        """What the index holds; with ``disk`` (how the folder differs from the manifest, see
        :func:`explorer.core.indexing.disk_state.status_against_disk`), edited, new and
        deleted files count as stale.

        So do files whose chunks are missing from the database, and (with ``count_vectors``)
        files whose recorded vectors the store lacks: a database that disagrees with its
        vectors is stale, not healthy."""
        counts = self.keywords.counts()
        indexed, waiting = counts[FileState.FRESH], counts[FileState.PENDING]
        edited = new = deleted = 0
        stale_already: dict[str, str] = {}
        if disk is not None:
            edited, new, deleted = len(disk.edited), len(disk.new), len(disk.deleted)
            stale_already = dict(disk.states)
            for state in disk.states.values():  # stale now, whatever they were
                indexed -= state == FileState.FRESH
                waiting -= state == FileState.PENDING
        broken = [p for p in self.keywords.files_missing_chunks() if p not in stale_already]
        for record in self.keywords.files_by_path(broken).values():
            stale_already[record.path] = record.state
            indexed -= record.state == FileState.FRESH
            waiting -= record.state == FileState.PENDING
        stored_model = self.keywords.get_meta("model")
        stored_dimension = self.keywords.get_meta("dimension")
        needs_rebuild, reason = False, ""
        if stored_model and stored_model != self.settings.model:
            needs_rebuild = True
            reason = f"model changed from {stored_model} to {self.settings.model}"
        last = self.keywords.get_meta("last_update")
        vectors, available, problem = counts["embedded"], True, ""
        lacking: dict[str, str] = {}  # chunk id -> path: recorded as embedded, not in the store
        if count_vectors:
            try:
                vectors, lacking = self._count_vectors(counts["embedded"])
            except VectorStoreMissing as error:
                available, problem, vectors = False, str(error), 0
                lacking = self.keywords.ledger.embedded_chunks()
                needs_rebuild, reason = True, str(error)
            except (VectorStoreUnavailable, VectorStoreDamaged) as error:
                available, problem = False, str(error)
                if isinstance(error, VectorStoreDamaged):
                    needs_rebuild, reason = True, str(error)
        without_vectors = sorted(set(lacking.values()) - stale_already.keys())
        for record in self.keywords.files_by_path(without_vectors).values():
            if record.state == FileState.FRESH:  # waits for its vectors again
                indexed -= 1
                waiting += 1
        return Status(
            root=str(self.settings.root),
            index_dir=str(self.settings.index_dir),
            indexed=indexed,
            stale=waiting + edited + new + deleted + len(broken),
            skipped=counts[FileState.SKIPPED],
            failed=counts[FileState.FAILED],
            skip_reasons=self.keywords.skip_reasons(),
            chunks=counts["chunks"],
            vectors=vectors,
            model=stored_model or self.settings.model,
            vector_store="server" if self.shared_vectors else "local",
            vector_location=self.vector_location,
            vectors_available=available,
            vectors_problem=problem,
            dimension=int(stored_dimension) if stored_dimension else None,
            store_bytes=_directory_size(self.settings.index_dir),
            last_update=float(last) if last else None,
            needs_rebuild=needs_rebuild,
            rebuild_reason=reason,
            waiting_for_vectors=waiting,
            edited=edited,
            new=new,
            deleted=deleted,
            disk_checked=disk is not None,
            skipped_files=tuple(self.keywords.skipped_files(SKIPPED_LISTED)),
            missing_chunks=len(broken),
            vectors_missing=len(lacking),
            index_command=self.settings.repair_command,
            permissions=self.permissions(),
            other_types=dict(disk.other_types) if disk is not None else {},
        )

    def _count_vectors(self, embedded: int) -> tuple[int, dict[str, str]]:
        """The vectors this index holds, and the chunks (id -> path) recorded as embedded that
        the store lacks. A reader's local client may predate another process's writes: it is
        opened again before a shortfall is believed."""
        chunks_dir = self.settings.index_dir / CHROMA_DIR_NAME
        if self.shared_vectors:  # the server's count is every checkout's: ask for ours
            present = self.vectors.existing_chunk_ids(self.keywords.chunk_ids())
            vectors = len(present)
        elif chunks_dir.exists() or embedded:
            vectors = self.vectors.count_chunks()
            if vectors < embedded and not self._write_lock.held:
                self.vectors.reopen()
                vectors = self.vectors.count_chunks()
        else:
            return 0, {}
        if vectors >= embedded:
            return vectors, {}
        recorded = self.keywords.ledger.embedded_chunks()
        present = self.vectors.existing_chunk_ids(recorded)
        return vectors, {cid: path for cid, path in recorded.items() if cid not in present}

    def vectors_lacking(self) -> int:
        """Chunks recorded as embedded whose vectors the local store does not hold (a store
        emptied behind explorer's back: ``chroma.sqlite3`` cut to zero bytes, say); 0 on a
        server, whose count is every checkout's."""
        if self.shared_vectors:
            return 0
        embedded = int(self.keywords.counts()["embedded"])
        return max(0, embedded - self.vectors.count_chunks()) if embedded else 0

    def permissions(self) -> Permissions:
        """Which files and folders of the index other users could read (nothing is changed:
        a writer makes them private when it takes the lock)."""
        found = open_entries(self.settings.index_dir, self.settings.private_parents, is_index_entry)
        base = self.settings.index_dir
        tightened = ""
        try:
            record = json.loads(self.keywords.get_meta(TIGHTENED_META) or "null")
            if isinstance(record, dict):
                when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(record["at"])))
                tightened = f"{when}: {int(record['entries'])} files and folders made private"
        except (ValueError, TypeError, KeyError, RecursionError):
            tightened = ""
        return Permissions(
            open_count=len(found),
            examples=tuple(entry.describe(base) for entry in found[:OPEN_EXAMPLES]),
            tightened=tightened,
        )

    def touch_last_update(self) -> None:
        self.keywords.set_meta("last_update", repr(time.time()))

    def close(self) -> None:
        self.release_write_lock()
        with self._vectors_lock:
            if self._vectors is not None:
                self._vectors.close()
                self._vectors = None
        self.keywords.close()


def _take(lock: WriteLock, settings: IndexSettings, holder: str, live: bool = False) -> None:
    """Acquire ``lock`` for ``holder`` (``live``: a live index), or raise :class:`IndexBusy`
    naming who holds it, with the advice that fits a live holder or one that will finish."""
    try:
        lock.acquire(f"{holder} (pid {os.getpid()})" + (LIVE_MARK if live else ""))
    except LockBusy as busy:
        other = busy.holder
        if other.endswith(LIVE_MARK):
            other = other.removesuffix(LIVE_MARK)
            advice = "it keeps the index up to date while it runs"
        else:
            advice = "wait for it to finish"
        raise IndexBusy(
            f"the index of {settings.root} is being written by {other}; {advice}"
        ) from None


def live_writer(index_dir: Path) -> str | None:
    """The live process (a TUI, an MCP server) that holds the write lock of the index in
    ``index_dir`` and keeps it current while it runs, as it names itself (``explorer mcp
    (pid 4242)``); None when none does.

    Read from the lock file without locking it (a reader never takes the lock, nor makes its
    file): its holder removes it when done, and one a killed holder left names a process that
    no longer runs."""
    try:
        text = (index_dir / LOCK_NAME).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not text.endswith(LIVE_MARK):
        return None
    holder = text.removesuffix(LIVE_MARK)
    pid = holder.rpartition("(pid ")[2].removesuffix(")")
    if not pid.isdigit():
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return None
    except PermissionError:  # it runs, as another user
        pass
    return holder


def _load_embedder(settings: IndexSettings) -> Embedder:
    """The model of ``settings``; a sentence-transformers model keeps its query encoder in the
    index (exported once, or taken from the settings' cache of it)."""
    embedder = load_embedder(settings.model, settings.embedding_precision)
    if isinstance(embedder, SentenceTransformerEmbedder):
        embedder.keep_query_encoder_in(
            settings.index_dir / EXPORT_DIR_NAME, settings.query_encoder_cache
        )
    return embedder


def _read_only(settings: IndexSettings, why: str) -> IndexReadOnly:
    return IndexReadOnly(f"the index at {settings.index_dir} cannot be written ({why})")


def _directory_size(directory: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(directory):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(dirpath, name))
            except OSError:
                pass
    return total
