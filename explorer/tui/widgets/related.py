"""The related sidebar: the files nearest in meaning to the open one, and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual import on
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from explorer.safe_text import safe_text

PASSAGE_CHARS = 140


def related_prompt(item: Any) -> Content:
    """The row of one :class:`~explorer.core.related.RelatedFile`."""
    passage = item.related_passage
    text = safe_text(passage.text)
    if len(text) > PASSAGE_CHARS:
        text = text[: PASSAGE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    lines = [
        Content.assemble(
            (f"{item.score:.2f} ", "$text-muted"), (safe_text(item.path), "bold $text-primary")
        ),
        Content.assemble(
            ("  ", ""),
            (safe_text(passage.heading) or "(top)", "$text-secondary"),
            (f"  L{passage.start_line}", "$text-muted"),
        ),
        Content.assemble(("  ", ""), (text, "")),
    ]
    return Content("\n").join(lines)


class RelatedList(OptionList):
    """Neighbours of the open file; Enter opens one at its explaining passage."""

    BORDER_TITLE = "Related"

    @dataclass
    class Opened(Message):
        """Open ``path`` at lines ``start``–``end``."""

        related: RelatedList
        path: str
        start: int
        end: int

        @property
        def control(self) -> RelatedList:
            return self.related

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source: str | None = None
        """The file whose neighbours are shown (or being loaded)."""
        self.items: list[Any] = []
        self.state = "idle"
        """``idle``, ``loading``, ``ready`` or ``empty`` (with a message)."""

    def on_mount(self) -> None:
        self.show_message("Open a file to see the files related to it.")

    def show_loading(self, source: str) -> None:
        if self.source != source or self.state != "ready":
            self.source = source
            self.state = "loading"
            self._message("Finding related files…")
        self.border_subtitle = Content(safe_text(source.rsplit("/", 1)[-1]))

    def show_related(self, source: str, items: list[Any], message: str = "") -> None:
        """Show the neighbours of ``source`` (or ``message`` when there are none)."""
        self.source = source
        self.items = list(items)
        self.border_subtitle = Content(safe_text(source.rsplit("/", 1)[-1]))
        if not self.items:
            self.state = "empty"
            self._message(message or "No related files.")
            return
        self.state = "ready"
        previous = self.highlighted_option.id if self.highlighted_option else None
        self.set_options([Option(related_prompt(item), id=item.path) for item in self.items])
        ids = [item.path for item in self.items]
        self.highlighted = ids.index(previous) if previous in ids else None

    def show_message(self, text: str) -> None:
        self.source = None
        self.state = "idle"
        self.border_subtitle = ""
        self._message(text)

    def _message(self, text: str) -> None:
        self.items = []
        self.set_options([Option(Content.styled(safe_text(text), "$text-muted"), disabled=True)])

    def on_focus(self) -> None:
        """Arriving from the keyboard, the first neighbour is ready for Enter."""
        if self.items and self.highlighted is None:
            self.highlighted = 0

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_index < len(self.items):
            item = self.items[event.option_index]
            passage = item.related_passage
            self.post_message(self.Opened(self, item.path, passage.start_line, passage.end_line))
