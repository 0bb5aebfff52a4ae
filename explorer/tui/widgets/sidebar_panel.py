"""The base of the sidebar's panels (links, related files): a list about the open file.

What the panels share lives here once (frogmouth's ``NavigationPane`` is the model): the file
they are about (:attr:`SidebarPanel.source`, named in the bottom border), a muted message in
place of rows, a cursor that is on the first row whenever new rows come (so Enter opens the
first item, never a stale one), opening a row as one :class:`~explorer.tui.messages.OpenFile`,
the same keys, and showing a worker's failure. A panel says which rows open what
(:meth:`row_target`) and loads its own rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar, Self

from textual import on
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import OptionDoesNotExist
from textual.worker import Worker

from explorer.core.safe_text import safe_name, safe_text
from explorer.tui.later import Later
from explorer.tui.messages import OpenFile
from explorer.tui.text_fit import middle_path
from explorer.tui.widgets.picker import note_row
from explorer.tui.workers import report_worker_failure

if TYPE_CHECKING:
    from textual.widgets._option_list import OptionListContent

SUBTITLE_MARGIN = 6
"""Cells of the border around the subtitle (corners, the rule and a space each side)."""
DEFAULT_WIDTH = 34
"""The width rows are laid out for before the panel has a size."""
NOTE_AFTER = 0.25
"""Seconds another file's rows may take before a note ("Finding related files…") takes the
place of the rows on show. Most answers come sooner, and the panel then changes once."""


class SidebarPanel(OptionList):
    """A list of rows about :attr:`source`; Enter opens the highlighted row's target."""

    DEFAULT_CSS = """
    SidebarPanel {
        /* The rows are laid out for the width: a scrollbar that took its cell from them only
           once it appeared would leave every row measured a cell too wide. */
        scrollbar-gutter: stable;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Open", tooltip="Open the file at the row's line"),
        Binding("j", "cursor_down", "Down", show=False, tooltip="Next row"),
        Binding("k", "cursor_up", "Up", show=False, tooltip="Previous row"),
    ]

    on_worker_state_changed = report_worker_failure

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source: str | None = None
        """The file the rows are about (or are being loaded for)."""
        self._note: Later | None = None
        """The timer that puts :meth:`await_rows`'s note in place of the rows left on show."""

    # -- what a panel defines -----------------------------------------------------------------
    def row_target(self, index: int) -> OpenFile | None:
        """What Enter on option ``index`` opens (None: a header or a message)."""
        return None

    # -- shared behaviour ---------------------------------------------------------------------
    def show_message(self, text: str) -> None:
        """Nothing open: ``text`` in place of rows, and no file named."""
        self.source = None
        self.border_subtitle = ""
        self._message(text)

    def await_rows(self, source: str, note: str) -> None:
        """Rows about ``source`` are being read. Until they come, the rows on show stay under
        the name of the file they are about, and ``note`` takes their place only if the answer
        is slower than :data:`NOTE_AFTER`: going back to a page then changes the panel once
        (its rows), not twice (a note, then rows), and each change lays the screen out again.
        The panel's :meth:`row_target` must give None meanwhile: Enter on a row left on show
        opens nothing."""
        self.source = source
        self._stop_note()

        def late() -> None:
            self._note = None
            self.name_source(source)
            self._message(note)

        self._note = Later(self, NOTE_AFTER, late)

    def _stop_note(self) -> None:
        if self._note is not None:
            self._note.stop()
            self._note = None

    def set_options(self, options: Iterable[OptionListContent]) -> Self:
        """New rows or a message: a note still waiting to be shown is not needed."""
        self._stop_note()
        return super().set_options(options)

    def _message(self, text: str) -> None:
        """``text`` (muted, not selectable) in place of the rows."""
        self.set_options([note_row(safe_text(text))])

    def show_failure(self, worker: Worker[Any], text: str) -> None:
        """The panel's worker failed: say so in place of the rows."""
        self._message(f"Cannot show this: {text}")

    def name_source(self, source: str) -> None:
        """Name the open file in the bottom border, with its folder, shortened in the middle."""
        width = self.outer_size.width
        room = width - SUBTITLE_MARGIN if width > 16 else DEFAULT_WIDTH
        self.border_subtitle = Content(middle_path(safe_name(source), room))

    def row_width(self) -> int:
        """The cells a row may use (the scrollbar's gutter is kept out of them)."""
        width = self.scrollable_content_region.width
        return width if width > 10 else DEFAULT_WIDTH

    def first_row(self) -> int | None:
        """The first option that opens something."""
        return next((i for i in range(self.option_count) if self.row_target(i)), None)

    def place_cursor(self, keep: str | None = None) -> None:
        """After new rows: the cursor on the option whose id is ``keep`` when it is still
        there, else on the first row, so Enter opens what the user sees first."""
        if keep is not None:
            try:
                self.highlighted = self.get_option_index(keep)
                return
            except OptionDoesNotExist:  # the row is gone
                pass
        self.highlighted = self.first_row()

    def on_focus(self) -> None:
        """Arriving from the keyboard, a row is ready for Enter."""
        if self.highlighted is None:
            self.highlighted = self.first_row()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        target = self.row_target(event.option_index)
        if target is not None:
            self.post_message(target)
