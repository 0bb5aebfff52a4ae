"""``python -m explorer.tui.key_table`` prints the TUI's key table as Markdown, one section per
pane (paste it into the README; the ``?`` help shows the same tables)."""

from __future__ import annotations

from explorer.tui.keys import markdown_tables
from explorer.tui.screens.main import MainScreen

if __name__ == "__main__":
    print(markdown_tables(MainScreen.BINDINGS))
