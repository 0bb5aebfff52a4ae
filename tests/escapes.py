"""A small folder whose names, titles and texts carry terminal escape sequences.

Used by the CLI and TUI tests that check nothing from a file reaches the terminal raw: the file
name sets the terminal title (OSC 0) and clears the screen (CSI 2J), the front matter title and a
heading carry ESC, an 8-bit CSI and a bidi override, and the body holds an OSC 8 link. The same
files also carry what must stay: tabs, accented letters and emoji. The shared hostile corpus's
escape case (``tests/hostile/corpus.py``) is written alongside.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write_files
from tests.hostile.corpus import add_escape_sequences

ESC = "\x1b"
TITLE_OSC = f"{ESC}]0;PWNED\x07"
"""Sets the terminal's title to PWNED."""
CLEAR = f"{ESC}[2J"
C1_CSI = "\x9b31m"
RLO = "\u202e"
OSC8_LINK = f"{ESC}]8;;http://evil.example/{ESC}\\click{ESC}]8;;{ESC}\\"

EVIL_PATH = f"notes/evil{TITLE_OSC}{CLEAR}.md"
"""The hostile file's root-relative path."""
WORD = "zebracorn"
"""A word found only in the hostile file (search for it)."""
KEPT = ("café", "🦓")
"""Legitimate text of the hostile file that must show unchanged."""

EVIL_TEXT = (
    '---\ntitle: "Evil \\e]0;PWNED\\a title \\x9b31m \\u202egnp.exe"\n---\n'
    f"# Heading {TITLE_OSC}{RLO}txt.exe\n\n"
    f"The {WORD} {CLEAR}grazes {OSC8_LINK} in the café 🦓 {C1_CSI}red\tand a tab.\n\n"
    "## Plain part\n\n"
    f"The {WORD} sleeps {ESC}[1;1H{ESC}[0m here, backup and restore.\n"
)

EVIL_CODE_PATH = f"src/evil{CLEAR}.py"
EVIL_CODE = (
    f'"""Module {TITLE_OSC} docstring."""\n\n'
    f"def zebracorn():\n\treturn '{CLEAR}{OSC8_LINK} café 🦓'  # {RLO}comment\n"
)

FILES = {
    EVIL_PATH: EVIL_TEXT,
    EVIL_CODE_PATH: EVIL_CODE,
    "guides/backup.md": "# Backup\n\nThe zebracorn backup runs nightly; restore from it.\n",
    "guides/plain.md": "# Plain\n\nNothing odd here at all, just backup notes.\n",
}

RAW_CONTROLS = (ESC, "\x07", "\x9b", RLO, "\u202c")
"""Characters that must never be written raw."""


CORPUS_WORD = "escapeturnip"
"""The word of the shared corpus's escape case."""
CORPUS_NAME_SHOWN = r"esc\x1b]0;pwned\x07name.md"
"""How that case's file name must show."""


def write_hostile(root: Path) -> Path:
    """Write the hostile folder under ``root`` and return ``root``."""
    write_files(root, FILES)
    _path, word = add_escape_sequences(root)
    assert word == CORPUS_WORD
    return root


def assert_no_raw_controls(text: str) -> None:
    """Fail if ``text`` would make a terminal obey a control sequence."""
    for char in RAW_CONTROLS:
        assert char not in text, f"raw {char!r} in output: {text!r}"
