"""``explorer mcp``: the index of a folder as Model Context Protocol tools and resources, over
stdio.

Built on the official ``mcp`` SDK's low-level server (imported only when the server starts),
so that each tool's schemas and answers are exactly explorer's own:

- input schemas are those of the argument models (:mod:`.arguments`): bounds, enums, and no
  argument the tool does not take; a bad call comes back as a tool error in words an agent can
  act on;
- output schemas are those of the answer models (:mod:`explorer.api.answers`), the same the
  CLI's ``--json`` prints; each answer is the structured content, and its text content is the
  same answer rendered readable (:mod:`.rendering`), for clients that give the model only text;
- every file of the index is a resource ``explorer://PATH`` (a template, and a paged list).

The server keeps the index current while it runs (:mod:`.keeper`) and every answer says how
far the index is behind the folder (:mod:`.freshness`). Over several folders
(:func:`serve_folders`), each is a named collection with its own index kept current: the tools
take a ``collection`` (``search`` takes ``collections`` and ``scopes``), every file an answer
names carries its collection, a ``collections`` tool lists them and the named scopes, and each
file is the resource ``explorer://COLLECTION/PATH``. Every path an agent names is resolved
inside the root: absolute paths, ``..`` and symbolic links that leave the root are refused and
never read, and nothing the index would leave out (hidden, ignored, binary files) is readable.
"""

from __future__ import annotations

import logging
import mimetypes
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, unquote

import anyio
import anyio.to_thread
from pydantic import ValidationError

from explorer.api.answers import (
    Answer,
    CollectionsAnswer,
    CollectionStatusesAnswer,
    IndexStatusAnswer,
    LinksAnswer,
    ReadAnswer,
    ReadManyAnswer,
    RelatedAnswer,
    SearchAnswer,
    StatusAnswer,
)
from explorer.core.errors import ExplorerError
from explorer.mcp.arguments import (
    CollectionIndexStatusArguments,
    CollectionPathArguments,
    CollectionReadArguments,
    CollectionReadManyArguments,
    CollectionRelatedArguments,
    CollectionSearchArguments,
    CollectionStatusArguments,
    IndexStatusArguments,
    NoArguments,
    PathArguments,
    ReadArguments,
    ReadManyArguments,
    RelatedArguments,
    SearchArguments,
    ToolArguments,
    describe_invalid,
)
from explorer.mcp.folders import ServedFolder, ServedFolders
from explorer.mcp.freshness import Freshness
from explorer.mcp.keeper import IndexKeeper
from explorer.mcp.reading import MAX_READ_CHARS
from explorer.mcp.rendering import render
from explorer.mcp.schemas import json_schema, one_line
from explorer.mcp.tools import ExplorerTools, ToolFailure
from explorer.settings.config import NamedFolder, OpenFolders, Settings

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel.server import Server

SERVER_NAME = "explorer"
URI_SCHEME = "explorer://"
RESOURCE_TEMPLATE = URI_SCHEME + "{path}"

INSTRUCTIONS = """\
explorer indexes one folder of docs, notes and code for hybrid search: keywords (BM25) and
meaning (sentence embeddings) together, and keeps the index current while it runs. Use `search`
for questions and concepts when you do not know the exact words a document uses ("how are
backups restored?"); it ranks passages and returns line ranges. Use grep (or your file tools)
for an exact identifier, an error string or a regular expression across every file: grep is
exhaustive, `search` returns the best few. Then `read` a file or the lines a result gave,
`read_many` for several files within a budget, `related` for files about the same thing,
`links` for what a file references and what references it, `index_status` for where files
stand with the index, `status` for the index as a whole. Paths are relative to the indexed
folder; each file is also a resource explorer://PATH. When an answer's `stale` counts files,
the folder changed and the index is catching up: a result marked `stale` may have moved
lines."""

SEARCH_DESCRIPTION = """\
Search the indexed folder by meaning and by keyword; results are files best first, each with
its best passages (heading, line range, 0-1 score, snippet). Good for questions and topics in
your own words: it finds passages that do not contain the query's words. For an exact string,
identifier or regex over all files, use grep instead: this returns only the top `limit` files.
Narrow with `paths` (prefixes or globs like "docs/**/*.md"), `exclude`, `tags` and `versions`
(front matter), or words in the query (path:GLOB tag:TAG version:V); page with `cursor`.
`content` returns each passage's whole text; `max_tokens` keeps the best passages that fit a
token budget and says what was cut; `metadata_only` returns paths, titles, descriptions, tags
and scores only (cheap triage); `offsets` and `explain` add ids, offsets and ranking numbers."""

