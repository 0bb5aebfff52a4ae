"""What a one-folder command works on, resolved from its command line: the settings of the
folder (ROOT, else the root ``--index-dir`` records, else the current folder), FILE relative to
that folder's root, and the output format.

The client of the resident reader (:mod:`explorer.cli.resident_client`) resolves a command line
with these very functions before it asks the reader, so this module imports nothing heavy: the
keyword store (SQLite, and YAML through the documents) only where the root an index records is
read, which the client does only when no ROOT is given (the reader checks a given one).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from explorer.core.errors import ExplorerError
from explorer.core.ingest.root_paths import existing_path, path_key
from explorer.core.safe_text import echoed
from explorer.core.store.index_files import ROOT_META
from explorer.settings.config import Settings
from explorer.settings.locations import default_index_dir
from explorer.settings.user_config import load_folders_config

if TYPE_CHECKING:
    from collections.abc import Sequence

    from explorer.settings.config import FolderArgument


class RootError(ExplorerError, ValueError):
    """A folder or file argument that cannot be used."""


class RootMismatch(RootError):
    """ROOT is not the folder the index directory was built for."""

    def __init__(self, index_dir: Path, indexed: Path, given: Path) -> None:
        super().__init__(
            f"the index at {index_dir} belongs to {indexed}, not to {given}: leave ROOT out "
            f"to use {indexed}, or pass another --index-dir for {given}"
        )


def check_root(root: Path) -> Path:
    """The absolute folder ``root``, or a one-line error if it is not a folder."""
    if not root.exists():
        raise RootError(f"no such folder: {echoed(root)}")
    if not root.is_dir():
        raise RootError(f"not a folder: {echoed(root)}")
    return root.resolve()


@dataclass(frozen=True)
class IndexOptions:
    """The options every subcommand takes: which index, which model, which vector store."""

    index_dir: Path | None = None
    model: str | None = None
    chroma_url: str | None = None


def settings_for(
    root: Path | None, options: IndexOptions, *, check_recorded: bool = True
) -> Settings:
    """Settings for a command: ROOT if given, else the root stored in --index-dir, else cwd.

    Raises :class:`RootMismatch` when the index directory belongs to another folder that
    still exists (a folder that was moved may take its old index along). Without
    ``check_recorded`` that is left to whoever opens the index: the resident reader refuses
    settings whose root is not the one its index records, and the command, run in its own
    process, then raises it.
    """
    if root is None and options.index_dir is not None:
        root = stored_root(options.index_dir)
    settings = Settings.for_root(
        check_root(root or Path(".")),
        options.index_dir,
        model=options.model,
        chroma_url=options.chroma_url,
    )
    if not check_recorded:
        return settings
    from explorer.core.store.keywords import KeywordIndexDamaged

    try:
        indexed = stored_root(settings.index_dir)
    except KeywordIndexDamaged:
        return settings  # `index` repairs it; a reader's open says what to do
    if indexed is not None and indexed != settings.root and indexed.is_dir():
        raise RootMismatch(settings.index_dir, indexed, settings.root)
    return settings


def stored_root(index_dir: Path) -> Path | None:
    """The folder the index in ``index_dir`` was built for, if it records one."""
    from explorer.core.store.keywords import KeywordIndex

    database = index_dir / "index.sqlite"
    if not database.exists():
        return None
    command = f"explorer index <the folder it indexes> --index-dir {index_dir}"
    keywords = KeywordIndex(database, read_only=True, repair_command=command)
    try:
        stored = keywords.get_meta(ROOT_META)
    finally:
        keywords.close()
    return Path(stored) if stored else None


def find_indexed_root(file: Path) -> Path:
    """The nearest folder above ``file`` whose index is in its default place."""
    for parent in file.parents:
        if (default_index_dir(parent) / "index.sqlite").exists():
            return parent
    raise RootError(f"no index holds {file}; run `explorer index FOLDER` or pass --root")


def related_settings(
    file: Path, options: IndexOptions, root: Path | None, *, check_recorded: bool = True
) -> Settings:
    """The settings ``explorer related FILE`` uses: of ROOT if given, else of the root stored
    in --index-dir, else of the nearest folder above FILE that has an index
    (``check_recorded``: as :func:`settings_for`)."""
    if not file.exists():
        raise RootError(f"no such file: {echoed(file)}")
    if not file.is_file():
        raise RootError(f"not a file: {echoed(file)}")
    if root is None and options.index_dir is not None:
        root = stored_root(options.index_dir)
    if root is None:
        root = find_indexed_root(file.resolve())
    return settings_for(root, options, check_recorded=check_recorded)


def related_target(
    file: Path, options: IndexOptions, root: Path | None, *, check_recorded: bool = True
) -> tuple[Settings, str]:
    """The settings ``explorer related FILE`` uses, and FILE relative to their root
    (``check_recorded``: as :func:`settings_for`)."""
    file = Path(existing_path(os.fspath(file)))  # as typed, as an index key, or as shown
    settings = related_settings(file, options, root, check_recorded=check_recorded)
    return settings, _inside_root(file, file.resolve(), settings)


def _inside_root(file: Path, absolute: Path, settings: Settings) -> str:
    """``absolute`` (FILE as typed, resolved) relative to the root, ``/``-separated."""
    try:
        return path_key(absolute.relative_to(settings.root).as_posix())
    except ValueError:
        raise RootError(
            f"{echoed(file)} is not inside the indexed folder {settings.root}"
        ) from None


def links_target(
    file: Path, options: IndexOptions, root: Path | None, *, check_recorded: bool = True
) -> tuple[Settings, str]:
    """The settings ``explorer links FILE`` uses, and FILE relative to their root (FILE may be
    gone: its backlinks are then the links to fix; ``check_recorded``: as
    :func:`settings_for`)."""
    file = Path(existing_path(os.fspath(file)))  # as typed, as an index key, or as shown
    if file.is_dir():
        raise RootError(f"not a file: {echoed(file)}")
    absolute = file.absolute().resolve()
    if root is None and options.index_dir is not None:
        root = stored_root(options.index_dir)
    if root is None:
        root = find_indexed_root(absolute)
    settings = settings_for(root, options, check_recorded=check_recorded)
    return settings, _inside_root(file, absolute, settings)


class OutputFormat(StrEnum):
    """How ``explorer search`` prints its answer."""

    TEXT = "text"
    JSON = "json"
    PATHS = "paths"
    """One ``path<TAB>score`` line per file."""


def output_format(as_json: bool, chosen: str | None) -> OutputFormat:
    """The format ``--json`` and ``--format`` ask for together (they must agree)."""
    if as_json and chosen not in (None, "json"):
        from explorer.core.retrieval.query import QueryError

        raise QueryError(f"--json and --format {echoed(chosen)} exclude each other")
    return OutputFormat.JSON if as_json else OutputFormat(chosen or "text")


def uses_collections(
    folders: Sequence[FolderArgument], query: str, collections: Sequence[str], scopes: Sequence[str]
) -> bool:
    """Whether ``explorer search QUERY FOLDERS`` searches named collections rather than one
    folder's index as before: several folders, a collection or scope asked for (as an option
    or a word of the query), or no folder while the config file names a default set."""
    from explorer.core.retrieval.file_filter import parse_filter_words

    if len(folders) > 1 or collections or scopes:
        return True
    parsed = parse_filter_words(query)
    if parsed.collections or parsed.scopes:
        return True
    return not folders and bool(load_folders_config().default_collections)
