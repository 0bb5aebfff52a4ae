"""Where explorer keeps its indexes and user configuration.

By default an index lives outside the user's folder, in a per-root directory under the user
data dir (``$XDG_DATA_HOME/explorer/indexes``, found by platformdirs). Environment variables
override each location so scripts and tests can isolate them. Nothing here creates a folder:
the index creates its directory and every missing parent with mode 0700 when it is first
written (:mod:`explorer.core.private_files`), and :func:`owned_parents` names the parents it
keeps private.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from platformdirs.unix import Unix

APP_NAME = "explorer"
INDEX_DIR_ENV = "EXPLORER_INDEX_DIR"
"""Names the index directory itself (one root per directory)."""
DATA_DIR_ENV = "EXPLORER_DATA_DIR"
"""Names the directory under which per-root index directories are made."""
CONFIG_DIR_ENV = "EXPLORER_CONFIG_DIR"
"""Names the directory holding user preferences (theme choice and the like)."""
STATE_DIR_ENV = "EXPLORER_STATE_DIR"
"""Names the directory that holds state kept between runs (the TUI's sessions)."""
CACHE_DIR_ENV = "EXPLORER_CACHE_DIR"
"""Names the directory that holds what any index may reuse (the models' query encoders)."""


def _xdg() -> Unix:
    """The XDG base directories, read afresh (tests and scripts change the environment).

    The XDG layout on every platform, macOS included, as explorer always used: platformdirs'
    native macOS folders would leave every existing index and config file behind."""
    from platformdirs.unix import Unix

    return Unix(APP_NAME)


def data_dir() -> Path:
    """The directory that holds every per-root index directory."""
    if override := os.environ.get(DATA_DIR_ENV):
        return Path(override).expanduser()
    return _xdg().user_data_path


def config_dir() -> Path:
    """The directory that holds user preferences."""
    if override := os.environ.get(CONFIG_DIR_ENV):
        return Path(override).expanduser()
    return _xdg().user_config_path


def state_dir() -> Path:
    """The directory that holds explorer's state (the TUI's sessions): the XDG state
    directory, on every platform as the data and config directories are."""
    if override := os.environ.get(STATE_DIR_ENV):
        return Path(override).expanduser()
    return _xdg().user_state_path


def cache_dir() -> Path:
    """The directory that holds what every index of the user may reuse and explorer can make
    again: the XDG cache directory."""
    if override := os.environ.get(CACHE_DIR_ENV):
        return Path(override).expanduser()
    return _xdg().user_cache_path


def query_encoder_cache(model: str) -> Path:
    """The folder where the query encoder exported from ``model`` (a name or a path) is kept
    for every index: named after the model, unique per name."""
    digest = hashlib.sha1(model.encode("utf-8")).hexdigest()[:12]
    tail = Path(model).name or "model"
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in tail).lstrip(".") or "model"
    return cache_dir() / "query-encoders" / f"{name}-{digest}"


def default_index_dir(root: Path) -> Path:
    """The index directory for ``root``: named after the folder, unique per absolute path."""
    resolved = root.resolve()
    digest = hashlib.sha1(str(resolved).encode("utf-8")).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in resolved.name) or "root"
    return data_dir() / "indexes" / f"{name}-{digest}"


def owned_parents(index_dir: Path) -> tuple[Path, ...]:
    """The folders above ``index_dir`` that are explorer's own, outermost first: the data
    directory and its ``indexes`` folder when the index is in its default place (their names
    list the folders indexed, so they are kept private like the indexes), else none. A data
    directory that holds anything but ``indexes`` is the user's: its mode is left alone."""
    indexes = data_dir() / "indexes"
    if index_dir.parent != indexes:
        return ()
    try:  # a data directory named by EXPLORER_DATA_DIR may hold the user's own files too
        own = set(os.listdir(indexes.parent)) <= {indexes.name}
    except OSError:
        own = True
    return (indexes.parent, indexes) if own else (indexes,)


def resolve_index_dir(root: Path, explicit: str | Path | None = None) -> Path:
    """The index directory to use: an explicit choice, then the environment, then the default."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    if override := os.environ.get(INDEX_DIR_ENV):
        return Path(override).expanduser().resolve()
    return default_index_dir(root)
