"""The preview: a file rendered (Markdown), highlighted (code) or as is (text), at a passage.

Files are read and highlighted on a thread worker, so a 200 KB file never freezes the UI.
Markdown up to :data:`MARKDOWN_WIDGET_LIMIT` characters is rendered by Textual's ``Markdown``
widget, its lists, tables and code blocks drawn by the preview's own blocks
(:mod:`explorer.tui.widgets.markdown_blocks`); longer Markdown, code and plain text go to
:class:`TextView`, which draws only the lines on screen. Either way the preview can scroll to a
line range and mark it (in a table, a list or a code block, its own rows).

Reading keys are the pager's: ``j``/``k`` a line, space/``b`` a page, ``g``/``G`` the ends,
``/`` finds in the page. ``n`` and ``N`` go to the next and previous place *down or up from
where the reader is* (the mark when it is on screen, else the top of the view), as in less and
vim: the words found in the page when a find is active, else the passages of the search hit.
``t`` lists the file's headings (a PDF's bookmarks), ``w`` wraps long lines or lets them scroll
sideways, ``:`` goes to a page of a PDF (a line of any other file). A PDF's border names the
pages in view.
"""

from __future__ import annotations

import contextlib
import re
import time
from bisect import bisect_left, bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widget import MountError
from textual.widgets import Input, Static
from textual.worker import Worker, get_current_worker

from explorer.core.ingest.formats.preview import PreviewDocument, text_outline
from explorer.core.ingest.keyword_text import accent_pattern
from explorer.core.ingest.markdown_tokens import markdown_parser, plain_inline
from explorer.core.safe_text import safe_name, safe_text
from explorer.tui.messages import FollowLink
from explorer.tui.text_fit import fit_name, middle_path
from explorer.tui.widgets.preview_loading import (
    HIGHLIGHT_LATER_BYTES,
    MARKDOWN_SUFFIXES,
    MARKDOWN_WIDGET_LIMIT,
    MAX_PREVIEW_BYTES,
    PLAIN_SUFFIXES,
    LoadedFile,
    LoadedFiles,
    load_file,
)
from explorer.tui.widgets.row_marks import RowMark
from explorer.tui.widgets.syntax_highlight import MAX_HIGHLIGHT_CHARS, highlight_lines
from explorer.tui.widgets.text_view import SCROLL_MARGIN, TextView
from explorer.tui.workers import report_worker_failure

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


@dataclass(frozen=True)
class Heading:
    """A heading of the open file, for the outline."""

    level: int
    title: str
    line: int
    """1-based line of the file."""
    page: int | None = None
    """The 1-based page it is on (a PDF), else None."""


HEADINGS_AFTER = 0.3
"""Seconds after a file is shown before its headings (the outline's) are worked out, on a
thread: parsing them beside its first frames would slow those."""
HEADINGS_STEP = 0.05
"""The steps of that wait: a cancelled wait ends within one."""


def markdown_headings(text: str, line_offset: int = 0) -> list[Heading]:
    """The headings of Markdown ``text`` (ATX and underlined, never a ``#`` line in a code
    fence), their titles as rendered (no ``**`` or backticks), with their 1-based lines;
    ``line_offset``: lines of the file before ``text``."""
    tokens = markdown_parser().parse(text)  # the blocks; a heading's inline parsed alone
    headings = []
    for number, token in enumerate(tokens):
        if token.type == "heading_open" and token.map is not None and number + 1 < len(tokens):
            title = " ".join(plain_inline(tokens[number + 1].content).split())
            level = int(token.tag[1:]) if token.tag[1:].isdigit() else 1
            headings.append(Heading(level, safe_text(title), token.map[0] + 1 + line_offset))
    return headings


SECTION_CELLS = 40
"""The section a preview's title names is cut (in the middle) to this many cells ..."""
MIN_PATH_CELLS = 20
"""... and the file's path before it to no fewer than this many (in the middle too)."""
SECTION_ROW = 3
"""The row under the top of the view whose section the title names: a jump puts its heading a
few rows down (a passage's margin, a rendered heading's blank rows above it)."""


def section_at(headings: list[Heading], lines: list[int], line: int) -> str:
    """The title of the last of ``headings`` (in the order of their ``lines``) at or above
    ``line``, or "" above the first."""
    found = bisect_right(lines, line)
    return headings[found - 1].title if found else ""


def file_headings(loaded: LoadedFile) -> list[Heading]:
    """The headings of a loaded file: a Markdown file's (rendered, or line for line when long),
    an extracted document's outline (a PDF's bookmarks), a source file's definitions, the
    sections of LaTeX or reStructuredText; none for other text."""
    if loaded.kind == "markdown":
        return markdown_headings(loaded.text, loaded.line_offset)
    if loaded.kind not in ("code", "text"):
        return []
    if loaded.text:  # a long page, rendered line for line; its front matter is no heading
        start = loaded.document.body_start if loaded.document is not None else 0
        return markdown_headings(loaded.text[start:], loaded.text.count("\n", 0, start))
    document = loaded.document
    if document is None:
        return []
    return [
        Heading(entry.level, entry.title, entry.line, document.page_at(entry.line))
        for entry in text_outline(document)
    ]


