"""Extraction in a worker process: a hostile document can hang or crash it, never explorer.

PDF, DOCX, HTML and notebook parsers are C libraries or deep recursions over untrusted bytes: a
PDF whose objects loop can keep PDFium busy for ever, and no Python thread can interrupt C code.
So documents are extracted in a child process (:mod:`explorer.core.ingest.formats.worker`) that
runs with resource limits: its address space is capped (``RLIMIT_AS``, so a zip bomb or a
runaway allocation fails there), and so is the CPU time of each request (``RLIMIT_CPU``). The
parent waits for each answer at most the format's time cap; past it, or when the child dies,
the child is killed, the file is skipped with the reason, and the next request starts a fresh
child. A child serves request after request (starting one took 0.15 s here, and a request
costs about 0.2-0.8 ms more than extracting in process: ``benchmarks/RESULTS.md``), and exits
when its parent closes the pipe or dies.

The protocol is a JSON header line and the file's bytes in, one JSON line out; the answer is
validated before it becomes a :class:`~explorer.core.ingest.formats.contract.Document` (the
child is trusted no more than the file it read).
"""

from __future__ import annotations

import atexit
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from typing import IO, Any, Protocol

from explorer.core.errors import ExplorerError
from explorer.core.ingest.documents import SkipReason
from explorer.core.ingest.file_reading import FileRefused
from explorer.core.ingest.formats.contract import Document, DocumentFormat, Limits, Page
from explorer.core.ingest.front_matter import FileMetadata
from explorer.core.ingest.markup import Heading
from explorer.core.ingest.references import FileReference, LinkSyntax, ReferenceKind

WORKER_MEMORY_BYTES = 2 * 1024**3
"""The worker's address-space cap (the interpreter and its parsers take about 300 MB of it)."""
POOL_SIZE = 2
"""Workers at most: one for the indexer and one for the preview, so neither waits long."""
STARTUP_SECONDS = 20.0
"""How long a new worker may take to import its parsers and say it is ready."""
MAX_ANSWER_BYTES = 512 * 1024**2
CANCEL_POLL_SECONDS = 0.1
"""How often a wait for the worker looks at its caller's cancel event."""
_READY = b"ready\n"


class CancelFlag(Protocol):
    """What says a caller gave up: a :class:`threading.Event`, or a front end's worker."""

    def is_set(self) -> bool: ...


class WorkerUnavailable(ExplorerError):
    """The extraction worker could not be started (an environment problem, not a file's)."""


class ExtractionCancelled(ExplorerError):
    """The caller gave up waiting (its cancel event was set): nothing is known of the file."""

    def __init__(self) -> None:
        super().__init__("extraction cancelled")


