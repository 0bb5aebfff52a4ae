"""The user's configuration file: ``$XDG_CONFIG_HOME/explorer/config.toml``.

A flat TOML table of defaults for every command; a flag or an environment variable wins over
it. Known keys (all optional)::

    chroma_url = "http://chroma.internal:8000"   # store vectors on a Chroma server
    model = "all-MiniLM-L6-v2"                    # sentence-transformers name or folder
    exclude = ["drafts/", "*.log"]                # gitignore-style patterns to leave out
    extensions = ["md", "txt", "py"]              # file extensions to index
    max_file_bytes = 2000000                      # larger files are skipped
    allow_links_outside = ["~/notes"]             # roots whose links may lead out of them
    embedding_precision = "auto"                  # documents in "bf16" (where native) or "fp32"
    embed_threads = 0                             # threads the model embeds with (0: per core)
    link_base = "/docs/"                          # the URL path a static site serves the root at
    # or per root: link_base = { "~/src/site/content/en/docs" = "/docs/" }

    # ranking
    fusion = "calibrated"                         # "calibrated", "convex" or "rrf" (ranks)
    semantic_weight = 0.5                         # weight of meaning, 0-1
    keyword_confidence = 3.0                      # keyword weight x coverage^this, 0-10
    lookup_weight = 0.2                           # weight of meaning for identifier queries
    file_weight = 0.5                             # weight of the whole file's meaning, 0-2
    file_keyword_weight = 1.0                     # weight of the whole file's words, 0-2
    rrf_k = 60                                    # rrf: the k of 1 / (k + rank), at least 1
    limit = 10                                    # files a search shows by default
    min_score = 0.0                               # passages below this are hidden, 0-1

:class:`UserConfig` declares the keys once: each one's type, bounds, what it means and which
setting it sets; the file is checked against that declaration. An unknown key, a wrong type, a
value out of bounds or a file that is not TOML is a one-line error naming the file.

The same file may name folders (*collections*) and sets of files (*scopes*); they are read by
:func:`load_folders_config` into :class:`FoldersConfig`, checked the same way::

    default_collections = ["notes", "docs"]       # searched when no folder is given

    [collections.notes]
    path = "~/notes"
    exclude = [".trash/"]                         # optional: this folder's own rules, in place
    extensions = ["md"]                           # of the top-level exclude and extensions

    [collections.docs]
    path = "~/src/project/docs"

    [scopes.curator]
    paths = [".claude/agents/", "hooks/"]         # prefixes or globs, as --path takes them
    extensions = ["yaml", "ts", "json"]
    collections = ["docs"]                        # optional: the collections it covers
    description = "agent definitions, hooks and skills"
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, get_args, get_origin, get_type_hints

from explorer.core.errors import ExplorerError
from explorer.core.safe_text import quoted
from explorer.core.settings import Bounds, IndexSettings, knobs
from explorer.core.state_files import UnreadableFile, read_bounded
from explorer.settings.locations import config_dir

if TYPE_CHECKING:
    from explorer.core.retrieval.scopes import Scope

CONFIG_NAME = "config.toml"
CONFIG_MAX_BYTES = 1_000_000
"""A config file larger than this is not read (one line says so)."""


@dataclass(frozen=True)
class UserConfig:
    """The settings of the config file, checked; a key the file leaves out is None."""

    chroma_url: str | None = None
    """A Chroma server (``http://host:port``) to keep vectors on."""
    model: str | None = None
    """Sentence-transformers model name or folder."""
    exclude: list[str] | None = None
    """Gitignore-style patterns to leave out, relative to the root."""
    extensions: list[str] | None = None
    """File extensions to index."""
    allow_links_outside: list[str] | None = None
    """Roots whose symbolic links may lead out of them (on for the root that is listed)."""
    link_base: str | dict[str, str] | None = None
    """The URL path at which a static site serves the root (``/docs/``): site-absolute links
    resolve under it. One path for every root, or a table of roots (as passed to explorer,
    ``~`` expanded) and their paths. Without it, it is detected from the folder."""
    knobs: dict[str, object] = field(default_factory=dict)
    """The settings declared with :func:`~explorer.core.settings.knob` that the file sets, by
    settings field name, each checked against its declaration."""


@dataclass(frozen=True)
class _KeySpec:
    """What a key of :class:`UserConfig` accepts, read from its annotation."""

    kind: type
    bounds: Bounds | None
    table: bool = False
    """The key also takes a table of strings (``link_base = { "~/site" = "/docs/" }``)."""
    setting: str = ""
    """The settings field a declared setting's key sets (empty: a key of :class:`UserConfig`)."""


@cache
def _specs() -> dict[str, _KeySpec]:
    """The accepted type and bounds of every key: the keys :class:`UserConfig` shapes itself
    (from its annotations), and every setting declared with
    :func:`~explorer.core.settings.knob` (from its declaration)."""
    specs: dict[str, _KeySpec] = {}
    for name, hint in get_type_hints(UserConfig).items():
        if name == "knobs":
            continue
        kinds = [get_origin(arg) or arg for arg in get_args(hint) if arg is not type(None)]
        specs[name] = _KeySpec(kinds[0], None, dict in kinds[1:])  # X of ``X | None``
    for key, declared in knobs(IndexSettings).items():
        specs[key] = _KeySpec(declared.kind, declared.bounds, setting=declared.name)
    return specs


class ConfigError(ExplorerError, ValueError):
    """The configuration file cannot be used; the message names the file and the problem."""


def config_path() -> Path:
    return config_dir() / CONFIG_NAME


def _read(path: Path) -> dict[str, object] | None:
    """The config file's TOML table; None when there is no file."""
    try:  # never a pipe's wait or a huge file's read (the file is the user's: never renamed)
        data = read_bounded(path, CONFIG_MAX_BYTES, follow_links=True)
        if data is None:
            return None
        return tomllib.loads(data.decode("utf-8"))
    except (UnreadableFile, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read it ({error})") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML ({error})") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML (nested too deeply)") from None


def load_user_config(path: Path | None = None) -> UserConfig:
    """The settings in the config file, checked; all None when there is no file."""
    path = path or config_path()
    data = _read(path)
    if data is None:
        return UserConfig()
    specs = _specs()
    values: dict[str, object] = {}
    declared: dict[str, object] = {}
    for key, value in data.items():
        if key in FOLDER_KEYS:
            continue  # read by load_folders_config
        spec = specs.get(key)
        if spec is None:
            known = ", ".join(sorted({*specs, *FOLDER_KEYS}))
            raise ConfigError(f"{path}: unknown setting {quoted(key)} (known: {known})")
        if spec.setting:
            declared[spec.setting] = _checked(path, key, value, spec)
        else:
            values[key] = _checked(path, key, value, spec)
    if "link_base" in values:
        _check_link_base(path, values["link_base"])
    # Each value checked against its field.
    return UserConfig(**values, knobs=declared)  # type: ignore[arg-type]


def _check_link_base(path: Path, value: object) -> None:
    """Each ``link_base`` is a URL path (``/docs/``), or :class:`ConfigError` says why not."""
    from explorer.core.ingest.site_layout import link_base_problem

    for base in value.values() if isinstance(value, dict) else [value]:
        base = str(base)
        problem = link_base_problem(base)
        if problem is not None:
            shown = repr(base if len(base) <= 80 else base[:80] + "…")
            raise ConfigError(
                f'{path}: link_base {shown} {problem}: give a URL path such as "/docs/"'
            )


def _checked(path: Path, key: str, value: object, spec: _KeySpec) -> object:
    """``value`` as key ``key`` holds it; :class:`ConfigError` when it does not fit."""
    kind = spec.kind
    if spec.table and isinstance(value, dict):
        if not all(isinstance(item, str) for item in value.values()):
            raise ConfigError(f"{path}: {key} must map each root to a string")
        return value
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)  # `semantic_weight = 1` means 1.0
    expected = str if issubclass(kind, StrEnum) else kind
    if not isinstance(value, expected) or isinstance(value, bool):
        raise ConfigError(f"{path}: {key} must be a {expected.__name__}, not {quoted(value)}")
    if isinstance(value, list) and not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{path}: {key} must be a list of strings")
    if issubclass(kind, StrEnum):
        choices = [member.value for member in kind]
        if value not in choices:
            raise ConfigError(
                f"{path}: {key} must be one of {', '.join(choices)}, not {quoted(value)}"
            )
        return kind(value)
    if spec.bounds is not None and isinstance(value, (int, float)):
        low, high = spec.bounds.low, spec.bounds.high
        if value < low or (high is not None and value > high):
            raise ConfigError(
                f"{path}: {key} must be {spec.bounds.describe()}, not {quoted(value)}"
            )
    return value