def find_pattern(text: str) -> re.Pattern[str] | None:
    """What ``/`` finds for ``text``: the literal words, accents aside (``cafe`` finds ``café``),
    ignoring case unless ``text`` has a capital (vim's smartcase); None for nothing."""
    if not text:
        return None
    flags = 0 if any(c.isupper() for c in text) else re.IGNORECASE
    return re.compile(accent_pattern(text), flags)


class FindBar(Input):
    """The find-in-page field at the bottom of the preview (``/``)."""

    # Priority: the field closes when the key comes, so the keys typed after it are the
    # preview's (Input's own Enter would close it a message later, and type them here).
    BINDINGS = [
        Binding(
            "escape",
            "close",
            "Close",
            priority=True,
            tooltip="Close the find field (an empty one ends the find)",
        ),
        Binding(
            "enter",
            "close",
            "Keep",
            priority=True,
            tooltip="Keep the matches and go back to reading (n / N step)",
        ),
    ]

    def action_close(self) -> None:
        preview = self.parent
        if isinstance(preview, Preview):
            preview.close_find()


class GoToBar(Input):
    """The go-to field at the bottom of the preview (``:``): a page of a PDF, else a line."""

    # Priority, as the find field's: the field closes when the key comes.
    BINDINGS = [Binding("escape", "close", "Close", priority=True, tooltip="Close the go-to field")]

    def action_close(self) -> None:
        preview = self.parent
        if isinstance(preview, Preview):
            preview.close_go_to()