RELATED_DESCRIPTION = """\
Files most alike in content to one file, best first, each with the pair of passages (one from
each file) that explains the match. Every passage of the file is compared with the passages of
other files; a pair counts by how far it stands above that passage's usual neighbours, and a
passage with near copies in many files (boilerplate) counts less. Links between the files (either
way, or to and from the same pages), shared tags and the same folder add to it; `why` names the
signals (`linked · same section · 3 shared passages`) and `linked` says whether the file links
there already. With `unlinked`, only the files it does not link to yet: the links it is missing,
each with the passages a link would join. Use it to find other documents on the same subject."""

READ_DESCRIPTION = f"""\
Read a file of the indexed folder as it is on disk now, whole or a line range (1-based,
inclusive; lines as search results number them): a text file as it is, a PDF, DOCX, HTML page
or notebook as the text the index extracted from it, so every file search returns is readable.
At most {MAX_READ_CHARS} characters come back; `next_start_line` (and, inside a very long
line, `next_start_char` for `start_char`) says where to continue. Only files the index would
take are readable (not hidden, ignored or binary files, nothing outside the root); a refusal
says why."""

READ_MANY_DESCRIPTION = """\
Read several whole files at once: `paths` in order, and/or the indexed files matching `glob`
(docs/, notes/**/*.md), within a budget of `max_bytes` (default 60,000) or `max_tokens`.
Files that do not fit are listed in `omitted` with their size: read them with `read`."""

LINKS_DESCRIPTION = """\
A file's outgoing references (Markdown links, reference definitions, [[wikilinks]] and embeds,
Hugo ref shortcodes, `path/file.ext` mentions) with the file each leads to, resolved as the
folder's publisher does (a static site's URLs, an Obsidian vault's note names), and its
`state`: resolved, missing or outside-root; and its backlinks (files that reference it)."""

STATUS_DESCRIPTION = """\
What the index holds (files, passages, vectors, the model, the vector store), how far it is
behind the folder (`stale`: files edited, new or deleted on disk and not indexed yet; files
waiting for vectors), and who keeps it current (`upkeep`)."""

INDEX_STATUS_DESCRIPTION = """\
Where each file under a path (a file, a folder like docs/, or a glob) stands with the index:
fresh, waiting_for_vectors, edited (changed on disk since indexed), new, deleted, skipped or
failed (with the reason), with counts by state. Not-fresh files are listed first."""

COLLECTIONS_INSTRUCTIONS = """\
This server answers for several folders, each a named collection with its own index: `search`
ranks the files of every collection as one (narrow with `collections` or `scopes`), every file
an answer names carries its `collection`, and its `path` is relative to that collection's
folder. Pass that `collection` with the path to `read`, `related`, `links` (it may be left out
when only one collection holds the path). `collections` lists the collections and the named
scopes (saved sets of files, with what each holds). Each file is also a resource
explorer://COLLECTION/PATH."""

COLLECTIONS_DESCRIPTION = """\
The collections (named folders, each with its own index) this server searches together, with
their folders, sizes and how far each index is behind; and the named scopes (saved sets of path
globs and extensions), each with a description of what it holds: pass their names as `search`'s
`collections` and `scopes`."""

RESOURCE_TEMPLATE_DESCRIPTION = """\
A file of the indexed folder, whole, as the index reads it (a PDF, DOCX, HTML page or notebook
as its extracted text): PATH relative to the folder (slashes as they are, or as %2F)."""

COLLECTIONS_TEMPLATE_DESCRIPTION = """\
A file of a collection, whole, as the index reads it (a PDF, DOCX, HTML page or notebook as its
extracted text): PATH is COLLECTION/PATH, the collection's name (as the collections tool lists
it) and the file's path relative to its folder (slashes as they are, or as %2F)."""

COLLECTIONS_STATUS_DESCRIPTION = STATUS_DESCRIPTION.replace(
    "What the index holds", "For each collection (or only `collection`): what its index holds"
)

