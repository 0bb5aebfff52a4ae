"""Every key of the TUI, grouped by pane, read from the widgets' own bindings.

The ``?`` help and the README's key table both come from :func:`key_groups`, so neither can
forget a key a widget binds. ``python -m explorer.tui.key_table`` prints the table as Markdown
(paste it into the README). The few keys Textual's own widgets and the app bring (Tab, the command
palette, the tree's Enter) are listed here by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual.binding import Binding, BindingType
from textual.keys import key_to_character

KEY_NAMES = {
    "space": "space",
    "backspace": "backspace",
    "escape": "Esc",
    "enter": "Enter",
    "slash": "/",
}


@dataclass(frozen=True)
class Key:
    """One key (or several that do the same) and what it does."""

    keys: str
    """As the user reads them: ``j / down``."""
    does: str


@dataclass(frozen=True)
class KeyGroup:
    """The keys of one pane."""

    pane: str
    keys: tuple[Key, ...]


def key_name(key: str) -> str:
    """A key as a user reads it: ``[`` for ``left_square_bracket``, ``ctrl+p`` as it is."""
    if key in KEY_NAMES:
        return KEY_NAMES[key]
    if "+" in key:
        return key
    return key_to_character(key) or key


def _keys(bindings: list[BindingType], *, typed: bool | None = None) -> list[Key]:
    """The keys of ``bindings`` (``typed``: only those that are characters, True, or not)."""
    found: dict[str, list[str]] = {}
    for binding in bindings:
        if not isinstance(binding, Binding):
            continue
        does = binding.tooltip or binding.description
        for key in binding.key.split(","):
            key = key.strip()
            # Backspace is no character, but a text field uses it: it is bound outside them.
            is_character = key == "backspace" or len(key_name(key)) == 1
            if typed is not None and is_character != typed:
                continue
            names = found.setdefault(does, [])
            if key_name(key) not in names:
                names.append(key_name(key))
    return [Key(" / ".join(names), does) for does, names in found.items()]


def key_groups(screen_bindings: Sequence[BindingType]) -> list[KeyGroup]:
    """Every key, grouped by where it works; ``screen_bindings`` are the main screen's (it
    passes them: it shows the help, so this module does not import it)."""
    from explorer.tui.widgets.file_tree import FileTree
    from explorer.tui.widgets.preview import FindBar, Preview
    from explorer.tui.widgets.results import ResultsList
    from explorer.tui.widgets.search_box import SearchBox
    from explorer.tui.widgets.search_panel import SearchPanel
    from explorer.tui.widgets.sidebar_panel import SidebarPanel

    screen = list(screen_bindings)
    return [
        KeyGroup(
            "Anywhere",
            (
                *_keys(screen, typed=False),
                Key("Tab / shift+Tab", "Move between panes"),
                Key("F1", "Command palette: every action, and the themes"),
                Key("ctrl+q", "Quit"),
            ),
        ),
        KeyGroup("Anywhere but a text field", tuple(_keys(screen, typed=True))),
        KeyGroup(
            "Search box",
            (
                Key("type", "Search as you type (`path:`, `tag:`, `version:` words filter)"),
                *_keys([*SearchBox.BINDINGS, *SearchPanel.BINDINGS]),
                Key("Enter", "Open the best result"),
            ),
        ),
        KeyGroup("Results", tuple(_keys(ResultsList.BINDINGS))),
        KeyGroup("Preview", tuple(_keys(Preview.BINDINGS))),
        KeyGroup(
            "Find in page",
            (
                Key("type", "Find as you type (ignores case unless a capital is typed)"),
                *_keys(FindBar.BINDINGS),
            ),
        ),
        KeyGroup(
            "Tree",
            (
                Key("up / down", "Move"),
                Key("space", "Open or close a folder"),
                *_keys(vars(FileTree)["BINDINGS"]),
            ),
        ),
        KeyGroup(
            "Links and Related",
            (Key("up / down / home / end", "Move"), *_keys(SidebarPanel.BINDINGS)),
        ),
        KeyGroup(
            "Go to file, Recent files, Outline, Links (f)",
            (
                Key("type", "Narrow the list"),
                Key("up / down", "Move"),
                Key("Enter", "Open"),
                Key("Esc", "Close"),
            ),
        ),
    ]


def markdown_tables(screen_bindings: Sequence[BindingType]) -> str:
    """The key table, one section per pane (for the help and the README)."""
    parts = []
    for group in key_groups(screen_bindings):
        rows = "\n".join(f"| `{key.keys}` | {key.does} |" for key in group.keys)
        parts.append(f"**{group.pane}**\n\n| Key | What it does |\n| :-- | :-- |\n{rows}\n")
    return "\n".join(parts)
