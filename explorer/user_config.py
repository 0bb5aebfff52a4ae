"""The user's configuration file: ``$XDG_CONFIG_HOME/explorer/config.toml``.

A flat TOML table of defaults for every command; a flag or an environment variable wins over
it. Known keys (all optional)::

    chroma_url = "http://chroma.internal:8000"   # store vectors on a Chroma server
    model = "all-MiniLM-L6-v2"                    # sentence-transformers name or folder
    exclude = ["drafts/", "*.log"]                # gitignore-style patterns to leave out
    extensions = ["md", "txt", "py"]              # file extensions to index
    max_file_bytes = 2000000                      # larger files are skipped
    allow_links_outside = ["~/notes"]             # roots whose links may lead out of them

    # ranking
    fusion = "calibrated"                         # "calibrated", "convex" or "rrf" (ranks)
    semantic_weight = 0.5                         # weight of meaning, 0-1
    keyword_confidence = 3.0                      # keyword weight x coverage^this, 0-10
    lookup_weight = 0.2                           # weight of meaning for identifier queries
    rrf_k = 60                                    # rrf: the k of 1 / (k + rank), at least 1
    limit = 10                                    # files a search shows by default
    min_score = 0.0                               # passages below this are hidden, 0-1

An unknown key, a wrong type or a file that is not TOML is a one-line error naming the file.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from explorer.core.errors import ExplorerError
from explorer.core.retrieval.fusion import FusionKind
from explorer.locations import config_dir

CONFIG_NAME = "config.toml"

_KINDS: dict[str, type] = {
    "chroma_url": str,
    "model": str,
    "exclude": list,
    "extensions": list,
    "max_file_bytes": int,
    "allow_links_outside": list,
    "fusion": str,
    "semantic_weight": float,
    "keyword_confidence": float,
    "lookup_weight": float,
    "rrf_k": int,
    "limit": int,
    "min_score": float,
}

FUSION_RULES = tuple(kind.value for kind in FusionKind)
"""How hybrid search may fuse its legs."""

_RANGES: dict[str, tuple[float, float | None]] = {
    "max_file_bytes": (1, None),
    "semantic_weight": (0.0, 1.0),
    "keyword_confidence": (0.0, 10.0),
    "lookup_weight": (0.0, 1.0),
    "rrf_k": (1, None),
    "limit": (1, None),
    "min_score": (0.0, 1.0),
}
"""Bounds (inclusive; None: no upper bound) of the numeric settings."""


class ConfigError(ExplorerError, ValueError):
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
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = data[key] = float(value)  # `semantic_weight = 1` means 1.0
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ConfigError(f"{path}: {key} must be a {kind.__name__}, not {value!r}")
        if isinstance(value, list) and not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{path}: {key} must be a list of strings")
        _check_value(path, key, value)
    return data


def _check_value(path: Path, key: str, value: Any) -> None:
    """Raise :class:`ConfigError` for a value of the right type that is out of bounds."""
    if key == "fusion" and value not in FUSION_RULES:
        raise ConfigError(f"{path}: fusion must be one of {', '.join(FUSION_RULES)}, not {value!r}")
    if key in _RANGES:
        low, high = _RANGES[key]
        if value < low or (high is not None and value > high):
            bounds = f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}"
            raise ConfigError(f"{path}: {key} must be {bounds}, not {value!r}")
