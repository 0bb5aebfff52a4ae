"""The search panel: the search box over the results list, and everything searching takes.

The panel owns the stale-answer check (each search has a generation;
only the newest one's answer is shown), and the search worker (its own worker group, so a new
keystroke cancels only the stale search). It also warms the query path (vector store and query
encoder) and counts vectors, the two things a search by meaning waits for. It reports up with
typed messages: :class:`SearchPanel.Answered` after each answer, :class:`SearchPanel.QueryPathReady`
once the query path is warm (or cannot be), :class:`SearchPanel.VectorsCounted`, and
:class:`SearchPanel.NothingToLeaveFor` when the user leaves an empty panel.

One search runs at a time: a question asked while one runs waits for it and then runs, the
newest only. A thread cannot be stopped, so a stale search runs to its end; started side by
side, four of them (keys typed while new vectors asked for the results again) each took
0.4-1.6 s on the kernel's docs instead of 50 ms. That is also all the pacing typing needs: a key
searches at once when no search runs, and keys typed in a burst wait only for the search
running, not for a pause in the typing (a debounce of 0.15 s made a word typed quickly wait
about 0.2 s for its results).

The screen feeds it the window's workspace (:meth:`SearchPanel.use_workspace`) and the index's
state (:attr:`SearchPanel.state`), and asks it to search again when the index changed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Input
from textual.worker import Worker, WorkerState, get_current_worker

from explorer.core.errors import ExplorerError
from explorer.core.live.events import ModelState
from explorer.core.models import SearchMode
from explorer.core.retrieval.file_filter import FileFilter
from explorer.tui.index_state import IndexState
from explorer.tui.messages import OpenFile
from explorer.tui.widgets.results import ResultsList, hit_lines
from explorer.tui.widgets.search_box import SearchBox
from explorer.tui.workers import report_worker_failure

if TYPE_CHECKING:
    from explorer.core.retrieval.search import SearchRequest, SearchResponse
    from explorer.tui.workspace import Workspace

_ENDED = (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED)
"""The states of a worker whose thread is done."""
RESULT_FILES = 15
"""Files a page of results holds; moving past the last asks for the next page."""
PASSAGES_PER_FILE = 3
VECTORS_UNAVAILABLE = "vectors unavailable: keyword results"
NO_VECTORS_YET = "no vectors yet: keyword results"
START_HINT = (
    "Type to search. ctrl+p goes to a file; Down leaves the search box, then ? lists every key."
)
"""The first thing the results say. The focus is in the search box, where ``?`` is typed (and
Esc stays: it is where Esc leads), so the hint says how to reach the help from there."""

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SearchSummary:
    """How a search answered, for the status bar."""

    text: str
    """The query field as typed when it was searched."""
    files: int
    requested: SearchMode
    """The mode the user asked for."""
    answered: SearchMode
    """The mode that produced the results (keyword while the model loads)."""
    seconds: float
    note: str = ""
    """Why the answer differs from what was asked, or the search's first note."""


@dataclass(frozen=True)
class _Question:
    """What the search box asked, as of its last change."""

    text: str = ""
    """The query field exactly as typed (with any ``path:`` words)."""
    query: str = ""
    """The words to search for."""
    filter: FileFilter = FileFilter()
    mode: SearchMode = SearchMode.HYBRID


@dataclass(frozen=True)
class _Answer:
    response: SearchResponse
    answered: SearchMode
    note: str


