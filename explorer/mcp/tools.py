"""The tools' work, without the protocol: each takes its validated arguments and returns its
answer model (:mod:`explorer.api.answers`), or raises :class:`ToolFailure` with one line.

Every answer that reads the index says how far the index is behind the folder (``stale``),
and marks the files in it that changed on disk since they were indexed (:mod:`.freshness`).
Calls run one at a time.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable
from typing import TypeVar

from explorer.api.answers import (
    FileIndexEntry,
    FileIndexState,
    IndexStatusAnswer,
    LinksAnswer,
    OmitReason,
    OmittedFile,
    ReadAnswer,
    ReadManyAnswer,
    ReadManyFile,
    RelatedAnswer,
    SearchAnswer,
    Staleness,
    StatusAnswer,
    Upkeep,
    iso_time,
)
from explorer.api.requests import SearchOptions
from explorer.config import Settings
from explorer.core.errors import ExplorerError, describe
from explorer.core.indexing.disk_state import scan_rules
from explorer.core.indexing.embed_priority import Focus
from explorer.core.ingest.documents import ScannedFile
from explorer.core.ingest.safe_paths import resolve_inside
from explorer.core.ingest.scanner import scan_path
from explorer.core.models import FileState
from explorer.core.retrieval.query import PathFilter, PathPatternError, QueryError
from explorer.core.store.index import Index, NoIndex
from explorer.core.store.manifest_records import FileRecord
from explorer.mcp.arguments import (
    IndexStatusArguments,
    NoArguments,
    PathArguments,
    ReadArguments,
    ReadManyArguments,
    RelatedArguments,
    SearchArguments,
)
from explorer.mcp.cursor import fingerprint, make_cursor, read_cursor
from explorer.mcp.freshness import Freshness
from explorer.mcp.keeper import IndexKeeper
from explorer.mcp.reading import FileText, lines_of, load_file, read_range

log = logging.getLogger(__name__)

_T = TypeVar("_T")

RESOURCES_PER_PAGE = 500
"""Files one ``resources/list`` page names."""


class ToolFailure(Exception):
    """A tool call that cannot be answered; the message goes back to the agent as is."""


class ExplorerTools:
    """The work of every tool over one root's index."""

    def __init__(self, settings: Settings, keeper: IndexKeeper, freshness: Freshness) -> None:
        self.settings = settings
        self.keeper = keeper
        self.freshness = freshness
        self._lock = threading.Lock()

    def call(self, work: Callable[[], _T]) -> _T:
        """Run one tool's work; any failure becomes a :class:`ToolFailure` with one line."""
        with self._lock:
            try:
                return work()
            except ToolFailure:
                raise
            except ExplorerError as error:
                raise ToolFailure(describe(error)) from error
            # The boundary of a tool call: the agent gets one line and the server stays up;
            # the traceback goes to the server's log (stderr).
            except Exception as error:
                log.exception("a tool call failed")
                raise ToolFailure(describe(error)) from error

    # -- search -------------------------------------------------------------------------------
    def search(self, args: SearchArguments) -> SearchAnswer:
        from explorer.core.retrieval.agent_context import ContextOptions, shape_answer
        from explorer.core.retrieval.search import search

        request_print = fingerprint(args.model_dump(mode="json", exclude={"cursor"}))
        offset = read_cursor(args.cursor, request_print) if args.cursor else 0
        for name, patterns in (("paths", args.paths), ("exclude", args.exclude)):
            try:
                PathFilter(tuple(patterns))
            except PathPatternError as error:
                raise QueryError(f"{name} {error.pattern!r}: {error.problem}") from None
        context = ContextOptions(args.content, args.max_tokens, args.metadata_only)
        context.check()
        limit = args.limit or self.settings.default_limit
        request = SearchOptions(
            mode=args.mode,
            paths=tuple(args.paths),
            tags=tuple(args.tags),
            versions=tuple(args.versions),
            exclude=tuple(args.exclude),
            limit=limit + 1,  # one more tells whether there is a next page
            offset=offset,
            per_file=args.per_file,
            min_score=args.min_score,
        ).request(args.query, self.settings)
        index = self.keeper.index()
        response = search(index, request)
        more = len(response.results) > limit
        response.results = response.results[:limit]
        answer = shape_answer(index, response, context)
        shown = [hit.path for hit in answer.response.results]
        if answer.budget is not None and answer.budget.files_cut:
            more = True
        self.keeper.focus(Focus(results=tuple(shown)))
        return SearchAnswer.build(
            answer,
            explain=args.explain,
            offsets=args.offsets,
            stale=self._staleness(index),
            stale_paths=self.freshness.changed_files(index.keywords, shown),
            next_cursor=make_cursor(request_print, offset + len(shown)) if more and shown else None,
        )

    # -- related, links -----------------------------------------------------------------------
    def related(self, args: RelatedArguments) -> RelatedAnswer:
        from explorer.core.retrieval.related import FileNotIndexed, NoVectorYet, related_files

        rel_path = resolve_inside(self.settings.root, args.path).rel_path
        index = self.keeper.index()
        try:
            neighbours = related_files(index, rel_path, args.limit)
        except (FileNotIndexed, NoVectorYet) as error:
            raise ToolFailure(self._not_ready(rel_path, error)) from None
        paths = [neighbour.path for neighbour in neighbours]
        return RelatedAnswer.build(
            rel_path,
            neighbours,
            stale=self._staleness(index),
            stale_paths=self.freshness.changed_files(index.keywords, paths),
        )

    def _not_ready(self, rel_path: str, error: ExplorerError) -> str:
        """What to say of a file related files cannot start from yet: while the index is kept
        current (by this server or another explorer), that it is on its way."""
        from explorer.core.retrieval.related import NoVectorYet

        upkeep = self.keeper.upkeep
        who = "this server" if upkeep is Upkeep.LIVE else "the explorer that writes the index"
        if upkeep is Upkeep.OFF:
            return describe(error)
        if isinstance(error, NoVectorYet):
            if error.state is not FileState.PENDING:
                return describe(error)
            self.keeper.focus(Focus(open_file=rel_path))
            return (
                f"{rel_path} waits for its vectors, which {who} computes; ask again in a few "
                "seconds (search by keyword finds it already)"
            )
        rules = scan_rules(self.settings)
        if isinstance(scan_path(rules, rel_path, self.settings.max_file_bytes), ScannedFile):
            return (
                f"{rel_path} is not in the index yet; {who} takes it in: ask again in a few seconds"
            )
        return describe(error)

    def links(self, args: PathArguments) -> LinksAnswer:
        from explorer.core.retrieval.links import file_links

        rel_path = resolve_inside(self.settings.root, args.path).rel_path
        index = self.keeper.index()
        found = file_links(index, rel_path)
        if not found.exists and not found.backlinks:
            raise ToolFailure(f"{rel_path}: no such file (and nothing links to it)")
        return LinksAnswer.build(found, stale=self._staleness(index))

    # -- reading ------------------------------------------------------------------------------
    def read(self, args: ReadArguments) -> ReadAnswer:
        file = load_file(self.settings, args.path)
        answer = read_range(file, args.start_line, args.end_line, args.start_char)
        changed = self._changed([file.path])
        return answer.model_copy(update={"stale": True if changed else None})

    def read_many(self, args: ReadManyArguments) -> ReadManyAnswer:
        """Whole files in order while they fit the budget; a file that does not fit is listed
        with its size and the next ones are still tried. At most ``max_files`` files are
        looked at: the others are only counted (``more``)."""
        names = self._read_many_names(args)
        unit, budget = ("tokens", args.max_tokens) if args.max_tokens else ("bytes", args.max_bytes)
        count = self._token_count() if args.max_tokens else _utf8_bytes
        read: list[FileText] = []
        omitted: list[OmittedFile] = []
        used = 0
        for name in names[: args.max_files]:
            try:
                file = load_file(self.settings, name)
            except (ExplorerError, OSError) as error:
                omitted.append(
                    OmittedFile(path=name, reason=OmitReason.UNREADABLE, detail=describe(error))
                )
                continue
            cost = count(file.text)
            if used + cost > budget:
                omitted.append(
                    OmittedFile(path=file.path, reason=OmitReason.OVER_BUDGET, size=cost)
                )
                continue
            used += cost
            read.append(file)
        changed = self._changed([file.path for file in read])
        return ReadManyAnswer(
            files=[
                ReadManyFile(
                    path=file.path,
                    total_lines=len(lines_of(file.text)),
                    text=file.text,
                    stale=True if file.path in changed else None,
                )
                for file in read
            ],
            omitted=omitted or None,
            more=max(0, len(names) - args.max_files) or None,
            used=used,
            budget=budget,
            unit=unit,
        )

    def _read_many_names(self, args: ReadManyArguments) -> list[str]:
        """The paths given, then the indexed files the glob matches, each once (as the
        index names it)."""
        names = [_as_index_key(name) for name in args.paths]
        if args.glob is not None:
            try:
                pattern = PathFilter((args.glob,))
            except PathPatternError as error:
                raise QueryError(f"glob {error.pattern!r}: {error.problem}") from None
            records = self.keeper.index().keywords.files()
            matched = pattern.select(p for p, r in records.items() if r.state in _READABLE)
            if not matched and not names:
                raise ToolFailure(f"no indexed file matches {args.glob!r}")
            names += matched
        if not names:
            raise ToolFailure("give paths, a glob, or both")
        return list(dict.fromkeys(names))

    def _token_count(self) -> Callable[[str], int]:
        from explorer.core.retrieval.agent_context import token_counter

        return token_counter(self.keeper.index())

    # -- the index ----------------------------------------------------------------------------
    def status(self, _args: NoArguments) -> StatusAnswer:
        index = self.keeper.index()
        changes = self.freshness.changes(index.keywords)
        status = index.status(disk=changes)
        return StatusAnswer.build(
            status,
            stale=Staleness.build(changes, status.waiting_for_vectors),
            upkeep=self.keeper.upkeep,
        )

    def index_status(self, args: IndexStatusArguments) -> IndexStatusAnswer:
        scope = self._scope(args.path)
        index = self.keeper.index()
        records = index.keywords.files()
        changes = self.freshness.changes(index.keywords)
        edited, deleted = set(changes.edited), set(changes.deleted)
        entries = []
        for path in sorted({*records, *changes.new}):
            if scope is not None and not scope.matches(path):
                continue
            record = records.get(path)
            if record is None:
                entries.append(FileIndexEntry(path=path, state=FileIndexState.NEW))
                continue
            state = (
                FileIndexState.DELETED
                if path in deleted
                else FileIndexState.EDITED
                if path in edited
                else _INDEX_STATES[record.state]
            )
            entries.append(_entry(record, state))
        entries.sort(key=lambda entry: (entry.state is FileIndexState.FRESH, entry.path))
        counts = Counter(entry.state for entry in entries)
        return IndexStatusAnswer(
            path=args.path,
            counts=dict(sorted(counts.items())),
            files=entries[: args.limit],
            more=max(0, len(entries) - args.limit) or None,
        )

    def _scope(self, path: str) -> PathFilter | None:
        """The files ``index_status`` reports on: all for ``.``, else a prefix or glob that
        stays inside the root."""
        text = path.strip()
        if text in ("", ".", "./"):
            return None
        if not any(char in text for char in "*?["):
            return PathFilter((resolve_inside(self.settings.root, text).rel_path,))
        if text.startswith(("/", "~")) or ".." in text.split("/"):
            raise ToolFailure(f"{path}: give a file, folder or glob relative to the root")
        try:
            return PathFilter((text,))
        except PathPatternError as error:
            raise QueryError(f"path {error.pattern!r}: {error.problem}") from None

    # -- resources ----------------------------------------------------------------------------
    def resource_page(self, cursor: str | None) -> tuple[list[FileRecord], str | None]:
        """One page of the readable indexed files (by path), and the cursor of the next."""
        page_print = fingerprint("resources")
        offset = read_cursor(cursor, page_print) if cursor else 0
        records = self.keeper.index().keywords.files()
        readable = sorted(
            (r for r in records.values() if r.state in _READABLE), key=lambda r: r.path
        )
        page = readable[offset : offset + RESOURCES_PER_PAGE]
        end = offset + len(page)
        return page, make_cursor(page_print, end) if end < len(readable) else None

    def resource_text(self, path: str) -> FileText:
        """A file's whole text, as ``read`` would give it."""
        return load_file(self.settings, path)

    # -- freshness ----------------------------------------------------------------------------
    def _staleness(self, index: Index) -> Staleness:
        return self.freshness.staleness(index.keywords)

    def _changed(self, paths: list[str]) -> set[str]:
        """Those of ``paths`` changed since indexed; none while the folder has no index."""
        try:
            index = self.keeper.index()
        except NoIndex:
            return set()
        return self.freshness.changed_files(index.keywords, paths)


_INDEX_STATES = {
    FileState.FRESH: FileIndexState.FRESH,
    FileState.PENDING: FileIndexState.WAITING_FOR_VECTORS,
    FileState.SKIPPED: FileIndexState.SKIPPED,
    FileState.FAILED: FileIndexState.FAILED,
}
_READABLE = (FileState.FRESH, FileState.PENDING)


def _entry(record: FileRecord, state: FileIndexState) -> FileIndexEntry:
    return FileIndexEntry(
        path=record.path,
        state=state,
        reason=record.reason or None,
        chunks=record.chunk_count or None,
        indexed_at=iso_time(record.updated_at) if record.updated_at else None,
    )


def _as_index_key(path: str) -> str:
    """``./notes/a.md`` as ``notes/a.md``, so a file given twice is read once (the path is
    checked when it is read)."""
    parts = [part for part in path.strip().split("/") if part not in ("", ".")]
    return "/".join(parts) if parts and not path.startswith("/") else path


def _utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8", errors="surrogateescape"))
