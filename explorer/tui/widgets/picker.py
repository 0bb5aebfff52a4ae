"""The base of the pickers (go to file, recent files, the outline, the page's links): a field
that narrows a list; Up and Down move in the list, Enter takes its row, Esc closes.

Enter and Esc close the picker while the key is handled (priority bindings), so the keys typed
right after them are the screen's below, never typed into a field that is going away.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from textual import events, on
from textual.binding import Binding
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

T = TypeVar("T")

ROOM_AROUND = 10
"""Rows of the window a picker's list leaves to the rest: the dialog's margin above it (3), its
borders (2), its field and the blank row under the field (2), and 3 rows of the window below."""


def note_row(text: str) -> Option:
    """A row of a list that says something and leads nowhere: why the list is empty, or how
    many rows it does not list."""
    return Option(Content.styled(text, "$text-muted"), disabled=True)


class PickerScreen(ModalScreen[T | None], Generic[T]):
    """A modal list narrowed by a field; a subclass says its list (:attr:`LIST_ID`) and what
    its rows are (:meth:`chosen`)."""

    LIST_ID = ""
    """The id of the picker's option list."""
    LIST_ROWS = 30
    """The most rows the list shows, in a window tall enough."""
    _rows: int | None = None
    """The rows the list is bounded to now (set when the picker opens)."""
    BINDINGS = [
        Binding("escape", "cancel", "Close", show=False, priority=True),
        Binding("enter", "choose", "Open", show=False, priority=True),
        Binding("down", "move(1)", "Down", show=False),
        Binding("up", "move(-1)", "Up", show=False),
    ]

    def chosen(self, index: int) -> T | None:
        """What row ``index`` of the list stands for (None: a message row)."""
        raise NotImplementedError

    def listing(self) -> bool:
        """Whether the list holds rows to take (not only a message saying why not)."""
        return self.chosen(0) is not None

    @property
    def options(self) -> OptionList:
        return self.query_one(f"#{self.LIST_ID}", OptionList)

    def list_rows(self, window_height: int) -> int:
        """The rows the list may take in a window this tall: a list taller than its dialog
        can hold has its last rows cut off, and the highlight among them out of sight."""
        return max(3, min(self.LIST_ROWS, window_height - ROOM_AROUND))

    @on(events.Mount)
    def _fit_list(self) -> None:
        # Bounded in cells before the first layout: a bound relative to the window (80 %, vh)
        # is not applied to a list inside a dialog whose height is its content's.
        self._bound_list(self.app.size.height)

    @on(events.Resize)
    def _refit_list(self, event: events.Resize) -> None:
        if self._bound_list(event.size.height):  # resized since the picker opened
            self.call_after_refresh(self.options.scroll_to_highlight)

    def _bound_list(self, window_height: int) -> bool:
        """Bound the list to the rows a window this tall leaves it; whether that changed."""
        rows = self.list_rows(window_height)
        if rows == self._rows:
            return False
        self._rows = rows
        self.options.styles.max_height = rows
        return True

    def action_choose(self) -> None:
        index = self.options.highlighted
        picked = self.chosen(index) if index is not None else None
        if picked is not None:
            self.dismiss(picked)

    @on(OptionList.OptionSelected)
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        picked = self.chosen(event.option_index)
        if picked is not None:
            self.dismiss(picked)

    def action_move(self, delta: int) -> None:
        options = self.options
        if options.option_count and self.listing():
            current = options.highlighted or 0
            options.highlighted = max(0, min(options.option_count - 1, current + delta))

    def action_cancel(self) -> None:
        self.dismiss(None)
