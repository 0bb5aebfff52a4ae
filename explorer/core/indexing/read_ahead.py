"""Reading the next files of a sync while the indexer chunks and writes the current one.

The keyword phase does three things per file: read it (and, for an extracted format such as
HTML, PDF, DOCX or a notebook, have the extraction worker parse it in its own process), cut it
into chunks, and write the chunks. One after the other, the worker waits while the indexer
chunks and writes, and the indexer waits while the worker parses: on a tree of HTML pages the
two halves are about equal. :class:`ReadAhead` reads files, and has the worker parse the
extracted ones, up to :data:`AHEAD` files ahead on a thread of its own, so the halves overlap.

Only reading and parsing happen ahead; deciding and writing stay on the indexer's thread, in the
same order as before, and a file is parsed ahead only when its bytes differ from the index's
(an unchanged file is never sent to the worker). Text formats are parsed where they always were,
on the indexer's thread: parsing them is Python work that a second thread would only slow down
by sharing the interpreter's lock.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from explorer.core.ingest.documents import ScannedFile
from explorer.core.ingest.formats.contract import Document
from explorer.core.ingest.formats.reading import SourceFile, load_source
from explorer.core.store.manifest_records import FileRecord

AHEAD = 4
"""Files read (and parsed) ahead of the one the indexer works on: enough to keep the worker busy
while a long file is chunked, few enough that what is held stays small."""


@dataclass(frozen=True)
class Reading:
    """A file as read ahead: what :func:`load_source` gave, and its document when it was parsed
    ahead (or what parsing it raised)."""

    loaded: SourceFile | tuple[str, str]
    parsed: Document | None = None
    error: Exception | None = None

    def document(self, cancel: threading.Event | None) -> Document:
        """The file's document: parsed ahead, or parsed now (a text format); raises what parsing
        raised, as :meth:`SourceFile.document` would have."""
        if self.error is not None:
            raise self.error
        if self.parsed is not None:
            return self.parsed
        assert isinstance(self.loaded, SourceFile)
        return self.loaded.document(cancel=cancel)


class ReadAhead:
    """Reads the files a sync will update, a few ahead of it, on one thread of its own.

    ``needs_reading(file, record)``: whether the indexer will read the file at all (its size or
    time changed, say); ``same_content(source, record)``: whether the bytes read are those the
    index holds already (then the file is not parsed).
    """

    def __init__(
        self,
        max_file_bytes: int,
        needs_reading: Callable[[ScannedFile, FileRecord | None], bool],
        same_content: Callable[[SourceFile, FileRecord | None], bool],
        cancel: threading.Event | None = None,
        ahead: int = AHEAD,
    ) -> None:
        self._max_file_bytes = max_file_bytes
        self._needs_reading = needs_reading
        self._same_content = same_content
        self._cancel = cancel
        self._ahead = max(1, ahead)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="explorer-read-ahead")

    def __enter__(self) -> ReadAhead:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Drop what was not read yet; wait for the file being read (a cancelled extraction
        stops within a tenth of a second)."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def readings(
        self, files: Iterable[tuple[ScannedFile, FileRecord | None]]
    ) -> Iterator[tuple[ScannedFile, FileRecord | None, Reading | None]]:
        """``files`` in their order, each with its :class:`Reading` (None: the indexer need not
        read it). Reading runs ahead of the consumer by up to ``ahead`` files."""
        waiting: deque[tuple[ScannedFile, FileRecord | None, Future[Reading] | None]] = deque()
        # How many of ``waiting`` are being read: counted, not looked for (a tree of thousands
        # of unchanged files queues them all between two reads).
        reading = 0
        pending = iter(files)
        exhausted = False
        while True:
            while not exhausted and reading <= self._ahead:
                try:
                    scanned, record = next(pending)
                except StopIteration:
                    exhausted = True
                    break
                future = None
                if self._needs_reading(scanned, record):
                    future = self._pool.submit(self._read, scanned, record)
                    reading += 1
                waiting.append((scanned, record, future))
            if not waiting:
                return
            scanned, record, future = waiting.popleft()
            if future is None:
                yield scanned, record, None
            else:
                reading -= 1
                yield scanned, record, future.result()

    def _read(self, scanned: ScannedFile, record: FileRecord | None) -> Reading:
        loaded = load_source(scanned.abs_path, scanned.rel_path, self._max_file_bytes)
        if (
            isinstance(loaded, tuple)
            or loaded.data is None  # a text format: parsed on the indexer's thread
            or self._same_content(loaded, record)
        ):
            return Reading(loaded)
        try:
            return Reading(loaded, parsed=loaded.document(cancel=self._cancel))
        except Exception as error:  # noqa: BLE001 - re-raised on the indexer's thread
            return Reading(loaded, error=error)
