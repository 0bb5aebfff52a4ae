"""The preview's text view: lines with line numbers, drawn only on screen, a line range marked."""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual


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
        self._cache: LRUCache[tuple[int, int, int, bool], Strip] = LRUCache(1024)

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
