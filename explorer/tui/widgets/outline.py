"""The outline of the open file (``t`` in the preview): its headings, indented by level; type
to narrow them, Enter goes to one (frogmouth's table of contents is the model)."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from explorer.tui.widgets.picker import PickerScreen, note_row
from explorer.tui.widgets.preview import Heading

INDENT = "  "
ROWS_SHOWN = 200
"""Headings listed at most, around the reader's; typing narrows them all. A list measures every
row it is given: a changelog of 2,000 versions took 217 ms to open its outline."""


def heading_prompt(heading: Heading, top_level: int) -> Content:
    """One heading: indented by its level below the file's top one, with its line."""
    depth = max(0, heading.level - top_level)
    return Content.assemble(
        (INDENT * depth, ""),
        (heading.title or "(untitled)", "bold $text-primary" if depth == 0 else ""),
        (
            f"  p. {heading.page}" if heading.page is not None else f"  L{heading.line}",
            "$text-muted",
        ),
    )


class OutlineScreen(PickerScreen[int]):
    """The headings of a file; dismisses with the chosen heading's line (or None)."""

    LIST_ID = "outline-list"

    def __init__(self, path: str, headings: list[Heading], current: int = 1, **kwargs: Any):
        """``current``: the line the reader is at (the cursor starts on its heading)."""
        super().__init__(**kwargs)
        self.path = path
        self.headings = headings
        self.current = current
        self.shown: list[Heading] = []
        self.first = 0
        """The index in :attr:`shown` of the first heading listed."""

    def compose(self) -> ComposeResult:
        with Vertical(id="outline-dialog"):
            yield Input(placeholder="Filter headings…", id="outline-input")
            yield OptionList(id="outline-list")

    def on_mount(self) -> None:
        dialog = self.query_one("#outline-dialog")
        dialog.border_title = f"Outline · {self.path.rsplit('/', 1)[-1]}"
        above = [i for i, heading in enumerate(self.headings) if heading.line <= self.current]
        self._show("", around=above[-1] if above else None)
        if above:
            self.query_one("#outline-list", OptionList).highlighted = self._row_of(above[-1])
            self.call_after_refresh(self._centre_highlight)
        self.query_one("#outline-input", Input).focus()

    def _centre_highlight(self) -> None:
        """Put the reader's heading a third of the way down the list, the headings before and
        after it in sight (a list scrolls a row just into view: deep in a long page the
        reader's heading was the list's last row, nothing after it shown)."""
        options = self.options
        if options.highlighted is None or not options.max_scroll_y:
            return
        options.scroll_to_highlight(top=True)
        above = options.scrollable_content_region.height // 3
        options.scroll_to(y=max(0, options.scroll_y - above), animate=False, immediate=True)

    @on(Input.Changed, "#outline-input")
    def _changed(self, event: Input.Changed) -> None:
        self._show(event.value)

    def _show(self, text: str, around: int | None = None) -> None:
        """List the headings ``text`` narrows to: at most :data:`ROWS_SHOWN`, from the first
        or ``around`` the heading of that index."""
        words = text.lower().split()
        self.shown = [h for h in self.headings if all(w in h.title.lower() for w in words)]
        options = self.query_one("#outline-list", OptionList)
        top = min((h.level for h in self.headings), default=1)
        self.first = 0
        if around is not None and len(self.shown) > ROWS_SHOWN:
            self.first = min(max(0, around - ROWS_SHOWN // 2), len(self.shown) - ROWS_SHOWN)
        listed = self.shown[self.first : self.first + ROWS_SHOWN]
        if listed:
            rows = [Option(heading_prompt(h, top)) for h in listed]
            if self.first:
                rows.insert(0, note_row(f"… {self.first:,} headings above: type to narrow"))
            below = len(self.shown) - self.first - len(listed)
            if below:
                rows.append(note_row(f"… {below:,} more headings: type to narrow"))
            options.set_options(rows)
            options.highlighted = self._row_of(self.first)
        elif self.headings:
            options.set_options([note_row("No such heading")])
        else:
            options.set_options([note_row("This file has no headings")])
        self.query_one(
            "#outline-dialog"
        ).border_subtitle = f"{len(self.shown)} of {len(self.headings)} headings"

    def _row_of(self, position: int) -> int:
        """The row of the list showing heading ``position`` of :attr:`shown`."""
        return position - self.first + (1 if self.first else 0)

    def chosen(self, index: int) -> int | None:
        position = self.first + index - (1 if self.first else 0)
        listed = min(len(self.shown), self.first + ROWS_SHOWN)
        return self.shown[position].line if self.first <= position < listed else None

    def listing(self) -> bool:
        return bool(self.shown)
