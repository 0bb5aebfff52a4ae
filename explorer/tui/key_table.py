"""The TUI's one key table, printed: ``python -m explorer.tui.key_table`` prints it as Markdown,
one section per pane, and ``--write README.md`` puts it in the README between its
``<!-- keys -->`` and ``<!-- /keys -->`` lines. The ``?`` help and the footer read the same
bindings (:mod:`explorer.tui.keys`), and a test checks the README against it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from explorer.tui.keys import markdown_tables
from explorer.tui.screens.main import MainScreen

START, END = "<!-- keys -->", "<!-- /keys -->"
"""The lines around the key table in the README."""


def key_table() -> str:
    """Every key of the TUI, one Markdown table per pane."""
    return markdown_tables(MainScreen.BINDINGS)


def with_key_table(text: str) -> str:
    """``text`` (the README) with the key table between :data:`START` and :data:`END`."""
    before, start, rest = text.partition(START)
    _old, end, after = rest.partition(END)
    if not start or not end:
        raise ValueError(f"no {START} ... {END} lines to put the key table between")
    return f"{before}{START}\n\n{key_table()}\n{END}{after}"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--write"] and len(argv) == 2:
        path = Path(argv[1])
        try:
            path.write_text(with_key_table(path.read_text(encoding="utf-8")), encoding="utf-8")
        except (OSError, ValueError) as error:
            print(f"key_table: {error}", file=sys.stderr)
            return 1
        return 0
    if argv:
        print("usage: python -m explorer.tui.key_table [--write README.md]", file=sys.stderr)
        return 2
    print(key_table())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