class ExtractionWorker:
    """One worker process, started on first use and again after it is killed or dies."""

    def __init__(self, memory_bytes: int = WORKER_MEMORY_BYTES) -> None:
        self.memory_bytes = memory_bytes
        self._process: subprocess.Popen[bytes] | None = None
        self.starts = 0
        """How many processes this worker started (a restart after a kill counts)."""

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def extract(
        self,
        fmt: DocumentFormat,
        data: bytes,
        rel_path: str,
        limits: Limits,
        cancel: CancelFlag | None = None,
    ) -> Document:
        """The document of ``data`` (the file ``rel_path`` of format ``fmt``), read in the
        worker; raises :class:`FileRefused` with the reason when it cannot be read in time,
        within the memory cap, or at all, and :class:`ExtractionCancelled` (the worker
        stopped) as soon as ``cancel`` is set."""
        seconds = limits.seconds or 30.0
        header = {
            "format": fmt.name,
            "rel_path": rel_path,
            "size": len(data),
            "limits": {
                "max_bytes": limits.max_bytes,
                "seconds": seconds,
                "max_pages": limits.max_pages,
                "max_chars": limits.max_chars,
            },
        }
        process = self._started()
        try:
            _send(process, json.dumps(header).encode("utf-8") + b"\n", data)
            answer = self._answer(process, seconds, fmt, cancel)
        except BaseException:
            self.stop()
            raise
        if answer.get("exit"):  # the worker ran out of memory and leaves: start afresh
            self.stop()
        return _document_from_answer(answer, fmt)

    def stop(self) -> None:
        """Kill the process (a new one starts with the next request)."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()

    def _started(self) -> subprocess.Popen[bytes]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self.stop()
        command = [
            sys.executable,
            "-m",
            "explorer.core.ingest.formats.worker",
            str(self.memory_bytes),
        ]
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
                start_new_session=True,  # Ctrl-C in the terminal is the parent's to handle
            )
        except OSError as error:
            raise WorkerUnavailable(f"cannot start the document reader: {error}") from None
        self._process = process
        self.starts += 1
        assert process.stdout is not None
        line = _read_line(process.stdout, time.monotonic() + STARTUP_SECONDS, len(_READY))
        if line != _READY:
            self.stop()
            raise WorkerUnavailable(
                "the document reader did not start (see `python -m "
                "explorer.core.ingest.formats.worker`)"
            )
        return process

    def _answer(
        self,
        process: subprocess.Popen[bytes],
        seconds: float,
        fmt: DocumentFormat,
        cancel: CancelFlag | None,
    ) -> dict[str, Any]:
        assert process.stdout is not None
        deadline = time.monotonic() + seconds
        line = _read_line(process.stdout, deadline, MAX_ANSWER_BYTES, cancel)
        if cancel is not None and cancel.is_set() and line is None:
            raise ExtractionCancelled  # the caller stops the worker
        if line is None:  # out of time: the worker is stuck in a parser
            self.stop()
            raise FileRefused(SkipReason.UNREADABLE, f"took longer than {seconds:g} s to read")
        if not line.endswith(b"\n"):  # the worker died (or sent too much)
            code = process.wait() if len(line) < MAX_ANSWER_BYTES else None
            self.stop()
            raise FileRefused(SkipReason.UNREADABLE, _death(code, fmt, self.memory_bytes))
        try:
            answer = json.loads(line)
        except ValueError:
            self.stop()
            raise FileRefused(
                SkipReason.UNREADABLE, f"the {fmt.name} reader gave no answer"
            ) from None
        if not isinstance(answer, dict):
            self.stop()
            raise FileRefused(SkipReason.UNREADABLE, f"the {fmt.name} reader gave no answer")
        return answer


def _send(process: subprocess.Popen[bytes], header: bytes, data: bytes) -> None:
    stream = process.stdin
    assert stream is not None
    try:
        stream.write(header)
        stream.write(data)
        stream.flush()
    except (BrokenPipeError, OSError):
        pass  # the worker died: reading its answer says how


def _read_line(
    stream: IO[bytes], deadline: float, most: int, cancel: CancelFlag | None = None
) -> bytes | None:
    """Bytes up to and including the first newline; what came before end of file (no newline)
    when the stream ends first or ``most`` bytes came without one; None past ``deadline`` or
    once ``cancel`` is set (looked at every :data:`CANCEL_POLL_SECONDS`)."""
    descriptor = stream.fileno()
    parts: list[bytes] = []
    size = 0
    with selectors.DefaultSelector() as selector:
        selector.register(descriptor, selectors.EVENT_READ)
        while True:
            if cancel is not None and cancel.is_set():
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if not selector.select(min(remaining, CANCEL_POLL_SECONDS)):
                continue
            part = os.read(descriptor, 1 << 20)
            if not part:
                return b"".join(parts)
            parts.append(part)
            size += len(part)
            if part.endswith(b"\n") or size >= most:
                return b"".join(parts)


def _death(code: int | None, fmt: DocumentFormat, memory_bytes: int) -> str:
    """Why the worker died, in a user's words."""
    if code is None:
        return f"the {fmt.name} reader's answer was too large"
    if code == -signal.SIGXCPU:
        return "took too much CPU time to read"
    if code in (-signal.SIGSEGV, -signal.SIGABRT, -signal.SIGBUS):
        return f"the {fmt.name} reader crashed on it (likely out of its {memory_bytes // 2**20} MB)"
    if code < 0:
        return f"the {fmt.name} reader was killed ({signal.Signals(-code).name})"
    return f"the {fmt.name} reader stopped (exit status {code})"


def _document_from_answer(answer: Mapping[str, Any], fmt: DocumentFormat) -> Document:
    if answer.get("ok") is not True:
        reason, detail = answer.get("reason"), answer.get("detail")
        kind = SkipReason(reason) if reason in set(SkipReason) else SkipReason.UNREADABLE
        raise FileRefused(kind, str(detail or f"the {fmt.name} reader failed")[:500])
    try:
        return decode_document(answer["document"])
    except (KeyError, TypeError, ValueError) as error:
        raise FileRefused(
            SkipReason.UNREADABLE, f"the {fmt.name} reader's answer is invalid ({error})"
        ) from None


