"""Untrusted text made safe for a terminal: control characters are shown, never obeyed.

File names, titles, headings and file contents come from outside. Written raw, an ESC starts a
terminal sequence (a title-setting OSC, a screen clear, an OSC 8 link), a lone CR or a C1
character moves the cursor, and a bidi override reorders what the reader sees. Every place that
shows such text (the CLI's text and JSON output, each TUI widget) passes it through this module
first: each unsafe character becomes a visible escape (``\\x1b``, ``\\u202e``) and everything else
(letters of any script, emoji, tabs, and newlines where a text has lines) stays as it is.

Two rules on top, each decided here once:

- **Names** (file names and paths, :func:`safe_name`) show a tab escaped too (``\\x09``): a
  name is one cell of a line (``path<TAB>score`` of ``--format paths``, a row of the TUI's
  tree) and a raw tab would split or shift it. Tabs in passage text stay.
- **Labels** (headings, titles, tags, link texts, :func:`safe_label`) are cut to
  :data:`LABEL_MAX` characters with an ellipsis: a 100,000-character heading is shown as its
  start. The data itself (``--json``, the index) keeps them whole. A label is one cell of a
  line as a name is, so a tab in it is escaped too (a title made from a file name with a tab).
- **Echoed values** (what the user typed, repeated by a note or an error: a tag, a query, a
  name, a path, :func:`echoed`) are cut to :data:`ECHO_MAX` characters: a 100,000-character
  ``--tag`` gives a note of one short line.

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
"""Characters escaped in one line of text (titles, snippets, messages)."""
UNSAFE_IN_NAMES = re.compile(f"[\t\n{_CONTROLS}]")
"""Characters escaped in a file name or path: a tab too."""
LABEL_MAX = 200
"""The most characters of a heading, title, tag list or link text shown; longer ones are cut
with an ellipsis (``…``)."""
ELLIPSIS = "…"
ECHO_MAX = 120
"""The most characters of a value the user gave that a note or an error repeats."""
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


def safe_name(name: str) -> str:
    """A file name or path made safe for one cell of a line: as :func:`safe_text`, and a tab
    shown as ``\\x09``. Never cut: a path is given back exactly as it was shown."""
    if UNSAFE_IN_NAMES.search(name) is None:
        return name
    return UNSAFE_IN_NAMES.sub(_escape_match, name)


def clip(text: str, limit: int = LABEL_MAX) -> str:
    """``text`` cut to at most ``limit`` characters, the last of them an ellipsis."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + ELLIPSIS


def safe_label(text: str, limit: int = LABEL_MAX) -> str:
    """A heading, title, tag list or link text for one line: cut to ``limit`` characters (an
    ellipsis ends a cut one), then made safe like :func:`safe_name` (a tab escaped too)."""
    return safe_name(clip(text, limit))


def echoed(value: object, limit: int = ECHO_MAX) -> str:
    """A value the user gave (a tag, a query, a name, a path), as a note or an error repeats
    it: its text cut to ``limit`` characters, an ellipsis ending a cut one. Not escaped: the
    line is made safe where it is printed."""
    return clip(str(value), limit)


def quoted(value: object, limit: int = ECHO_MAX) -> str:
    """A value the user gave as ``repr`` shows it (a string in quotes: ``'backup'``; a list,
    a number as written), cut as :func:`echoed` cuts it."""
    return repr(echoed(value, limit)) if isinstance(value, str) else echoed(repr(value), limit)


def safe_spans(
    text: str,
    spans: Iterable[tuple[int, int]],
    name: bool = False,
    limit: int | None = None,
) -> tuple[str, list[tuple[int, int]]]:
    """One line of ``text`` made safe, with ``spans`` (character ranges into it) moved to match.

    For snippets whose matched words are marked: an escape is longer than the character it
    replaces, so every range after it shifts. ``name``: ``text`` is a name (a tab is escaped
    too, as :func:`safe_name` does); ``limit``: cut first, as :func:`safe_label` does (ranges
    past the cut are dropped or shortened).
    """
    spans = list(spans)
    if limit is not None and len(text) > limit:
        text = clip(text, limit)
        keep = len(text) - 1  # the ellipsis is no character of the original
        spans = [(start, min(end, keep)) for start, end in spans if start < keep]
    unsafe = UNSAFE_IN_NAMES if name else UNSAFE
    if unsafe.search(text) is None:
        return text, spans
    pieces: list[str] = []
    new_position = [0] * (len(text) + 1)
    """Where each character of ``text`` (and its end) lands in the safe text."""
    length = 0
    for index, char in enumerate(text):
        new_position[index] = length
        piece = escape_char(char) if unsafe.match(char) else char
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
