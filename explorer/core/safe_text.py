"""Untrusted text made safe for a terminal: control characters are shown, never obeyed.

File names, titles, headings and file contents come from outside. Written raw, an ESC starts a
terminal sequence (a title-setting OSC, a screen clear, an OSC 8 link), a lone CR or a C1
character moves the cursor, and a bidi override reorders what the reader sees. Every place that
shows such text (the CLI's text and JSON output, each TUI widget) passes it through this module
first: each unsafe character becomes a visible escape (``\\x1b``, ``\\u202e``) and everything else
(letters of any script, emoji, tabs, and newlines where a text has lines) stays as it is.

Pure and dependency-free, so the core, the CLI and the TUI can all use it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_CONTROLS = (
    "\x00-\x08"  # C0 before TAB
    "\x0b-\x1f"  # C0 after LF (VT, FF, CR, ESC, ...)
    "\x7f-\x9f"  # DEL and the C1 controls (0x9b is a one-byte CSI)
    "\u2028\u2029"  # line and paragraph separators (line breaks to str.splitlines)
    "\u202a-\u202e"  # bidi embeddings and overrides
    "\u2066-\u2069"  # bidi isolates
    "\ud800-\udfff"  # lone surrogates (undecodable bytes of a file name)
)
UNSAFE_IN_LINES = re.compile(f"[{_CONTROLS}]")
"""Characters escaped in a text that keeps its lines (previews)."""
UNSAFE = re.compile(f"[\n{_CONTROLS}]")
"""Characters escaped in one line of text (names, titles, snippets, messages)."""
SURROGATE_BYTES = range(0xDC80, 0xDD00)
"""Where Python's ``surrogateescape`` puts the bytes of a name that are not UTF-8."""


def escape_char(char: str) -> str:
    """The visible escape of one unsafe character: ``\\x1b``, ``\\u202e``, ``\\xff``."""
    code = ord(char)
    if code in SURROGATE_BYTES:  # an undecodable byte: show the byte
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def _escape_match(match: re.Match[str]) -> str:
    return escape_char(match.group())


def safe_text(text: str, keep_lines: bool = False) -> str:
    """``text`` with every control character escaped visibly.

    One line by default (a newline shows as ``\\x0a``); ``keep_lines=True`` keeps newlines, for
    texts shown as lines (a preview). Tabs always stay.
    """
    pattern = UNSAFE_IN_LINES if keep_lines else UNSAFE
    if pattern.search(text) is None:  # the common case: no copy
        return text
    return pattern.sub(_escape_match, text)


def safe_spans(text: str, spans: Iterable[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """One line of ``text`` made safe, with ``spans`` (character ranges into it) moved to match.

    For snippets whose matched words are marked: an escape is longer than the character it
    replaces, so every range after it shifts.
    """
    spans = list(spans)
    if UNSAFE.search(text) is None:
        return text, spans
    pieces: list[str] = []
    new_position = [0] * (len(text) + 1)
    """Where each character of ``text`` (and its end) lands in the safe text."""
    length = 0
    for index, char in enumerate(text):
        new_position[index] = length
        piece = escape_char(char) if UNSAFE.match(char) else char
        pieces.append(piece)
        length += len(piece)
    new_position[len(text)] = length
    moved = []
    for start, end in spans:
        start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
        moved.append((new_position[start], new_position[end]))
    return "".join(pieces), moved


def safe_json(encoded: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with the characters ``json``
    leaves raw (DEL, C1, bidi controls, lone surrogates) written as ``\\uXXXX`` escapes.

    Such characters can only occur inside JSON strings, where the escape stands for the very
    same character, so the document decodes to the same value.
    """
    if UNSAFE_IN_LINES.search(encoded) is None:
        return encoded
    return UNSAFE_IN_LINES.sub(lambda m: f"\\u{ord(m.group()):04x}", encoded)
