"""Paths a caller names (an agent through the MCP server), resolved inside a root or refused.

:func:`resolve_inside` checks what the caller wrote first, to say plainly why a path is refused
(absolute, ``..``), then leaves the link check to the core's one boundary test,
:func:`explorer.core.ingest.root_paths.resolve_inside_root`: a path whose symbolic links lead out of
the root is refused, whatever the settings allow the index, so nothing outside is ever read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from explorer.core.ingest.root_paths import OutsideRoot, resolve_inside_root


class PathOutsideRoot(OutsideRoot):
    """A path that names (or leads to) something outside the root; the message says why."""


@dataclass(frozen=True)
class InsidePath:
    """A path checked to lie inside the root."""

    rel_path: str
    """As the index names it: relative to the root, forward slashes, links not followed."""
    real_path: Path
    """Where it leads on disk (symbolic links followed), inside the real root."""


def resolve_inside(root: Path, requested: str) -> InsidePath:
    """Resolve ``requested`` (relative to ``root``) or raise :class:`PathOutsideRoot`."""
    text = requested.strip()
    if not text or text in (".", "./"):
        raise PathOutsideRoot("give the path of a file relative to the root")
    if "\0" in text:
        raise PathOutsideRoot(f"{requested!r}: a path cannot hold a NUL character")
    if os.path.isabs(text) or PurePosixPath(text).is_absolute() or text.startswith("~"):
        raise PathOutsideRoot(
            f"{requested}: absolute paths are refused; give a path relative to the root"
        )
    parts = [part for part in text.replace(os.sep, "/").split("/") if part not in ("", ".")]
    if ".." in parts:
        raise PathOutsideRoot(f"{requested}: '..' is refused; paths stay inside the root")
    rel_path = "/".join(parts)
    try:
        real = resolve_inside_root(root, rel_path, allow_outside_links=False)
    except OutsideRoot:
        raise PathOutsideRoot(
            f"{requested}: it is a symbolic link that leads outside the root"
        ) from None
    return InsidePath(rel_path, real)
