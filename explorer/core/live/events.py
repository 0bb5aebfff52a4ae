"""The events a :class:`~explorer.core.live.writer.LiveIndex` sends to its ``on_event`` listener."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class LiveEvent:
    """Base class of every event a :class:`~explorer.core.live.writer.LiveIndex` sends; ``kind``
    names
    the subclass."""

    kind: ClassVar[str] = "event"


@dataclass(frozen=True)
class ProgressEvent(LiveEvent):
    """``phase``: ``scan``, ``keywords``, ``embed``, or ``done`` (the writer is idle)."""

    kind: ClassVar[str] = "progress"
    phase: str
    files_done: int = 0
    files_total: int = 0
    chunks_done: int = 0
    chunks_total: int = 0


@dataclass(frozen=True)
class FilesChangedEvent(LiveEvent):
    """Keyword search reflects these root-relative paths (vectors may still be coming).

    Initial sync (``initial``): every file whose entry changed or still awaits vectors. A
    watcher batch: its paths as reported, which may name folders or vanished paths.
    """

    kind: ClassVar[str] = "files_changed"
    paths: frozenset[str]
    initial: bool = False


@dataclass(frozen=True)
class VectorsReadyEvent(LiveEvent):
    """Embedding caught up: the paths of every ``files_changed`` since the last one are fresh."""

    kind: ClassVar[str] = "vectors_ready"
    paths: frozenset[str]


@dataclass(frozen=True)
class FilesEmbeddedEvent(LiveEvent):
    """These files just became fresh: their vectors serve search and related files now.

    Sent while embedding goes on, after each model batch that finished a file, so a reader can
    use what the user looks at (embedded first) without waiting for ``vectors_ready``.
    """

    kind: ClassVar[str] = "files_embedded"
    paths: frozenset[str]


@dataclass(frozen=True)
class ModelStateEvent(LiveEvent):
    """The document model: ``loading``, ``ready`` or ``failed`` (then keyword-only)."""

    kind: ClassVar[str] = "model_state"
    state: str
    message: str = ""


@dataclass(frozen=True)
class WriterEvent(LiveEvent):
    """``waiting``: another process writes the index, this one only reads; ``writing``: this
    live index holds the write lock (sent only after a wait)."""

    kind: ClassVar[str] = "writer"
    state: str
    message: str = ""


@dataclass(frozen=True)
class VectorsStateEvent(LiveEvent):
    """The vector store's reachability changed: ``available`` or ``unavailable``."""

    kind: ClassVar[str] = "vectors_state"
    available: bool
    message: str = ""


@dataclass(frozen=True)
class ErrorEvent(LiveEvent):
    """One line for a status bar; the writer carries on where it can."""

    kind: ClassVar[str] = "error"
    message: str


def one_line(error: BaseException) -> str:
    """An error as an event's one-line message (its type name if it has no text)."""
    return " ".join(str(error).split()) or type(error).__name__
