"""Paths under a root: how a file's name is spelled in the index, and the root as a boundary.

Linux file names are bytes; Python hands a name that is not UTF-8 over as a ``str`` with lone
surrogates (``os.fsdecode``), which neither SQLite, JSON nor a terminal accepts. The index
therefore spells every path by :func:`path_key`: a UTF-8 name as it is, a name that is not
UTF-8 with each undecodable byte as ``\\xNN`` (and its backslashes doubled), e.g.
``bad\\xff\\xfename.md``.
:func:`disk_path` turns such a key back into the name on disk, so nothing is lost.

:func:`resolve_inside_root` is the one check that a root-relative path (as the index, a user or
an agent names it) stays under the root once every symbolic link on the way is followed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from explorer.core.errors import ExplorerError

_ESCAPE = re.compile(r"\\(\\|x[0-9a-f]{2})")


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
    candidate = os.path.join(os.fspath(root), *parts)
    if not os.path.lexists(candidate):  # not a literal name: maybe an escaped one
        candidate = os.path.join(os.fspath(root), disk_path("/".join(parts)))
    resolved = os.path.realpath(candidate)
    if not allow_outside_links and not is_inside(os.path.realpath(root), resolved):
        raise OutsideRoot(f"{path_key(rel_path)} leads outside {root} (to {path_key(resolved)})")
    return Path(resolved)
