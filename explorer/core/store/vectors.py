"""The vector store: a Chroma collection of chunk vectors and one of file vectors.

Two kinds, one interface. The local store is an embedded ``PersistentClient`` in the index
directory, owned by this index alone. The shared store is a Chroma server
(``chromadb.HttpClient``) whose collections, named after the model, may hold the vectors of many
checkouts: ids are content-addressed (path relative to the root plus content), so identical
files share vectors, and nothing is ever deleted from it by one checkout — an id another
machine still uses would vanish under it.

Chroma is imported only when a store is opened (it takes most of a second). Every call holds the
store's lock, so :meth:`VectorStore.reopen` can swap the client while other threads use it. A
server that stops answering raises :class:`VectorStoreUnavailable` from any call.

A damaged local store (garbage in ``chroma.sqlite3``, a broken HNSW segment) raises
:class:`VectorStoreDamaged` from any call, opening included. Chroma reports such damage as its
``InternalError`` or, from its Rust core, as a ``PanicException`` (a ``BaseException``); both are
recognised in :func:`_guarded`, where every call passes. Chroma has no read-only client and
writes every store it opens, so a reader (``read_only``) opens a private snapshot of the store
instead (:mod:`explorer.core.store.vector_snapshot`) and never writes the index directory.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import re
import sqlite3
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar, cast
from urllib.parse import quote

from explorer.core.errors import ExplorerError
from explorer.core.private_files import make_private_dirs, private_umask
from explorer.core.store.chroma_server import ServerAddress, unreachable
from explorer.core.store.damaged_store import damage_words
from explorer.core.store.vector_snapshot import CHROMA_DATABASE as CHROMA_DATABASE
from explorer.core.store.vector_snapshot import remove_snapshot, take_snapshot

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    import numpy as np
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection
    from chromadb.base_types import (
        LiteralValue,
        LogicalOperator,
        Where,
        WhereOperator,
    )

CHUNKS = "chunks"
FILES = "files"
CONNECT_TIMEOUT = 3.0
REREAD_PAUSE = 0.25
"""Seconds a reader waits before reading a store again that looked damaged (see
:meth:`VectorStore._met_a_write`)."""

VECTOR_CACHE = 4096
"""Most chunk vectors :meth:`VectorStore.chunk_vectors` keeps (about 1.5 kB each at 384
dimensions): a hybrid search asks for the vectors of up to 100 keyword hits on every keystroke,
mostly the same ones as the keystroke before."""
REQUEST_TIMEOUT = 60.0

PERSIST_EVERY = 1
"""Chroma's ``sync_threshold`` for a local store's collections: its HNSW graph is written to
disk after every write, so that every process searches the very graph the writer built.

