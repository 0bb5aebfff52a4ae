"""The events a :class:`~explorer.core.live.writer.LiveIndex` sends to its ``on_event`` listener."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from explorer.core.models import SyncPhase


class EventKind(StrEnum):
    """Which event it is; each :class:`LiveEvent` subclass has its own."""

    EVENT = "event"
    PROGRESS = "progress"
    FILES_CHANGED = "files_changed"
    VECTORS_READY = "vectors_ready"
    FILES_EMBEDDED = "files_embedded"
    MODEL_STATE = "model_state"
    WRITER = "writer"
    VECTORS_STATE = "vectors_state"
    ROOT_STATE = "root_state"
    ERROR = "error"


class ModelState(StrEnum):
    """The document model of a live index: not needed yet, loading, ready, or failed (then
    search is keyword-only)."""

    UNLOADED = "unloaded"
    LOADING = "loading"
    READY = "ready"
    FAILED = "failed"


class WriterState(StrEnum):
    """Who writes the index: another process (this one only reads), or this live index."""

    WAITING = "waiting"
    WRITING = "writing"


class RootState(StrEnum):
    """Whether the root folder is there: ``missing`` (deleted or moved away: the index keeps
    what it holds and the writer waits for the folder to come back) or ``present`` (back, or
    replaced by a new folder of that name: the writer has re-synced it)."""

    PRESENT = "present"
    MISSING = "missing"


@dataclass(frozen=True)
class LiveEvent:
    """Base class of every event a :class:`~explorer.core.live.writer.LiveIndex` sends; ``kind``
    names the subclass."""

    kind: ClassVar[EventKind] = EventKind.EVENT


@dataclass(frozen=True)
class ProgressEvent(LiveEvent):
    """Where the writer's sync is; ``done`` when the writer is idle."""

    kind: ClassVar[EventKind] = EventKind.PROGRESS
    phase: SyncPhase
    files_done: int = 0
    files_total: int = 0
    chunks_done: int = 0
    chunks_total: int = 0
    seconds_left: float | None = None
    """While embedding: the time left at the rate so far (None until it can be told)."""


@dataclass(frozen=True)
class FilesChangedEvent(LiveEvent):
    """Keyword search reflects these root-relative paths (vectors may still be coming).

    Initial sync (``initial``): every file whose entry changed or still awaits vectors. A
    watcher batch: its paths as reported, which may name folders or vanished paths.
    """

    kind: ClassVar[EventKind] = EventKind.FILES_CHANGED
    paths: frozenset[str]
    initial: bool = False


@dataclass(frozen=True)
class VectorsReadyEvent(LiveEvent):
    """Embedding caught up: the paths of every ``files_changed`` since the last one are fresh."""

    kind: ClassVar[EventKind] = EventKind.VECTORS_READY
    paths: frozenset[str]


@dataclass(frozen=True)
class FilesEmbeddedEvent(LiveEvent):
    """These files just became fresh: their vectors serve search and related files now.

    Sent while embedding goes on, after each model batch that finished a file, so a reader can
    use what the user looks at (embedded first) without waiting for ``vectors_ready``.
    """

    kind: ClassVar[EventKind] = EventKind.FILES_EMBEDDED
    paths: frozenset[str]


@dataclass(frozen=True)
class ModelStateEvent(LiveEvent):
    """The document model is ``loading``, ``ready`` or ``failed`` (then keyword-only)."""

    kind: ClassVar[EventKind] = EventKind.MODEL_STATE
    state: ModelState
    message: str = ""


@dataclass(frozen=True)
class WriterEvent(LiveEvent):
    """``waiting``: another process writes the index, this one only reads; ``writing``: this
    live index holds the write lock (sent only after a wait)."""

    kind: ClassVar[EventKind] = EventKind.WRITER
    state: WriterState
    message: str = ""


@dataclass(frozen=True)
class VectorsStateEvent(LiveEvent):
    """The vector store's reachability changed: ``available`` or ``unavailable``."""

    kind: ClassVar[EventKind] = EventKind.VECTORS_STATE
    available: bool
    message: str = ""


@dataclass(frozen=True)
class RootStateEvent(LiveEvent):
    """The root folder went ``missing``, or is ``present`` again; ``message`` says it in one
    line for a status bar."""

    kind: ClassVar[EventKind] = EventKind.ROOT_STATE
    state: RootState
    message: str = ""


@dataclass(frozen=True)
class ErrorEvent(LiveEvent):
    """One line for a status bar; the writer carries on where it can."""

    kind: ClassVar[EventKind] = EventKind.ERROR
    message: str


def one_line(error: BaseException) -> str:
    """An error as an event's one-line message (its type name if it has no text)."""
    return " ".join(str(error).split()) or type(error).__name__
