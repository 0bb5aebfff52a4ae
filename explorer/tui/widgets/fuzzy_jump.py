"""Quick open (ctrl+p): type a few letters of a file name, Enter opens the best match."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from explorer.core.fuzzy import PathMatch, match_paths
from explorer.safe_text import safe_spans

LIMIT = 50


def match_prompt(match: PathMatch) -> Content:
    """A path (control characters escaped) with its matched characters marked."""
    folder_end = match.path.rfind("/") + 1
    spans = [(p, p + 1) for p in match.positions] + [(0, folder_end)]
    path, spans = safe_spans(match.path, spans)
    content = Content(path)
    for start, end in spans[:-1]:
        content = content.stylize("bold $text-accent underline", start, end)
    _start, folder_end = spans[-1]
    if folder_end:
        content = content.stylize_before("$text-muted", 0, folder_end)
    return content


class FuzzyJump(ModalScreen[str | None]):
    """A quick-open dialog over the given paths; dismisses with the chosen path (or None)."""

    BINDINGS = [
        Binding("escape", "cancel", "Close", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("up", "move(-1)", "Up", show=False),
    ]

    def __init__(self, paths: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.paths = paths
        self.matches: list[PathMatch] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="fuzzy-dialog"):
            yield Input(placeholder="Go to file…", id="fuzzy-input")
            yield OptionList(id="fuzzy-list")

    def on_mount(self) -> None:
        self.query_one("#fuzzy-dialog").border_title = "Go to file"
        self._refresh_matches("")
        self.query_one("#fuzzy-input", Input).focus()

    @on(Input.Changed, "#fuzzy-input")
    def _changed(self, event: Input.Changed) -> None:
        self._refresh_matches(event.value)

    @on(Input.Submitted, "#fuzzy-input")
    def _submitted(self) -> None:
        options = self.query_one("#fuzzy-list", OptionList)
        index = options.highlighted
        if index is not None and index < len(self.matches):
            self.dismiss(self.matches[index].path)

    @on(OptionList.OptionSelected, "#fuzzy-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_index < len(self.matches):
            self.dismiss(self.matches[event.option_index].path)

    def _refresh_matches(self, text: str) -> None:
        self.matches = match_paths(text, self.paths, LIMIT)
        options = self.query_one("#fuzzy-list", OptionList)
        if self.matches:
            options.set_options([Option(match_prompt(m), id=m.path) for m in self.matches])
            options.highlighted = 0
        else:
            options.set_options(
                [Option(Content.styled("No matching file", "$text-muted"), disabled=True)]
            )
        self.query_one(
            "#fuzzy-dialog"
        ).border_subtitle = f"{len(self.matches)} of {len(self.paths)}"

    def action_move(self, delta: int) -> None:
        options = self.query_one("#fuzzy-list", OptionList)
        if not self.matches:
            return
        current = options.highlighted or 0
        options.highlighted = max(0, min(len(self.matches) - 1, current + delta))

    def action_cancel(self) -> None:
        self.dismiss(None)
