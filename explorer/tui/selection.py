"""The selection: the file (and line, and passage) the user means by "this", whichever pane
they are in, and what copy (``c``, ``C``, ``p``), open (``ctrl+o``) and edit (``ctrl+e``) do
with it. Composed into the main screen, which binds the keys.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from explorer.core.errors import ExplorerError
from explorer.core.ingest.file_reading import decode_leniently, read_head
from explorer.tui.widgets.file_tree import FileTree
from explorer.tui.widgets.links import LinksList
from explorer.tui.widgets.preview import MAX_PREVIEW_BYTES
from explorer.tui.widgets.related import RelatedList
from explorer.tui.widgets.results import ResultsList

if TYPE_CHECKING:
    from textual.app import App
    from textual.widget import Widget

    from explorer.tui.widgets.preview import Preview

EDITORS_WITH_LINE = {"vi", "vim", "nvim", "nano", "emacs", "micro", "kak", "hx", "helix", "joe"}
"""Editors that open a file at a line given as ``+LINE``."""


class SelectingScreen(Protocol):
    """What the selection reads of the screen."""

    @property
    def focused(self) -> Widget | None: ...
    @property
    def app(self) -> App[object]: ...
    @property
    def preview(self) -> Preview: ...

    current_path: str | None

    def file_on_disk(self, path: str) -> Path | None: ...


class Selection:
    """The file the user means, and what the keys that act on it do."""

    def __init__(self, screen: SelectingScreen) -> None:
        self.screen = screen

    def path(self) -> tuple[str | None, int | None]:
        """The file the user means: the focused list's item, else the open file (at the
        marked passage, else the line at the top of the preview)."""
        focused = self.screen.focused
        if isinstance(focused, ResultsList) and (hit := focused.highlighted_hit) is not None:
            return hit.path, hit.passages[0].opens_at if hit.passages else None
        if isinstance(focused, FileTree):
            node = focused.cursor_node
            if node is not None and node.data is not None and not node.data.is_dir:
                return node.data.path, None
        if isinstance(focused, LinksList | RelatedList):
            index = focused.highlighted
            target = focused.row_target(index) if index is not None else None
            if target is not None:
                return target.path, target.line
        current, preview = self.screen.current_path, self.screen.preview
        if current is None:
            return None, None
        if preview.finding and preview.found_index is not None:
            return current, preview.found[preview.found_index]
        passage = preview.passage
        if passage is not None and preview.passage_visible():
            return current, passage[0]
        return current, preview.position() if preview.loaded else None

    def passage(self, path: str, line: int | None) -> str:
        """The text the user means at ``line`` of ``path``: the marked passage or result's
        passage that holds it, else that line."""
        spans: list[tuple[int, int]] = []
        focused = self.screen.focused
        if isinstance(focused, ResultsList) and (hit := focused.highlighted_hit) is not None:
            spans = [(p.start_line, p.end_line) for p in hit.passages]
        elif isinstance(focused, RelatedList) and focused.highlighted is not None:
            if focused.highlighted < len(focused.items):
                passage = focused.items[focused.highlighted].related_passage
                spans = [(passage.start_line, passage.end_line)]
        elif path == self.screen.current_path:
            spans = list(self.screen.preview.passages)
        start = end = line or 1
        for first, last in spans:
            if first <= start <= last:
                start, end = first, last
                break
        if path == self.screen.current_path and self.screen.preview.loaded:
            return self.screen.preview.text_of(start, end)
        absolute = self.screen.file_on_disk(path)
        if absolute is None:
            return ""
        try:
            text = decode_leniently(read_head(absolute, MAX_PREVIEW_BYTES))
        except (OSError, ExplorerError):
            return ""
        return "\n".join(text.replace("\r\n", "\n").split("\n")[start - 1 : end])

    def copy(self, what: str) -> None:
        """Copy the selected file's path (``C``), ``path:line`` (``c``) or its passage (``p``)
        to the clipboard (OSC 52: the terminal must allow it)."""
        path, line = self.path()
        if path is None:
            self.screen.app.notify("open or select a file first", severity="warning", timeout=3)
            return
        if what == "path":
            text, said = path, path
        elif what == "passage":
            text = self.passage(path, line)
            said = f"the passage of {path}" + (f" at L{line}" if line else "")
        else:
            text = said = f"{path}:{line}" if line else path
        if not text:
            self.screen.app.notify("nothing to copy there", severity="warning", timeout=3)
            return
        self.screen.app.copy_to_clipboard(text)
        self.screen.app.notify(f"copied {said}", title="Clipboard", timeout=3)

    def open_with_system(self) -> None:
        """Open the selected file with the system's application (``o``; a PDF: its viewer)."""
        from explorer.tui.system_open import open_with_system

        path, _line = self.path()
        absolute = self.screen.file_on_disk(path) if path is not None else None
        if absolute is None:
            self.screen.app.notify("open or select a file first", severity="warning", timeout=3)
            return
        try:
            open_with_system(absolute)
        except ExplorerError as error:
            self.screen.app.notify(str(error), severity="error")
            return
        self.screen.app.notify(f"opened {path} with the system's application", timeout=3)

    def edit(self) -> None:
        path, line = self.path()
        if path is None:
            self.screen.app.notify("open a file first", severity="warning")
            return
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        command = shlex.split(editor)
        if line and Path(command[0]).name in EDITORS_WITH_LINE:
            command.append(f"+{line}")
        absolute = self.screen.file_on_disk(path)
        if absolute is None:
            return
        command.append(str(absolute))
        try:
            with self.screen.app.suspend():
                subprocess.run(command, check=False)
        except FileNotFoundError:
            self.screen.app.notify(f"editor not found: {editor} (set $EDITOR)", severity="error")
            return
        except Exception as error:  # noqa: BLE001 - e.g. SuspendNotSupported in a test driver
            self.screen.app.notify(
                f"cannot open an editor here: {error or type(error).__name__}", severity="warning"
            )
            return
        if path == self.screen.current_path:
            self.screen.preview.reload(absolute)
