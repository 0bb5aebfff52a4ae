"""Where explorer keeps its indexes and user configuration.

By default an index lives outside the user's folder, in a per-root directory under the user
data dir (``$XDG_DATA_HOME/explorer/indexes``). Environment variables override each location so
scripts and tests can isolate them.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

INDEX_DIR_ENV = "EXPLORER_INDEX_DIR"
"""Names the index directory itself (one root per directory)."""
DATA_DIR_ENV = "EXPLORER_DATA_DIR"
"""Names the directory under which per-root index directories are made."""
CONFIG_DIR_ENV = "EXPLORER_CONFIG_DIR"
"""Names the directory holding user preferences (theme choice and the like)."""


def data_dir() -> Path:
    """The directory that holds every per-root index directory."""
    if override := os.environ.get(DATA_DIR_ENV):
        return Path(override).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base).expanduser() / "explorer"


def config_dir() -> Path:
    """The directory that holds user preferences."""
    if override := os.environ.get(CONFIG_DIR_ENV):
        return Path(override).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base).expanduser() / "explorer"


def default_index_dir(root: Path) -> Path:
    """The index directory for ``root``: named after the folder, unique per absolute path."""
    resolved = root.resolve()
    digest = hashlib.sha1(str(resolved).encode("utf-8")).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in resolved.name) or "root"
    return data_dir() / "indexes" / f"{name}-{digest}"


def resolve_index_dir(root: Path, explicit: str | Path | None = None) -> Path:
    """The index directory to use: an explicit choice, then the environment, then the default."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    if override := os.environ.get(INDEX_DIR_ENV):
        return Path(override).expanduser().resolve()
    return default_index_dir(root)
