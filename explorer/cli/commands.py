"""What the CLI subcommands do: open the index, run the core, print text or JSON."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from explorer.api.requests import SearchOptions
from explorer.cli.render import print_json
from explorer.cli.targets import (
    IndexOptions,
    OutputFormat,
    RootError,
    links_target,
    related_target,
    settings_for,
)
from explorer.core.errors import ExplorerError, literal
from explorer.core.models import SyncPhase
from explorer.core.safe_text import echoed, quoted, safe_text
from explorer.settings.config import NamedFolder, OpenFolders, Settings

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from explorer.api.answers import IndexAnswer, StatusAnswer
    from explorer.core.indexing.report import IndexReport
    from explorer.core.indexing.report import Progress as SyncProgress
    from explorer.core.retrieval.agent_context import AgentAnswer, ContextOptions
    from explorer.core.retrieval.links import FileLinks
    from explorer.core.retrieval.related import RelatedFile
    from explorer.core.store.damaged_store import Repair
    from explorer.core.store.index import Index, Status
    from explorer.core.store.manifest_records import DiskChanges


EXIT_FOUND = 0
EXIT_NOTHING_FOUND = 1
"""``search`` found no file (grep's convention: 0 found, 1 nothing found, 2 an error)."""


def require_server(settings: Settings) -> None:
    """With a Chroma server configured, fail at once (one line) unless it answers."""
    if settings.chroma_url:
        from explorer.core.store.chroma_server import check_server, parse_server_url

        check_server(parse_server_url(settings.chroma_url))


def run_index(
    root: Path,
    options: IndexOptions,
    as_json: bool,
    keywords_only: bool,
    rebuild: bool = False,
    only: tuple[Path, ...] | None = None,
) -> None:
    """``explorer index``: a sync of the whole root, of ``only`` some paths, or a rebuild."""
    settings = settings_for(root, options)
    rel_paths = _paths_inside(settings.root, only) if only is not None else None
    done = index_folder(settings, keywords_only, rebuild, rel_paths, progress=not as_json)
    print_index_report(done, as_json)


@dataclass(frozen=True)
class IndexDone:
    """What indexing one folder did."""

    settings: Settings
    report: IndexReport
    keywords_only: bool
    rebuilt: bool = False
    repairs: Sequence[Repair] = ()
    notes: Sequence[str] = ()
    """One line each: what opening the index changed (an older index's keyword tables)."""


def index_folder(
    settings: Settings,
    keywords_only: bool,
    rebuild: bool = False,
    rel_paths: list[str] | None = None,
    progress: bool = True,
) -> IndexDone:
    """Sync the index of ``settings``' folder (just ``rel_paths`` if given), or rebuild it; a
    progress bar on a terminal's stderr with ``progress``."""
    from explorer.core.indexing.indexer import Indexer
    from explorer.core.store.index import Index
    from explorer.core.store.vectors import VectorStoreUnavailable

    if not keywords_only:
        require_server(settings)
    if rebuild:
        from explorer.core.indexing.rebuild import rebuild as rebuild_index

        with _ProgressDisplay(enabled=progress and _stderr_is_terminal()) as display:
            report = rebuild_index(
                settings,
                progress=display.update,
                embed=not keywords_only,
            )
        return IndexDone(settings, report, keywords_only, rebuilt=True)
    index = Index.open_for_writing(settings, check_model=True)
    try:
        with _ProgressDisplay(enabled=progress and _stderr_is_terminal()) as display:
            indexer = Indexer(index)
            if rel_paths is None:
                report = indexer.sync(progress=display.update, embed=not keywords_only)
            else:
                report = indexer.update_paths(
                    rel_paths, progress=display.update, embed=not keywords_only
                )
    except VectorStoreUnavailable as error:  # the server went away during the run
        counts = index.keywords.counts()
        waiting = counts["chunks"] - counts["embedded"]
        raise VectorStoreUnavailable(
            error.template
            + literal(
                f"; the keyword index is up to date and {waiting} chunks wait for vectors:"
                f" run `{settings.repair_command}` again when the server is back"
            ),
            fields=error.fields,
        ) from None
    finally:
        index.close()
    report.tightened = [entry.describe(settings.index_dir) for entry in index.tightened]
    return IndexDone(settings, report, keywords_only, repairs=index.repairs, notes=index.notes)


def _paths_inside(root: Path, paths: tuple[Path, ...]) -> list[str]:
    """``paths`` (as typed: relative to the current folder, or absolute) relative to ``root``.

    Checked by their text, not followed: a deleted file must still name its index entry."""
    rel_paths = []
    for path in paths:
        absolute = Path(os.path.abspath(path))
        for candidate in (absolute, Path(os.path.realpath(absolute.parent)) / absolute.name):
            try:
                rel_paths.append(candidate.relative_to(root).as_posix())
                break
            except ValueError:
                continue
        else:
            raise RootError(f"{echoed(path)} is not inside the indexed folder {root}")
    return rel_paths


def index_answer(done: IndexDone) -> IndexAnswer:
    """``explorer index --json``'s answer for one folder."""
    from explorer.api.answers import IndexAnswer

    return IndexAnswer.build(
        str(done.settings.root),
        done.report,
        rebuilt=done.rebuilt,
        repairs=done.repairs,
        notes=done.notes,
    )


def print_index_report(done: IndexDone, as_json: bool) -> None:
    """Print what indexing one folder did, as text or JSON."""
    if as_json:
        print_json(index_answer(done).to_json())
        return
    settings, report, keywords_only = done.settings, done.report, done.keywords_only
    rebuilt, repairs = done.rebuilt, done.repairs
    lead = "rebuilt from scratch: " if rebuilt else ""
    for line in [repair.describe() for repair in repairs] + list(done.notes):
        click.echo(safe_text(line))
    if report.tightened:
        shown = ", ".join(report.tightened[:3]) + (", ..." if len(report.tightened) > 3 else "")
        click.echo(
            safe_text(
                f"permissions: made {len(report.tightened)} files and folders of the index"
                f" private (other users could read them: {shown})"
            )
        )
    skipped = sum(report.skipped.values())
    reasons = ", ".join(f"{n} {r}" for r, n in sorted(report.skipped.items()))
    click.echo(
        safe_text(
            f"{settings.root}: {lead}{report.added} added, {report.updated} updated, "
            f"{report.removed} removed, {report.unchanged} unchanged"
            + (f", {skipped} skipped ({reasons})" if skipped else "")
            + (f", {report.failed} failed" if report.failed else "")
        )
    )
    store = f"the server at {settings.chroma_url}" if settings.chroma_url else "the store"
    if report.chunks_reused:
        click.echo(f"reused {report.chunks_reused} chunk vectors {store} already held")
    if report.chunks_moved:
        click.echo(f"moved {report.chunks_moved} chunk vectors from the local store to {store}")
    if report.chunks_embedded:
        rate = report.chunks_embedded / report.embed_seconds if report.embed_seconds else 0
        click.echo(
            f"embedded {report.chunks_embedded} chunks in {report.embed_seconds:.1f} s "
            f"({rate:.0f} chunks/s)"
        )
    elif not keywords_only:
        click.echo("nothing to embed: every file's vectors are up to date")
    if report.vectors_unavailable:
        click.echo(f"vectors not checked: {safe_text(report.vectors_unavailable)}")
    if report.orphans_removed:
        click.echo(f"repaired: removed {report.orphans_removed} vectors left by an interrupted run")
    if report.files_restored:
        click.echo(
            f"repaired: indexed {_files(report.files_restored)} again whose chunks were missing"
            " from the database"
        )
    if report.vectors_lost:
        click.echo(f"repaired: {report.vectors_lost} chunks had lost their vectors; embedded again")
    for path, reason in list(report.failures.items())[:FAILURES_SHOWN]:
        click.echo(safe_text(f"failed: {path}: {reason}"))
    if len(report.failures) > FAILURES_SHOWN:
        click.echo(f"failed: and {len(report.failures) - FAILURES_SHOWN} more files")


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


FAILURES_SHOWN = 5
"""Failed files ``explorer index`` names, with why (the rest are counted)."""


def _stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


KEYWORDS_READY = (
    "keyword search works now (explorer search --mode keyword QUERY); "
    "search by meaning follows once the embedding is done"
)
"""Said once the keyword index is written and a (long) embedding starts."""


class _ProgressDisplay:
    """A rich progress bar on a terminal (elapsed and remaining time labelled); silent
    otherwise. Says once when keyword search already works while the embedding goes on."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._progress: Progress | None = None
        self._tasks: dict[str, TaskID] = {}
        self._said_keywords_ready = False

    def __enter__(self) -> _ProgressDisplay:
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            progress = Progress(
                TextColumn("{task.description:<9}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("[progress.elapsed]elapsed"),
                TimeElapsedColumn(),
                TextColumn("[progress.remaining]left"),
                TimeRemainingColumn(),
                transient=True,
                console=_stderr_console(),
            )
            progress.start()
            self._progress = progress
        return self

    def update(self, progress: SyncProgress) -> None:
        bar = self._progress
        if bar is None:
            return
        if progress.phase in (SyncPhase.MODEL, SyncPhase.EMBED) and not self._said_keywords_ready:
            self._said_keywords_ready = True
            bar.console.print(KEYWORDS_READY, style="green", highlight=False)
        if progress.phase == SyncPhase.MODEL:
            self._tasks[SyncPhase.MODEL] = bar.add_task("model", total=None)
            return
        if progress.phase not in (SyncPhase.KEYWORDS, SyncPhase.EMBED):
            return
        if progress.phase == SyncPhase.EMBED and SyncPhase.MODEL in self._tasks:
            bar.remove_task(self._tasks.pop(SyncPhase.MODEL))
        done, total = (
            (progress.files_done, progress.files_total)
            if progress.phase == SyncPhase.KEYWORDS
            else (progress.chunks_done, progress.chunks_total)
        )
        label = "files" if progress.phase == SyncPhase.KEYWORDS else "embedding"
        if progress.phase not in self._tasks:
            self._tasks[progress.phase] = bar.add_task(label, total=total)
        bar.update(self._tasks[progress.phase], completed=done, total=total)

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None:
            self._progress.stop()


def _stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


def _open_for_reading(settings: Settings, vectors: bool = True) -> tuple[Index, threading.Thread]:
    """Open an existing index and start opening Chroma (unless ``vectors`` is False) on a
    thread, so the query model can load meanwhile."""
    import numpy  # noqa: F401 - before the thread: two threads importing numpy at once race

    from explorer.core.store.index import Index

    index = Index.open_existing(settings)
    warm = threading.Thread(target=_open_vectors if vectors else None, args=(index,), daemon=True)
    warm.start()
    return index, warm


def _open_vectors(index: Index) -> None:
    """Open the vector store; a failure is raised again where the store is first used."""
    # The whole body of a warm-up thread: nothing it meets may end the process or print a
    # traceback; the command that uses the store meets the same failure and reports it.
    try:
        index.vectors  # noqa: B018 - opening it is the point
    except Exception:  # noqa: BLE001 - see above
        pass


@dataclass(frozen=True)
class SearchOutput:
    """How ``explorer search`` prints its answer: the format, and the details asked for."""

    format: OutputFormat = OutputFormat.TEXT
    explain: bool = False
    """Each leg's rank and score, the filters and the fusion rule."""
    offsets: bool = False
    """Chunk ids and character offsets of passages and highlights (``--json``)."""


@dataclass(frozen=True)
class SearchOutcome:
    """A search's answer, and what its printing needs to know of the request."""

    answer: AgentAnswer
    first: int
    """The number of its first file (``--offset`` + 1)."""
    scope: str
    """The file filter in words (``notes/ and tag backup``), or empty for every file."""
    roots: Mapping[str, Path] = field(default_factory=dict)
    """The folder of each collection searched, by name, when several were open (each file
    then says its collection); empty for one folder."""

    @property
    def found(self) -> bool:
        return bool(self.answer.response.results)


def check_patterns(search_options: SearchOptions) -> None:
    """Refuse a ``--path`` or ``--exclude`` pattern the matcher cannot take, in one line."""
    from explorer.core.retrieval.query import PathFilter, PathPatternError, QueryError

    for flag, patterns in (("--path", search_options.paths), ("--exclude", search_options.exclude)):
        try:
            PathFilter(patterns)
        except PathPatternError as error:
            raise QueryError(f"{flag} {quoted(error.pattern)}: {error.problem}") from None


def run_search(
    query: str,
    root: Path | None,
    options: IndexOptions,
    search_options: SearchOptions,
    context: ContextOptions,
    output: SearchOutput,
) -> int:
    """``explorer search``: run the search, print it as ``output`` says, and give the exit
    status: :data:`EXIT_NOTHING_FOUND` when no file matched."""
    check_patterns(search_options)
    settings = settings_for(root, options)
    return print_search(search_answer(settings, query, search_options, context), output)


def search_answer(
    settings: Settings, query: str, search_options: SearchOptions, context: ContextOptions
) -> SearchOutcome:
    """The answer of ``explorer search`` on the index of ``settings``."""
    from explorer.core.retrieval.agent_context import shape_answer
    from explorer.core.retrieval.search import search

    context.check()
    request = search_options.request(query, settings)
    mode = request.mode
    if mode != "keyword":
        require_server(settings)
    index, warm = _open_for_reading(settings, vectors=mode != "keyword")
    try:
        # Not every Embedder has a query path to warm (the protocol does not ask for one).
        load_query_path = getattr(index.embedder, "load_query_path", None)
        if mode != "keyword" and load_query_path is not None:
            load_query_path()
        warm.join()
        answer = shape_answer(index, search(index, request), context)
    finally:
        index.close()
    file_filter = request.file_filter
    scope = file_filter.describe() if file_filter.active else ""
    return SearchOutcome(answer, request.offset + 1, scope)


def print_search(
    outcome: SearchOutcome,
    output: SearchOutput,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Print a search's answer as ``output`` says, to ``out`` (default: stdout), its notes to
    ``err`` (default: stderr; with ``--json`` they are part of the answer); give the exit
    status."""
    from explorer.cli.render import search_notes

    notes = search_notes(outcome.answer, outcome.scope, outcome.first - 1)
    if output.format is OutputFormat.JSON:
        from explorer.api.answers import SearchAnswer

        answer = SearchAnswer.build(outcome.answer, explain=output.explain, offsets=output.offsets)
        print_json(answer.model_copy(update={"notes": notes or None}).to_json(), out)
    else:
        from explorer.cli.render import render_paths, render_search, render_search_notes

        render_search_notes(notes, err)
        if output.format is OutputFormat.PATHS:
            render_paths(outcome.answer, out, outcome.roots)
        else:
            named = bool(outcome.roots)
            render_search(outcome.answer, output.explain, outcome.first, out, named)
    return EXIT_FOUND if outcome.found else EXIT_NOTHING_FOUND


def run_related(
    file: Path,
    options: IndexOptions,
    root: Path | None,
    limit: int,
    as_json: bool,
    unlinked: bool = False,
) -> None:
    settings, rel_path = related_target(file, options, root)
    found = related_answer(settings, rel_path, limit, unlinked=unlinked)
    print_related(rel_path, found, as_json, unlinked=unlinked)


def related_answer(
    settings: Settings, rel_path: str, limit: int, may_write: bool = True, unlinked: bool = False
) -> list[RelatedFile]:
    """The files nearest in meaning to ``rel_path``. ``may_write`` lets a file still waiting for
    its vectors be embedded and stored on the spot; without it, :class:`ReadOnlyProcess`.
    ``unlinked``: only those ``rel_path`` does not link to yet."""
    from explorer.core.store.index import Index

    require_server(settings)
    index = Index.open_existing(settings)
    try:
        return _related_answer(index, rel_path, limit, may_write, unlinked)
    finally:
        index.close()


def print_related(
    rel_path: str,
    neighbours: Sequence[RelatedFile],
    as_json: bool,
    out: TextIO | None = None,
    unlinked: bool = False,
) -> None:
    """Print ``explorer related``'s answer as text or JSON, to ``out`` (default: stdout)."""
    if as_json:
        from explorer.api.answers import RelatedAnswer

        print_json(RelatedAnswer.build(rel_path, neighbours, unlinked=unlinked).to_json(), out)
        return
    from explorer.cli.render import render_related

    render_related(rel_path, neighbours, out, unlinked=unlinked)


class ReadOnlyProcess(ExplorerError, RuntimeError):
    """An answer would write the index (or load the full model) in a process that only reads:
    the resident reader, whose client then runs the command itself."""


RELATED_CANDIDATES = 2
"""``explorer related`` on a file without vectors embeds it and its keyword-nearest files
without vectors, this many per neighbour asked for (``--limit``)."""


def _related_answer(
    index: Index, rel_path: str, limit: int, may_write: bool, unlinked: bool = False
) -> list[RelatedFile]:
    """The related files of ``rel_path``; for a file still waiting for its vectors, embedded
    on the spot first (one line on stderr says so).

    ``index`` is the command's read-only index. If the write lock is free, a writing index
    embeds the file and enough candidates to answer: its :data:`RELATED_CANDIDATES` × ``limit``
    keyword-nearest files that have no vectors yet (the files already embedded are candidates
    as they are), stored as ``explorer index`` would, and answers. If another process writes
    the index, nothing is written: the file's vectors are computed in memory and compared with
    the files embedded so far. Without ``may_write``, such a file is refused
    (:class:`ReadOnlyProcess`).
    """
    from explorer.core.indexing.embed_priority import EmbeddingPriority, Focus, keyword_neighbours
    from explorer.core.indexing.report import IndexReport
    from explorer.core.indexing.vector_phase import VectorPhase
    from explorer.core.models import FileState
    from explorer.core.retrieval.related import related_files
    from explorer.core.store.index import Index, IndexBusy

    record = index.keywords.file(rel_path)
    stored_model = index.keywords.get_meta("model")
    if (
        record is None
        or record.state != FileState.PENDING  # fresh, or a state related_files explains
        or stored_model not in (None, index.settings.model)  # `explorer index` rebuilds first
    ):
        return related_files(index, rel_path, limit, unlinked=unlinked)
    if not may_write:
        raise ReadOnlyProcess(f"{rel_path} waits for its vectors; this process only reads")
    try:
        writer = Index.open_for_writing(index.settings, holder="explorer related")
    except IndexBusy as error:
        click.echo(
            safe_text(
                f"{rel_path}: vectors pending ({error}); comparing it, embedded in memory,"
                " with the files embedded so far"
            ),
            err=True,
        )
        source = VectorPhase(index).embed_in_memory(rel_path)
        return related_files(index, rel_path, limit, source, unlinked=unlinked)
    try:
        wanted = RELATED_CANDIDATES * limit
        nearest = keyword_neighbours(writer.keywords, rel_path, 4 * wanted)
        records = writer.keywords.files_by_path(nearest)
        pending = [p for p in nearest if p in records and records[p].state == FileState.PENDING]
        waiting = pending[:wanted]
        click.echo(
            safe_text(
                f"{rel_path} had no vectors yet: embedding it and {len(waiting)} keyword-nearest"
                " files without vectors now"
            ),
            err=True,
        )
        priority = EmbeddingPriority()
        priority.set_focus(Focus(open_file=rel_path))
        VectorPhase(writer, priority).embed_pending(
            IndexReport(), lambda _progress: None, only={rel_path, *waiting}
        )
        return related_files(writer, rel_path, limit, unlinked=unlinked)
    finally:
        writer.close()


def run_status(root: Path | None, options: IndexOptions, as_json: bool) -> None:
    print_status(status_answer(settings_for(root, options)), as_json)


@dataclass(frozen=True)
class CheckedStatus:
    """The index's status, and how the folder on disk differs from it."""

    status: Status
    changes: DiskChanges
    writer: str | None = None
    """The live process that keeps the index current (a TUI, an MCP server), if one runs."""


def status_answer(settings: Settings) -> CheckedStatus:
    """What the index of ``settings`` holds, checked against the files on disk."""
    from explorer.core.indexing.disk_state import compare_with_disk
    from explorer.core.store.index import Index, live_writer

    index = Index.open_existing(settings)
    try:
        index.keywords.check()
        changes = compare_with_disk(index.settings, index.keywords.files())
        return CheckedStatus(index.status(disk=changes), changes, live_writer(settings.index_dir))
    finally:
        index.close()


def print_status(checked: CheckedStatus, as_json: bool, out: TextIO | None = None) -> None:
    """Print ``explorer status``'s answer as text or JSON, to ``out`` (default: stdout)."""
    if as_json:
        print_json(status_json(checked).to_json(), out)
        return
    from explorer.cli.render import render_status

    render_status(checked.status, out, checked.writer)


def status_json(checked: CheckedStatus) -> StatusAnswer:
    """``explorer status --json``'s answer for one folder."""
    from explorer.api.answers import Staleness, StatusAnswer

    status = checked.status
    stale = Staleness.build(checked.changes, status.waiting_for_vectors)
    return StatusAnswer.build(status, stale=stale).model_copy(update={"writer": checked.writer})


def run_links(file: Path, options: IndexOptions, root: Path | None, as_json: bool) -> None:
    """``explorer links FILE``: the file's links and backlinks."""
    settings, rel_path = links_target(file, options, root)
    found = links_answer(settings, rel_path)
    if not found.exists and not found.backlinks:
        raise RootError(f"no such file: {echoed(file)} (and nothing links to it)")
    print_links(found, as_json)


def links_answer(settings: Settings, rel_path: str) -> FileLinks:
    """What ``rel_path`` links to and what links to it, from the index of ``settings``."""
    from explorer.core.retrieval.links import file_links

    index, _warm = _open_for_reading(settings, vectors=False)
    try:
        return file_links(index, rel_path)
    finally:
        index.close()


def print_links(
    found: FileLinks, as_json: bool, out: TextIO | None = None, err: TextIO | None = None
) -> None:
    """Print ``explorer links``' answer as text or JSON, to ``out`` (default: stdout); in
    text, a note on ``err`` (default: stderr) says when the file itself does not exist."""
    if as_json:
        from explorer.api.answers import LinksAnswer

        print_json(LinksAnswer.build(found).to_json(), out)
        return
    from explorer.cli.render import render_links

    render_links(found, out, err)


def run_check_refs(root: Path | None, options: IndexOptions, as_json: bool) -> bool:
    """``explorer check-refs``: report references to missing files; True when there are any.

    The keyword phase of a sync runs first when the write lock is free; when another process
    writes the index (the TUI keeps it current), or the index cannot be written (read-only),
    what it holds is checked as it is.
    """
    from explorer.core.indexing.indexer import Indexer
    from explorer.core.retrieval.links import missing_references
    from explorer.core.store.index import Index, IndexBusy, IndexReadOnly

    settings = settings_for(root, options)
    try:
        index = Index.open_for_writing(settings, holder="explorer check-refs")
    except (IndexBusy, IndexReadOnly) as cannot_write:
        index = Index.open_existing(settings)  # no index at all: one line saying so
        click.echo(f"note: {safe_text(str(cannot_write))}; checking the index as it is", err=True)
    else:
        try:
            Indexer(index).sync(embed=False)
        except BaseException:
            index.close()
            raise
    try:
        check = missing_references(index)
    finally:
        index.close()
    if as_json:
        from explorer.api.answers import CheckRefsAnswer

        print_json(CheckRefsAnswer.build(str(settings.root), check).to_json())
    else:
        from explorer.cli.render import render_missing_references

        render_missing_references(check)
    return bool(check.missing)


def run_mcp(root: Path | None, options: IndexOptions) -> None:
    """``explorer mcp``: serve the index over stdio until the client leaves."""
    settings = settings_for(root, options)
    run_mcp_folders(OpenFolders([NamedFolder(settings.root.name, settings)], ()))


def run_mcp_folders(opened: OpenFolders) -> None:
    """``explorer mcp A B``: serve each folder's index (several: as collections) over stdio
    until the client leaves."""
    try:
        from explorer.mcp.server import serve_folders
    except ImportError as error:
        raise RootError(
            f"the MCP server needs the mcp package ({error}); pip install 'mcp>=2.3,<3'"
        ) from None
    serve_folders(opened)
