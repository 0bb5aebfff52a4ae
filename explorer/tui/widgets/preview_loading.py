"""Reading a file for the preview (on a worker thread): the core's preview document made
Textual content, and the choice between the Markdown widget, highlighted code and plain text.

The core (:mod:`explorer.core.ingest.formats.preview`) opens only regular files (a named pipe
would block the worker, and with it quitting), never more than :data:`MAX_PREVIEW_BYTES` of
text, decodes it by its byte-order mark as the index does, and extracts PDFs, HTML, DOCX and
notebooks in the extraction worker process.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.content import Content
from textual.worker import NoActiveWorker, Worker, get_current_worker

from explorer.core.ingest.formats import PreviewKind
from explorer.core.ingest.formats.contract import PLAIN_SUFFIXES
from explorer.core.ingest.formats.markdown import MarkdownFormat
from explorer.core.ingest.formats.preview import (
    MAX_PREVIEW_BYTES,
    PreviewDocument,
    preview_document,
)
from explorer.core.ingest.formats.preview_markup import display_markdown
from explorer.tui.widgets.syntax_highlight import highlight_lines

MARKDOWN_WIDGET_LIMIT = 20_000
"""Longest Markdown (characters) rendered as a document by Textual's widget (a widget per
block: on a long page every zoom and resize re-lays thousands of them, seconds); longer files
are shown as their source, highlighted, in the text view, which draws only the rows on screen."""
MARKDOWN_WIDGET_LINES = 400
"""Most lines of Markdown rendered by the widget (see :data:`MARKDOWN_WIDGET_LIMIT`)."""
KEPT_FILES = 8
"""Files read for the preview kept in memory (back and forward show them again at once)."""
HIGHLIGHT_LATER_BYTES = 48_000
"""Larger files show plain first and are coloured by the worker afterwards."""
MARKDOWN_SUFFIXES = frozenset(f".{ext}" for ext in MarkdownFormat.extensions)
__all__ = ["MARKDOWN_SUFFIXES", "MAX_PREVIEW_BYTES", "PLAIN_SUFFIXES", "LoadedFile", "load_file"]


@dataclass
class LoadedFile:
    """What the loading worker hands back to the UI thread."""

    path: str
    kind: str
    """``markdown`` (the widget), ``code``, ``text``, or ``message`` (nothing to show)."""
    text: str = ""
    """Markdown: its source (rendered by the widget, or line for line in :attr:`lines`)."""
    lines: list[Content] = field(default_factory=list)
    line_offset: int = 0
    """Lines of the file before ``text`` (Markdown front matter left out of the render)."""
    width: int = 0
    note: str = ""
    document: PreviewDocument | None = None
    """The core's document: its pages and outline (its text is in :attr:`text` or
    :attr:`lines`)."""
    headings: list[Any] | None = None
    """The preview's headings of the file, worked out the first time its outline is asked
    and kept with the file (a long page's take tens of milliseconds to parse)."""


class _WorkerCancelled:
    """The running Textual worker's cancellation (another file opened, the app quitting), as
    the core's cancel flag: a document's extraction stops with it instead of making the app
    wait for its time cap."""

    def __init__(self) -> None:
        try:
            self._worker: Worker[object] | None = get_current_worker()
        except NoActiveWorker:  # called outside a worker (tests, a direct call)
            self._worker = None

    def is_set(self) -> bool:
        return self._worker is not None and self._worker.is_cancelled


def load_file(path: str, absolute: Path, highlight: bool = True) -> LoadedFile:
    """Read and prepare a file for the preview (runs on a worker thread).

    The core reads the file (:func:`~explorer.core.ingest.formats.preview.preview_document`: a
    PDF's or an HTML page's text is extracted as the index extracts it, so lines agree); this
    makes it Textual content. With ``highlight=False`` code comes back as plain lines (fast);
    call again to colour it.
    """
    document = preview_document(path, absolute, MAX_PREVIEW_BYTES, cancel=_WorkerCancelled())
    note = document.note
    if document.kind == PreviewKind.MESSAGE:
        return LoadedFile(path, "message", note=note)
    text = document.text
    if (
        document.kind == PreviewKind.MARKDOWN
        and len(text) <= MARKDOWN_WIDGET_LIMIT
        and text.count("\n") < MARKDOWN_WIDGET_LINES
    ):
        end = document.body_start
        offset = text.count("\n", 0, end)
        shown = display_markdown(text[end:])
        return LoadedFile(path, "markdown", text=shown, line_offset=offset, note=note)
    if document.kind == PreviewKind.MARKDOWN:
        lines = _markdown_lines(text.expandtabs(4), document.body_start)
        width = max((line.cell_length for line in lines), default=0)
        return LoadedFile(
            path, "code", text=text, lines=lines, width=width, note=note, document=document
        )
    language = document.language
    if language is None or not highlight:
        lines = [Content(line.expandtabs(4)) for line in text.split("\n")]
        kind = "text" if language is None else "code"
    else:
        lines = highlight_lines(text.expandtabs(4), language)
        kind = "code"
    if lines and not lines[-1].plain and text.endswith("\n"):
        lines.pop()
    width = max((line.cell_length for line in lines), default=0)
    return LoadedFile(path, kind, lines=lines, width=width, note=note, document=document)


def _markdown_lines(text: str, body_start: int) -> list[Content]:
    """A long Markdown page rendered line for line (its front matter dimmed), for the text
    view: see :mod:`explorer.tui.widgets.markdown_lines`."""
    from explorer.tui.widgets.markdown_lines import markdown_lines

    front = [Content.styled(line, "dim") for line in text[:body_start].split("\n")[:-1]]
    body = display_markdown(text[body_start:], rendered=False)
    lines = front + markdown_lines(body)
    if lines and not lines[-1].plain and text.endswith("\n"):
        lines.pop()
    return lines


class LoadedFiles:
    """The last :data:`KEPT_FILES` files read, by path, modification time and size: a file
    opened again unchanged (back, forward, a result of the same file) is not read, extracted
    or highlighted again. Safe to use from the loading threads."""

    def __init__(self, size: int = KEPT_FILES) -> None:
        self._size = size
        self._files: OrderedDict[tuple[str, int, int], LoadedFile] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(absolute: Path) -> tuple[str, int, int] | None:
        """What identifies the file's content: its path, mtime and size (None: unreadable)."""
        try:
            stat = absolute.stat()
        except OSError:
            return None
        return str(absolute), stat.st_mtime_ns, stat.st_size

    def get(self, key: tuple[str, int, int] | None) -> LoadedFile | None:
        if key is None:
            return None
        with self._lock:
            found = self._files.get(key)
            if found is not None:
                self._files.move_to_end(key)
            return found

    def put(self, key: tuple[str, int, int] | None, loaded: LoadedFile) -> None:
        """Keep ``loaded`` (a message, such as a read failure, is not kept)."""
        if key is None or loaded.kind == "message":
            return
        with self._lock:
            self._files[key] = loaded
            self._files.move_to_end(key)
            while len(self._files) > self._size:
                self._files.popitem(last=False)