# -- the document on the wire --------------------------------------------------------------------
def encode_document(document: Document) -> dict[str, Any]:
    """A document as JSON-ready values (the worker's answer)."""
    return {
        "text": document.text,
        "metadata": dict(document.metadata),
        "notes": list(document.notes),
        "body_start": document.body_start,
        "fence_end": document.fence_end,
        "headings": None
        if document.headings is None
        else [[h.start, h.level, h.title, h.end] for h in document.headings],
        "pages": [[page.start, page.end] for page in document.pages],
        "entries": [[h.start, h.level, h.title, h.end] for h in document.entries],
        "references": None
        if document.references is None
        else [
            [r.line, str(r.kind), r.raw, r.target, r.alternative, str(r.syntax)]
            for r in document.references
        ],
    }


def decode_document(data: Any) -> Document:
    """The document of a worker's answer; ValueError or TypeError when it is malformed."""
    if not isinstance(data, dict):
        raise TypeError("not an object")
    text = data["text"]
    if not isinstance(text, str):
        raise TypeError("text is not a string")
    size = len(text)

    def offset(value: Any) -> int:
        if not isinstance(value, int) or not 0 <= value <= size:
            raise ValueError(f"offset {value!r} outside the text")
        return value

    headings = None
    if data["headings"] is not None:
        headings = tuple(
            Heading(offset(start), int(level), str(title), offset(end))
            for start, level, title, end in data["headings"]
        )
    references = None
    if data["references"] is not None:
        references = tuple(
            FileReference(
                int(line),
                ReferenceKind(kind),
                str(raw),
                str(target),
                str(other),
                LinkSyntax(syntax),
            )
            for line, kind, raw, target, other, syntax in data["references"]
        )
    pages = tuple(Page(offset(start), offset(end)) for start, end in data["pages"])
    entries = tuple(
        Heading(offset(start), int(level), str(title), offset(end))
        for start, level, title, end in data.get("entries", ())
    )
    return Document(
        text,
        metadata=_metadata(data["metadata"]),
        notes=tuple(str(note) for note in data["notes"]),
        body_start=offset(data["body_start"]),
        fence_end=offset(data["fence_end"]),
        headings=headings,
        pages=pages,
        references=references,
        entries=entries,
    )


def _metadata(data: Any) -> FileMetadata:
    if not isinstance(data, dict):
        raise TypeError("metadata is not an object")
    metadata = FileMetadata()
    for key in ("title", "description", "version", "notes"):
        value = data.get(key)
        if isinstance(value, str):
            metadata[key] = value
    tags = data.get("tags")
    if isinstance(tags, list):
        metadata["tags"] = [str(tag) for tag in tags]
    return metadata


# -- the pool ------------------------------------------------------------------------------------
class ExtractionPool:
    """Up to :data:`POOL_SIZE` workers shared by the threads of a process."""

    def __init__(self, size: int = POOL_SIZE, memory_bytes: int = WORKER_MEMORY_BYTES) -> None:
        self.size = size
        self.memory_bytes = memory_bytes
        self._idle: list[ExtractionWorker] = []
        self._all: list[ExtractionWorker] = []
        self._available = threading.Condition()

    def extract(
        self,
        fmt: DocumentFormat,
        data: bytes,
        rel_path: str,
        limits: Limits,
        cancel: CancelFlag | None = None,
    ) -> Document:
        """The document of ``data``, read by an idle worker (waiting for one if need be);
        see :meth:`ExtractionWorker.extract`."""
        worker = self._acquire()
        try:
            return worker.extract(fmt, data, rel_path, limits, cancel)
        finally:
            with self._available:
                self._idle.append(worker)
                self._available.notify()

    def workers(self) -> list[ExtractionWorker]:
        with self._available:
            return list(self._all)

    def close(self) -> None:
        """Stop every worker (those busy stop when their request ends or times out)."""
        with self._available:
            workers = list(self._all)
        for worker in workers:
            worker.stop()

    def _acquire(self) -> ExtractionWorker:
        with self._available:
            while not self._idle and len(self._all) >= self.size:
                self._available.wait()
            if self._idle:
                return self._idle.pop()
            worker = ExtractionWorker(self.memory_bytes)
            self._all.append(worker)
            return worker


_shared: ExtractionPool | None = None
_shared_lock = threading.Lock()


def shared_pool() -> ExtractionPool:
    """The process's pool of extraction workers (stopped when the process exits)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ExtractionPool()
            atexit.register(_shared.close)
        return _shared
