"""MainScreen's actions: the key-bound actions, opening a file in $EDITOR, and the command
palette entries.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Iterable
from pathlib import Path

from textual.app import SystemCommand
from textual.message_pump import MessagePump
from textual.widgets import Input

from explorer.tui.widgets.file_tree import FileTree
from explorer.tui.widgets.links import LinksList
from explorer.tui.widgets.related import RelatedList
from explorer.tui.widgets.results import ResultsList
from explorer.tui.widgets.search_box import MODES

EDITORS_WITH_LINE = {"vi", "vim", "nvim", "nano", "emacs", "micro", "kak", "hx", "helix", "joe"}


class ActionsMixin(MessagePump):
    """The screen's actions and its command palette commands; mixed into MainScreen."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``/`` is a character in a text field (paths, "http/3"): there it is typed, not bound."""
        if action == "focus_search" and isinstance(self.focused, Input):
            return False
        return True

    # -- actions ------------------------------------------------------------------------------
    def action_focus_search(self) -> None:
        self.search_box.focus_query()

    def action_focus_filter(self) -> None:
        self.search_box.focus_filter()

    def action_next_passage(self) -> None:
        self.preview.action_next_passage()

    def action_previous_passage(self) -> None:
        self.preview.action_previous_passage()

    def action_cycle_mode(self) -> None:
        mode = self.search_box.cycle_mode()
        self.notify(f"search mode: {mode}", timeout=2)

    def action_set_mode(self, mode: str) -> None:
        self.search_box.set_mode(mode)

    def action_clear_filter(self) -> None:
        self.search_box.set_filter("")
        text = " ".join(
            w
            for w in self.search_box.text.split()
            if not w.startswith(("path:", "tag:", "version:"))
        )
        self.search_box.set_text(text)

    def action_fuzzy_jump(self) -> None:
        from explorer.tui.widgets.fuzzy_jump import FuzzyJump  # rapidfuzz: only when asked

        paths = self.tree.paths or sorted(self.files)
        titles = {path: record.title for path, record in self.files.items() if record.title}
        self.app.push_screen(FuzzyJump(paths, titles), self._jumped)

    def _jumped(self, path: str | None) -> None:
        if path:
            self.open_file(path)
            self.preview.focus_content()

    def action_help(self) -> None:
        from explorer.tui.widgets.help import HelpScreen

        self.app.push_screen(HelpScreen())

    def action_toggle_related(self) -> None:
        sidebar = self.query_one("#sidebar")
        sidebar.display = not sidebar.display

    def action_focus(self, target: str) -> None:
        {
            "tree": self.tree.focus,
            "results": self.results.focus,
            "preview": self.preview.focus_content,
            "related": self.related.focus,
            "links": self.links.focus,
        }[target]()

    def selected_path(self) -> tuple[str | None, int | None]:
        """The file the user means: the focused list's item, else the open file."""
        focused = self.focused
        if isinstance(focused, ResultsList) and focused.hits and focused.highlighted is not None:
            hit = focused.hits[focused.highlighted]
            return hit.path, hit.passages[0].start_line if hit.passages else None
        if isinstance(focused, FileTree):
            node = focused.cursor_node
            if node is not None and node.data is not None and not node.data.is_dir:
                return node.data.path, None
        if isinstance(focused, LinksList) and focused.selected is not None:
            return focused.selected.path, focused.selected.line
        if isinstance(focused, RelatedList) and focused.items and focused.highlighted is not None:
            item = focused.items[focused.highlighted]
            return item.path, item.related_passage.start_line
        passage = self.preview.passage
        return self.current_path, passage[0] if passage else None

    def action_edit(self) -> None:
        path, line = self.selected_path()
        if path is None:
            self.notify("open a file first", severity="warning")
            return
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        command = shlex.split(editor)
        if line and Path(command[0]).name in EDITORS_WITH_LINE:
            command.append(f"+{line}")
        absolute = self.file_on_disk(path)
        if absolute is None:
            return
        command.append(str(absolute))
        try:
            with self.app.suspend():
                subprocess.run(command, check=False)
        except FileNotFoundError:
            self.notify(f"editor not found: {editor} (set $EDITOR)", severity="error")
            return
        except Exception as error:  # noqa: BLE001 - e.g. SuspendNotSupported in a test driver
            self.notify(
                f"cannot open an editor here: {error or type(error).__name__}", severity="warning"
            )
            return
        if path == self.current_path:
            self.preview.reload(absolute)

    def system_commands(self) -> Iterable[SystemCommand]:
        """The screen's actions, for the command palette."""
        yield SystemCommand("Search", "Focus the search box (/)", self.action_focus_search)
        yield SystemCommand(
            "Search mode: cycle", "hybrid → semantic → keyword (ctrl+t)", self.action_cycle_mode
        )
        for mode in MODES:
            yield SystemCommand(
                f"Search mode: {mode}",
                f"Rank results by {mode} search",
                lambda mode=mode: self.action_set_mode(mode),
            )
        yield SystemCommand(
            "Path filter", "Focus the path filter field (ctrl+f)", self.action_focus_filter
        )
        yield SystemCommand(
            "Clear filters", "Drop path, tag and version filters", self.action_clear_filter
        )
        yield SystemCommand(
            "Go to file", "Open a file by name, fuzzy (ctrl+p)", self.action_fuzzy_jump
        )
        yield SystemCommand("Edit file", "Open the selected file in $EDITOR (e)", self.action_edit)
        yield SystemCommand(
            "Next passage", "Mark the next matched passage (n)", self.preview.action_next_passage
        )
        yield SystemCommand(
            "Previous passage",
            "Mark the previous matched passage (N)",
            self.preview.action_previous_passage,
        )
        yield SystemCommand(
            "Toggle related sidebar",
            "Show or hide the links and related files (ctrl+r)",
            self.action_toggle_related,
        )
        for target in ("tree", "results", "preview", "links", "related"):
            yield SystemCommand(
                f"Focus {target}",
                f"Move the focus to the {target}",
                lambda target=target: self.action_focus(target),
            )
        yield SystemCommand("Help", "Keys and how explorer works (?)", self.action_help)