# -- collections and scopes ---------------------------------------------------------------------
FOLDER_KEYS = frozenset({"collections", "default_collections", "scopes"})
"""Top-level keys of the collections and scopes (:func:`load_folders_config`)."""


@dataclass(frozen=True)
class CollectionEntry:
    """``[collections.NAME]``: a named folder, and its own rules where it gives them."""

    name: str
    path: Path
    """The folder (``~`` expanded, made absolute)."""
    exclude: tuple[str, ...] | None = None
    """Gitignore-style patterns to leave out (None: the top-level ``exclude``)."""
    extensions: tuple[str, ...] | None = None
    """File extensions to index (None: the top-level ``extensions``)."""


@dataclass(frozen=True)
class FoldersConfig:
    """The collections, the default set and the scopes of the config file."""

    collections: tuple[CollectionEntry, ...] = ()
    default_collections: tuple[str, ...] = ()
    """Names of ``collections`` searched when a command is given no folder (none: the
    command's own default, the current folder)."""
    scopes: tuple[Scope, ...] = ()

    def collection(self, name: str) -> CollectionEntry | None:
        """The collection called ``name`` (without regard to case)."""
        return next((c for c in self.collections if c.name.casefold() == name.casefold()), None)

    def naming(self, folder: Path) -> CollectionEntry | None:
        """The collection whose folder is ``folder`` (an absolute, resolved path)."""
        return next((c for c in self.collections if c.path == folder), None)