With Chroma's default (1,000), the graph is written only once 1,000 records have come since it
was last written, and every process that opens the store inserts the records written since (in
a store under 1,000 vectors: all of them) into its graph again, on several threads in a hash
map's order: a graph of its own each time. HNSW search is approximate, so two processes' 200
nearest chunks could differ in their last ranks (one chunk at rank ~150 found by one, missed by
the other), and a different candidate set moves the calibrated fusion's standard scores: the
same query printed 0.9281 in one process and 0.9285 in another. Chroma writes only the changed
part of the graph, so writing after each batch costs about the same (20,000 vectors in batches
of 128: 6.6 s, against 6.9 s), and opening the store gets quicker: nothing to insert again."""
EXACT_BELOW = 4_000
"""A chunk collection of at most this many vectors is searched again exactly when Chroma's
HNSW answer comes back shorter than it should (see :meth:`VectorStore._exact_when_short`)."""
NEVER_AN_ID = "explorer-persist"
"""An id no chunk or file vector has (theirs are hex digests): deleting it writes a record and
nothing else, so Chroma writes its graph (see :func:`_persist_every_write`)."""


class VectorStoreError(ExplorerError):
    """The vector store could not be opened or used; the message says why."""


class VectorStoreUnavailable(VectorStoreError):
    """The Chroma server does not answer (now); keyword search still works."""


class VectorStoreDamaged(VectorStoreError):
    """The local Chroma store is damaged; keyword search still works, ``explorer index``
    sets the store aside and embeds again."""

    def __init__(self, directory: Path, reason: str, repair_command: str) -> None:
        self.directory = directory
        self.reason = damage_words(reason)
        super().__init__(
            f"the vector store {directory} is damaged ({self.reason}); "
            f"run `{repair_command}` to repair it"
        )


class VectorStoreMissing(VectorStoreDamaged):
    """The local Chroma store is gone (its folder or its database deleted) while the keyword
    index records vectors in it; keyword search still works, ``explorer index`` embeds again."""

    def __init__(self, directory: Path, chunks: int, repair_command: str) -> None:
        self.directory = directory
        self.chunks = chunks
        """Chunks whose vectors were in the missing store."""
        self.reason = f"missing: {chunks} chunks lack their vectors"
        ExplorerError.__init__(
            self,
            f"the vector store {directory} is missing ({chunks} chunks lack their vectors); "
            f"run `{repair_command}` to embed them again",
        )


DAMAGED_SQLITE_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
SQLITE_CODE = re.compile(r"code: (\d+)")
"""How Chroma quotes an SQLite error code in its messages."""
DAMAGED_SEGMENT_WORDS = ("hnsw", "pickle", "error finding id")
"""What Chroma says (lowercase) when a vector segment on disk cannot be read."""


def _damage_reason(error: BaseException) -> str | None:
    """Chroma's words when ``error`` (its InternalError or a Rust panic) says the local store
    is damaged; None for anything else (a read-only file, a lock, a bug)."""
    text = " ".join(str(error).split())
    code = SQLITE_CODE.search(text)
    if code is not None:
        return text if int(code.group(1)) & 0xFF in DAMAGED_SQLITE_CODES else None
    lowered = text.lower()
    return text if any(word in lowered for word in DAMAGED_SEGMENT_WORDS) else None


@contextlib.contextmanager
def _panic_output_held() -> Iterator[None]:
    """Keep what is written to file descriptor 2 meanwhile, and let it out unless Chroma's Rust
    core panicked: a panic prints its message (and with ``RUST_BACKTRACE`` a backtrace) there
    before Python sees the exception, which then becomes one line."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no file descriptor 2: nothing to keep
        yield
        return
    held = tempfile.TemporaryFile()  # noqa: SIM115 - closed below
    panicked = False
    os.dup2(held.fileno(), 2)
    try:
        yield
    except BaseException as error:
        panicked = type(error).__name__ == "PanicException"
        raise
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        if not panicked:
            held.seek(0)
            if written := held.read():
                os.write(2, written)
        held.close()


def _is_chroma_failure(error: BaseException) -> bool:
    """One of Chroma's own errors, or a panic of its Rust core (pyo3's PanicException derives
    from BaseException and cannot be imported by name)."""
    from chromadb.errors import ChromaError

    return isinstance(error, ChromaError) or type(error).__name__ == "PanicException"


def _forget_system(directory: Path) -> None:
    """Drop Chroma's cached client system for ``directory``.

    Chroma caches one system per path even when starting it failed, so every later client of
    that path would get the broken one (``'RustBindingsAPI' object has no attribute
    'bindings'``). Private API: ``test_a_damaged_store_fails_the_same_way_twice`` fails loudly
    if a chromadb release moves it.
    """
    from chromadb.api.shared_system_client import SharedSystemClient

    SharedSystemClient._identifier_to_system.pop(str(directory), None)
    SharedSystemClient._identifier_to_refcount.pop(str(directory), None)


def check_database(directory: Path, repair_command: str) -> None:
    """Raise :class:`VectorStoreDamaged` if SQLite's ``quick_check`` finds Chroma's database
    in ``directory`` damaged (Chroma itself may open it and fail only later, or panic)."""
    reason = database_damage(directory)
    if reason is not None:
        raise VectorStoreDamaged(directory, reason, repair_command)