class SearchPanel(Vertical):
    """The search box and the results list; runs the searches the box asks for."""

    ALLOW_MAXIMIZE = True

    BINDINGS = [
        # Priority: the focus moves while this key is handled, so the keys of the same read
        # (Down, Down typed fast) already reach the results list.
        Binding(
            "down",
            "down",
            "To results",
            show=False,
            priority=True,
            tooltip="To the results (walking the history: the next query)",
        ),
    ]

    @dataclass
    class Answered(Message):
        """The results show a new answer (``summary``), or no search (``summary`` None)."""

        panel: SearchPanel
        summary: SearchSummary | None

        @property
        def control(self) -> SearchPanel:
            return self.panel

    @dataclass
    class QueryPathReady(Message):
        """The query path is warm (``ok``) or cannot be (``error`` says why)."""

        panel: SearchPanel
        ok: bool
        vectors: int = 0
        """How many chunk vectors the store holds."""
        error: str = ""
        vectors_error: str = ""
        """Set when the vector store did not answer (keyword search goes on)."""

    @dataclass
    class VectorsCounted(Message):
        """How many chunk vectors the store holds now."""

        panel: SearchPanel
        vectors: int

    @dataclass
    class NothingToLeaveFor(Message):
        """The user left the search box while there are no results to go to."""

        panel: SearchPanel

    @dataclass
    class _Finished(Message, bubble=False):
        generation: int
        text: str
        mode: SearchMode
        answer: _Answer
        seconds: float
        rows: list[list[Content]]
        width: int
        limit: int

    @dataclass
    class _Failed(Message, bubble=False):
        generation: int
        message: str

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report_worker_failure(self, event)
        if event.worker is self._worker and event.state in _ENDED and self._search_waits:
            self._launch_search()  # the newest question, asked while the last one ran

    def __init__(self, title: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.title = title
        self.workspace: Workspace | None = None
        self.state = IndexState()
        """The index's state, as the screen last passed it."""
        self._question = _Question()
        self._generation = 0
        self._pages = 1
        """Pages of results asked for (the user moved past the end of a full page)."""
        self._worker: Worker[None] | None = None
        """The newest search's worker."""
        self._search_waits = False
        """A question was asked while the worker ran: it runs once the worker ends."""

    def compose(self) -> ComposeResult:
        box = SearchBox(id="search")
        box.border_title = self.title
        yield box
        yield ResultsList(id="results")

    def on_mount(self) -> None:
        self.results.show_message(START_HINT)
        self.box.focus_query()

    # -- public API ---------------------------------------------------------------------------
    @property
    def box(self) -> SearchBox:
        return self.query_one(SearchBox)

    @property
    def results(self) -> ResultsList:
        return self.query_one(ResultsList)

    @property
    def has_query(self) -> bool:
        return bool(self._question.query.strip())

    @property
    def searches_by_meaning(self) -> bool:
        """A query is asked in a mode that uses vectors (an answer may change as they come)."""
        return self.has_query and self._question.mode is not SearchMode.KEYWORD

    def use_workspace(self, workspace: Workspace) -> None:
        """Search the window's open indexes from now on: warm the query path, and answer a
        waiting query."""
        self.workspace = workspace
        self._warm_query_path(workspace)
        if self.has_query:
            self.search_again()

    def warm_query_path(self) -> None:
        """Try the query path again (the vector store came back)."""
        if self.workspace is not None:
            self._warm_query_path(self.workspace)

    def count_vectors(self) -> None:
        if self.workspace is not None:
            self._count_vectors(self.workspace)

    def search_again(self) -> None:
        """Run the question on show again now (the index changed); the highlight stays."""
        self._start_search()

    def shows_any_of(self, paths: Collection[str]) -> bool:
        """Whether new vectors for ``paths`` could change the answer on show."""
        results = self.results
        return results.shown_mode == SearchMode.KEYWORD or any(
            hit.path in paths for hit in results.hits
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Down leaves the search box only: in the results it is the list's."""
        if action == "down":
            focused = self.screen.focused
            return isinstance(focused, Input) and self.box in focused.ancestors
        return True

    def action_down(self) -> None:
        """Down: the next query while walking the history, else leave for the results."""
        if self.screen.focused is self.box.query_one("#query") and self.box.newer_query():
            return
        self.action_leave()

    def action_leave(self) -> None:
        self.box.remember_query()
        results = self.results
        if results.hits:
            # At once (Widget.focus waits a turn): the next key of the same read is the list's.
            self.screen.set_focus(results)
        else:
            self.post_message(self.NothingToLeaveFor(self))

    # -- the box's questions ------------------------------------------------------------------
    @on(SearchBox.Changed)
    def _box_changed(self, event: SearchBox.Changed) -> None:
        # Not stopped: the screen shows the filters.
        self._question = _Question(event.text, event.query, event.filter, event.mode)
        self._pages = 1
        self._start_search()

    @on(ResultsList.MoreWanted)
    def _more_wanted(self, event: ResultsList.MoreWanted) -> None:
        event.stop()
        self._pages += 1
        self._start_search()

    @on(OpenFile)
    def _result_opened(self) -> None:
        # Not stopped: the screen opens the file. Its query is worth remembering.
        self.box.remember_query()

    @on(SearchBox.Submitted)
    def _box_submitted(self, event: SearchBox.Submitted) -> None:
        event.stop()
        results = self.results
        self.box.remember_query()
        if results.hits:
            self.screen.set_focus(results)
            # From the list's own queue: a message this panel made would stop bubbling here,
            # at its sender (Textual stops a message at the node that posted it).
            results.call_next(results.open_highlighted)

    def _start_search(self) -> None:
        self._generation += 1  # whatever runs now answers a stale question
        self._search_waits = False
        question = self._question
        if not question.query.strip():
            filtered = question.filter.active
            self.results.show_message(
                "Type some words to search for." if filtered else "Type to search."
            )
            self.post_message(self.Answered(self, None))
            return
        if self.workspace is None:
            self.results.show_message("Opening the index…")
            return
        if self._worker is not None and self._worker.state not in _ENDED:
            self._search_waits = True
            return
        self._launch_search()

    def _launch_search(self) -> None:
        """Search for the current question, on the search worker."""
        self._search_waits = False
        if self.workspace is None:
            return
        limit = RESULT_FILES * self._pages
        self._worker = self._search(
            self.workspace,
            self._generation,
            self._question,
            self.state,
            self.results.row_width,
            limit,
        )

    # -- the worker ---------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def _search(
        self,
        workspace: Workspace,
        generation: int,
        question: _Question,
        state: IndexState,
        width: int,
        limit: int,
    ) -> None:
        from explorer.core.retrieval.file_filter import parse_filter_words
        from explorer.core.retrieval.search import SearchRequest

        worker = get_current_worker()
        started = time.perf_counter()
        # The last word is still being typed unless a space ends it: the query says how much
        # of it to use (a prefix from three letters; one or two letters after other words
        # wait until the word takes shape, as they would match most passages).
        prefix = bool(question.query.strip()) and not question.query[-1:].isspace()
        file_filter = question.filter
        typed = parse_filter_words(question.text)  # collection: and scope: words
        request = SearchRequest(
            question.query,
            question.mode,
            file_filter.paths,
            collections=typed.collections,
            scopes=typed.scopes,
            limit=limit,
            per_file=PASSAGES_PER_FILE,
            prefix_last=prefix,
            tags=file_filter.tags,
            versions=file_filter.versions,
            exclude=typed.filter.exclude,
        )
        try:
            answer = _answer(workspace, request, state, lambda: worker.is_cancelled)
        except ExplorerError as error:  # e.g. a query with no words: its one line
            if not worker.is_cancelled:
                self.post_message(self._Failed(generation, str(error)))
            return
        if answer is None or worker.is_cancelled:
            return
        rows = [hit_lines(hit, width) for hit in answer.response.results]
        seconds = time.perf_counter() - started
        if not worker.is_cancelled:
            finished = self._Finished(
                generation, question.text, question.mode, answer, seconds, rows, width, limit
            )
            self.post_message(finished)
        # The answer is out: use the pause before the next key, unless that key came already
        # (its search waits for this worker to end).
        if not worker.is_cancelled and generation == self._generation:
            try:
                workspace.rank_words_ahead(request)
            except ExplorerError as error:  # the next search meets it and says so
                log.debug("no ranking ahead: %s", error)

    @on(_Finished)
    def _finished(self, message: _Finished) -> None:
        if message.generation != self._generation:
            return  # a newer question was asked meanwhile
        answer = message.answer
        response = answer.response
        self.results.show_response(
            message.text,
            answer.answered,
            response,
            message.rows,
            message.width,
            message.mode,
            more=len(response.results) >= message.limit,
        )
        note = answer.note
        if not note and response.notes and response.results:
            note = response.notes[0]
        summary = SearchSummary(
            message.text,
            len(response.results),
            message.mode,
            answer.answered,
            message.seconds,
            note,
        )
        self.post_message(self.Answered(self, summary))

    def show_failure(self, worker: Worker[Any], text: str) -> None:
        """A search failed unexpectedly: the results say so (a stale search says nothing)."""
        if worker is self._worker:
            self.results.show_message(text)
            self.post_message(self.Answered(self, None))

    @on(_Failed)
    def _failed(self, message: _Failed) -> None:
        if message.generation != self._generation:
            return
        self.results.show_message(message.message)
        self.post_message(self.Answered(self, None))

    # -- the query path -----------------------------------------------------------------------
    def _warm_query_path(self, workspace: Workspace) -> None:
        """Open the vector store and warm the query encoder, off the UI thread.

        A daemon thread, not a Textual worker: on an index without a query-encoder export the
        warm-up loads the whole model (seconds of importing torch), and Python joins a worker's
        thread before it exits, so ctrl+q would wait for it. The embedder's own lock keeps two
        warm-ups from loading the model twice.
        """
        threading.Thread(
            target=self._warm, args=(workspace,), name="explorer-query-warmup", daemon=True
        ).start()

    def _warm(self, workspace: Workspace) -> None:
        from explorer.core.store.vectors import VectorStoreUnavailable

        vectors, vectors_error = 0, ""
        try:
            try:
                vectors = workspace.count_vectors()
            except VectorStoreUnavailable as error:  # the live index reports it and recovers
                vectors_error = str(error)
            workspace.load_query_path()
        except Exception as error:  # noqa: BLE001 - keyword search goes on without it
            self.post_message(
                self.QueryPathReady(self, False, error=f"{type(error).__name__}: {error}")
            )
            return
        self.post_message(self.QueryPathReady(self, True, vectors, vectors_error=vectors_error))

    @work(thread=True, exclusive=True, group="vector-count", exit_on_error=False)
    def _count_vectors(self, workspace: Workspace) -> None:
        from explorer.core.store.vectors import VectorStoreUnavailable

        try:
            count = workspace.count_vectors()
        except VectorStoreUnavailable:  # a count is only informative; the live index says it
            return
        self.post_message(self.VectorsCounted(self, count))


def _answer(
    workspace: Workspace, request: SearchRequest, state: IndexState, cancelled: Callable[[], bool]
) -> _Answer | None:
    """Search the window's folders, answering by keyword where meaning cannot answer yet, and
    say why.

    Runs on the search worker; None when ``cancelled()`` turned true on the way.
    """
    from explorer.core.retrieval.search import VectorLeg

    search = workspace.search
    from explorer.core.store.vectors import VectorStoreUnavailable

    asked = request.mode
    if asked is not SearchMode.KEYWORD and not state.semantic_ready:
        note = (
            "semantic search unavailable"
            if state.query_model is ModelState.FAILED
            else "model loading: keyword results first"
        )
        return _Answer(search(replace(request, mode=SearchMode.KEYWORD)), SearchMode.KEYWORD, note)
    try:
        response = search(request)
    except VectorStoreUnavailable:  # semantic mode with the server gone: keywords
        response = search(replace(request, mode=SearchMode.KEYWORD))
        return _Answer(response, SearchMode.KEYWORD, VECTORS_UNAVAILABLE)
    if response.vector_leg is VectorLeg.UNAVAILABLE:  # hybrid went on with keywords alone
        return _Answer(response, response.answered_by, VECTORS_UNAVAILABLE)
    if response.vector_leg is VectorLeg.EMPTY:
        return _Answer(response, response.answered_by, NO_VECTORS_YET)
    if asked is SearchMode.SEMANTIC and not response.results and state.vectors == 0:
        if cancelled():
            return None
        response = search(replace(request, mode=SearchMode.KEYWORD))
        return _Answer(response, SearchMode.KEYWORD, NO_VECTORS_YET)
    return _Answer(response, response.answered_by, "")
