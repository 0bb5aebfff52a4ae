"""Settings: one typed object that every part of explorer reads its knobs from; and the named
folders (collections) a command opens, with the settings of each."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.core.safe_text import quoted
from explorer.core.settings import DEFAULT_MODEL, IndexSettings
from explorer.core.store.chroma_server import CHROMA_URL_ENV
from explorer.settings.locations import owned_parents, query_encoder_cache, resolve_index_dir
from explorer.settings.user_config import (
    CollectionEntry,
    ConfigError,
    FoldersConfig,
    config_path,
    load_folders_config,
    load_user_config,
)

if TYPE_CHECKING:
    from explorer.core.retrieval.scopes import Scope

MODEL_ENV = "EXPLORER_MODEL"


@dataclass(frozen=True)
class Settings(IndexSettings):
    """Everything that shapes an index and a search, plus what only the front ends read.
    Build one with :meth:`for_root`; the core reads it as the :class:`IndexSettings` it is."""

    extra: dict[str, str] = field(default_factory=dict)
    """Free-form options for experiments; unused by default."""

    @property
    def repair_command(self) -> str:
        """``explorer index ROOT``, with ``--index-dir`` when the index is not where that
        command alone would look."""
        command = f"explorer index {self.root}"
        if self.index_dir != resolve_index_dir(self.root):
            command += f" --index-dir {self.index_dir}"
        return command

    @property
    def query_encoder_cache(self) -> Path:
        """The model's folder in the user's cache directory (:func:`query_encoder_cache`)."""
        return query_encoder_cache(self.model)

    @property
    def private_parents(self) -> tuple[Path, ...]:
        """The data directory and its ``indexes`` folder, when the index is in its default
        place: explorer made them, and their names list the folders indexed."""
        return owned_parents(self.index_dir)

    @classmethod
    def for_root(
        cls, root: str | Path, index_dir: str | Path | None = None, **overrides: object
    ) -> Settings:
        """Settings for ``root``: each value from a flag (``overrides``), else the environment,
        else the user's config file, else the default."""
        root_path = Path(root).expanduser().resolve()
        config = load_user_config()
        model = (
            overrides.pop("model", None)
            or os.environ.get(MODEL_ENV)
            or config.model
            or DEFAULT_MODEL
        )
        chroma_url = (
            overrides.pop("chroma_url", None)
            or os.environ.get(CHROMA_URL_ENV)
            or config.chroma_url
            or None
        )
        from_config: dict[str, object] = {}
        if config.exclude is not None:
            from_config["exclude"] = tuple(config.exclude)
        if config.extensions is not None:
            from_config["extensions"] = frozenset(e.lower().lstrip(".") for e in config.extensions)
        from_config.update(config.knobs)
        if config.allow_links_outside is not None:
            allowed = {Path(p).expanduser().resolve() for p in config.allow_links_outside}
            from_config["allow_outside_links"] = root_path in allowed
        if isinstance(config.link_base, str):
            from_config["link_base"] = config.link_base
        elif config.link_base is not None:
            bases = {Path(p).expanduser().resolve(): b for p, b in config.link_base.items()}
            if root_path in bases:
                from_config["link_base"] = bases[root_path]
        from_config.update(_own_rules(root_path))
        settings = cls(
            root=root_path,
            index_dir=resolve_index_dir(root_path, index_dir),
            model=str(model),
            chroma_url=str(chroma_url) if chroma_url else None,
            **from_config,  # type: ignore[arg-type]
        )
        # Flag values by Settings' own field names; their types are the flags' (click checks).
        return replace(settings, **overrides) if overrides else settings  # type: ignore[arg-type]


def _own_rules(root: Path) -> dict[str, object]:
    """The ``exclude`` and ``extensions`` of the collection ``root`` is the folder of, when the
    config file names it and gives them: a folder keeps its rules however it is opened."""
    entry = load_folders_config().naming(root)
    rules: dict[str, object] = {}
    if entry is not None and entry.exclude is not None:
        rules["exclude"] = entry.exclude
    if entry is not None and entry.extensions is not None:
        rules["extensions"] = frozenset(entry.extensions)
    return rules


@dataclass(frozen=True)
class NamedFolder:
    """A folder a command opens, the collection name it goes by, and its settings."""

    name: str
    settings: Settings


@dataclass(frozen=True)
class OpenFolders:
    """What a command opens: named folders, and the scopes of the config file."""

    folders: list[NamedFolder]
    scopes: tuple[Scope, ...]


@dataclass(frozen=True)
class FolderArgument:
    """A folder as the command line gives it: ``PATH``, or ``NAME=PATH`` to name its
    collection (:func:`folder_argument`)."""

    path: Path
    name: str | None = None
    """The collection name given with it (None: from the config file, else the folder's)."""


