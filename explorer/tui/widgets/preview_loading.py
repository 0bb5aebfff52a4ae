"""Reading a file for the preview (on a worker thread): the core's preview document made
Textual content, and the choice between the Markdown widget, highlighted code and plain text.

The core (:mod:`explorer.core.ingest.formats.preview`) opens only regular files (a named pipe
would block the worker, and with it quitting), never more than :data:`MAX_PREVIEW_BYTES` of
text, decodes it by its byte-order mark as the index does, and extracts PDFs, HTML, DOCX and
notebooks in the extraction worker process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

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

MARKDOWN_WIDGET_LIMIT = 60_000
"""Longest Markdown (characters) rendered as a document; longer files are shown as source."""
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
    lines: list[Content] = field(default_factory=list)
    line_offset: int = 0
    """Lines of the file before ``text`` (Markdown front matter left out of the render)."""
    width: int = 0
    note: str = ""
    document: PreviewDocument | None = None
    """The core's document: its pages and outline (its text is in :attr:`text` or
    :attr:`lines`)."""


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
    if document.kind == PreviewKind.MARKDOWN and len(text) <= MARKDOWN_WIDGET_LIMIT:
        end = document.body_start
        offset = text.count("\n", 0, end)
        shown = display_markdown(text[end:])
        return LoadedFile(path, "markdown", text=shown, line_offset=offset, note=note)
    language = "markdown" if document.kind == PreviewKind.MARKDOWN else document.language
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
