"""The page's links, picked from the keyboard (``f`` in the preview, as qutebrowser's hints and
frogmouth's navigation do): every link of the open file in the order it appears, with where it
leads and whether it does (ok, missing, external); typing narrows them, Enter follows one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from explorer.core.retrieval.link_resolution import LinkState
from explorer.core.safe_text import safe_name, safe_text
from explorer.tui.text_fit import middle_path
from explorer.tui.widgets.picker import PickerScreen, note_row

if TYPE_CHECKING:
    from explorer.core.retrieval.links import Link

STATES = {
    LinkState.RESOLVED: ("ok", "$text-success"),
    LinkState.MISSING: ("missing", "bold $text-error"),
    LinkState.OUTSIDE_ROOT: ("external", "$text-muted"),
}
"""How a link's state reads in the picker, and its style."""
ROWS_SHOWN = 100
"""Links listed at most; typing narrows the rest. A manual's table of contents holds 14,000
links, and a list measures every row it is given: all of them took 1.0-1.4 s to open."""
TARGET_MARK = "  → "
MIN_TARGET_CELLS = 12
"""A link's target keeps at least this many cells (its file's name, cut in the middle); the row
wraps when the link as written leaves less."""
DIALOG_WIDTH, DIALOG_SHARE, DIALOG_FRAME = 80, 0.9, 6
"""The dialog's width (``app.tcss``: 80 cells, at most 90 % of the screen), less its border,
padding and scroll bar."""


def link_prompt(link: Link, width: int = 0) -> Content:
    """One link: its line, its state, the link as written and the file it leads to, that
    path shortened in the middle to end the row within ``width`` cells (0: whole; a vault's
    note five folders deep took four rows of an 80-column picker)."""
    word, style = STATES.get(link.state, (str(link.state), "$text-muted"))
    raw = safe_text(link.raw)
    parts = [
        (f"L{link.line:<5}", "$text-muted"),
        (f"{word:<9}", style),
        (raw, "bold" if link.exists else ""),
    ]
    if link.exists and link.target != link.raw:
        target = safe_name(link.target)
        if width:
            room = width - 6 - 9 - cell_len(raw) - len(TARGET_MARK)
            target = middle_path(target, max(room, MIN_TARGET_CELLS))
        parts.append((f"{TARGET_MARK}{target}", "$text-secondary"))
    return Content.assemble(*parts)


def matches(link: Link, words: list[str]) -> bool:
    """Whether every typed word is in the link as written, where it leads or its state."""
    word, _style = STATES.get(link.state, (str(link.state), ""))
    text = f"{link.raw} {link.target} {word}".lower()
    return all(typed in text for typed in words)


class LinkPicker(PickerScreen["Link"]):
    """The links of a page; dismisses with the chosen one (or None)."""

    LIST_ID = "links-picker-list"

    def __init__(self, path: str, links: list[Link], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.path = path
        self.links = sorted(links, key=lambda link: link.line)
        """In the order they appear in the page."""
        self.shown: list[Link] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="links-dialog"):
            yield Input(placeholder="Type to narrow the links…", id="links-input")
            yield OptionList(id="links-picker-list")

    def on_mount(self) -> None:
        dialog = self.query_one("#links-dialog")
        dialog.border_title = f"Links · {safe_name(self.path.rsplit('/', 1)[-1])}"
        self._show("")
        self.set_focus(self.query_one("#links-input", Input))

    @on(Input.Changed, "#links-input")
    def _changed(self, event: Input.Changed) -> None:
        self._show(event.value)

    def _show(self, text: str) -> None:
        words = text.lower().split()
        self.shown = [link for link in self.links if matches(link, words)]
        options = self.query_one("#links-picker-list", OptionList)
        if self.shown:
            width = min(DIALOG_WIDTH, int(self.app.size.width * DIALOG_SHARE)) - DIALOG_FRAME
            rows = [Option(link_prompt(link, width)) for link in self.shown[:ROWS_SHOWN]]
            if len(self.shown) > ROWS_SHOWN:
                more = f"… {len(self.shown) - ROWS_SHOWN:,} more: type to narrow the links"
                rows.append(note_row(more))
            options.set_options(rows)
            options.highlighted = 0
        else:
            said = "No such link" if self.links else "This page has no links"
            options.set_options([note_row(said)])
        self.query_one(
            "#links-dialog"
        ).border_subtitle = f"{len(self.shown)} of {len(self.links)} links · Enter follows"

    def chosen(self, index: int) -> Link | None:
        listed = min(len(self.shown), ROWS_SHOWN)
        return self.shown[index] if 0 <= index < listed else None