def folder_argument(given: str | os.PathLike[str]) -> FolderArgument:
    """``given`` as a folder argument: ``NAME=PATH`` names the folder's collection.

    A path that exists wins (a folder whose name holds ``=`` is that folder), and so does one
    whose part before the first ``=`` holds a ``/`` (``/srv/a=b/docs``). Otherwise the part
    before ``=`` is a name, checked as every collection name is
    (:func:`~explorer.core.retrieval.scopes.check_name`)."""
    text = os.fspath(given)
    name, equals, path = text.partition("=")
    if not equals or "/" in name or os.sep in name or Path(text).expanduser().exists():
        return FolderArgument(Path(text))
    from explorer.core.retrieval.scopes import check_name

    check_name(name)
    if not path:
        raise ConfigError(f"{quoted(text)}: give the folder after '=' (NAME=PATH)")
    return FolderArgument(Path(path), name)


def folder_arguments(given: Sequence[str | os.PathLike[str]]) -> list[FolderArgument]:
    """Each of ``given`` as a :func:`folder_argument`."""
    return [folder_argument(one) for one in given]


def open_folders(
    folders: Sequence[FolderArgument | Path],
    collections: Sequence[str] = (),
    index_dir: str | Path | None = None,
    **overrides: object,
) -> OpenFolders:
    """The named folders a command opens, each with its settings (see :meth:`Settings.for_root`).

    ``folders`` given on the command line are each named by the name given with it
    (``NAME=PATH``), else by the collection of the config file whose folder it is, else after
    its directory: :func:`distinct_names` makes the names distinct and keeps clear of every
    name the config file gives. With no folder, the collections ``collections`` names
    (``--collection``), else the config file's ``default_collections``; none of those either:
    no folder (the command's own default). ``index_dir`` names the index of one folder only.

    This is where every command's set of folders is checked, once: a configured folder that
    does not exist, two folders of one name, and a folder inside another
    (:func:`~explorer.core.retrieval.collections.check_apart`) are each a one-line error.
    """
    from explorer.core.retrieval.collections import check_apart, distinct_names
    from explorer.settings.locations import INDEX_DIR_ENV

    config = load_folders_config()
    given = [f if isinstance(f, FolderArgument) else FolderArgument(Path(f)) for f in folders]
    chosen: dict[Path, str | None] = {}
    for argument in given:
        root = argument.path.expanduser().resolve()
        if chosen.get(root) is None:
            chosen[root] = argument.name
    if chosen:
        roots = list(chosen)
        entries = [config.naming(root) for root in roots]
        own = {root: name for root, name in chosen.items() if name is not None}
        for root, entry in zip(roots, entries, strict=True):
            if root not in own and entry is not None:
                own[root] = entry.name
        unnamed = [root for root in roots if root not in own]
        taken = [entry.name for entry in config.collections] + list(own.values())
        names = iter(distinct_names(unnamed, taken))
        named = [(own[root] if root in own else next(names), root) for root in roots]
    else:
        named = [(entry.name, entry.path) for entry in _configured(config, collections)]
    seen: dict[str, Path] = {}
    for name, root in named:
        if name.casefold() in seen:
            raise ConfigError(
                f"two folders are named {quoted(name)}: {seen[name.casefold()]} and {root}"
            )
        seen[name.casefold()] = root
    check_apart([(name, root) for name, root in named])
    if len(named) > 1 and index_dir is not None:
        raise ConfigError("--index-dir names the index of one folder; give one folder with it")
    if len(named) > 1 and os.environ.get(INDEX_DIR_ENV):
        raise ConfigError(
            f"{INDEX_DIR_ENV} names the index of one folder; unset it to open several folders"
        )
    return OpenFolders(
        [
            NamedFolder(name, Settings.for_root(root, index_dir, **dict(overrides)))
            for name, root in named
        ],
        config.scopes,
    )


def _configured(config: FoldersConfig, wanted: Sequence[str]) -> list[CollectionEntry]:
    """The configured collections ``wanted`` names, else the default set; each one's folder
    must exist."""
    chosen = []
    for name in wanted or config.default_collections:
        entry = config.collection(name)
        if entry is None:
            known = ", ".join(c.name for c in config.collections) or "none"
            raise ConfigError(
                f"no collection {quoted(name)} in the config file (collections: {known})"
            )
        if not entry.path.is_dir():
            problem = "is not a folder" if entry.path.exists() else "does not exist"
            raise ConfigError(
                f"collection {quoted(entry.name)} of {config_path()}: its folder {entry.path}"
                f" {problem}"
            )
        if entry not in chosen:
            chosen.append(entry)
    return chosen
