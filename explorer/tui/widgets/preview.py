"""The preview: a file rendered (Markdown), highlighted (code) or as is (text), at a passage.

Files are read and highlighted on a thread worker, so a 200 KB file never freezes the UI.
Markdown up to :data:`MARKDOWN_WIDGET_LIMIT` characters is rendered by Textual's ``Markdown``
widget; longer Markdown, code and plain text go to :class:`TextView`, which draws only the lines
on screen. Either way the preview can scroll to a line range and mark it; ``n`` and ``N`` step
through the passages of a search hit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Static
from textual.worker import get_current_worker

from explorer.core.safe_text import safe_name, safe_text
from explorer.tui.widgets.preview_loading import (
    HIGHLIGHT_LATER_BYTES,
    MARKDOWN_SUFFIXES,
    MARKDOWN_WIDGET_LIMIT,
    MAX_PREVIEW_BYTES,
    PLAIN_SUFFIXES,
    LoadedFile,
    load_file,
)
from explorer.tui.widgets.syntax_highlight import MAX_HIGHLIGHT_CHARS, highlight_lines
from explorer.tui.widgets.text_view import TextView

__all__ = [  # the names this module held before its loading, highlighting and view moved out
    "HIGHLIGHT_LATER_BYTES",
    "MARKDOWN_SUFFIXES",
    "MARKDOWN_WIDGET_LIMIT",
    "MAX_HIGHLIGHT_CHARS",
    "MAX_PREVIEW_BYTES",
    "PLAIN_SUFFIXES",
    "LoadedFile",
    "Preview",
    "TextView",
    "highlight_lines",
    "load_file",
]


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
        self.border_title = Content(safe_name(path))  # a name is text, not markup
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
        self.query_one("#preview-message", Static).update(Content(safe_text(text)))
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
        container = self.query_one("#preview-markdown", VerticalScroll)
        markdown = self._markdown()
        if markdown is None:
            from textual.widgets import Markdown

            markdown = Markdown(id="markdown", open_links=False)
            await container.mount(markdown)
        elif not markdown.is_mounted:
            # A file opened while the previous one was still mounting the widget: updating it
            # before it is mounted raises MountError, so wait for that mount to finish.
            from textual.widget import AwaitMount

            await AwaitMount(container, [markdown])
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
            self.query_one("#preview-message", Static).update(Content(safe_text(loaded.note)))
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
