"""``explorer mcp``: the index of a folder as Model Context Protocol tools, over stdio.

Built on the official ``mcp`` SDK (imported only when the server starts). The tools are
``search``, ``related``, ``read``, ``links`` and ``status``; their answers carry the same
fields as the CLI's ``--json``. The server only reads: it never takes the index's write lock,
so it runs beside ``explorer index`` or the TUI, and it follows their writes (and a rebuild's
swap) as the CLI would.

Every path an agent names is resolved inside the root (:mod:`explorer.core.ingest.safe_paths`):
absolute paths, ``..`` and symbolic links that leave the root come back as error results and
are never read. ``read`` also refuses what the index would leave out (hidden, ignored and
binary files), so ``.env`` or ``.git/config`` stay unreadable through it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from explorer.config import Settings
from explorer.core.models import SearchMode

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from explorer.core.embed.embedder import Embedder
    from explorer.core.ingest.safe_paths import InsidePath
    from explorer.core.ingest.scanner import ScanRules
    from explorer.core.store.index import Index

JSONObject = dict[str, object]
"""A tool's answer: one JSON object."""

SERVER_NAME = "explorer"
PATH_HELP = "A file path relative to the indexed folder, e.g. docs/setup.md."
MAX_READ_CHARS = 60_000
"""The most characters ``read`` returns at once; the answer says where to go on."""
MAX_LIMIT = 200
"""The most files a ``search`` or ``related`` call returns."""

INSTRUCTIONS = """\
explorer indexes one folder of docs, notes and code for hybrid search: keywords (BM25) and
meaning (sentence embeddings) together. Use `search` for questions and concepts when you do not
know the exact words a document uses ("how are backups restored?"); it ranks passages and
returns line ranges. Use grep (or your file tools) for an exact identifier, an error string or a
regular expression across every file: grep is exhaustive, `search` returns the best few.
Then `read` a file (or the line range a result gave), `related` for files about the same thing,
`links` for what a file references and what references it, `status` to see whether the index
is up to date. Paths are relative to the indexed folder."""

SEARCH_DESCRIPTION = """\
Search the indexed folder by meaning and by keyword; results are files best first, each with
its best passages (heading, line range, 0-1 score, snippet). Good for questions and topics in
your own words: it finds passages that do not contain the query's words. For an exact string,
identifier or regex over all files, use grep instead: this returns only the top `limit` files.
Narrow with `paths` (prefixes or globs like "docs/**/*.md"), `tags` and `versions` (front
matter), or the same as words in the query (path:GLOB tag:TAG version:V); page with
`offset`. `content` returns each passage's full text; `max_tokens` keeps the best passages
that fit a token budget and says what was cut; `metadata_only` returns paths, titles,
descriptions, tags and scores only (cheap triage)."""

RELATED_DESCRIPTION = """\
Files nearest in meaning to one file (by their whole-file vectors), each with the pair of
passages that explains the link. Use it to find other documents on the same subject."""

READ_DESCRIPTION = f"""\
Read a text file of the indexed folder, whole or a line range (1-based, inclusive). At most
{MAX_READ_CHARS} characters come back; `next_start_line` says where to continue. Only files the
index would take are readable (not hidden, ignored or binary files, nothing outside the root)."""

LINKS_DESCRIPTION = """\
A file's outgoing references (Markdown links, reference definitions, [[wikilinks]] and embeds,
Hugo ref shortcodes, `path/file.ext` mentions) with the file each leads to, resolved as the
folder's publisher does (a static site's URLs, an Obsidian vault's note names), and its
`state`: resolved, missing or outside-root; and its backlinks (files that reference it)."""

STATUS_DESCRIPTION = """\
What the index holds: files indexed and stale (edited, new or deleted on disk since the last
index run, or still waiting for vectors), chunks, vectors, the model and the vector store. If
files are stale, answers may be out of date until `explorer index` runs."""


class ToolFailure(Exception):
    """A tool call that cannot be answered; the message goes back to the agent as is."""


