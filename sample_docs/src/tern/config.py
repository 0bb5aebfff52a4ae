"""Loading and validating ``tern.toml``.

Configuration is read from a single TOML file and then overridden by environment variables
named ``TERN_<SECTION>__<KEY>``. Every value is validated against the dataclasses below;
unknown keys are an error unless ``strict = false`` is set at the top level.

The user-facing reference is ``guides/configuration.md``; keep the two in sync.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Mapping

__all__ = [
    "ConfigError",
    "TernConfig",
    "find_config_file",
    "load_config",
    "parse_duration",
    "parse_size",
]

ENV_PREFIX = "TERN_"
SEARCH_PATHS = (
    Path("tern.toml"),
    Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config")) / "tern" / "tern.toml",
    Path("/etc/tern/tern.toml"),
)

_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$")
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(KB|MB|GB)\s*$", re.IGNORECASE)
_DURATION_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
_SIZE_UNITS = {"KB": 1024, "MB": 1024**2, "GB": 1024**3}


class ConfigError(ValueError):
    """Raised for any problem with the configuration; the message names the offending key."""


def parse_duration(value: Any, key: str) -> timedelta:
    """Parse ``"500ms"``, ``"20s"``, ``"15m"``, ``"36h"`` or ``"30d"`` into a timedelta.

    Bare numbers are rejected on purpose: ``timeout = 20`` has been misread as minutes too often.
    """
    if isinstance(value, timedelta):
        return value
    if not isinstance(value, str):
        raise ConfigError(
            f'{key}: expected a duration like "20s", got {type(value).__name__} {value!r}'
        )
    match = _DURATION_RE.match(value)
    if not match:
        raise ConfigError(f'{key}: cannot parse duration {value!r} (use e.g. "20s", "15m", "30d")')
    number, unit = match.groups()
    return timedelta(seconds=float(number) * _DURATION_UNITS[unit])


def parse_size(value: Any, key: str) -> int:
    """Parse ``"64MB"`` style sizes into bytes (powers of 1024)."""
    if isinstance(value, int) and not isinstance(value, bool):
        raise ConfigError(f'{key}: expected a size like "64MB", got integer {value}')
    match = _SIZE_RE.match(str(value))
    if not match:
        raise ConfigError(f"{key}: cannot parse size {value!r}")
    number, unit = match.groups()
    return int(float(number) * _SIZE_UNITS[unit.upper()])


@dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8420
    base_url: str = "http://localhost:8420"
    trusted_proxies: list[str] = field(default_factory=list)
    workers: int = 2
    request_timeout: timedelta = timedelta(seconds=30)
    max_body_size: int = 8 * 1024**2


@dataclass
class PathsConfig:
    data_dir: Path = Path("/var/lib/tern")
    archive_dir: str = "{data_dir}/archive"
    backup_dir: str = "{data_dir}/backups"
    log_dir: str = ""

    def resolve(self, template: str) -> Path:
        """Expand ``{data_dir}`` in one of the path templates."""
        return Path(template.format(data_dir=self.data_dir))


@dataclass
class DatabaseConfig:
    path: str = "{data_dir}/tern.db"
    busy_timeout: timedelta = timedelta(seconds=5)
    wal_autocheckpoint: int = 1000
    cache_size: int = 64 * 1024**2
    mmap_size: int = 256 * 1024**2


@dataclass
class SearchConfig:
    default_operator: str = "AND"
    title_boost: float = 3.0
    tag_boost: float = 2.0
    description_boost: float = 1.5
    recency_half_life: timedelta = timedelta(days=180)
    snippet_words: int = 24

    def validate(self) -> None:
        if self.default_operator not in ("AND", "OR"):
            raise ConfigError('search.default_operator: must be "AND" or "OR"')
        for name in ("title_boost", "tag_boost", "description_boost"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"search.{name}: must be positive")


@dataclass
class RateLimitConfig:
    enabled: bool = True
    requests_per_minute: int = 120
    burst: int = 40
    login_attempts_per_hour: int = 20


@dataclass
class TernConfig:
    """The complete, validated configuration.

    Sections not modelled here (``[worker]``, ``[backup]``, ``[webhooks]``, ``[mail]``,
    ``[auth]``, ``[logging]``, ``[plugins]``) are validated by their own modules and kept in
    :attr:`extra` until then.
    """

    server: ServerConfig = field(default_factory=ServerConfig)
    paths: PathsConfig = field(default_factory=PathsConfig)
    database: DatabaseConfig = field(default_factory=DatabaseConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    ratelimit: RateLimitConfig = field(default_factory=RateLimitConfig)
    strict: bool = True
    extra: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    """Where each dotted key came from: ``"file"``, ``"env"`` or ``"default"``."""


_TYPED_SECTIONS = ("server", "paths", "database", "search", "ratelimit")
_OTHER_SECTIONS = ("worker", "backup", "webhooks", "mail", "auth", "logging", "plugins")


def find_config_file(explicit: str | os.PathLike[str] | None = None) -> Path | None:
    """Return the config file to use, following the documented search order."""
    if explicit:
        return Path(explicit)
    env_path = os.environ.get("TERN_CONFIG")
    if env_path:
        return Path(env_path)
    for candidate in SEARCH_PATHS:
        if candidate.is_file():
            return candidate
    return None


def _coerce(value: Any, target_type: Any, key: str) -> Any:
    """Convert a TOML or environment value to the dataclass field's type."""
    if target_type is timedelta or target_type == "timedelta":
        return parse_duration(value, key)
    if target_type is bool or target_type == "bool":
        if isinstance(value, bool):
            return value
        lowered = str(value).strip().lower()
        if lowered in ("true", "yes", "1"):
            return True
        if lowered in ("false", "no", "0"):
            return False
        raise ConfigError(f"{key}: expected a boolean, got {value!r}")
    if target_type is int or target_type == "int":
        if key.endswith(("_size", "cache_size")) and isinstance(value, str):
            return parse_size(value, key)
        try:
            return int(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{key}: expected an integer, got {value!r}") from None
    if target_type is float or target_type == "float":
        return float(value)
    if target_type is Path or target_type == "Path":
        return Path(value)
    if str(target_type).startswith("list"):
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return list(value)
    return value


def _apply_section(section_obj: Any, values: Mapping[str, Any], section: str,
                   cfg: TernConfig, source: str) -> None:
    known = {f.name: f for f in fields(section_obj)}
    for key, raw in values.items():
        dotted = f"{section}.{key}"
        if key not in known:
            if cfg.strict:
                raise ConfigError(f"{dotted}: unknown key")
            continue
        setattr(section_obj, key, _coerce(raw, known[key].type, dotted))
        cfg.sources[dotted] = source


def _env_overrides(environ: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """Collect ``TERN_SECTION__KEY=value`` pairs into ``{section: {key: value}}``."""
    result: dict[str, dict[str, str]] = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        section, _, key = name[len(ENV_PREFIX):].partition("__")
        result.setdefault(section.lower(), {})[key.lower()] = value
    return result


def load_config(path: str | os.PathLike[str] | None = None,
                environ: Mapping[str, str] | None = None) -> TernConfig:
    """Load, merge and validate the configuration.

    >>> cfg = load_config(environ={"TERN_SERVER__PORT": "9000"})
    >>> cfg.server.port, cfg.sources["server.port"]
    (9000, 'env')
    """
    environ = os.environ if environ is None else environ
    cfg = TernConfig()
    config_file = find_config_file(path)
    data: dict[str, Any] = {}
    if config_file is not None:
        try:
            with open(config_file, "rb") as fh:
                data = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{config_file}: {exc}") from exc
    cfg.strict = bool(data.pop("strict", True))

    for section, values in data.items():
        if section in _TYPED_SECTIONS:
            _apply_section(getattr(cfg, section), values, section, cfg, "file")
        elif section in _OTHER_SECTIONS:
            cfg.extra[section] = dict(values)
        elif cfg.strict:
            raise ConfigError(f"[{section}]: unknown section")

    for section, values in _env_overrides(environ).items():
        if section in _TYPED_SECTIONS:
            _apply_section(getattr(cfg, section), values, section, cfg, "env")
        else:
            cfg.extra.setdefault(section, {}).update(values)

    if config_file is None and "paths.data_dir" not in cfg.sources:
        cfg.paths.data_dir = Path("tern-data")
    cfg.search.validate()
    return cfg


def masked(cfg: TernConfig) -> dict[str, Any]:
    """Return the configuration as a dict for ``tern config show``, secrets masked."""
    def convert(obj: Any) -> Any:
        if is_dataclass(obj):
            return {f.name: convert(getattr(obj, f.name)) for f in fields(obj)}
        if isinstance(obj, dict):
            return {
                k: ("********" if k.endswith(("_password", "_secret", "_key")) else convert(v))
                for k, v in obj.items()
            }
        if isinstance(obj, (Path, timedelta)):
            return str(obj)
        return obj

    return convert(cfg)