def database_damage(directory: Path) -> str | None:
    """SQLite's words if its ``quick_check`` finds Chroma's database in ``directory``
    damaged, else None (sound, missing, or unreadable: Chroma's own open says why)."""
    database = directory / CHROMA_DATABASE
    if not database.exists():
        return None
    try:
        db = sqlite3.connect(f"file:{quote(str(database))}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        rows = db.execute("PRAGMA quick_check(1)").fetchall()
    except sqlite3.DatabaseError as error:
        if getattr(error, "sqlite_errorcode", 0) & 0xFF not in DAMAGED_SQLITE_CODES:
            return None
        return str(error)
    finally:
        db.close()
    if rows != [("ok",)]:
        return str(rows[0][0]) if rows else "quick_check gave no answer"
    return None


def file_vector_id(path: str, content_hash: str) -> str:
    """A file vector's id: the same path and content give the same id on any machine."""
    return hashlib.sha256(f"file\0{path}\0{content_hash}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class FileVector:
    """A file's vector (the mean of its chunks'), under its :func:`file_vector_id`."""

    id: str
    path: str
    vector: np.ndarray


def server_collection_names(model: str) -> tuple[str, str]:
    """The server's chunk and file collections for ``model`` (one pair per model)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", model.rstrip("/").rsplit("/", 1)[-1]).strip("-._")
    digest = hashlib.sha256(model.encode()).hexdigest()[:8]
    base = f"explorer-{stem[:40] or 'model'}-{digest}"
    return f"{base}-{CHUNKS}", f"{base}-{FILES}"


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _guarded(
    method: Callable[Concatenate[VectorStore, _P], _R],
) -> Callable[Concatenate[VectorStore, _P], _R]:
    """Hold the store's lock; turn a lost connection into VectorStoreUnavailable and a
    damaged local store into VectorStoreDamaged."""

    @functools.wraps(method)
    def wrapper(self: VectorStore, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        # A local store's files are created private (see explorer.core.private_files).
        private = private_umask() if self.directory is not None else contextlib.nullcontext()
        with self._lock, private:
            retried = False
            while True:
                try:
                    return method(self, *args, **kwargs)
                except VectorStoreError:
                    raise
                except BaseException as error:  # a panic of Chroma's Rust core is no Exception
                    lost = isinstance(error, Exception) and _is_connection_error(error)
                    if self.address is not None and lost:
                        raise unreachable(
                            VectorStoreUnavailable, self.address, _reason(error)
                        ) from error
                    opening = method.__name__ == "_connect"
                    if not retried and self._met_a_write(error, opening):
                        retried = True  # read it again, once, from a fresh open
                        continue
                    self._raise_if_damaged(error)
                    raise

    return wrapper


def _is_connection_error(error: Exception) -> bool:
    kinds = {cls.__name__ for cls in type(error).__mro__}
    if kinds & {"TransportError", "ConnectionError", "TimeoutException"}:
        return True
    return "could not connect to a chroma server" in str(error).lower()


def _reason(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:120]


class VectorStore:
    """Chunk and file vectors of one index: a local Chroma directory or a Chroma server."""

    def __init__(
        self,
        directory: Path | None = None,
        address: ServerAddress | None = None,
        model: str = "",
        read_only: bool = False,
        repair_command: str = "explorer index",
    ) -> None:
        """Open the local store in ``directory``, or the server at ``address`` for ``model``.

        ``read_only`` (local): never write ``directory``: a private snapshot of it is opened
        instead, taken again by :meth:`reopen` (and a panic of Chroma's Rust core while
        opening prints nothing, see :func:`_panic_output_held`). ``repair_command`` is what a
        :class:`VectorStoreDamaged` message tells the user to run.
        """
        if (directory is None) == (address is None):
            raise ValueError("give a directory or a server address")
        self.directory = directory
        self.address = address
        self.shared = address is not None
        """True on a server: vectors may belong to other checkouts, so none is deleted."""
        self.location = address.url if address is not None else str(directory)
        self.read_only = read_only
        self.repair_command = repair_command
        self._names = server_collection_names(model) if address is not None else (CHUNKS, FILES)
        self._lock = threading.RLock()
        self._client: ClientAPI | None = None
        self._vector_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        """Chunk vectors already fetched, least recently used first. A chunk id names one
        chunk of one version of a file, so its vector changes only when the model does: the
        collections are opened again then (see :meth:`_open_collections`)."""
        self._file_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        """File vectors already fetched, the same way (a file vector's id names the content)."""
        self._copy: Path | None = None
        """The private snapshot a read-only store opened (removed on close)."""
        self._connect()

    def _raise_if_damaged(self, error: BaseException) -> None:
        """Raise VectorStoreDamaged if ``error`` is Chroma saying the local store is damaged.

        Chroma does not always say so in words: garbage in its database may surface as any of
        its errors (``Error sending backfill request to compactor``). So when its words do not
        tell, SQLite's ``quick_check`` of the database decides.
        """
        if self.directory is None or not _is_chroma_failure(error):
            return
        reason = _damage_reason(error)
        if reason is None:
            reason = database_damage(self._opened_directory())
        if reason is None:
            return
        if self._client is None:  # it failed to open: Chroma keeps the broken system cached
            _forget_system(self._opened_directory())
            self.close()  # removes a private copy; the caller never gets this store
        raise VectorStoreDamaged(self.directory, reason, self.repair_command) from None

    def _met_a_write(self, error: BaseException, opening: bool) -> bool:
        """Whether ``error`` may be another process writing this local store right now; if so,
        the store is closed, and (unless it was ``opening``) opened again after a pause, so the
        call can be made once more.

        A segment's words (``Error finding id``) come both from a damaged store and from one
        whose vectors another process is writing while this one reads: its graph and its
        database disagree for a moment. A store that fails the same way after a pause and a
        fresh open is damaged; SQLite's own damage codes are never retried.
        """
        if self.directory is None or not _is_chroma_failure(error):
            return False
        reason = _damage_reason(error)
        if reason is None or SQLITE_CODE.search(reason):
            return False
        log.info("reading the vector store again after: %s", reason)
        directory = self._opened_directory()
        self.close()
        _forget_system(directory)
        time.sleep(REREAD_PAUSE)
        if not opening:
            self._connect()
        return True

    def _opened_directory(self) -> Path:
        """The directory Chroma opens: the store's own, or a read-only store's private
        snapshot (see :mod:`explorer.core.store.vector_snapshot`: Chroma writes any store it
        opens)."""
        assert self.directory is not None
        if not self.read_only:
            return self.directory
        if self._copy is None:
            self._copy = take_snapshot(self.directory)
        return self._copy

    @_guarded
    def _connect(self) -> None:
        try:
            import chromadb
            from chromadb.config import Settings as ChromaSettings
        except ImportError as error:  # pragma: no cover - chromadb is a dependency
            raise VectorStoreError("chromadb is not installed") from error
        settings = ChromaSettings(anonymized_telemetry=False)
        if self.address is None:
            directory = self._opened_directory()
            make_private_dirs(directory)
            # Opening reads the store: where damage panics. Only a reader (a one-shot command)
            # holds file descriptor 2 meanwhile: the TUI draws its screen there. A writer runs
            # check_database first, which finds such damage before Chroma does.
            holding = _panic_output_held() if self.read_only else contextlib.nullcontext()
            with holding:
                client = chromadb.PersistentClient(path=str(directory), settings=settings)
                self._client = client
                self._open_collections()
        else:
            client = chromadb.HttpClient(
                host=self.address.host,
                port=self.address.port,
                ssl=self.address.ssl,
                settings=settings,
            )
            self._client = client
            _bound_request_time(client)
            self._open_collections()
        self._batch = max(1, int(client.get_max_batch_size()))

    def _opened(self) -> ClientAPI:
        """The open client; a closed store says so instead of failing on ``None``."""
        if self._client is None:
            raise VectorStoreError(f"the vector store at {self.location} is closed")
        return self._client

    def _open_collections(self) -> None:
        self._vector_cache.clear()
        self._file_cache.clear()
        space = {"hnsw:space": "cosine"}
        chunks, files = self._names
        client = self._opened()
        self._chunks: Collection = client.get_or_create_collection(
            chunks, metadata=space, embedding_function=None
        )
        self._files: Collection = client.get_or_create_collection(
            files, metadata=space, embedding_function=None
        )
        if self.directory is not None and not self.read_only:
            for collection in (self._chunks, self._files):
                _persist_every_write(collection)

    @_guarded
    def reopen(self) -> None:
        """Drop the client and open a new one: a local client caches its HNSW graph in memory,
        so one opened before another process wrote would neither see nor keep those vectors."""
        self.close()
        self._connect()

    def close(self) -> None:
        private = private_umask() if self.directory is not None else contextlib.nullcontext()
        with self._lock, private:
            client, self._client = self._client, None
            close = getattr(client, "close", None)
            if close is not None:
                # Closing a dead connection may fail in any way the client's transport has;
                # the store is closed either way.
                try:
                    close()
                except Exception:
                    log.debug("closing the Chroma client failed", exc_info=True)
            if self._copy is not None:
                remove_snapshot(self._copy)
                self._copy = None

    @_guarded
    def heartbeat(self) -> None:
        """Raise :class:`VectorStoreUnavailable` unless the store answers."""
        self._opened().heartbeat()

    @_guarded
    def reset(self) -> None:
        """Drop every chunk and file vector, and the dimension the collections were fixed to.

        Used when the model changes on a local store: a model of another dimension could not
        be written to the old collections. A shared store has collections per model instead.
        """
        if self.shared:
            return
        from chromadb.errors import NotFoundError

        for name in self._names:
            try:
                self._opened().delete_collection(name)
            except NotFoundError:  # already gone (e.g. an interrupted reset)
                pass
        self._open_collections()

    # -- chunks -------------------------------------------------------------------------------
    @_guarded
    def upsert_chunks(self, ids: Sequence[str], vectors: np.ndarray, paths: Sequence[str]) -> None:
        self._forget(ids)
        for start in range(0, len(ids), self._batch):
            end = start + self._batch
            self._chunks.upsert(
                ids=list(ids[start:end]),
                embeddings=vectors[start:end],
                metadatas=[{"path": path} for path in paths[start:end]],
            )

    @_guarded
    def delete_chunks(self, ids: Sequence[str]) -> None:
        """Delete these chunk vectors; a no-op on a shared store (see the module docstring)."""
        if self.shared:
            return
        self._forget(ids)
        for start in range(0, len(ids), self._batch):
            self._chunks.delete(ids=list(ids[start : start + self._batch]))

    @_guarded
    def chunk_ids(self) -> set[str]:
        """Every chunk id the store holds (on a server: every checkout's)."""
        return set(self._chunks.get(include=[])["ids"])

    @_guarded
    def existing_chunk_ids(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` the store holds; costs one request per batch of ids."""
        return self._existing(self._chunks, ids)

    @_guarded
    def chunk_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vector of each of ``ids`` the store holds (the others are left out).

        Vectors fetched before come from a cache (see :data:`VECTOR_CACHE`): typing a query
        asks for mostly the same chunks on every keystroke, and Chroma takes milliseconds.
        """
        return self._cached_vectors(self._chunks, self._vector_cache, ids)

    @_guarded
    def file_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored file vector (the normalised mean of its chunks' vectors) of each of
        ``ids`` the store holds, cached as :meth:`chunk_vectors` caches chunks."""
        return self._cached_vectors(self._files, self._file_cache, ids)

    def _cached_vectors(
        self, collection: Collection, cache: OrderedDict[str, np.ndarray], ids: Sequence[str]
    ) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        missing: list[str] = []
        for cid in ids:
            vector = cache.get(cid)
            if vector is None:
                missing.append(cid)
            else:
                cache.move_to_end(cid)
                found[cid] = vector
        for start in range(0, len(missing), self._batch):
            part = collection.get(ids=missing[start : start + self._batch], include=["embeddings"])
            for cid, vector in zip(part["ids"], _vectors(part["embeddings"]), strict=True):
                found[cid] = cache[cid] = vector
        while len(cache) > VECTOR_CACHE:
            cache.popitem(last=False)
        return {cid: found[cid] for cid in ids if cid in found}

    def _forget(self, ids: Iterable[str]) -> None:
        """Drop ``ids`` from the vector cache (their vectors are being written or deleted)."""
        with self._lock:
            for cid in ids:
                self._vector_cache.pop(cid, None)

    @_guarded
    def query_chunks(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """(chunk id, cosine similarity) of the ``k`` nearest chunks, best first.

        On a shared store the answer may hold other checkouts' chunks; callers keep their own.
        """
        # No count() first: Chroma already returns fewer than n_results (or none) when the
        # collection holds fewer; only an answer that comes back short asks for the count.
        return self._nearest_chunks([vector], k)[0]

    @_guarded
    def query_chunks_among(
        self, vector: np.ndarray, k: int, ids: Sequence[str]
    ) -> list[tuple[str, float]]:
        """(chunk id, cosine similarity) of the ``k`` nearest of the chunks ``ids``, best first.

        Chroma searches only those ids; a metadata filter (``where``) would cost ~0.4 s at
        100,000 chunks whatever it names (see :mod:`explorer.core.retrieval.scoped_legs`).
        """
        if not ids:
            return []
        found = self._chunks.query(
            query_embeddings=[vector], n_results=k, ids=list(ids), include=["distances"]
        )
        return [
            (chunk_id, 1.0 - float(distance))
            for chunk_id, distance in zip(
                found["ids"][0], _included(found["distances"], "distances")[0], strict=True
            )
        ]

    @_guarded
    def query_chunks_many(self, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        """For each of ``vectors``, (chunk id, cosine similarity) of its ``k`` nearest chunks,
        best first, in one request. On a shared store answers may hold other checkouts' chunks."""
        if len(vectors) == 0:
            return []
        return self._nearest_chunks(vectors, k)

    def _nearest_chunks(
        self, vectors: np.ndarray | list[np.ndarray], k: int
    ) -> list[list[tuple[str, float]]]:
        found = self._chunks.query(query_embeddings=vectors, n_results=k, include=["distances"])
        answers = [
            [
                (chunk_id, 1.0 - float(distance))
                for chunk_id, distance in zip(ids, dists, strict=True)
            ]
            for ids, dists in zip(
                found["ids"], _included(found["distances"], "distances"), strict=True
            )
        ]
        return self._exact_when_short(vectors, answers, k)

    def _exact_when_short(
        self, vectors: np.ndarray | list[np.ndarray], answers: list[list[tuple[str, float]]], k: int
    ) -> list[list[tuple[str, float]]]:
        """``answers``, or the exact ``k`` nearest of every vector when an answer came back
        short from a small collection.

        Chroma's HNSW search can miss vectors outright in a small collection of tight clusters
        (a long file's near-identical passages): asked for 80 of 64 vectors, it answered 35,
        none of them another file's, and the related list came out empty. An answer shorter
        than both ``k`` and the collection is such a miss; a collection of at most
        :data:`EXACT_BELOW` vectors is then read whole and searched exactly, which takes
        milliseconds at that size. A full answer is taken as it is (nothing tells a miss there).
        """
        if all(len(answer) >= k for answer in answers):
            return answers
        total = self._chunks.count()
        if total > EXACT_BELOW or all(len(answer) >= min(k, total) for answer in answers):
            return answers
        import numpy as np

        stored = self._chunks.get(include=["embeddings"])
        ids = stored["ids"]
        if not ids:
            return answers
        matrix = np.asarray(_vectors(stored["embeddings"]), dtype=np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        queries = np.asarray(vectors, dtype=np.float32)
        queries = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
        cosines = queries @ matrix.T
        nearest = np.argsort(-cosines, axis=1, kind="stable")[:, :k]
        return [
            [(ids[j], float(row[j])) for j in order]
            for row, order in zip(cosines, nearest, strict=True)
        ]

    @_guarded
    def count_chunks(self) -> int:
        return self._chunks.count()

    # -- files --------------------------------------------------------------------------------
    @_guarded
    def upsert_files(self, files: Sequence[FileVector]) -> None:
        """Store these file vectors, in as few writes as the batch size allows."""
        for start in range(0, len(files), self._batch):
            part = files[start : start + self._batch]
            self._files.upsert(
                ids=[file.id for file in part],
                embeddings=[file.vector for file in part],
                metadatas=[{"path": file.path} for file in part],
            )

    @_guarded
    def delete_files(self, file_ids: Sequence[str]) -> None:
        """Delete these file vectors; a no-op on a shared store."""
        if self.shared:
            return
        for start in range(0, len(file_ids), self._batch):
            self._files.delete(ids=list(file_ids[start : start + self._batch]))

    @_guarded
    def file_ids(self) -> set[str]:
        return set(self._files.get(include=[])["ids"])

    @_guarded
    def file_entries(self) -> dict[str, str]:
        """Every file vector the store holds: its id and the path it was stored for."""
        found = self._files.get(include=["metadatas"])
        return {
            file_id: str((meta or {}).get("path", ""))
            for file_id, meta in zip(
                found["ids"], _included(found["metadatas"], "metadatas"), strict=True
            )
        }

    @_guarded
    def existing_file_ids(self, ids: Iterable[str]) -> set[str]:
        return self._existing(self._files, ids)

    @_guarded
    def file_vector(self, file_id: str) -> np.ndarray | None:
        return self.file_vectors([file_id]).get(file_id)

    @_guarded
    def query_files(
        self, vector: np.ndarray, k: int, exclude_path: str
    ) -> list[tuple[str, str, float]]:
        """(file id, path, cosine similarity) of the ``k`` nearest file vectors of other paths."""
        other: dict[WhereOperator | LogicalOperator, LiteralValue] = {"$ne": exclude_path}
        where: Where = {"path": other}
        found = self._files.query(
            query_embeddings=[vector],
            n_results=k,
            where=where,
            include=["distances", "metadatas"],
        )
        metadatas = _included(found["metadatas"], "metadatas")[0]
        distances = _included(found["distances"], "distances")[0]
        return [
            (file_id, str((meta or {}).get("path", "")), 1.0 - float(distance))
            for file_id, meta, distance in zip(found["ids"][0], metadatas, distances, strict=True)
        ]

    @_guarded
    def count_files(self) -> int:
        return self._files.count()

    def _existing(self, collection: Collection, ids: Iterable[str]) -> set[str]:
        wanted = list(ids)
        present: set[str] = set()
        for start in range(0, len(wanted), self._batch):
            present.update(
                collection.get(ids=wanted[start : start + self._batch], include=[])["ids"]
            )
        return present


def _persist_every_write(collection: Collection) -> None:
    """Make a local ``collection`` write its HNSW graph after every write (see
    :data:`PERSIST_EVERY`). A store made before, whose graph was never written or not since its
    last records, has its graph written now: the no-op write that follows makes Chroma insert
    those records (once, in this writer) and write the graph, which every later process loads."""
    hnsw = collection.configuration.get("hnsw") or {}
    if hnsw.get("sync_threshold") == PERSIST_EVERY:
        return
    collection.modify(configuration={"hnsw": {"sync_threshold": PERSIST_EVERY}})
    collection.delete(ids=[NEVER_AN_ID])


def _included(value: _R | None, name: str) -> _R:
    """A field of Chroma's answer that the request asked it to include."""
    if value is None:
        raise VectorStoreError(f"Chroma answered without the {name} it was asked for")
    return value


def _vectors(embeddings: object) -> Sequence[np.ndarray]:
    """The embeddings of Chroma's answer, one vector per id.

    Chroma 1.x answers with one 2-D numpy array (its stubs also allow lists of lists, which it
    no longer returns); indexing and iterating it give the rows as arrays.
    """
    if embeddings is None:
        raise VectorStoreError("Chroma answered without the embeddings it was asked for")
    return cast("Sequence[np.ndarray]", embeddings)


def _bound_request_time(client: ClientAPI) -> None:
    """Give the HTTP client timeouts: chromadb's own has none, so a hung server would hang us.

    Reaches into the client for its ``httpx`` session; if a chromadb release moves it, the
    client keeps its defaults.
    """
    session = getattr(getattr(client, "_server", None), "_session", None)
    if session is None:
        return
    try:
        import httpx

        session.timeout = httpx.Timeout(REQUEST_TIMEOUT, connect=CONNECT_TIMEOUT)
    except (ImportError, AttributeError, TypeError):  # another client: keep its own behaviour
        pass