class ExplorerTools:
    """The tools' work, without the protocol: each returns JSON-ready data or raises.

    The index opens on the first call and stays open (the model loads once); it is reopened
    when its database was replaced (``explorer index --rebuild``) and opened again after a
    failure. Calls run one at a time.
    """

    def __init__(
        self, settings: Settings, embedder_factory: Callable[[], Embedder] | None = None
    ) -> None:
        self.settings = settings
        self._embedder_factory = embedder_factory
        self._index: Index | None = None
        self._identity: tuple[int, int] | None = None
        self._lock = threading.Lock()

    # -- the index ----------------------------------------------------------------------------
    def _database_identity(self) -> tuple[int, int] | None:
        from explorer.core.store.index import DATABASE_NAME

        try:
            info = os.stat(self.settings.index_dir / DATABASE_NAME)
        except OSError:
            return None
        return info.st_dev, info.st_ino

    def index(self) -> Index:
        """The open index, reopened if a rebuild swapped its database in."""
        from explorer.core.store.index import Index

        identity = self._database_identity()
        if self._index is not None and identity != self._identity:
            self.close()
        if self._index is None:
            embedder = self._embedder_factory() if self._embedder_factory else None
            self._index = Index.open_existing(self.settings, embedder)
            self._identity = identity
        return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def call(self, work: Callable[[], JSONObject]) -> JSONObject:
        """Run one tool's work; any failure becomes a :class:`ToolFailure` with one line."""
        with self._lock:
            try:
                return work()
            except ToolFailure:
                raise
            # The boundary of a tool call: expected or not, the agent gets one line (the
            # server stays up), never a traceback.
            except Exception as error:
                raise ToolFailure(_describe(error)) from error

    def _inside(self, path: str) -> InsidePath:
        from explorer.core.ingest.safe_paths import resolve_inside

        return resolve_inside(self.settings.root, path)

    # -- the tools ----------------------------------------------------------------------------
    def search(
        self,
        query: str,
        mode: str = "hybrid",
        paths: list[str] | None = None,
        tags: list[str] | None = None,
        versions: list[str] | None = None,
        limit: int | None = None,
        offset: int = 0,
        per_file: int = 3,
        min_score: float | None = None,
        content: bool = False,
        max_tokens: int | None = None,
        metadata_only: bool = False,
        explain: bool = False,
    ) -> JSONObject:
        from explorer.api.requests import SearchOptions
        from explorer.core.retrieval.agent_context import ContextOptions, shape_answer
        from explorer.core.retrieval.search import search

        if limit is not None and limit > MAX_LIMIT:
            raise ToolFailure(f"limit must be at most {MAX_LIMIT}")
        context = ContextOptions(content, max_tokens, metadata_only)
        context.check()
        request = SearchOptions(
            mode=SearchMode(mode),
            paths=tuple(paths or ()),
            tags=tuple(tags or ()),
            versions=tuple(versions or ()),
            limit=limit,
            offset=offset,
            per_file=per_file,
            min_score=min_score,
        ).request(query, self.settings)
        index = self.index()
        response = search(index, request)
        return shape_answer(index, response, context).as_json(explain=explain)

    def related(self, path: str, limit: int = 10) -> JSONObject:
        from explorer.core.retrieval.related import related_files

        if limit > MAX_LIMIT:
            raise ToolFailure(f"limit must be at most {MAX_LIMIT}")
        inside = self._inside(path)
        neighbours = related_files(self.index(), inside.rel_path, limit)
        return {"file": inside.rel_path, "related": [n.as_json() for n in neighbours]}

    def read(
        self, path: str, start_line: int | None = None, end_line: int | None = None
    ) -> JSONObject:
        from explorer.core.ingest.scanner import load_text

        inside = self._inside(path)
        if not self._rules().accepts(inside.rel_path):
            raise ToolFailure(
                f"{inside.rel_path}: not a file explorer indexes (hidden, ignored or of an "
                "unknown kind); read it with your own tools if you must"
            )
        if not inside.real_path.is_file():
            raise ToolFailure(f"{inside.rel_path}: no such file")
        size = inside.real_path.stat().st_size
        if size > self.settings.max_file_bytes:
            raise ToolFailure(f"{inside.rel_path}: {size} bytes, larger than the index takes")
        loaded = load_text(inside.real_path)
        if isinstance(loaded, tuple):
            reason, detail = loaded
            raise ToolFailure(f"{inside.rel_path}: not readable as text ({reason}: {detail})")
        return _line_range(inside.rel_path, loaded, start_line, end_line)

    def links(self, path: str) -> JSONObject:
        from explorer.core.retrieval.links import file_links

        inside = self._inside(path)
        found = file_links(self.index(), inside.rel_path)
        if not found.exists and not found.backlinks:
            raise ToolFailure(f"{inside.rel_path}: no such file (and nothing links to it)")
        return found.as_json()

    def status(self) -> JSONObject:
        from explorer.core.indexing.disk_state import status_against_disk

        return status_against_disk(self.index()).as_json()

    def _rules(self) -> ScanRules:
        from explorer.core.indexing.disk_state import scan_rules

        return scan_rules(self.settings)