_T = TypeVar("_T")


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, description, argument and answer models, and its work."""

    name: str
    description: str
    arguments: type[ToolArguments]
    answer: type[Answer]
    work: Callable[[ExplorerTools, Any], Answer]

    def declaration(self) -> types.Tool:
        """The tool as ``tools/list`` shows it."""
        import mcp_types as types

        return types.Tool(
            name=self.name,
            description=one_line(self.description),
            input_schema=json_schema(self.arguments, "validation"),
            output_schema=json_schema(self.answer, "serialization"),
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
        )


COLLECTION_TOOLS = (
    ToolSpec(
        "search",
        SEARCH_DESCRIPTION,
        CollectionSearchArguments,
        SearchAnswer,
        ExplorerTools.search,
    ),
    ToolSpec("read", READ_DESCRIPTION, CollectionReadArguments, ReadAnswer, ExplorerTools.read),
    ToolSpec(
        "read_many",
        READ_MANY_DESCRIPTION,
        CollectionReadManyArguments,
        ReadManyAnswer,
        ExplorerTools.read_many,
    ),
    ToolSpec(
        "related",
        RELATED_DESCRIPTION,
        CollectionRelatedArguments,
        RelatedAnswer,
        ExplorerTools.related,
    ),
    ToolSpec("links", LINKS_DESCRIPTION, CollectionPathArguments, LinksAnswer, ExplorerTools.links),
    ToolSpec(
        "index_status",
        INDEX_STATUS_DESCRIPTION,
        CollectionIndexStatusArguments,
        IndexStatusAnswer,
        ExplorerTools.index_status,
    ),
    ToolSpec(
        "status",
        COLLECTIONS_STATUS_DESCRIPTION,
        CollectionStatusArguments,
        CollectionStatusesAnswer,
        ExplorerTools.statuses,
    ),
    ToolSpec(
        "collections",
        COLLECTIONS_DESCRIPTION,
        NoArguments,
        CollectionsAnswer,
        ExplorerTools.collections,
    ),
)
"""Every tool of a server of several folders (or with named scopes): each takes a
collection, and ``collections`` lists them."""

TOOLS = (
    ToolSpec("search", SEARCH_DESCRIPTION, SearchArguments, SearchAnswer, ExplorerTools.search),
    ToolSpec("read", READ_DESCRIPTION, ReadArguments, ReadAnswer, ExplorerTools.read),
    ToolSpec(
        "read_many",
        READ_MANY_DESCRIPTION,
        ReadManyArguments,
        ReadManyAnswer,
        ExplorerTools.read_many,
    ),
    ToolSpec(
        "related", RELATED_DESCRIPTION, RelatedArguments, RelatedAnswer, ExplorerTools.related
    ),
    ToolSpec("links", LINKS_DESCRIPTION, PathArguments, LinksAnswer, ExplorerTools.links),
    ToolSpec(
        "index_status",
        INDEX_STATUS_DESCRIPTION,
        IndexStatusArguments,
        IndexStatusAnswer,
        ExplorerTools.index_status,
    ),
    ToolSpec("status", STATUS_DESCRIPTION, NoArguments, StatusAnswer, ExplorerTools.status),
)
"""Every tool, in the order ``tools/list`` gives them."""


def uri_of(path: str) -> str:
    """The resource URI of a root-relative path."""
    return URI_SCHEME + quote(path, safe="/")


def path_of(uri: str) -> str:
    """The root-relative path a resource URI names (checked later, as ``read`` checks it)."""
    if not uri.startswith(URI_SCHEME):
        raise ToolFailure(f"not an explorer resource: URIs look like {URI_SCHEME}docs/setup.md")
    return unquote(uri.removeprefix(URI_SCHEME)).lstrip("/")


def mime_type(path: str) -> str:
    guessed, _encoding = mimetypes.guess_type(path, strict=False)
    if path.lower().endswith((".md", ".markdown")):
        return "text/markdown"
    return guessed if guessed and guessed.startswith("text/") else "text/plain"


def server_version() -> str:
    """explorer's version, as installed (or as the package says when run from a checkout)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("explorer")
    except PackageNotFoundError:
        from explorer import __version__

        return __version__


