"""The CLI over several folders: ``explorer index|search|status|related`` on named collections.

A command given one folder (or none, when the config file sets no ``default_collections``)
runs as it always did (:mod:`explorer.cli.commands`; the resident reader may answer it), and
prints the same bytes. Given several folders, or none with ``default_collections`` set, or a
``--collection``/``--scope`` (``collection:``/``scope:`` words in a query), it opens the folders
as named collections (:func:`explorer.settings.config.open_folders`): a search asks
:class:`~explorer.core.retrieval.collections.Collections` for one ranking over every folder, and
each result names its collection. These commands run in this process: a resident reader serves
one index, and several folders go without one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from explorer.cli.commands import (
    CheckedStatus,
    SearchOutcome,
    SearchOutput,
    check_patterns,
    index_answer,
    index_folder,
    print_index_report,
    print_search,
    require_server,
    status_answer,
    status_json,
)
from explorer.cli.render import print_json
from explorer.cli.targets import IndexOptions, RootError, check_root, settings_for
from explorer.core.ingest.root_paths import existing_path, path_key
from explorer.core.models import SearchMode
from explorer.core.safe_text import echoed
from explorer.settings.config import FolderArgument, NamedFolder, OpenFolders, open_folders
from explorer.settings.user_config import load_folders_config

if TYPE_CHECKING:
    from explorer.api.answers import StatusAnswer
    from explorer.api.requests import SearchOptions
    from explorer.core.retrieval.agent_context import ContextOptions
    from explorer.core.retrieval.collections import Collections
    from explorer.core.retrieval.search import SearchRequest


def open_named(
    folders: Sequence[FolderArgument], options: IndexOptions, collections: Sequence[str] = ()
) -> OpenFolders:
    """The named folders a command opens: ``folders`` (each checked), else the config's
    collections ``collections`` names, else its ``default_collections``, else the folder a
    single-folder command would open (``--index-dir``'s, or the current one)."""
    for folder in folders:
        check_root(folder.path)
    overrides = {"model": options.model, "chroma_url": options.chroma_url}
    opened = open_folders(folders, collections, options.index_dir, **overrides)
    if opened.folders:
        return opened
    root = settings_for(None, options).root
    return open_folders([root], (), options.index_dir, **overrides)


def _several(folders: Sequence[FolderArgument]) -> bool:
    """Whether ``index``/``status`` with ``folders`` may mean more than one folder."""
    return len(folders) > 1 or (not folders and bool(load_folders_config().default_collections))


# -- search -----------------------------------------------------------------------------------
def search_several(
    query: str,
    folders: Sequence[FolderArgument],
    options: IndexOptions,
    search_options: SearchOptions,
    context: ContextOptions,
    output: SearchOutput,
) -> int:
    """``explorer search QUERY A B``: one ranking over every collection (or those asked for),
    printed as ``output`` says; the exit status as :func:`~explorer.cli.commands.print_search`
    gives it."""
    from explorer.core.retrieval.agent_context import shape_answer
    from explorer.core.retrieval.file_filter import parse_filter_words

    check_patterns(search_options)
    context.check()
    asked = (*search_options.collections, *parse_filter_words(query).collections)
    opened = open_named(folders, options, asked)
    request = search_options.request(query, opened.folders[0].settings)
    if request.mode is not SearchMode.KEYWORD:
        for folder in opened.folders:
            require_server(folder.settings)
    shelf = _open(opened)
    try:
        response = shelf.search(request)
        texts = shelf.chunk_texts(response.results) if context.content else None
        answer = shape_answer(next(iter(shelf)).index, response, context, texts=texts)
    finally:
        shelf.close()
    several = len(opened.folders) > 1
    if not several:  # one folder (a scope of it): no other collection to tell its files from
        for hit in response.results:
            hit.collection = ""
    roots = {f.name: f.settings.root for f in opened.folders} if several else {}
    outcome = SearchOutcome(answer, request.offset + 1, _filters_in_words(request), roots)
    return print_search(outcome, output)


def _open(opened: OpenFolders) -> Collections:
    from explorer.core.retrieval.collections import Collections

    return Collections.open([(f.name, f.settings) for f in opened.folders], opened.scopes)


def _filters_in_words(request: SearchRequest) -> str:
    """The collections, scopes and file filter of ``request`` in words (empty: none)."""
    parts = []
    if request.collections:
        kind = "collection " if len(request.collections) == 1 else "collections "
        parts.append(kind + ", ".join(request.collections))
    if request.scopes:
        parts.append(
            ("scope " if len(request.scopes) == 1 else "scopes ") + ", ".join(request.scopes)
        )
    if request.file_filter.active:
        parts.append(request.file_filter.describe())
    return " and ".join(parts)


# -- status and index -------------------------------------------------------------------------
def status_several(folders: Sequence[FolderArgument], options: IndexOptions, as_json: bool) -> bool:
    """``explorer status A B``: each collection's status, in turn (text) or as one object
    (``--json``); False when the command names one folder only (the caller reports it)."""
    if not _several(folders):
        return False
    opened = open_named(folders, options)
    if len(opened.folders) == 1:
        from explorer.cli.commands import run_status

        run_status(opened.folders[0].settings.root, options, as_json)
        return True
    checked = [(folder.name, status_answer(folder.settings)) for folder in opened.folders]
    if as_json:
        from explorer.api.answers import CollectionStatusesAnswer

        answers = [_status_json(name, one) for name, one in checked]
        print_json(CollectionStatusesAnswer(collections=answers).to_json())
        return True
    from explorer.cli.render import render_status

    for number, (name, one) in enumerate(checked):
        if number:
            click.echo("")
        click.echo(f"collection  {name}")
        render_status(one.status, writer=one.writer)
    return True


def mcp_several(folders: Sequence[FolderArgument], options: IndexOptions) -> bool:
    """``explorer mcp A B``: serve every folder as a collection; False when the command names
    one folder only, with no name given (the caller serves it as before)."""
    named = any(folder.name for folder in folders)
    if not _several(folders) and not named:
        return False
    opened = open_named(folders, options)
    if len(opened.folders) == 1 and not named:
        return False
    from explorer.cli.commands import run_mcp_folders

    run_mcp_folders(opened)
    return True


def _status_json(name: str, checked: CheckedStatus) -> StatusAnswer:
    return status_json(checked).model_copy(update={"collection": name})


def index_several(
    folders: Sequence[FolderArgument],
    options: IndexOptions,
    as_json: bool,
    keywords_only: bool,
    rebuild: bool,
) -> bool:
    """``explorer index A B``: each folder's own index brought up to date in turn (text
    reports as they finish; ``--json``: one object at the end). False when the command names
    one folder only (the caller indexes it)."""
    if not _several(folders):
        return False
    opened = open_named(folders, options)
    if len(opened.folders) == 1:
        from explorer.cli.commands import run_index

        run_index(opened.folders[0].settings.root, options, as_json, keywords_only, rebuild)
        return True
    from explorer.core.embed.embedder import keep_loaded_embedders

    keep_loaded_embedders()  # the folders share one copy of a model's weights, loaded once
    answers = []
    for folder in opened.folders:
        done = index_folder(folder.settings, keywords_only, rebuild, progress=not as_json)
        if as_json:
            answers.append(index_answer(done).model_copy(update={"collection": folder.name}))
        else:
            click.echo(f"collection  {folder.name}")
            print_index_report(done, as_json=False)
    if as_json:
        from explorer.api.answers import CollectionsIndexAnswer

        print_json(CollectionsIndexAnswer(collections=answers).to_json())
    return True


# -- related files ----------------------------------------------------------------------------
def related_several(
    file: Path,
    folders: Sequence[FolderArgument],
    options: IndexOptions,
    root: Path | None,
    limit: int,
    as_json: bool,
    unlinked: bool = False,
) -> bool:
    """``explorer related FILE A B``: FILE's neighbours in its own folder and every folder
    given (with none: the config's ``default_collections`` when one of them holds FILE).
    FILE is a real path on disk: the open folder that holds it is its collection. False when
    only FILE's own folder is searched (the caller answers as before)."""
    from explorer.cli.targets import find_indexed_root

    if not folders and not load_folders_config().default_collections:
        return False
    file = Path(existing_path(os.fspath(file)))  # as typed, as an index key, or as shown
    if not file.is_file():
        problem = "no such file" if not file.exists() else "not a file"
        raise RootError(f"{problem}: {echoed(file)}")
    absolute = file.resolve()
    opened = open_named(folders, options)
    if not _holder(opened.folders, absolute):
        if not folders:  # the default set does not hold it: its own folder, as before
            return False
        own = root if root is not None else find_indexed_root(absolute)
        opened = open_named([FolderArgument(own), *folders], options)
    if len(opened.folders) == 1:
        return False
    for folder in opened.folders:
        require_server(folder.settings)
    shelf = _open(opened)
    try:
        holding = shelf.holding(absolute)
        if holding is None:
            raise RootError(f"{echoed(file)} is not inside any of the folders given")
        collection, rel_path = holding[0].name, path_key(holding[1])
        found = shelf.related(collection, rel_path, limit, unlinked)
    finally:
        shelf.close()
    if as_json:
        from explorer.api.answers import RelatedAnswer

        answer = RelatedAnswer.build(
            rel_path,
            [neighbour.related for neighbour in found],
            collection=collection,
            collections=[neighbour.collection for neighbour in found],
            unlinked=unlinked,
        )
        print_json(answer.to_json())
        return True
    from explorer.cli.render import render_related

    names = (collection, [neighbour.collection for neighbour in found])
    neighbours = [neighbour.related for neighbour in found]
    render_related(rel_path, neighbours, collections=names, unlinked=unlinked)
    return True


def _holder(folders: Sequence[NamedFolder], file: Path) -> bool:
    """Whether one of ``folders`` holds ``file``."""
    return any(file.is_relative_to(folder.settings.root) for folder in folders)