def _line_range(rel_path: str, text: str, start: int | None, end: int | None) -> JSONObject:
    lines = text.splitlines(keepends=True)
    total = len(lines)
    first = 1 if start is None else start
    last = total if end is None else min(end, total)
    if first < 1 or (end is not None and end < first):
        raise ToolFailure("start_line must be at least 1 and end_line at least start_line")
    if first > max(total, 1):
        raise ToolFailure(f"{rel_path} has {total} lines; start_line {first} is past the end")
    chosen: list[str] = []
    size, line = 0, first
    while line <= last:
        piece = lines[line - 1]
        if chosen and size + len(piece) > MAX_READ_CHARS:
            break
        chosen.append(piece[:MAX_READ_CHARS])
        size += len(piece)
        line += 1
    truncated = line <= last
    return {
        "path": rel_path,
        "start_line": first,
        "end_line": line - 1,
        "total_lines": total,
        "text": "".join(chosen),
        "truncated": truncated,
        "next_start_line": line if truncated else None,
    }


def _describe(error: Exception) -> str:
    """The line an agent gets: fields named as the tools' parameters (``per_file``)."""
    from explorer.core.errors import describe

    if isinstance(error, ToolFailure):
        return str(error)
    return describe(error)


def build_server(tools: ExplorerTools) -> MCPServer:
    """The MCP server with explorer's five tools bound to ``tools``."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations

    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING")
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    def run(work: Callable[[], JSONObject]) -> JSONObject:
        try:
            return tools.call(work)
        except ToolFailure as failure:
            raise ToolError(str(failure)) from None

    @server.tool(name="search", description=SEARCH_DESCRIPTION, annotations=read_only)
    def search_tool(
        query: Annotated[str, Field(description="What to look for, in your own words.")],
        mode: Annotated[
            Literal["hybrid", "semantic", "keyword"],
            Field(description="hybrid (default), semantic (meaning only) or keyword (BM25)."),
        ] = "hybrid",
        paths: Annotated[
            list[str] | None,
            Field(description="Only files under these prefixes or matching these globs."),
        ] = None,
        tags: Annotated[
            list[str] | None,
            Field(description="Only files whose front matter has any of these tags."),
        ] = None,
        versions: Annotated[
            list[str] | None,
            Field(description="Only files whose front matter version is one of these."),
        ] = None,
        limit: Annotated[
            int | None, Field(description="Files to return (default 10, or the config's).")
        ] = None,
        offset: Annotated[int, Field(description="Files to skip first: the next page.")] = 0,
        per_file: Annotated[int, Field(description="Passages per file.")] = 3,
        min_score: Annotated[
            float | None, Field(description="Hide passages scoring below this (0-1).")
        ] = None,
        content: Annotated[
            bool, Field(description="Return each passage's full text, not only a snippet.")
        ] = False,
        max_tokens: Annotated[
            int | None,
            Field(description="Keep the best passages that fit this many model tokens."),
        ] = None,
        metadata_only: Annotated[
            bool, Field(description="Paths, titles, descriptions and scores only.")
        ] = False,
        explain: Annotated[
            bool, Field(description="Add each leg's rank and score to every passage.")
        ] = False,
    ) -> dict[str, Any]:
        return run(
            lambda: tools.search(
                query,
                mode,
                paths,
                tags,
                versions,
                limit,
                offset,
                per_file,
                min_score,
                content,
                max_tokens,
                metadata_only,
                explain,
            )
        )

    @server.tool(name="related", description=RELATED_DESCRIPTION, annotations=read_only)
    def related_tool(
        path: Annotated[str, Field(description=PATH_HELP)],
        limit: Annotated[int, Field(description="Files to return.")] = 10,
    ) -> dict[str, Any]:
        return run(lambda: tools.related(path, limit))

    @server.tool(name="read", description=READ_DESCRIPTION, annotations=read_only)
    def read_tool(
        path: Annotated[str, Field(description=PATH_HELP)],
        start_line: Annotated[int | None, Field(description="First line (1-based).")] = None,
        end_line: Annotated[int | None, Field(description="Last line (inclusive).")] = None,
    ) -> dict[str, Any]:
        return run(lambda: tools.read(path, start_line, end_line))

    @server.tool(name="links", description=LINKS_DESCRIPTION, annotations=read_only)
    def links_tool(path: Annotated[str, Field(description=PATH_HELP)]) -> dict[str, Any]:
        return run(lambda: tools.links(path))

    @server.tool(name="status", description=STATUS_DESCRIPTION, annotations=read_only)
    def status_tool() -> dict[str, Any]:
        return run(tools.status)

    return server


def serve(settings: Settings) -> None:
    """Answer MCP requests on stdin/stdout until the client closes the connection."""
    tools = ExplorerTools(settings)
    try:
        build_server(tools).run("stdio")
    finally:
        tools.close()
