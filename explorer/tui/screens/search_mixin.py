"""MainScreen's searching: search box events, the keystroke debounce, the search worker and
showing its results.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from textual import on, work
from textual.message_pump import MessagePump
from textual.worker import get_current_worker

from explorer.tui import messages
from explorer.tui.widgets.results import hit_lines
from explorer.tui.widgets.search_box import SearchBox

PREFIX_MIN_CHARS = 2
"""The last word is searched as a prefix once it has this many characters (a one-letter prefix
matches half the vocabulary and is slow on a large folder)."""
SEARCH_DEBOUNCE = 0.15
"""Seconds of quiet after a keystroke before a search runs (the first keystroke runs at once)."""
RESULT_FILES = 15
PASSAGES_PER_FILE = 3


class SearchMixin(MessagePump):
    """Runs a search for what the search box holds; mixed into MainScreen."""

    # -- searching ----------------------------------------------------------------------------
    @on(SearchBox.Changed)
    def _search_changed(self, event: SearchBox.Changed) -> None:
        self._text = event.text
        self._query = event.query
        self._paths = event.paths
        self._filter = event.filter
        self._mode = event.mode
        self.status.set_filters(event.filter.words())
        self._schedule_search()

    def _schedule_search(self) -> None:
        """Debounce: search at once after a pause, else once typing pauses."""
        now = time.monotonic()
        quiet = now - self._last_keystroke >= SEARCH_DEBOUNCE
        self._last_keystroke = now
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None
        if quiet:
            self._start_search()
        else:
            self._debounce = self.set_timer(SEARCH_DEBOUNCE, self._debounced)

    def _debounced(self) -> None:
        self._debounce = None
        self._start_search()

    def _start_search(self) -> None:
        self._generation += 1
        if not self._query.strip():
            self.results.show_message(
                "Type to search." if not self._filter.active else "Type some words to search for."
            )
            self.status.clear_search()
            return
        if self.index is None:
            self.results.show_message("Opening the index…")
            return
        self._search(
            self.index,
            self._generation,
            self._text,
            self._query,
            self._filter,
            self._mode,
            self.semantic_ready,
            self.results.row_width,
        )

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def _search(
        self,
        index: Any,
        generation: int,
        text: str,
        query: str,
        file_filter: Any,
        mode: str,
        semantic_ready: bool,
        width: int,
    ) -> None:
        from explorer.core.retrieval.query import QueryError
        from explorer.core.retrieval.search import SearchRequest, search
        from explorer.core.store.vectors import VectorStoreUnavailable

        worker = get_current_worker()
        started = time.perf_counter()
        answered, note = mode, ""
        if mode != "keyword" and not semantic_ready:
            answered = "keyword"
            note = (
                "semantic search unavailable"
                if self.query_model == "failed"
                else "model loading: keyword results first"
            )
        words = query.split()
        prefix = bool(words) and not query[-1:].isspace() and len(words[-1]) >= PREFIX_MIN_CHARS
        try:
            request = SearchRequest(
                query,
                answered,
                file_filter.paths,
                limit=RESULT_FILES,
                per_file=PASSAGES_PER_FILE,
                prefix_last=prefix,
                tags=file_filter.tags,
                versions=file_filter.versions,
            )
            try:
                response = search(index, request)  # hybrid answers by keyword, with a note
            except VectorStoreUnavailable:  # semantic mode with the server gone: keywords
                response = search(index, replace(request, mode="keyword"))
                response.notes.append("vectors unavailable")
            if any("vectors unavailable" in n for n in response.notes):
                answered, note = "keyword", "vectors unavailable: keyword results"
            elif answered == "hybrid" and any("no vectors yet" in n for n in response.notes):
                answered, note = "keyword", "no vectors yet: keyword results"
            elif answered == "semantic" and not response.results and self.vector_count == 0:
                if worker.is_cancelled:
                    return
                response = search(index, replace(request, mode="keyword"))
                answered, note = "keyword", "no vectors yet: keyword results"
        except QueryError as error:
            if not worker.is_cancelled:
                self.post_message(messages.SearchFailed(generation, text, str(error)))
            return
        except Exception as error:  # noqa: BLE001 - one line for the user, the UI stays up
            if not worker.is_cancelled:
                self.post_message(
                    messages.SearchFailed(generation, text, f"{type(error).__name__}: {error}")
                )
            return
        if worker.is_cancelled:
            return
        rows = [hit_lines(hit, width) for hit in response.results]
        seconds = time.perf_counter() - started
        if worker.is_cancelled:
            return
        self.post_message(
            messages.SearchFinished(
                generation, text, mode, answered, response, seconds, note, rows, width
            )
        )

    def on_search_finished(self, message: messages.SearchFinished) -> None:
        if message.generation != self._generation:
            return
        self.results.show_response(
            message.query,
            message.answered,
            message.response,
            message.rows,
            message.width,
            requested=message.mode,
        )
        self.send_focus()  # the results' files are embedded next
        note = message.note
        if not note and message.response.notes and message.response.results:
            note = message.response.notes[0]
        self.status.set_search(
            len(message.response.results), message.mode, message.answered, message.seconds, note
        )

    def on_search_failed(self, message: messages.SearchFailed) -> None:
        if message.generation != self._generation:
            return
        self.results.show_message(message.message)
        self.status.clear_search()

    @on(SearchBox.Submitted)
    def _search_submitted(self) -> None:
        if self.results.hits:
            self.results.focus()
            self.results.open_highlighted()

    @on(SearchBox.Left)
    def _search_left(self) -> None:
        if self.results.hits:
            self.results.focus()
        else:
            self.tree.focus()