_COLLECTION_KEYS = ("path", "exclude", "extensions")
_SCOPE_KEYS = ("paths", "extensions", "collections", "description")


def load_folders_config(path: Path | None = None) -> FoldersConfig:
    """The collections, default set and scopes in the config file, checked; none when there
    is no file. Every problem is a one-line :class:`ConfigError` naming the file."""
    path = path or config_path()
    data = _read(path)
    if data is None:
        return FoldersConfig()
    collections = tuple(
        _collection(path, name, table)
        for name, table in _tables(path, "collections", data.get("collections", {})).items()
    )
    seen: set[str] = set()
    for entry in collections:
        if entry.name.casefold() in seen:
            raise ConfigError(f"{path}: two collections are named {quoted(entry.name)}")
        seen.add(entry.name.casefold())
    folders = [entry.path for entry in collections]
    for entry in collections:
        if folders.count(entry.path) > 1:
            raise ConfigError(f"{path}: {entry.path} is named by two collections")
    defaults = _check_strings(path, "default_collections", data.get("default_collections", []))
    config = FoldersConfig(collections, tuple(defaults))
    for name in config.default_collections:
        if config.collection(name) is None:
            known = ", ".join(entry.name for entry in collections) or "none"
            raise ConfigError(
                f"{path}: default_collections names {quoted(name)}, which is no collection"
                f" (collections: {known})"
            )
    scopes = tuple(
        _scope(path, name, table)
        for name, table in _tables(path, "scopes", data.get("scopes", {})).items()
    )
    if collections:
        _check_scope_collections(path, config, scopes)
    return FoldersConfig(collections, config.default_collections, scopes)


def _check_scope_collections(path: Path, config: FoldersConfig, scopes: tuple[Scope, ...]) -> None:
    """Refuse a scope that names a collection the file does not (the file names some: a
    scope's collections are then among them; a file that names none leaves the names to the
    folders given on the command line, checked when the scope is used)."""
    for scope in scopes:
        for name in scope.collections:
            if config.collection(name) is None:
                known = ", ".join(entry.name for entry in config.collections)
                raise ConfigError(
                    f"{path}: scopes.{scope.name} names collection {quoted(name)}, which is no"
                    f" collection (collections: {known})"
                )


def _tables(path: Path, key: str, value: object) -> dict[str, dict[str, object]]:
    """``[key.NAME]`` tables, by name, checked to be tables with valid names."""
    from explorer.core.retrieval.scopes import CollectionsError, check_name

    if not isinstance(value, dict):
        raise ConfigError(f"{path}: {key} must be a table of [{key}.NAME] tables")
    for name, table in value.items():
        try:
            check_name(name, key.rstrip("s"))
        except CollectionsError as error:
            raise ConfigError(f"{path}: {key}: {error}") from None
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: {key}.{name} must be a table")
    return value


def _check_keys(path: Path, where: str, table: dict[str, object], known: tuple[str, ...]) -> None:
    for key in table:
        if key not in known:
            raise ConfigError(
                f"{path}: unknown key {quoted(key)} in {where} (known: {', '.join(known)})"
            )


def _check_strings(path: Path, where: str, value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{path}: {where} must be a list of strings")
    return value


def _collection(path: Path, name: str, table: dict[str, object]) -> CollectionEntry:
    where = f"collections.{name}"
    _check_keys(path, where, table, _COLLECTION_KEYS)
    folder = table.get("path")
    if folder is None:
        raise ConfigError(f"{path}: {where} needs a path (the folder)")
    if not isinstance(folder, str) or not folder.strip():
        raise ConfigError(f"{path}: {where}.path must be a folder, not {quoted(folder)}")
    exclude = table.get("exclude")
    extensions = table.get("extensions")
    return CollectionEntry(
        name,
        Path(folder).expanduser().resolve(),
        None if exclude is None else tuple(_check_strings(path, f"{where}.exclude", exclude)),
        None
        if extensions is None
        else tuple(
            e.lower().lstrip(".") for e in _check_strings(path, f"{where}.extensions", extensions)
        ),
    )


def _scope(path: Path, name: str, table: dict[str, object]) -> Scope:
    from explorer.core.retrieval.query import PathPatternError
    from explorer.core.retrieval.scopes import CollectionsError, Scope, check_name

    where = f"scopes.{name}"
    _check_keys(path, where, table, _SCOPE_KEYS)
    lists = {
        key: tuple(_check_strings(path, f"{where}.{key}", table.get(key, [])))
        for key in ("paths", "extensions", "collections")
    }
    description = table.get("description", "")
    if not isinstance(description, str):
        raise ConfigError(f"{path}: {where}.description must be a str, not {quoted(description)}")
    if not any(lists.values()):
        raise ConfigError(f"{path}: {where} needs paths, extensions or collections")
    for collection in lists["collections"]:
        try:
            check_name(collection)
        except CollectionsError as error:
            raise ConfigError(f"{path}: {where}.collections: {error}") from None
    try:
        return Scope(name, lists["paths"], lists["extensions"], lists["collections"], description)
    except PathPatternError as error:
        raise ConfigError(f"{path}: {where}.paths: {error}") from None
