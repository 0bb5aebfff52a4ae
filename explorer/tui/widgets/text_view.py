"""The preview's text view: lines with line numbers, drawn only on screen, a line range marked,
the words found in the page marked, and long lines wrapped or scrolled sideways.

With wrapping on (the default), a line longer than the view continues on the rows under it
(the line number shows on its first row); off, lines are cut at the view's edge and the view
scrolls sideways. The view works in *rows* (what is on screen) and *lines* (of the file); the
public API speaks lines.
"""

from __future__ import annotations

import re
from typing import Any

from rich.segment import Segment
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual

_Layout = tuple[list[tuple[int, int]], dict[int, list[Content]]]
"""Rows as (line index, piece), and the pieces of the wrapped lines."""
SCROLL_MARGIN = 3
"""Rows above a line scrolled to (:meth:`TextView.scroll_to_line`): what leads to it."""
KEPT_LAYOUTS = 8
"""Sets of lines whose layouts are kept (as many as the preview keeps files read)."""


class TextView(ScrollView, can_focus=True):
    """Lines of text with line numbers; draws only what is on screen; marks a line range."""

    COMPONENT_CLASSES = {
        "text-view--gutter",
        "text-view--passage",
        "text-view--passage-gutter",
        "text-view--match",
    }

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._lines: list[Content] = []
        self._passage: tuple[int, int] | None = None
        self._gutter = 2
        self._width = 0
        """The widest line, in cells."""
        self._cache: LRUCache[tuple[int, int, int, bool], Strip] = LRUCache(1024)
        self.wrap = True
        """Long lines continue on the next rows (else the view scrolls sideways)."""
        self._rows: list[tuple[int, int]] | None = None
        """With wrapping: (line index, piece of that line) per row; None: one row per line."""
        self._pieces: dict[int, list[Content]] = {}
        self._rows_width = 0
        self._layouts: dict[int, _Layout] = {}
        """Rows and pieces already worked out for these lines, by text width (zooming out and
        back in, or a resize there and back, wraps nothing again)."""
        self._kept_layouts: list[tuple[list[Content], dict[int, _Layout]]] = []
        """The layouts of the last few sets of lines shown (back and forward show a file again
        with the same lines: it is not wrapped again)."""
        self._find: re.Pattern[str] | None = None
        self._coming_width: int | None = None
        """The width a zoom is about to give the view (see :meth:`wrap_for`)."""

    @property
    def line_count(self) -> int:
        return len(self._lines)

    def set_lines(self, lines: list[Content], width: int) -> None:
        """Show ``lines`` (line 1 first)."""
        self._lines = lines
        self._passage = None
        self._width = width
        self._gutter = len(str(max(1, len(lines)))) + 1
        self._layouts = self._layouts_of(lines)
        self._layout(force=True, keep=True)
        self.scroll_to(0, 0, animate=False, immediate=True)

    def replace_lines(self, lines: list[Content]) -> None:
        """Swap in the same lines, restyled (keeps the scroll position and the mark)."""
        if len(lines) == len(self._lines):
            self._lines = lines
            self._layouts = self._layouts_of(lines)
            self._layout(force=True, keep=True)

    def set_wrap(self, wrap: bool) -> None:
        """Wrap long lines, or cut them and scroll sideways; the top line stays in view."""
        if wrap == self.wrap:
            return
        top = self.top_line
        self.wrap = wrap
        self.set_class(not wrap, "-no-wrap")  # scrolls sideways (app.tcss)
        self._layout(force=True, keep=True)
        self.scroll_to(x=0, animate=False, immediate=True)
        self.scroll_to_line(top, margin=0)

    def set_passage(self, passage: tuple[int, int] | None) -> None:
        """Mark lines ``start..end`` (1-based, inclusive), or nothing."""
        self._passage = passage
        self._cache.clear()
        self.refresh()

    def set_find(self, pattern: re.Pattern[str] | None) -> None:
        """Mark every piece of text ``pattern`` matches (None: nothing)."""
        self._find = pattern
        self._cache.clear()
        self.refresh()

    def line_text(self, line: int) -> str:
        """The plain text of 1-based ``line`` ("" past the end)."""
        return self._lines[line - 1].plain if 1 <= line <= len(self._lines) else ""

    def scroll_to_line(self, line: int, margin: int = SCROLL_MARGIN, offset: int = 0) -> None:
        """Scroll so that 1-based ``line`` (the row of its character ``offset``: a line
        taller than the view) is ``margin`` rows below the top."""
        row = self.row_of(line, offset)
        # Forced: lines just set that the view's last ones fitted have no scrollbar until the
        # next layout, and Textual scrolls no view without one (a link followed from a short
        # page to a long one's line stayed at its top).
        self.scroll_to(y=max(0, row - margin), animate=False, immediate=True, force=True)

    def row_of(self, line: int, offset: int = 0) -> int:
        """The row showing character ``offset`` of 1-based ``line`` (its first row when the
        line is not wrapped)."""
        self._layout()  # the width may have changed since the last resize event
        row = self._row_of(line)
        pieces = self._pieces.get(line - 1) if self._rows is not None else None
        if not pieces or offset <= 0:
            return row
        text = self._lines[line - 1].plain
        start = 0
        for number, piece in enumerate(pieces):
            found = text.find(piece.plain, start)
            if found < 0:
                break
            start = found + len(piece.plain)
            if offset < start:
                return row + number
        return row + len(pieces) - 1  # the spaces a break dropped after the last piece

    def row_visible(self, row: int) -> bool:
        """Whether ``row`` is on screen."""
        top = int(self.scroll_offset.y)
        return top <= row < top + max(1, self.scrollable_content_region.height)

    @property
    def top_line(self) -> int:
        """The 1-based line at the top of the view."""
        self._layout()
        return self._line_of(int(self.scroll_offset.y)) + 1

    def line_at_row(self, row: int) -> int:
        """The 1-based line shown ``row`` rows under the top of the view."""
        self._layout()
        return self._line_of(int(self.scroll_offset.y) + max(0, row)) + 1

    @property
    def bottom_line(self) -> int:
        """The 1-based line at the bottom of the view."""
        self._layout()
        row = int(self.scroll_offset.y) + max(1, self.scrollable_content_region.height) - 1
        return self._line_of(row) + 1

    # -- rows ---------------------------------------------------------------------------------
    def _text_width(self) -> int:
        """The cells for text (0 before the view has a size); the width a zoom is about to
        give the view once :meth:`wrap_for` has been told it."""
        region = self._coming_width or self.scrollable_content_region.width
        return max(1, region - self._gutter) if region else 0

    def _layouts_of(self, lines: list[Content]) -> dict[int, _Layout]:
        """The layouts worked out for this very list of lines before, or a new empty set."""
        for kept, known in self._kept_layouts:
            if kept is lines:
                return known
        layouts: dict[int, _Layout] = {}
        self._kept_layouts = [(lines, layouts), *self._kept_layouts[: KEPT_LAYOUTS - 1]]
        return layouts

    def wrap_for(self, region_width: int) -> None:
        """Wrap the rows for a view ``region_width`` cells wide before it is (a zoom about to
        happen): the first frame at that width draws them, the line at the top stays there,
        and the resize that follows finds them done (else it wraps them, a layout later)."""
        if not self.wrap or region_width <= self._gutter:
            return
        self._coming_width = region_width
        self._wrap_keeping_top()
        self.call_after_refresh(self._width_came)

    def _width_came(self) -> None:
        """The width :meth:`wrap_for` expected is the view's now, or it is not (the zoom did
        not come): either way the view's own width counts again."""
        if self._coming_width is not None:
            self._coming_width = None
            self.on_resize()

    def _layout(self, force: bool = False, keep: bool = False) -> None:
        """Map rows to lines for the view's width (with wrapping), and size the view.
        ``force``: even at the same width; ``keep``: the layouts known stay valid."""
        width = self._text_width()
        if not force and (not self.wrap or width == self._rows_width):
            return
        self._rows_width = width
        self._cache.clear()
        self._pieces = {}
        if force and not keep:
            self._layouts.clear()
        if self.wrap and width and self._width > width:
            known = self._layouts.get(width)
            if known is None:
                rows: list[tuple[int, int]] = []
                for index, line in enumerate(self._lines):
                    if line.cell_length <= width:
                        rows.append((index, 0))
                        continue
                    pieces = line.wrap(width)
                    self._pieces[index] = pieces
                    rows.extend((index, piece) for piece in range(len(pieces)))
                known = self._layouts[width] = (rows, self._pieces)
            self._rows, self._pieces = known
            self.virtual_size = Size(width + self._gutter, len(self._rows))
        else:
            self._rows = None
            self.virtual_size = Size(self._width + self._gutter + 1, len(self._lines))
        self.refresh()

    def _row_of(self, line: int) -> int:
        """The first row of 1-based ``line``."""
        index = max(0, line - 1)
        if self._rows is None:
            return index
        from bisect import bisect_left

        return bisect_left(self._rows, (index, 0))

    def _line_of(self, row: int) -> int:
        """The 0-based line shown on ``row``."""
        if self._rows is None:
            return min(row, max(0, len(self._lines) - 1))
        if not self._rows:
            return 0
        return self._rows[min(row, len(self._rows) - 1)][0]

    def on_resize(self) -> None:
        """A new width wraps lines anew: the line at the top stays at the top (zooming in and
        out keeps the reader's place)."""
        self._coming_width = None
        if self.wrap and self._text_width() != self._rows_width:
            self._wrap_keeping_top()

    def _wrap_keeping_top(self) -> None:
        """Wrap the rows for the width that counts now (:meth:`_text_width`); the line at the
        top of the view stays there."""
        top = self._line_of(int(self.scroll_offset.y)) + 1 if self._rows_width else None
        self._layout()
        if top is not None:
            self.scroll_to(y=self._row_of(top), animate=False, immediate=True)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    # -- drawing ------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.scrollable_content_region.width
        rows = self._rows
        count = len(rows) if rows is not None else len(self._lines)
        if row >= count:
            return Strip.blank(width, self.rich_style)
        index, piece = rows[row] if rows is not None else (row, 0)
        number = index + 1
        marked = self._passage is not None and self._passage[0] <= number <= self._passage[1]
        key = (row, scroll_x, width, marked)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        gutter_class = "text-view--passage-gutter" if marked else "text-view--gutter"
        label = f"{number:>{self._gutter - 1}} " if piece == 0 else " " * self._gutter
        gutter = Strip([Segment(label, self.get_component_rich_style(gutter_class))])
        style = self.get_visual_style("text-view--passage") if marked else self.get_visual_style()
        pieces = self._pieces.get(index)
        content = pieces[piece] if pieces is not None else self._lines[index]
        if self._find is not None:
            content = self._mark_found(content)
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

    def _mark_found(self, content: Content) -> Content:
        assert self._find is not None
        style = self.get_visual_style("text-view--match")
        for match in self._find.finditer(content.plain):
            if match.end() > match.start():
                content = content.stylize(style, match.start(), match.end())
        return content
