"""The index the MCP server answers from, kept in step with the folder while the server runs.

:class:`IndexKeeper` opens the index on the first call that needs it (and keeps it open: the
model loads once) as a :class:`~explorer.core.live.writer.LiveIndex`, as the TUI does: when no
other explorer writes the index, it takes the write lock, watches the folder and updates the
index within a second or two of a change; when another one does (``explorer index``, the
TUI), it reads what that one writes and takes over when it leaves. Where the index cannot be
written at all (a read-only index directory), it is opened read-only and nobody updates it.

A folder without an index is not indexed by the server (it may be the wrong folder, and a
whole home directory takes a while): every call says how to build one, and the first call
after ``explorer index`` has made it opens it.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Callable

from explorer.api.answers import Upkeep
from explorer.core.embed.embedder import Embedder
from explorer.core.errors import ExplorerError
from explorer.core.indexing.embed_priority import Focus
from explorer.core.live.events import ErrorEvent, LiveEvent, WriterEvent, WriterState
from explorer.core.live.writer import LiveIndex
from explorer.core.settings import IndexSettings
from explorer.core.store.index import DATABASE_NAME, Index, NoIndex

log = logging.getLogger(__name__)


class IndexKeeper:
    """Opens the index once and keeps it current; safe to call from any thread."""

    def __init__(
        self,
        settings: IndexSettings,
        embedder_factory: Callable[[], Embedder] | None = None,
        live: bool = True,
    ) -> None:
        """``live`` False opens the index read-only and never updates it."""
        self.settings = settings
        self._embedder_factory = embedder_factory
        self._want_live = live
        self._lock = threading.Lock()
        self._live: LiveIndex | None = None
        self._reader: Index | None = None
        self._identity: tuple[int, int] | None = None
        self._saw_waiting = False

    def index(self) -> Index:
        """The open index, reopened if a rebuild put another database file in its place.

        Raises :class:`NoIndex` (saying how to build one) while the folder has none.
        """
        with self._lock:
            identity = self._database_identity()
            if identity is None:
                self._close()
                raise NoIndex(
                    f"{self.settings.root} has no index at {self.settings.index_dir}; "
                    f"run: {self.settings.repair_command}"
                )
            if identity != self._identity:
                self._close()
            if self._live is not None:
                return self._live.index
            if self._reader is not None:
                return self._reader
            self._identity = identity
            return self._open()

    def _open(self) -> Index:
        embedder = self._embedder_factory() if self._embedder_factory else None
        if self._want_live:
            try:
                live = LiveIndex(self.settings, self._on_event, embedder=embedder)
            # A directory or database this process may not write: read it as it is.
            except (OSError, sqlite3.Error, ExplorerError) as error:
                log.warning(
                    "the index cannot be kept current here (%s): reading it as it is", error
                )
            else:
                live.start()
                self._live = live
                return live.index
        self._reader = Index.open_existing(self.settings, embedder)
        return self._reader

    @property
    def upkeep(self) -> Upkeep:
        """Who keeps the index current now."""
        live = self._live
        if live is None:
            return Upkeep.OFF
        if live.read_only:
            return Upkeep.FOLLOWING if self._saw_waiting else Upkeep.OFF
        return Upkeep.LIVE

    def focus(self, focus: Focus) -> None:
        """Have the writer embed what ``focus`` names first (when this server writes)."""
        if self._live is not None:
            self._live.focus(focus)

    def wait_idle(self, timeout: float) -> bool:
        """True once the live index has nothing queued or running (tests and benchmarks)."""
        live = self._live
        return True if live is None else live.wait_idle(timeout)

    def _on_event(self, event: LiveEvent) -> None:
        """The writer's events (on its thread): who writes, and what went wrong."""
        if isinstance(event, WriterEvent):
            self._saw_waiting = event.state is WriterState.WAITING
            log.info("index writer: %s", event.message or event.state)
        elif isinstance(event, ErrorEvent):
            log.warning("live index: %s", event.message)

    def _database_identity(self) -> tuple[int, int] | None:
        try:
            info = os.stat(self.settings.index_dir / DATABASE_NAME)
        except OSError:
            return None
        return info.st_dev, info.st_ino

    def close(self) -> None:
        """Stop updating (joins the writer) and close the index; idempotent."""
        with self._lock:
            self._close()

    def _close(self) -> None:
        live, self._live = self._live, None
        reader, self._reader = self._reader, None
        self._identity = None
        if live is not None:
            live.stop()
        if reader is not None:
            reader.close()
