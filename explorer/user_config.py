"""The user's configuration file: ``$XDG_CONFIG_HOME/explorer/config.toml``.

A flat TOML table of defaults for every command; a flag or an environment variable wins over
it. Known keys (all optional)::

    chroma_url = "http://chroma.internal:8000"   # store vectors on a Chroma server
    model = "all-MiniLM-L6-v2"                    # sentence-transformers name or folder
    exclude = ["drafts/", "*.log"]                # gitignore-style patterns to leave out
    extensions = ["md", "txt", "py"]              # file extensions to index
    max_file_bytes = 2000000                      # larger files are skipped
    allow_links_outside = ["~/notes"]             # roots whose links may lead out of them

An unknown key, a wrong type or a file that is not TOML is a one-line error naming the file.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from explorer.locations import config_dir

CONFIG_NAME = "config.toml"

_KINDS: dict[str, type] = {
    "chroma_url": str,
    "model": str,
    "exclude": list,
    "extensions": list,
    "max_file_bytes": int,
    "allow_links_outside": list,
}


class ConfigError(ValueError):
    """The configuration file cannot be used; the message names the file and the problem."""


def config_path() -> Path:
    return config_dir() / CONFIG_NAME


def load_user_config(path: Path | None = None) -> dict[str, Any]:
    """The settings in the config file, checked; ``{}`` when there is no file."""
    path = path or config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read it ({error})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML ({error})") from None
    for key, value in data.items():
        kind = _KINDS.get(key)
        if kind is None:
            known = ", ".join(sorted(_KINDS))
            raise ConfigError(f"{path}: unknown setting {key!r} (known: {known})")
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ConfigError(f"{path}: {key} must be a {kind.__name__}, not {value!r}")
        if kind is list and not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{path}: {key} must be a list of strings")
    return data
