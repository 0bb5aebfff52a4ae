"""The preview: a file rendered (Markdown), highlighted (code) or as is (text), at a passage.

Files are read and highlighted on a thread worker, so a 200 KB file never freezes the UI.
Markdown up to :data:`MARKDOWN_WIDGET_LIMIT` characters is rendered by Textual's ``Markdown``
widget; longer Markdown, code and plain text go to :class:`TextView`, which draws only the lines
on screen. Either way the preview can scroll to a line range and mark it; ``n`` and ``N`` step
through the passages of a search hit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from rich.segment import Segment
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.cache import LRUCache
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual
from textual.widgets import Static
from textual.worker import get_current_worker

MARKDOWN_WIDGET_LIMIT = 60_000
"""Longest Markdown (characters) rendered as a document; longer files are shown as source."""
MAX_PREVIEW_BYTES = 8_000_000
"""Read at most this much of a file."""
MAX_HIGHLIGHT_CHARS = 1_000_000
"""Only this much of a file is syntax-highlighted; the rest is shown plain."""
HIGHLIGHT_LATER_BYTES = 48_000
"""Larger files show plain first and are coloured by the worker afterwards."""
MARKDOWN_SUFFIXES = {".md", ".markdown", ".mdown", ".mkd"}
PLAIN_SUFFIXES = {".txt", ".text", ".log", ".csv", ".tsv", ""}
FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n.*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)


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
        with absolute.open("rb") as handle:
            data = handle.read(MAX_PREVIEW_BYTES + 1)
    except FileNotFoundError:
        return LoadedFile(path, "message", note="This file no longer exists.")
    except OSError as error:
        return LoadedFile(path, "message", note=f"Cannot read this file: {error.strerror}")
    truncated = len(data) > MAX_PREVIEW_BYTES
    data = data[:MAX_PREVIEW_BYTES]
    if b"\0" in data[:8192]:
        return LoadedFile(path, "message", note="Binary file: nothing to preview.")
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    note = "truncated: the file is larger than the preview shows" if truncated else ""
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in MARKDOWN_SUFFIXES and len(text) <= MARKDOWN_WIDGET_LIMIT:
        offset = 0
        match = FRONT_MATTER.match(text)
        if match:
            offset = text.count("\n", 0, match.end())
            text = text[match.end() :]
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


def highlight_lines(text: str, language: str) -> list[Content]:
    """``text`` split in lines, coloured by Pygments with the theme's variables.

    Builds one small Content per line straight from the token stream (much cheaper than
    highlighting the whole text as one Content and splitting it). Past
    :data:`MAX_HIGHLIGHT_CHARS` the lines are left plain.
    """
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound
    from textual.content import Span
    from textual.highlight import HighlightTheme

    head, tail = text[:MAX_HIGHLIGHT_CHARS], text[MAX_HIGHLIGHT_CHARS:]
    if tail:
        cut = head.rfind("\n") + 1
        head, tail = head[:cut], head[cut:] + tail
    try:
        lexer = get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return [Content(line) for line in text.split("\n")]
    styles = HighlightTheme.STYLES
    resolved: dict = {}

    def style_of(token_type) -> str:
        found = resolved.get(token_type)
        if found is None:
            kind = token_type
            found = ""
            while kind is not None:
                if kind in styles:
                    found = styles[kind]
                    break
                kind = kind.parent
            resolved[token_type] = found
        return found

    lines: list[Content] = []
    parts: list[str] = []
    spans: list[Span] = []
    position = 0
    for token_type, value in lexer.get_tokens(head):
        style = style_of(token_type)
        pieces = value.split("\n")
        for number, piece in enumerate(pieces):
            if number:
                lines.append(Content("".join(parts), spans))
                parts, spans, position = [], [], 0
            if piece:
                if style:
                    spans.append(Span(position, position + len(piece), style))
                parts.append(piece)
                position += len(piece)
    if parts or not lines:
        lines.append(Content("".join(parts), spans))
    if tail:
        if not lines[-1].plain:
            lines.pop()
        lines.extend(Content(line) for line in tail.split("\n"))
    return lines


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


class TextView(ScrollView, can_focus=True):
    """Lines of text with line numbers; draws only what is on screen; marks a line range."""

    COMPONENT_CLASSES = {
        "text-view--gutter",
        "text-view--passage",
        "text-view--passage-gutter",
    }

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._lines: list[Content] = []
        self._passage: tuple[int, int] | None = None
        self._gutter = 2
        self._cache: LRUCache[tuple, Strip] = LRUCache(1024)

    @property
    def line_count(self) -> int:
        return len(self._lines)

    def set_lines(self, lines: list[Content], width: int) -> None:
        """Show ``lines`` (line 1 first)."""
        self._lines = lines
        self._passage = None
        self._gutter = len(str(max(1, len(lines)))) + 1
        self._cache.clear()
        self.virtual_size = Size(width + self._gutter + 1, len(lines))
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()

    def replace_lines(self, lines: list[Content]) -> None:
        """Swap in the same lines, restyled (keeps the scroll position and the mark)."""
        if len(lines) == len(self._lines):
            self._lines = lines
            self._cache.clear()
            self.refresh()

    def set_passage(self, passage: tuple[int, int] | None) -> None:
        """Mark lines ``start..end`` (1-based, inclusive), or nothing."""
        self._passage = passage
        self._cache.clear()
        self.refresh()

    def scroll_to_line(self, line: int) -> None:
        """Scroll so that 1-based ``line`` is a few lines below the top."""
        self.scroll_to(y=max(0, line - 1 - 3), animate=False, immediate=True)

    @property
    def top_line(self) -> int:
        """The 1-based line at the top of the view."""
        return int(self.scroll_offset.y) + 1

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        if index >= len(self._lines):
            return Strip.blank(width, self.rich_style)
        number = index + 1
        marked = self._passage is not None and self._passage[0] <= number <= self._passage[1]
        key = (index, scroll_x, width, marked)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        gutter_class = "text-view--passage-gutter" if marked else "text-view--gutter"
        gutter = Strip(
            [
                Segment(
                    f"{number:>{self._gutter - 1}} ",
                    self.get_component_rich_style(gutter_class),
                )
            ]
        )
        style = self.get_visual_style("text-view--passage") if marked else self.get_visual_style()
        content = self._lines[index]
        text_width = max(1, width - self._gutter)
        render_width = max(1, min(content.cell_length, scroll_x + text_width))
        strips = Visual.to_strips(self, content, render_width, 1, style, apply_selection=False)
        body = strips[0] if strips else Strip([])
        body = body.crop(scroll_x, scroll_x + text_width).extend_cell_length(
            text_width, style.rich_style
        )
        strip = Strip.join([gutter, body])
        self._cache[key] = strip
        return strip


class Preview(Vertical):
    """The open file. ``open_file`` loads it on a worker and scrolls to the passage."""

    BORDER_TITLE = "Preview"
    BINDINGS = [
        Binding("n", "next_passage", "Next passage", show=False),
        Binding("N", "previous_passage", "Previous passage", show=False),
    ]

    @dataclass
    class LinkOpened(Message):
        """A link to another file of the root was followed (``path`` root-relative)."""

        preview: Preview
        path: str

    class FileLoaded(Message, bubble=False):
        """A loading worker finished (posted by the preview to itself)."""

        def __init__(self, token: int, loaded: LoadedFile, recolour: bool = False) -> None:
            super().__init__()
            self.token = token
            self.loaded = loaded
            self.recolour = recolour

    @dataclass
    class Shown(Message):
        """A file is on screen (and at its passage)."""

        preview: Preview
        path: str

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.path: str | None = None
        """The root-relative path of the file shown (or being loaded)."""
        self.kind: str = "message"
        self.passages: list[tuple[int, int]] = []
        """Line ranges (1-based, inclusive) of the passages to step through."""
        self.passage_index = 0
        self.loaded = False
        """True once the file of :attr:`path` is on screen."""
        self._line_offset = 0
        self._token = 0
        self._focus_when_loaded = False

    def compose(self) -> ComposeResult:
        yield Static(
            "Open a file from the tree, the results or the related list.", id="preview-message"
        )
        yield VerticalScroll(id="preview-markdown")
        yield TextView(id="preview-text")

    def on_mount(self) -> None:
        self._show("message")

    # -- public API ---------------------------------------------------------------------------
    @property
    def passage(self) -> tuple[int, int] | None:
        """The marked line range, if any."""
        if not self.passages:
            return None
        return self.passages[self.passage_index]

    def open_file(
        self,
        path: str,
        absolute: Path,
        passages: list[tuple[int, int]] | None = None,
        index: int = 0,
    ) -> None:
        """Show ``path`` and mark ``passages[index]``; the file loads on a worker."""
        self._token += 1
        self._focus_when_loaded = False
        self.path = path
        self.passages = list(passages or [])
        self.passage_index = min(index, max(0, len(self.passages) - 1))
        self.loaded = False
        self.border_title = path
        self.border_subtitle = "loading…"
        self._load(self._token, path, absolute)

    def reload(self, absolute: Path) -> None:
        """Read the open file again (it changed on disk), keeping the passage."""
        if self.path is not None:
            self.open_file(self.path, absolute, self.passages, self.passage_index)

    def clear(self, text: str) -> None:
        self._token += 1
        self.path = None
        self.passages = []
        self.loaded = False
        self.border_title = "Preview"
        self.border_subtitle = ""
        self.query_one("#preview-message", Static).update(text)
        self._show("message")

    def focus_content(self) -> None:
        """Focus the scrolling part (once the file being loaded is on screen)."""
        if not self.loaded and self.path is not None:
            self._focus_when_loaded = True
            return
        if self.kind == "markdown":
            self.query_one("#preview-markdown").focus()
        elif self.kind in ("code", "text"):
            self.query_one(TextView).focus()

    def passage_visible(self) -> bool:
        """True when the marked passage is inside the visible part of the preview."""
        passage = self.passage
        if passage is None or not self.loaded:
            return False
        if self.kind == "markdown":
            scroller = self.query_one("#preview-markdown", VerticalScroll)
            blocks = self.marked_blocks()
            if not blocks:
                return False
            visible = scroller.content_region
            return any(block.region.overlaps(visible) for block in blocks)
        view = self.query_one(TextView)
        top = view.top_line
        bottom = top + view.scrollable_content_region.height - 1
        return passage[0] <= bottom and passage[1] >= top

    def marked_blocks(self) -> list[Any]:
        markdown = self._markdown()
        return list(markdown.query(".-passage")) if markdown is not None else []

    def _markdown(self) -> Any:
        """The Markdown widget, or None before the first Markdown file."""
        scroller = self.query_one("#preview-markdown", VerticalScroll)
        return scroller.children[0] if scroller.children else None

    async def _ensure_markdown(self) -> Any:
        """The Markdown widget, made on first use (its parser is slow to import)."""
        markdown = self._markdown()
        if markdown is None:
            from textual.widgets import Markdown

            markdown = Markdown(id="markdown", open_links=False)
            await self.query_one("#preview-markdown", VerticalScroll).mount(markdown)
        return markdown

    def action_next_passage(self) -> None:
        self._step(1)

    def action_previous_passage(self) -> None:
        self._step(-1)

    # -- loading ------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="preview", exit_on_error=False)
    def _load(self, token: int, path: str, absolute: Path) -> None:
        worker = get_current_worker()
        try:
            large = absolute.stat().st_size > HIGHLIGHT_LATER_BYTES
        except OSError:
            large = False
        loaded = load_file(path, absolute, highlight=not large)
        if worker.is_cancelled:
            return
        self.post_message(self.FileLoaded(token, loaded))
        if large and loaded.kind == "code":
            # Shown plain at once; the colours follow when the lexer is done.
            coloured = load_file(path, absolute)
            if not worker.is_cancelled and len(coloured.lines) == len(loaded.lines):
                self.post_message(self.FileLoaded(token, coloured, recolour=True))

    async def on_preview_file_loaded(self, message: FileLoaded) -> None:
        token, loaded = message.token, message.loaded
        if token != self._token:
            return
        if message.recolour:
            self.query_one(TextView).replace_lines(loaded.lines)
            return
        self.kind = loaded.kind
        if loaded.kind == "message":
            self.query_one("#preview-message", Static).update(loaded.note)
            self._show("message")
            self.border_subtitle = ""
            self.loaded = True
            self.post_message(self.Shown(self, loaded.path))
            return
        if loaded.kind == "markdown":
            self._line_offset = loaded.line_offset
            markdown = await self._ensure_markdown()
            self._show("markdown")
            await markdown.update(loaded.text)
            if token != self._token:
                return
            self.query_one("#preview-markdown", VerticalScroll).scroll_home(
                animate=False, immediate=True
            )
        else:
            view = self.query_one(TextView)
            view.set_lines(loaded.lines, loaded.width)
            self._show("text")
        self.call_after_refresh(self._arrive, token, loaded.note)

    def _arrive(self, token: int, note: str, tries: int = 0) -> None:
        if token != self._token:
            return
        target = self.query_one("#preview-markdown" if self.kind == "markdown" else "#preview-text")
        if not target.size.height and tries < 10:
            # Just made visible: wait for the layout to give it a size before scrolling.
            self.call_after_refresh(self._arrive, token, note, tries + 1)
            return
        self._mark()
        self.loaded = True
        self._subtitle(note)
        if self._focus_when_loaded:
            self._focus_when_loaded = False
            self.focus_content()
        if self.path is not None:
            self.post_message(self.Shown(self, self.path))

    # -- passages -----------------------------------------------------------------------------
    def _step(self, delta: int) -> None:
        if not self.passages or not self.loaded:
            return
        self.passage_index = (self.passage_index + delta) % len(self.passages)
        self._mark()
        self._subtitle("")

    def _mark(self) -> None:
        passage = self.passage
        if self.kind == "markdown":
            markdown = self._markdown()
            if markdown is None:
                return
            for block in markdown.query(".-passage"):
                block.remove_class("-passage")
            if passage is None:
                return
            start = passage[0] - 1 - self._line_offset
            end = passage[1] - self._line_offset
            first = None
            for block in markdown.children:
                source = getattr(block, "source_range", None)
                if source is None:
                    continue
                if source[0] < end and source[1] > start:
                    block.add_class("-passage")
                    first = first or block
            if first is not None:
                scroller = self.query_one("#preview-markdown", VerticalScroll)
                scroller.scroll_to_widget(first, animate=False, top=True, immediate=True)
        elif self.kind in ("code", "text"):
            view = self.query_one(TextView)
            view.set_passage(passage)
            if passage is not None:
                view.scroll_to_line(passage[0])

    def _subtitle(self, note: str) -> None:
        parts = []
        passage = self.passage
        if passage is not None:
            span = f"L{passage[0]}" if passage[0] == passage[1] else f"L{passage[0]}–{passage[1]}"
            parts.append(span)
            if len(self.passages) > 1:
                parts.append(f"{self.passage_index + 1}/{len(self.passages)} (n/N)")
        if self.kind in ("code", "text"):
            parts.append(f"{self.query_one(TextView).line_count} lines")
        if note:
            parts.append(note)
        self.border_subtitle = " · ".join(parts)

    def _show(self, which: str) -> None:
        self.query_one("#preview-message").display = which == "message"
        self.query_one("#preview-markdown").display = which == "markdown"
        self.query_one("#preview-text").display = which == "text"

    def on_markdown_link_clicked(self, event: Any) -> None:
        event.stop()
        href = event.href.split("#", 1)[0]
        if not href or "://" in href or href.startswith("mailto:") or self.path is None:
            return
        base = PurePosixPath(self.path).parent
        parts: list[str] = []
        for part in (base / href).parts:
            if part == "..":
                if parts:
                    parts.pop()
            elif part not in (".", ""):
                parts.append(part)
        self.post_message(self.LinkOpened(self, "/".join(parts)))