def build_server(tools: ExplorerTools) -> Server[Any]:
    """The MCP server: explorer's tools and resources bound to ``tools``."""
    import mcp_types as types
    from mcp.server.lowlevel.server import Server
    from mcp.shared.exceptions import MCPError

    specs = COLLECTION_TOOLS if tools.across else TOOLS
    by_name = {spec.name: spec for spec in specs}

    async def run(work: Callable[[], _T]) -> _T:
        return await anyio.to_thread.run_sync(lambda: tools.call(work))

    def failed(text: str) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=True
        )

    async def list_tools(
        _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[spec.declaration() for spec in specs])

    async def call_tool(
        _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        spec = by_name.get(params.name)
        if spec is None:
            names = ", ".join(by_name)
            raise MCPError(
                types.INVALID_PARAMS, f"unknown tool {params.name!r}; the tools are {names}"
            )
        try:
            arguments = spec.arguments.model_validate(params.arguments or {})
        except ValidationError as error:
            return failed(f"{spec.name}: {describe_invalid(error, spec.arguments)}")
        try:
            answer = await run(lambda: spec.work(tools, arguments))
        except ToolFailure as failure:
            return failed(str(failure))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=render(answer))],
            structured_content=answer.to_json(),
        )

    async def list_resources(
        _ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        cursor = params.cursor if params is not None else None
        try:
            records, next_cursor = await run(lambda: tools.resource_page(cursor))
        except ToolFailure as failure:
            raise MCPError(types.INVALID_PARAMS, str(failure)) from None
        resources = [
            types.Resource(
                uri=uri_of(r.path), name=r.path, mime_type=mime_type(r.path), size=r.size
            )
            for r in records
        ]
        return types.ListResourcesResult(resources=resources, next_cursor=next_cursor)

    async def list_templates(
        _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(
            uri_template=RESOURCE_TEMPLATE,
            name="file",
            title="A file of the indexed folder",
            description=one_line(
                COLLECTIONS_TEMPLATE_DESCRIPTION
                if tools.folders.several
                else RESOURCE_TEMPLATE_DESCRIPTION
            ),
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(
        _ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        try:
            file = await run(lambda: tools.resource_text(path_of(params.uri)))
        except ToolFailure as failure:
            raise MCPError(types.INVALID_PARAMS, str(failure), {"uri": params.uri}) from None
        contents = types.TextResourceContents(
            uri=params.uri, text=file.text, mime_type=mime_type(file.path)
        )
        return types.ReadResourceResult(contents=[contents])

    return Server(
        SERVER_NAME,
        version=server_version(),
        title="explorer",
        instructions=one_line(
            INSTRUCTIONS + ("\n" + COLLECTIONS_INSTRUCTIONS if tools.across else "")
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


def serve(settings: Settings) -> None:
    """Answer MCP requests on stdin/stdout until the client closes the connection, keeping the
    index current meanwhile."""
    serve_folders(OpenFolders([NamedFolder(settings.root.name, settings)], ()))


def serve_folders(opened: OpenFolders) -> None:
    """Answer MCP requests for every folder of ``opened`` (one, or several as collections,
    with the config file's scopes; :func:`explorer.settings.config.open_folders` makes it) until the
    client closes the connection, keeping each folder's index current meanwhile."""
    from mcp.server.stdio import stdio_server

    from explorer.core.embed.embedder import keep_loaded_embedders

    _log_to_stderr()
    keep_loaded_embedders()  # the folders share one copy of a model's weights, as a window's do
    folders = ServedFolders(
        [
            ServedFolder(
                folder.name,
                folder.settings,
                IndexKeeper(folder.settings),
                Freshness(folder.settings),
            )
            for folder in opened.folders
        ],
        opened.scopes,
    )
    tools = ExplorerTools.serving(folders)
    for folder in folders:
        folder.freshness.start()
        try:
            folder.keeper.index()  # the live index starts catching up before the first call
        except ExplorerError:
            pass  # no index (yet), or a damaged one: each call says so
    server = build_server(tools)

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(run)
    finally:
        for folder in folders:
            folder.keeper.close()
            folder.freshness.stop()


def _log_to_stderr() -> None:
    """Warnings of explorer's own loggers on stderr (the client's log of the server)."""
    logger = logging.getLogger("explorer")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("explorer mcp: %(levelname)s %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
