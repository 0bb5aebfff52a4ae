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

from explorer.tui.widgets.picker import PickerScreen
from explorer.tui.widgets.preview import Heading

INDENT = "  "


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

    def compose(self) -> ComposeResult:
        with Vertical(id="outline-dialog"):
            yield Input(placeholder="Filter headings…", id="outline-input")
            yield OptionList(id="outline-list")

    def on_mount(self) -> None:
        dialog = self.query_one("#outline-dialog")
        dialog.border_title = f"Outline · {self.path.rsplit('/', 1)[-1]}"
        self._show("")
        above = [i for i, heading in enumerate(self.shown) if heading.line <= self.current]
        if above:
            self.query_one("#outline-list", OptionList).highlighted = above[-1]
        self.query_one("#outline-input", Input).focus()

    @on(Input.Changed, "#outline-input")
    def _changed(self, event: Input.Changed) -> None:
        self._show(event.value)

    def _show(self, text: str) -> None:
        words = text.lower().split()
        self.shown = [h for h in self.headings if all(w in h.title.lower() for w in words)]
        options = self.query_one("#outline-list", OptionList)
        top = min((h.level for h in self.headings), default=1)
        if self.shown:
            options.set_options([Option(heading_prompt(h, top)) for h in self.shown])
            options.highlighted = 0
        elif self.headings:
            options.set_options(
                [Option(Content.styled("No such heading", "$text-muted"), disabled=True)]
            )
        else:
            options.set_options(
                [Option(Content.styled("This file has no headings", "$text-muted"), disabled=True)]
            )
        self.query_one(
            "#outline-dialog"
        ).border_subtitle = f"{len(self.shown)} of {len(self.headings)} headings"

    def chosen(self, index: int) -> int | None:
        return self.shown[index].line if 0 <= index < len(self.shown) else None
