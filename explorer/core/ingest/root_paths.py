"""Paths under a root: how a file's name is spelled in the index, and the root as a boundary.

Linux file names are bytes; Python hands a name that is not UTF-8 over as a ``str`` with lone
surrogates (``os.fsdecode``), which neither SQLite, JSON nor a terminal accepts. The index
therefore spells every path by :func:`path_key`: a UTF-8 name as it is, a name that is not
UTF-8 with each undecodable byte as ``\\xNN`` (and its backslashes doubled), e.g.
``bad\\xff\\xfename.md``.
:func:`disk_path` turns such a key back into the name on disk, so nothing is lost.

What a user copies from the screen may be a third spelling: the displays escape control
characters and a tab in a name (``tab\\x09name.md``, see :mod:`explorer.core.safe_text`).
:func:`existing_path` takes any of the three back to the file on disk.

:func:`resolve_inside_root` is the one check that a root-relative path (as the index, a user or
an agent names it) stays under the root once every symbolic link on the way is followed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from explorer.core.errors import ExplorerError
from explorer.core.safe_text import UNSAFE_IN_NAMES

_ESCAPE = re.compile(r"\\(\\|x[89a-f][0-9a-f])")
"""An escape :func:`path_key` writes: a doubled backslash, or a byte from 0x80 up (never a
``/`` or a ``.``, so a key cannot spell its way out of the root)."""
_SHOWN_ESCAPE = re.compile(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4})")


class OutsideRoot(ExplorerError, ValueError):
    """A path that leads outside the root (``..``, an absolute path, or a link out of it)."""


def path_key(fs_path: str) -> str:
    """The index's spelling of a path as ``os.fsdecode`` gives it: valid text, always.

    A path that is UTF-8 is returned unchanged; in one that is not, each undecodable byte is
    written ``\\xNN`` and each backslash ``\\\\``, so the spelling can be reversed exactly.
    """
    try:
        fs_path.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return fs_path
    out = []
    for char in fs_path:
        if "\udc80" <= char <= "\udcff":  # a byte surrogateescape could not decode
            out.append(f"\\x{ord(char) - 0xDC00:02x}")
        elif "\ud800" <= char <= "\udfff":  # any other lone surrogate: not from a file name
            out.append("\ufffd")
        elif char == "\\":
            out.append("\\\\")
        else:
            out.append(char)
    return "".join(out)


def disk_path(key: str) -> str:
    """The path on disk (as ``os.fsdecode`` spells it) that the index key ``key`` stands for.

    A key without escapes is the path itself. A key whose escapes give bytes that are not
    UTF-8 was made by :func:`path_key` and is decoded; otherwise the backslashes were part of
    the name (a UTF-8 name containing a literal ``\\x41``) and the key is returned as is.
    """
    if "\\" not in key:
        return key
    raw = bytearray()
    position = 0
    for match in _ESCAPE.finditer(key):
        raw += key[position : match.start()].encode("utf-8")
        token = match.group(1)
        raw += b"\\" if token == "\\" else bytes([int(token[1:], 16)])
        position = match.end()
    raw += key[position:].encode("utf-8")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return os.fsdecode(bytes(raw))
    return key


def undo_display_escapes(shown: str) -> str:
    """The name the displays showed as ``shown``: each ``\\xNN`` and ``\\uNNNN`` (as
    :func:`explorer.core.safe_text.escape_char` writes them) back to its character; ``\\xNN``
    from ``80`` up as the byte a name that is not UTF-8 holds there."""
    if "\\" not in shown:
        return shown

    def character(match: re.Match[str]) -> str:
        code = int(match.group(1)[1:], 16)
        if match.group(1)[0] == "x" and code >= 0x80:
            return chr(0xDC00 + code)  # as os.fsdecode spells an undecodable byte
        char = chr(code)
        # Only what the displays escape: never a "/" or a "." (no way out of the root).
        return char if UNSAFE_IN_NAMES.match(char) else match.group()

    return _SHOWN_ESCAPE.sub(character, shown)


def spellings(given: str) -> list[str]:
    """The paths on disk ``given`` may stand for, in the order they are tried: as written, as
    an index key (:func:`disk_path`), as the displays show it (:func:`undo_display_escapes`)."""
    found = [given]
    for candidate in (disk_path(given), undo_display_escapes(given)):
        if candidate not in found:
            found.append(candidate)
    return found


def existing_path(given: str, base: str = "") -> str:
    """The file a user names by ``given`` (relative to the folder ``base``, if given): the
    first of its :func:`spellings` that exists (as written when none does)."""
    for candidate in spellings(given):
        if os.path.lexists(os.path.join(base, candidate)):
            return candidate
    return given


def is_inside(real_root: str, real_path: str) -> bool:
    """True if ``real_path`` is ``real_root`` or below it (both already resolved)."""
    return real_path == real_root or real_path.startswith(real_root.rstrip(os.sep) + os.sep)


def resolve_inside_root(root: Path | str, rel_path: str, allow_outside_links: bool = False) -> Path:
    """The file that the root-relative ``rel_path`` names, every symbolic link followed.

    ``rel_path`` is an index key (see :func:`path_key`) with forward slashes. Raises
    :class:`OutsideRoot` for an absolute path, any ``..`` component, or (unless
    ``allow_outside_links``) a path whose resolved target is not under the resolved root. The
    file need not exist; the caller opens the returned path.
    """
    rel = rel_path.replace(os.sep, "/")
    parts = [part for part in rel.split("/") if part not in ("", ".")]
    if not parts or rel.startswith("/") or ".." in parts:
        raise OutsideRoot(f"{rel_path!r} is not a path inside {root}")
    candidate = os.path.join(os.fspath(root), existing_path("/".join(parts), os.fspath(root)))
    resolved = os.path.realpath(candidate)
    if not allow_outside_links and not is_inside(os.path.realpath(root), resolved):
        raise OutsideRoot(f"{path_key(rel_path)} leads outside {root} (to {path_key(resolved)})")
    return Path(resolved)
