"""Paths a caller names, resolved inside a root or refused.

Anything that takes a path from outside (an agent through the MCP server, a script) goes through
:func:`resolve_inside`: absolute paths and ``..`` are refused as written, and a path whose
symbolic links lead out of the root is refused once resolved, so nothing outside the root is
ever read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath


class PathOutsideRoot(ValueError):
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
    real_root = Path(root).resolve()
    real = real_root.joinpath(*parts).resolve()
    if real != real_root and real_root not in real.parents:
        raise PathOutsideRoot(f"{requested}: it is a symbolic link that leads outside the root")
    return InsidePath("/".join(parts), real)
