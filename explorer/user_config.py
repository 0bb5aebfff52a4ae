"""The user's configuration file: ``$XDG_CONFIG_HOME/explorer/config.toml``.

A flat TOML table of defaults for every command; a flag or an environment variable wins over
it. Known keys (all optional)::

    chroma_url = "http://chroma.internal:8000"   # store vectors on a Chroma server
    model = "all-MiniLM-L6-v2"                    # sentence-transformers name or folder
    exclude = ["drafts/", "*.log"]                # gitignore-style patterns to leave out
    extensions = ["md", "txt", "py"]              # file extensions to index
    max_file_bytes = 2000000                      # larger files are skipped
    fusion = "calibrated"                         # hybrid fusion: calibrated, convex or rrf
    semantic_weight = 0.5                         # weight of the vector leg in hybrid search
    keyword_confidence = 3.0                      # how much keyword coverage sets its weight
    lookup_weight = 0.2                           # vector weight for identifier-only queries
    rrf_k = 60                                    # the k of reciprocal rank fusion

An unknown key, a wrong type or a file that is not TOML is a one-line error naming the file.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from explorer.core.fusion import FusionKind
from explorer.locations import config_dir

CONFIG_NAME = "config.toml"

_KINDS: dict[str, type] = {
    "chroma_url": str,
    "model": str,
    "exclude": list,
    "extensions": list,
    "max_file_bytes": int,
    "fusion": str,
    "semantic_weight": float,
    "keyword_confidence": float,
    "lookup_weight": float,
    "rrf_k": int,
}


FUSION_NAMES = tuple(kind.value for kind in FusionKind)


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
    if "fusion" in data and data["fusion"] not in FUSION_NAMES:
        choices = ", ".join(FUSION_NAMES)
        raise ConfigError(f"{path}: fusion must be one of {choices}, not {data['fusion']!r}")
    return data
