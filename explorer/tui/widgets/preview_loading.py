"""Reading a file for the preview (on a worker thread): size limits, binary detection, front
matter, and the choice between the Markdown widget, highlighted code and plain text.

Only regular files are opened (a named pipe would block the worker, and with it quitting), never
more than :data:`MAX_PREVIEW_BYTES`; text is decoded by its byte-order mark as the index does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from textual.content import Content

from explorer.core.ingest.file_reading import (
    BINARY_PROBE_BYTES,
    FileRefused,
    bom_encoding,
    decode_leniently,
    read_head,
)
from explorer.core.ingest.front_matter import front_matter_end
from explorer.core.safe_text import safe_text
from explorer.tui.widgets.syntax_highlight import highlight_lines

MARKDOWN_WIDGET_LIMIT = 60_000
"""Longest Markdown (characters) rendered as a document; longer files are shown as source."""
MAX_PREVIEW_BYTES = 8_000_000
"""Read at most this much of a file."""
HIGHLIGHT_LATER_BYTES = 48_000
"""Larger files show plain first and are coloured by the worker afterwards."""
MARKDOWN_SUFFIXES = {".md", ".markdown", ".mdown", ".mkd"}
PLAIN_SUFFIXES = {".txt", ".text", ".log", ".csv", ".tsv", ""}


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


def load_file(path: str, absolute: Path, highlight: bool = True) -> LoadedFile:
    """Read and prepare a file for the preview (runs on a worker thread).

    With ``highlight=False`` code comes back as plain lines (fast); call again to colour it.
    """
    try:
        data = read_head(absolute, MAX_PREVIEW_BYTES + 1)
    except FileNotFoundError:
        return LoadedFile(path, "message", note="This file no longer exists.")
    except FileRefused as refused:
        return LoadedFile(path, "message", note=f"Not a regular file ({refused.detail}).")
    except OSError as error:
        return LoadedFile(path, "message", note=f"Cannot read this file: {error.strerror}")
    truncated = len(data) > MAX_PREVIEW_BYTES
    data = data[:MAX_PREVIEW_BYTES]
    if bom_encoding(data) is None and b"\0" in data[:BINARY_PROBE_BYTES]:
        return LoadedFile(path, "message", note="Binary file: nothing to preview.")
    text = decode_leniently(data).replace("\r\n", "\n")
    # The file is untrusted: its control characters are shown escaped, its lines kept.
    text = safe_text(text, keep_lines=True)
    note = "truncated: the file is larger than the preview shows" if truncated else ""
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in MARKDOWN_SUFFIXES and len(text) <= MARKDOWN_WIDGET_LIMIT:
        end = front_matter_end(text)
        offset = text.count("\n", 0, end)
        text = text[end:]
        return LoadedFile(path, "markdown", text=text, line_offset=offset, note=note)
    language = _language(path, suffix, text)
    if language is None or not highlight:
        lines = [Content(line.expandtabs(4)) for line in text.split("\n")]
        kind = "text" if language is None else "code"
    else:
        lines = highlight_lines(text.expandtabs(4), language)
        kind = "code"
    if lines and not lines[-1].plain and text.endswith("\n"):
        lines.pop()
    width = max((line.cell_length for line in lines), default=0)
    return LoadedFile(path, kind, lines=lines, width=width, note=note)


def _language(path: str, suffix: str, text: str) -> str | None:
    """The Pygments language of a file, or None for plain text."""
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    if suffix in PLAIN_SUFFIXES:
        return None
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_for_filename(path, text[:4096])
    except ClassNotFound:
        return None
    aliases = getattr(lexer, "aliases", None) or []
    return aliases[0] if aliases and aliases[0] != "text" else None