class Preview(Vertical):
    """The open file. ``open_file`` loads it on a worker and scrolls to the passage."""

    BORDER_TITLE = "Preview"
    ALLOW_MAXIMIZE = True
    BINDINGS = [
        Binding("j,down", "scroll(1)", "Down", show=False, tooltip="Down a line"),
        Binding("k,up", "scroll(-1)", "Up", show=False, tooltip="Up a line"),
        Binding("space,pagedown", "page(1)", "Page", key_display="space", tooltip="Down a page"),
        Binding("b,pageup", "page(-1)", "Page up", show=False, tooltip="Up a page"),
        Binding("g,home", "ends(-1)", "Top", show=False, tooltip="The top of the file"),
        Binding("G,end", "ends(1)", "Bottom", show=False, tooltip="The end of the file"),
        Binding("h,left", "sideways(-1)", "Left", show=False, tooltip="Scroll left (no wrap)"),
        Binding("l,right", "sideways(1)", "Right", show=False, tooltip="Scroll right (no wrap)"),
        Binding("slash", "find", "Find", key_display="/", tooltip="Find in the page"),
        Binding("n", "next_passage", "Next", tooltip="Next passage or match, down from here"),
        Binding("N", "previous_passage", "Prev", tooltip="Previous passage or match, up from here"),
        Binding(
            "t",
            "outline",
            "Outline",
            tooltip="The file's headings (a source file's definitions); Enter goes to one",
        ),
        Binding("w", "toggle_wrap", "Wrap", tooltip="Wrap long lines, or scroll sideways"),
        # The screen opens the picker while this key is handled: the keys typed after it are
        # the picker's.
        Binding(
            "f",
            "screen.pick_link",
            "Links",
            tooltip="The page's links, to follow one (type narrows)",
        ),
        Binding(
            "colon",
            "go_to",
            "Go to",
            key_display=":",
            show=False,
            tooltip="Go to a page (a PDF) or a line",
        ),
    ]
    on_worker_state_changed = report_worker_failure

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

    @dataclass
    class OutlineWanted(Message):
        """The reader asked for the open file's headings (``t``)."""

        preview: Preview
        headings: list[Heading]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.path: str | None = None
        """The root-relative path of the file shown (or being loaded)."""
        self.kind: str = "message"
        self.passages: list[tuple[int, int]] = []
        """Line ranges (1-based, inclusive) to step through, in the order of the file."""
        self.passage_index = 0
        self.loaded = False
        """True once the file of :attr:`path` is on screen."""
        self.moves = 0
        """How many times the reader has moved the page (a reading key, n or N): a layout change
        that puts the page back at its line afterwards leaves it where a key since moved it."""
        self.wrap = True
        """Long lines wrap (else they scroll sideways)."""
        self.found: list[int] = []
        """The lines (1-based) holding what the find field has, in order."""
        self.found_index: int | None = None
        """Which of :attr:`found` is marked (None: none yet)."""
        self._pattern: re.Pattern[str] | None = None
        self._source: list[str] = []
        """The file's lines as text (for find and the outline)."""
        self._line_offset = 0
        self._token = 0
        self._focus_when_loaded = False
        self._arrive_at: int | None = None
        """Show this line at the top once loaded (history), instead of the passage."""
        self._open_at: int | None = None
        """A line inside the first passage to show rather than its start, when it opens."""
        self._focus: dict[tuple[int, int], int] = {}
        """For a passage, the line of the query's words in it: where a passage taller than the
        view is shown from (its start would show none of them)."""
        self._note = ""
        self._document: PreviewDocument | None = None
        """The open document's pages and outline (an extracted document), else None."""
        self._kept = LoadedFiles()
        self._opened: tuple[str, tuple[str, int, int] | None] | None = None
        """The file last opened and what it was on disk then (shown, or being read)."""
        self._shown_file: LoadedFile | None = None
        """What the loading worker gave for the file on show (its headings are kept in it)."""
        self._titled = ""
        """The title the border shows with a section (see :meth:`_title_section`)."""
        self._sections: tuple[list[Heading] | None, list[Heading], list[int]] = (None, [], [])
        """The shown file's headings, the same in the order of their lines, and their lines."""

    def compose(self) -> ComposeResult:
        yield Static(
            "Open a file from the tree, the results or the related list.", id="preview-message"
        )
        yield VerticalScroll(id="preview-markdown")
        yield TextView(id="preview-text")
        yield FindBar(placeholder="find in page (Enter: keep, Esc: close)", id="find")
        yield GoToBar(id="go-to", restrict=r"[0-9]*", max_length=9)

    def on_mount(self) -> None:
        self._show("message")
        self.query_one(FindBar).display = False
        self.query_one(GoToBar).display = False
        # The border tells the lines in view: it follows every scroll (keys, the mouse, an
        # outline jump, a zoom).
        for scroller in (self.query_one("#preview-markdown"), self.query_one(TextView)):
            self.watch(scroller, "scroll_y", self._scrolled, init=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """In the find field ``/`` is typed: the footer does not offer it there."""
        return not (action == "find" and isinstance(self.screen.focused, Input))

    def _scrolled(self) -> None:
        if self.loaded and self.kind in ("markdown", "code", "text"):
            self._subtitle("")

    # -- public API ---------------------------------------------------------------------------
    @property
    def passage(self) -> tuple[int, int] | None:
        """The marked line range, if any."""
        if not self.passages:
            return None
        return self.passages[self.passage_index]

    @property
    def finding(self) -> bool:
        """A find is active: n/N step through its matches."""
        return self._pattern is not None

    def open_file(
        self,
        path: str,
        absolute: Path,
        passages: list[tuple[int, int]] | None = None,
        line: int | None = None,
        top: int | None = None,
        focus: Mapping[tuple[int, int], int] | None = None,
    ) -> None:
        """Show ``path``, its ``passages`` marked in the order of the file, at the one holding
        ``line`` (or at ``line`` alone when no passage holds it; None: the first passage).
        ``top``: show this line at the top instead (coming back to a place read before).
        ``focus``: a passage's line of the query's words, shown when the passage is taller
        than the view. The file loads on a worker; a find in the page ends."""
        self._token += 1
        self._focus_when_loaded = False
        self.path = path
        self._focus = dict(focus or {})
        spans = sorted(set(passages or []))
        index = 0
        self._open_at = None
        if line is not None:
            holding = [i for i, (start, end) in enumerate(spans) if start <= line <= end]
            if holding:
                index = holding[0]
                if line > spans[index][0]:  # a place inside it: an API entry's signature
                    self._open_at = line
            else:
                spans = sorted([*spans, (line, line)])
                index = spans.index((line, line))
        self.passages = spans
        self.passage_index = index
        self._arrive_at = top
        self.loaded = False
        self._end_find()
        self.border_title = Content(safe_name(path))  # a name is text, not markup
        self._titled = ""
        key = self._kept.key(absolute)
        self._opened = (path, key)
        kept = self._kept.get(key)
        if kept is not None and kept.path == path:
            # Read before and unchanged (back, forward, a file opened again): shown from
            # memory in the next frame, with no worker and no "loading…" frame before it.
            self.post_message(self.FileLoaded(self._token, kept))
            return
        self.border_subtitle = "loading…"
        self._load(self._token, path, absolute)

    def reload(self, absolute: Path) -> None:
        """Read the open file again (it changed on disk), keeping the passage and the place.
        Nothing is done when the file is as it was when opened (the index reports a file new
        to it, an editor left without saving): the page shown or being read stays, with its
        place and its find, and a long PDF is not read twice."""
        if self.path is not None:
            key = self._kept.key(absolute)
            if key is not None and self._opened == (self.path, key):
                return
            top = self.position() if self.loaded else self._arrive_at
            passage = self.passage
            self.open_file(
                self.path,
                absolute,
                self.passages,
                passage[0] if passage else None,
                top,
                self._focus,
            )

    def clear(self, text: str) -> None:
        self._token += 1
        self.path = None
        self.passages = []
        self.loaded = False
        self._end_find()
        self.border_title = "Preview"
        self.border_subtitle = ""
        self.query_one("#preview-message", Static).update(Content(safe_text(text)))
        self._show("message")

    def focus_content(self) -> None:
        """Focus the scrolling part (once the file being loaded is on screen)."""
        if not self.loaded and self.path is not None:
            self._focus_when_loaded = True
            # Meanwhile the keys typed are the preview's already (f, j…), not the pane's the
            # reader left: whichever part shows now holds the focus until the file is on.
            shown = [part for part in self.query("#preview-markdown, TextView") if part.display]
            if shown and shown[0].focusable:
                self.screen.set_focus(shown[0])
            return
        # At once (Widget.focus waits a turn): the next key pressed is the page's.
        if self.kind == "markdown":
            self.screen.set_focus(self.query_one("#preview-markdown"))
        elif self.kind in ("code", "text"):
            self.screen.set_focus(self.query_one(TextView))

    def position(self, below: int = 0) -> int:
        """The 1-based line of the file at the top of the view (``below``: that many rows
        under it)."""
        if not self.loaded:
            return self._arrive_at or 1
        if self.kind in ("code", "text"):
            view = self.query_one(TextView)
            return view.bottom_line if below else view.top_line
        if self.kind != "markdown":
            return 1
        scroller = self.query_one("#preview-markdown", VerticalScroll)
        markdown = self._markdown()
        if markdown is None:
            return 1
        top = scroller.scroll_y + below
        drawn = markdown.line_at(top - markdown.virtual_region.y)
        if drawn is not None:  # a row of a drawn list or table, or of code: its own line
            return int(drawn) + 1 + self._line_offset
        line, bottom = 1, None
        for block in markdown.children:
            source = getattr(block, "source_range", None)
            if source is None:
                continue
            y = block.virtual_region.y + markdown.virtual_region.y
            if y > top:
                if bottom is None or top >= bottom:  # in the margin above a block: its line
                    line = source[0] + 1 + self._line_offset
                break
            line, bottom = source[0] + 1 + self._line_offset, y + block.virtual_region.height
        return line

    def passage_visible(self) -> bool:
        """True when the marked passage is inside the visible part of the preview."""
        passage = self.passage
        return passage is not None and self.loaded and self.lines_visible(*passage)

    def lines_visible(self, start: int, end: int) -> bool:
        """Whether any of lines ``start..end`` (1-based) is on screen."""
        if self.kind == "markdown":
            scroller = self.query_one("#preview-markdown", VerticalScroll)
            first, last = self._line_row(start, last=False), self._line_row(end, last=True)
            if first is not None and last is not None:
                top = scroller.scroll_y
                return first < top + scroller.scrollable_content_region.height and last >= top
            visible = scroller.content_region
            blocks = self._blocks_of(start, end)
            return any(block.region.overlaps(visible) for block in blocks)
        if self.kind not in ("code", "text"):
            return False
        view = self.query_one(TextView)
        return start <= view.bottom_line and end >= view.top_line

    def marked_blocks(self) -> list[Any]:
        """The Markdown blocks the passage's mark is on: its background, or its rows."""
        markdown = self._markdown()
        if markdown is None:
            return []
        mark = RowMark.PASSAGE
        return [*markdown.query(f".{mark.block_class}"), *markdown.rows_marked(mark)]

    @property
    def headings_known(self) -> bool:
        """Whether the shown file's headings are worked out (the outline's, and the section
        the title names), without working them out."""
        shown = self._shown_file
        return self.loaded and shown is not None and shown.headings is not None

    def headings(self) -> list[Heading]:
        """The open file's headings: a Markdown file's, an extracted document's outline (a
        PDF's bookmarks); none for code and text."""
        if not self.loaded:
            return []
        shown = self._shown_file
        if shown is None:
            return []
        if shown.headings is None:  # asked before the headings' thread worked them out
            shown.headings = file_headings(shown)
            # That thread finds them known and leaves the title alone: name the section now,
            # or the title waits for the next scroll (never, when the view is where it goes).
            self._title_section()
        return shown.headings

    @property
    def page_count(self) -> int:
        """The open document's pages (0: not a paged document)."""
        return self._document.page_count if self._document is not None else 0

    def pages_in_view(self) -> tuple[int, int] | None:
        """The first and last 1-based page of a PDF on screen, or None (no pages)."""
        if self._document is None or not self.page_count or self.kind not in ("code", "text"):
            return None
        view = self.query_one(TextView)
        first = self._document.page_at(view.top_line) or 1
        return first, self._document.page_at(view.bottom_line) or first

    def wrap_for(self, outer_width: int) -> None:
        """The preview is about to be ``outer_width`` cells wide (a zoom in or out): a text
        view wraps its rows for that width now, so the zoom's first frame shows them."""
        if self.loaded and self.kind in ("code", "text"):
            view = self.query_one(TextView)
            region = view.scrollable_content_region.width
            view.wrap_for(region + outer_width - self.outer_size.width)

    def go_to_line(self, line: int) -> None:
        """Show 1-based ``line`` at the top of the view (the outline, coming back)."""
        if not self.loaded:
            self._arrive_at = line
            return
        if self.kind == "markdown":
            blocks = self._blocks_of(line, line) or self._blocks_before(line)
            if blocks:
                self._scroll_markdown_to(line, blocks[0])
        elif self.kind in ("code", "text"):
            self.query_one(TextView).scroll_to_line(line, margin=0)

    def text_of(self, start: int, end: int) -> str:
        """Lines ``start..end`` (1-based, inclusive) of the open file as text."""
        return "\n".join(self._source[max(0, start - 1) : end])

    def _markdown(self) -> Any:
        """The Markdown widget, or None before the first Markdown file."""
        scroller = self.query_one("#preview-markdown", VerticalScroll)
        return scroller.children[0] if scroller.children else None

    async def _ensure_markdown(self) -> Any:
        """The Markdown widget, made on first use (its parser is slow to import); None when
        the window is closing (its panes are already taken down: a page that finished loading
        as ctrl+q was pressed raised a MountError, and the app quit with a traceback)."""
        container = self.query_one("#preview-markdown", VerticalScroll)
        if not container.is_attached:
            return None
        markdown = self._markdown()
        if markdown is None:
            from explorer.tui.widgets.markdown_blocks import PreviewMarkdown
            from explorer.tui.widgets.markdown_parser import preview_parser

            markdown = PreviewMarkdown(
                id="markdown", open_links=False, parser_factory=preview_parser
            )
            await container.mount(markdown)
        elif not markdown.is_mounted:
            # A file opened while the previous one was still mounting the widget: updating it
            # before it is mounted raises MountError, so wait for that mount to finish.
            from textual.widget import AwaitMount

            await AwaitMount(container, [markdown])
        return markdown

    # -- reading keys -------------------------------------------------------------------------
    def _scroller(self) -> Any:
        if self.kind == "markdown":
            return self.query_one("#preview-markdown", VerticalScroll)
        if self.kind in ("code", "text"):
            return self.query_one(TextView)
        return None

    def action_scroll(self, rows: int) -> None:
        self.moves += 1
        scroller = self._scroller()
        if scroller is not None:
            scroller.scroll_to(y=scroller.scroll_y + rows, animate=False, immediate=True)

    def action_page(self, direction: int) -> None:
        self.moves += 1
        scroller = self._scroller()
        if scroller is not None:
            page = max(1, scroller.scrollable_content_region.height - 1)
            scroller.scroll_to(
                y=scroller.scroll_y + direction * page, animate=False, immediate=True
            )

    def action_ends(self, direction: int) -> None:
        self.moves += 1
        scroller = self._scroller()
        if scroller is not None:
            y = scroller.max_scroll_y if direction > 0 else 0
            scroller.scroll_to(y=y, animate=False, immediate=True)

    def action_sideways(self, direction: int) -> None:
        scroller = self._scroller()
        if scroller is not None:
            step = max(4, scroller.scrollable_content_region.width // 4)
            scroller.scroll_to(
                x=scroller.scroll_x + direction * step, animate=False, immediate=True
            )

    def action_toggle_wrap(self) -> None:
        """Wrap long lines, or cut them at the edge and scroll sideways (``h``/``l``)."""
        self.wrap = not self.wrap
        self.set_class(not self.wrap, "-nowrap")
        self.query_one(TextView).set_wrap(self.wrap)
        self.notify("long lines wrap" if self.wrap else "long lines scroll sideways (h / l)")

    def action_go_to(self) -> None:
        """Open the go-to field (``:``): a page number for a PDF, a line for other files."""
        if not self.loaded or self.kind not in ("markdown", "code", "text"):
            return
        bar = self.query_one(GoToBar)
        count = self.page_count
        bar.placeholder = (
            f"go to page (1–{count}; Enter: go, Esc: close)"
            if count
            else "go to line (Enter: go, Esc: close)"
        )
        bar.value = ""
        bar.display = True
        self.screen.set_focus(bar)

    def close_go_to(self) -> None:
        """Leave the go-to field without going anywhere."""
        bar = self.query_one(GoToBar)
        bar.display = False
        bar.value = ""
        self.focus_content()

    def go_to_page(self, page: int) -> bool:
        """Show the start of 1-based ``page`` of a PDF at the top; False (and a word in the
        status bar) when there is no such page."""
        start = self._document.page_start(page) if self._document is not None else None
        if start is None:
            count = self.page_count
            self.notify(
                f"no page {page}: this document has {count} page{'s' if count != 1 else ''}",
                severity="warning",
                timeout=3,
            )
            return False
        self.go_to_line(start)
        self._subtitle("")
        return True

    @on(Input.Submitted, "#go-to")
    def _go_to_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        value = event.value.strip()
        self.close_go_to()
        if not value.isdigit():
            return
        number = int(value)
        if self.page_count:
            self.go_to_page(number)
        else:
            self.go_to_line(max(1, min(number, len(self._source))))
            self._subtitle("")

    def action_outline(self) -> None:
        if self.path is not None:
            self.post_message(self.OutlineWanted(self, self.headings()))

    # -- n / N --------------------------------------------------------------------------------
    def action_next_passage(self) -> None:
        self._step(1)

    def action_previous_passage(self) -> None:
        self._step(-1)

    def _step(self, direction: int) -> None:
        """Mark the next (``direction`` 1) or previous (-1) place below or above the cursor,
        wrapping round at the end as less does (the subtitle says so)."""
        if not self.loaded:
            return
        self.moves += 1
        if self.finding:
            places = [(line, line) for line in self.found]
            current = self.found_index
        else:
            places = self.passages
            current = self.passage_index if self.passages else None
        if not places:
            if self.finding:
                self.notify("not found in this file", severity="warning", timeout=2)
            return
        marked = places[current] if current is not None else None
        # From the mark when the reader sees it, else from the top of the view.
        visible = marked is not None and self.lines_visible(*marked)
        starts = [start for start, _end in places]
        wrapped = ""
        if direction > 0:
            after = marked[0] if visible and marked is not None else self.position() - 1
            target = bisect_right(starts, after)
            if target >= len(places):
                target, wrapped = 0, "from the top"
        else:
            before = marked[0] if visible and marked is not None else self.position()
            target = bisect_left(starts, before) - 1
            if target < 0:
                target, wrapped = len(places) - 1, "from the bottom"
        if self.finding:
            self.found_index = target
            self._mark_found()
        else:
            self.passage_index = target
            self._mark()
        self._subtitle(wrapped)

    # -- find in page -------------------------------------------------------------------------
    def action_find(self) -> None:
        """Open the find field at the bottom (``/``)."""
        if not self.loaded or self.kind not in ("markdown", "code", "text"):
            return
        bar = self.query_one(FindBar)
        bar.display = True
        self.screen.set_focus(bar)

    def close_find(self) -> None:
        """Leave the find field; what it found stays marked for n/N (an empty one ends it)."""
        bar = self.query_one(FindBar)
        bar.display = False
        if not bar.value:
            self._end_find()
        self.focus_content()

    def find(self, text: str) -> None:
        """Find ``text`` in the page, and mark the first match from the top of the view down."""
        pattern = find_pattern(text)
        self._pattern = pattern
        if pattern is None:
            self.found, self.found_index = [], None
            self._mark_found()
            self._subtitle("")
            return
        self.found = [n for n, line in enumerate(self._source, 1) if pattern.search(line)]
        self.found_index = None
        if self.kind in ("code", "text"):
            self.query_one(TextView).set_find(pattern)
        if self.found:
            top = self.position()
            self.found_index = next((i for i, n in enumerate(self.found) if n >= top), 0)
        self._mark_found()
        self._subtitle("")

    def _end_find(self) -> None:
        self._pattern = None
        self.found, self.found_index = [], None
        bar = self.query(FindBar)
        if bar:
            bar.first().value = ""
            bar.first().display = False
        view = self.query(TextView)
        if view:
            view.first().set_find(None)
        markdown = self._markdown() if self.is_mounted else None
        if markdown is not None:
            self._mark_blocks(markdown, RowMark.FOUND, None)

    @on(Input.Changed, "#find")
    def _find_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.find(event.value)

    def _mark_found(self) -> None:
        line = self.found[self.found_index] if self.found_index is not None else None
        if self.kind == "markdown":
            markdown = self._markdown()
            if markdown is None:
                return
            found = (line, line) if line is not None else None
            blocks = self._mark_blocks(markdown, RowMark.FOUND, found)
            if line is not None and blocks:
                self._scroll_markdown_to(line, blocks[0])
        elif self.kind in ("code", "text"):
            view = self.query_one(TextView)
            view.set_passage((line, line) if line is not None else None)
            if line is None:
                return
            # A line taller than the view (a table row of an HTML index, a paragraph never
            # broken) may hold its match rows below its first: the match is what must show.
            match = self._pattern.search(view.line_text(line)) if self._pattern else None
            offset = match.start() if match else 0
            if not view.row_visible(view.row_of(line, offset)):
                view.scroll_to_line(line, offset=offset)

    # -- loading ------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="preview", exit_on_error=False)
    def _load(self, token: int, path: str, absolute: Path) -> None:
        worker = get_current_worker()
        key = self._kept.key(absolute)
        large = key is not None and key[2] > HIGHLIGHT_LATER_BYTES
        loaded = load_file(path, absolute, highlight=not large)
        if worker.is_cancelled:
            return
        self.post_message(self.FileLoaded(token, loaded))
        kept = loaded
        if large and loaded.kind == "code":
            # Shown plain at once; the colours follow when the lexer is done.
            coloured = load_file(path, absolute)
            if not worker.is_cancelled and len(coloured.lines) == len(loaded.lines):
                self.post_message(self.FileLoaded(token, coloured, recolour=True))
                coloured.headings = loaded.headings  # None, or worked out meanwhile
                kept = coloured
        if not worker.is_cancelled:
            self._kept.put(key, kept)

    @work(thread=True, exclusive=True, group="headings", exit_on_error=False)
    def _work_out_headings(self, shown: LoadedFile) -> None:
        """Work the shown file's headings out (the outline's, for ``t``: parsing a long page at
        its first press held the key for tens of milliseconds), :data:`HEADINGS_AFTER` seconds
        on, not beside the file's first frames. The wait ends within a step when the worker is
        cancelled (another file shown, the app quitting, which waits for its threads)."""
        worker = get_current_worker()
        waited = 0.0
        while waited < HEADINGS_AFTER:
            if worker.is_cancelled:
                return
            time.sleep(HEADINGS_STEP)
            waited += HEADINGS_STEP
        if worker.is_cancelled or shown.headings is not None:
            return
        headings = file_headings(shown)
        if shown.headings is None:
            shown.headings = headings
        if not worker.is_cancelled:  # the title names the section in view from now on
            with contextlib.suppress(RuntimeError):  # the app closed meanwhile
                self.app.call_from_thread(self._title_section)

    def show_failure(self, worker: Worker[Any], text: str) -> None:
        """The loading worker failed: say so in place of the file."""
        if worker.group == "preview" and not self.loaded and self.path is not None:
            self.query_one("#preview-message", Static).update(
                Content(safe_text(f"Cannot show this file: {text}"))
            )
            self._show("message")
            self.border_subtitle = ""
            self.kind = "message"
            self.loaded = True

    async def on_preview_file_loaded(self, message: FileLoaded) -> None:
        token, loaded = message.token, message.loaded
        if token != self._token:
            return
        if message.recolour:
            self.query_one(TextView).replace_lines(loaded.lines)
            return
        self.kind = loaded.kind
        self._shown_file = loaded
        if loaded.headings is None:
            self._work_out_headings(loaded)
        self._document = loaded.document if loaded.kind in ("code", "text") else None
        if loaded.kind == "message":
            self._source = []
            self.query_one("#preview-message", Static).update(Content(safe_text(loaded.note)))
            self._show("message")
            self.border_subtitle = ""
            self.loaded = True
            self.post_message(self.Shown(self, loaded.path))
            return
        if loaded.kind == "markdown":
            self._line_offset = loaded.line_offset
            self._source = [""] * loaded.line_offset + loaded.text.split("\n")
            markdown = await self._ensure_markdown()
            if markdown is None:
                return
            self._show("markdown")
            try:
                await markdown.update(loaded.text)
            except MountError:
                if markdown.is_attached:
                    raise
                return  # the window closed while the page's blocks were being mounted
            if token != self._token:
                return
            self.query_one("#preview-markdown", VerticalScroll).scroll_home(
                animate=False, immediate=True
            )
        else:
            self._line_offset = 0
            self._source = [line.plain for line in loaded.lines]
            view = self.query_one(TextView)
            view.set_lines(loaded.lines, loaded.width)
            self._show("text")
            markdown = self._markdown()
            if markdown is not None and markdown.children:
                # The last Markdown page's blocks, hidden, would still be styled and laid out
                # again at every zoom and resize: let them go.
                await markdown.update("")
            if token == self._token:
                # The text view lays its rows out at once: the first frame with the file in it
                # is at the place to show (a view just unhidden waits for its size, in _arrive).
                self._arrive(token, loaded.note)
            return
        self.call_after_refresh(self._arrive, token, loaded.note)

    def _arrive(self, token: int, note: str, tries: int = 0) -> None:
        if token != self._token:
            return
        target = self.query_one("#preview-markdown" if self.kind == "markdown" else "#preview-text")
        if not target.size.height and tries < 10:
            # Just made visible: wait for the layout to give it a size before scrolling.
            self.call_after_refresh(self._arrive, token, note, tries + 1)
            return
        self._mark(scroll=self._arrive_at is None, at=self._open_at)
        self._open_at = None
        self.loaded = True
        if self._arrive_at is not None:
            self.go_to_line(self._arrive_at)
            self._arrive_at = None
        self._note = note
        self._subtitle("")
        if self._focus_when_loaded:
            self._focus_when_loaded = False
            self.focus_content()
        if self.path is not None:
            self.post_message(self.Shown(self, self.path))

    # -- passages -----------------------------------------------------------------------------
    def _blocks_of(self, start: int, end: int) -> list[Any]:
        """The Markdown blocks that show lines ``start..end`` of the file."""
        markdown = self._markdown()
        if markdown is None:
            return []
        return list(markdown.blocks_showing(start - 1 - self._line_offset, end - self._line_offset))

    def _blocks_before(self, line: int) -> list[Any]:
        """The last Markdown block that starts before ``line`` (a blank line between blocks)."""
        markdown = self._markdown()
        if markdown is None:
            return []
        before = [
            block
            for block in markdown.children
            if getattr(block, "source_range", None) is not None
            and block.source_range[0] < line - self._line_offset
        ]
        return before[-1:]

    def _own_row(self, line: int) -> int | None:
        """The row of the Markdown view (from its top) that a drawn list or table, or a code
        block, shows 1-based ``line`` on; None when no such block holds it."""
        markdown = self._markdown()
        row = markdown.y_of(line - 1 - self._line_offset) if markdown is not None else None
        return None if row is None else int(markdown.virtual_region.y + row)

    def _scroll_markdown_to(self, line: int, block: Any) -> None:
        """Put 1-based ``line`` at the top of the Markdown view: the row a drawn list or table,
        or a code block, shows it on (a result in the 80th row of a table is on screen), else
        the top of ``block``, the block that holds it."""
        self._put_at_top(line, block)
        # The layout may settle after this (a scrollbar appearing narrows the rows, and
        # wrapped rows above the line move): put the line back once it has.
        self.call_after_refresh(self._settle_at_top, line, block, self.moves, self._token)

    def _put_at_top(self, line: int, block: Any) -> None:
        scroller = self.query_one("#preview-markdown", VerticalScroll)
        row = self._own_row(line)
        if row is None:
            scroller.scroll_to_widget(block, animate=False, top=True, immediate=True)
        elif row != scroller.scroll_y:
            scroller.scroll_to(y=row, animate=False, immediate=True)

    def _settle_at_top(self, line: int, block: Any, moves: int, token: int) -> None:
        """Put ``line`` back at the top of the Markdown view if the rows moved since it was
        put there and the reader has not moved (nor opened another file) meanwhile."""
        if moves != self.moves or token != self._token or self.kind != "markdown":
            return
        if block.is_attached:
            self._put_at_top(line, block)

    def _line_row(self, line: int, last: bool) -> int | None:
        """The row of the Markdown view (from its top) that shows 1-based ``line``: in a
        drawn list or table, or a code block, its own row; in a block of text, the row it
        starts on; else the first row of its block (``last``: the block's last row). None
        when no block holds it."""
        markdown = self._markdown()
        own = self._own_row(line)
        if markdown is None or own is not None:
            return own
        blocks = self._blocks_of(line, line)
        if not blocks:
            return None
        block = blocks[-1] if last else blocks[0]
        row = markdown.top_of(block) + (block.outer_size.height - 1 if last else 0)
        return int(markdown.virtual_region.y + row)

    def _mark_blocks(
        self, markdown: Any, mark: RowMark, lines: tuple[int, int] | None
    ) -> list[Any]:
        """Mark the Markdown blocks showing 1-based ``lines`` (None: unmark): a drawn list's
        or table's or a code block's own rows, another block's background (its CSS class).
        The blocks that show the lines, marked or not."""
        for block in markdown.query(f".{mark.block_class}"):
            block.remove_class(mark.block_class)
        if lines is None:
            markdown.mark_rows(mark, None)
            return []
        first, last = (line - 1 - self._line_offset for line in lines)
        markdown.mark_rows(mark, (first, last))
        blocks = self._blocks_of(*lines)
        for block in blocks:
            if not markdown.marks_by_row(block):
                block.add_class(mark.block_class)
        return blocks

    def _mark(self, scroll: bool = True, at: int | None = None) -> None:
        """Mark the passage; with ``scroll``, show its start (or the line ``at`` inside it;
        or, when the passage is taller than the view, its line of the query's words)."""
        passage = self.passage
        if passage is not None and at is None and scroll:
            at = self._focus_unless_in_view(passage)
        if self.kind == "markdown":
            markdown = self._markdown()
            if markdown is None:
                return
            blocks = self._mark_blocks(markdown, RowMark.PASSAGE, passage)
            if passage is None:
                return
            at_blocks = self._blocks_of(at, at) if at is not None else []
            # A line between blocks (a link to a blank line): the block before it.
            shown = at_blocks or blocks or self._blocks_before(passage[0])
            if shown and scroll:
                self._scroll_markdown_to(
                    at if at is not None and at_blocks else passage[0], shown[0]
                )
        elif self.kind in ("code", "text"):
            view = self.query_one(TextView)
            view.set_passage(passage)
            if passage is not None and scroll:
                view.scroll_to_line(passage[0] if at is None else at)

    def _focus_unless_in_view(self, passage: tuple[int, int]) -> int | None:
        """The passage's line of the query's words when the view, showing the passage from
        its start, would not show it (a 22-line passage in a 7-row preview: the word asked
        for 15 lines down); else None (the passage is shown from its start, as it reads)."""
        focus = self._focus.get(passage)
        if focus is None or focus <= passage[0]:
            return None
        if self.kind == "markdown":  # a passage's block is put at the top
            scroller = self.query_one("#preview-markdown", VerticalScroll)
            start, row = self._line_row(passage[0], False), self._line_row(focus, False)
            height, margin = scroller.scrollable_content_region.height, 0
        elif self.kind in ("code", "text"):  # its line a few rows under the top
            view = self.query_one(TextView)
            start, row = view.row_of(passage[0]), view.row_of(focus)
            height, margin = view.scrollable_content_region.height, SCROLL_MARGIN
        else:
            return None
        if start is None or row is None or not height:
            return None
        # Shown, and not on the last row: a row of what follows it in sight too.
        return focus if margin + row - start > height - 2 else None

    def _subtitle(self, wrapped: str) -> None:
        parts = []
        pages = self.pages_in_view()
        if pages is not None:
            first, last = pages
            shown = f"p. {first}" if first == last else f"pp. {first}–{last}"
            parts.append(f"{shown} of {self.page_count}")
        if self.finding:
            if self.found and self.found_index is not None:
                line = self.found[self.found_index]
                parts.append(f"L{line} · match {self.found_index + 1}/{len(self.found)} (n/N)")
            else:
                parts.append("not found")
        else:
            passage = self.passage
            if passage is not None:
                start, end = passage
                parts.append(f"L{start}" if start == end else f"L{start}–{end}")
                if len(self.passages) > 1:
                    parts.append(f"{self.passage_index + 1}/{len(self.passages)} (n/N)")
        if wrapped:
            parts.append(wrapped)
        parts.append(self._in_view())
        if self._note:
            parts.append(self._note)
        self.border_subtitle = " · ".join(part for part in parts if part)
        self._title_section()

    def _title_section(self) -> None:
        """The border's title: the file, then the heading the top line of the view is under,
        once the file's headings are worked out (``library/os.html › os.walk``): where a
        reader is in a long page, as the outline would say. Never works the headings out
        itself (a long source file's take tens of milliseconds)."""
        shown = self._shown_file
        if self.path is None or not self.loaded or shown is None or not shown.headings:
            return
        if self._sections[0] is not shown.headings:  # worked out once per file shown
            ordered = sorted(shown.headings, key=lambda heading: heading.line)
            self._sections = (shown.headings, ordered, [heading.line for heading in ordered])
        _source, ordered, lines = self._sections
        if self.kind == "markdown":
            read = self.position(SECTION_ROW)
        else:
            read = self.query_one(TextView).line_at_row(SECTION_ROW)
        section = section_at(ordered, lines, read)
        title = safe_name(self.path)
        if section:
            section = fit_name(safe_name(section), SECTION_CELLS)
            room = max(MIN_PATH_CELLS, self.size.width - 6 - cell_len(section))
            title = f"{middle_path(title, room)} › {section}"
        if title != self._titled:
            self._titled = title
            self.border_title = Content(title)

    def _in_view(self) -> str:
        """The lines in view, for the border: ``L40–62 of 300``."""
        if not self.loaded or self.kind not in ("markdown", "code", "text"):
            return ""
        scroller = self._scroller()
        bottom = self.position(max(0, scroller.scrollable_content_region.height - 1))
        total = len(self._source) if self.kind == "markdown" else self._scroller().line_count
        return f"view L{self.position()}–{max(bottom, self.position())} of {total}"

    def _show(self, which: str) -> None:
        self.query_one("#preview-message").display = which == "message"
        self.query_one("#preview-markdown").display = which == "markdown"
        self.query_one("#preview-text").display = which == "text"

    def on_markdown_link_clicked(self, event: Any) -> None:
        event.stop()
        if self.path is not None and event.href:
            self.post_message(FollowLink(self.path, event.href))
