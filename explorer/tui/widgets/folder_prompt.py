"""Add a folder to the window: a one-line dialog that asks for its path.

The dialog does not judge the path itself: the screen hands it a ``check`` that turns the text
into the folder to open (its collection name and settings) or raises
:class:`~explorer.core.errors.ExplorerError`, whose one line the dialog shows under the field
while the user corrects the path. Enter on a good path dismisses with the folder; Escape, with
None.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from explorer.core.errors import ExplorerError
from explorer.core.safe_text import safe_text
from explorer.settings.config import NamedFolder

HINT = "A folder's path (~ and relative paths work). Enter opens it, Esc closes."


class FolderPrompt(ModalScreen[NamedFolder | None]):
    """Asks for a folder's path; dismisses with the folder ``check`` makes of it, or None."""

    BINDINGS = [Binding("escape", "cancel", "Close", show=False)]

    def __init__(self, check: Callable[[str], NamedFolder], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._check = check

    def compose(self) -> ComposeResult:
        with Vertical(id="folder-dialog") as dialog:
            dialog.border_title = "Add a folder"
            yield Input(placeholder="~/notes", id="folder-input")
            yield Static(Content(HINT), id="folder-message")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            return
        try:
            folder = self._check(text)
        except ExplorerError as error:
            message = self.query_one("#folder-message", Static)
            message.update(Content.styled(safe_text(str(error)), "$text-error"))
            return
        self.dismiss(folder)

    def action_cancel(self) -> None:
        self.dismiss(None)
