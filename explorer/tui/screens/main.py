"""The main screen: composes the widgets, runs the background work, routes the messages.

Widgets never talk to each other: they post messages up to this screen, which calls their
public methods. Blocking work runs in thread workers, one group per kind of work, so a new
keystroke cancels only the stale search (``search``), never the indexing (which runs on the
live index's own writer thread) or the model warm-up (``model``).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer
from textual.worker import get_current_worker

from explorer.config import Settings
from explorer.tui import messages
from explorer.tui.bridge import IndexBridge
from explorer.tui.widgets.file_tree import FileTree
from explorer.tui.widgets.preview import Preview
from explorer.tui.widgets.related import RelatedList
from explorer.tui.widgets.results import ResultsList, hit_lines
from explorer.tui.widgets.search_box import MODES, SearchBox
from explorer.tui.widgets.status import StatusBar

PREFIX_MIN_CHARS = 2
"""The last word is searched as a prefix once it has this many characters (a one-letter prefix
matches half the vocabulary and is slow on a large folder)."""
SEARCH_DEBOUNCE = 0.15
"""Seconds of quiet after a keystroke before a search runs (the first keystroke runs at once)."""
MANIFEST_INTERVAL = 0.4
"""Least seconds between two reads of the manifest while files change."""
RESULT_FILES = 15
PASSAGES_PER_FILE = 3
RELATED_FILES = 8
EDITORS_WITH_LINE = {"vi", "vim", "nvim", "nano", "emacs", "micro", "kak", "hx", "helix", "joe"}


class MainScreen(Screen):
    """Tree, search box, results, preview, related sidebar and status bar."""

    BINDINGS = [
        Binding("slash", "focus_search", "Search", key_display="/"),
        Binding("ctrl+t", "cycle_mode", "Mode"),
        Binding("ctrl+f", "focus_filter", "Filter", show=False),
        Binding("ctrl+p", "fuzzy_jump", "Go to file"),
        Binding("e", "edit", "Edit"),
        Binding("ctrl+r", "toggle_related", "Related", show=False),
        Binding("question_mark", "help", "Help", key_display="?"),
    ]

    def __init__(self, settings: Settings, embedder: Any = None, watch: bool = True) -> None:
        super().__init__()
        self.settings = settings
        self.embedder = embedder
        self.watch = watch
        self.bridge: IndexBridge | None = None
        self.index: Any = None
        self.live: Any = None
        self.current_path: str | None = None
        """The file open in the preview."""
        self.files: dict[str, Any] = {}
        """The last manifest read: {path: FileRecord}."""
        self.counts: dict[str, int] = {}
        self.semantic_ready = False
        """True once the vector store is open and the query encoder warm."""
        self.vector_count = 0
        self.query_model = "waiting"
        self.document_model = ""
        self.read_only = False
        self.progress: messages.IndexProgress | None = None
        self._text = ""
        self._query = ""
        self._paths: tuple[str, ...] = ()
        self._mode = "hybrid"
        self._generation = 0
        self._last_keystroke = 0.0
        self._debounce: Timer | None = None
        self._manifest_due: Timer | None = None
        self._manifest_at = 0.0

    # -- composition --------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        search = SearchBox(id="search")
        search.border_title = f"explorer · {self.settings.root.name}"
        yield search
        with Horizontal(id="body"):
            yield FileTree(self.settings.root.name, id="tree")
            with Vertical(id="centre"):
                yield ResultsList(id="results")
                yield Preview(id="preview")
            yield RelatedList(id="related")
        yield StatusBar(id="status")
        yield Footer()

    @property
    def search_box(self) -> SearchBox:
        return self.query_one(SearchBox)

    @property
    def results(self) -> ResultsList:
        return self.query_one(ResultsList)

    @property
    def preview(self) -> Preview:
        return self.query_one(Preview)

    @property
    def related(self) -> RelatedList:
        return self.query_one(RelatedList)

    @property
    def tree(self) -> FileTree:
        return self.query_one(FileTree)

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    def on_mount(self) -> None:
        self.results.show_message("Type to search. Ctrl+P goes to a file, ? shows help.")
        self.search_box.focus_query()
        # The first frame comes first: the index (and everything it imports) opens after it.
        self.call_after_refresh(self._start_index)

    def on_unmount(self) -> None:
        if self.bridge is not None:
            self.bridge.stop()

    def _start_index(self) -> None:
        self.bridge = IndexBridge(self.settings, self, embedder=self.embedder, watch=self.watch)
        self.bridge.start()

    # -- the index ----------------------------------------------------------------------------
    def on_index_opened(self, message: messages.IndexOpened) -> None:
        if message.index is None:
            self.status.set_index(message.error)
            self.notify(message.error, severity="error", timeout=10)
            return
        self.index = message.index
        self.live = message.live
        self.status.set_index("scanning…")
        self._load_manifest()
        self.status.set_model("loading")
        self.query_model = "loading"
        self._warm_query_model(self.index)
        if self._query.strip():
            self._start_search()

    def on_index_progress(self, message: messages.IndexProgress) -> None:
        self.progress = message
        self._show_index_state()
        if message.phase == "keywords":
            self._request_manifest(rerun_search=True)

    def on_index_files_changed(self, message: messages.IndexFilesChanged) -> None:
        self._request_manifest(now=True)
        if self._query.strip():
            self._start_search()
        current = self.current_path
        if current is not None and _touches(message.paths, current):
            self.preview.reload(self.settings.root / current)
            self._load_related_for(current)
        elif self.related.items and any(
            _touches(message.paths, item.path) for item in self.related.items
        ):
            self._load_related_for(self.current_path)

    def on_index_vectors_ready(self, message: messages.IndexVectorsReady) -> None:
        self._request_manifest(now=True)
        if self.semantic_ready:
            self._count_vectors()
        if self._query.strip() and self._mode != "keyword":
            self._start_search()
        if self.current_path is not None:
            self._load_related_for(self.current_path)

    def on_index_model_state(self, message: messages.IndexModelState) -> None:
        self.document_model = message.state
        if message.state == "failed":
            self.notify(message.message, title="Model", severity="warning", timeout=8)
        self._show_model_state()
        self._show_index_state()

    def on_index_writer_state(self, message: messages.IndexWriterState) -> None:
        self.read_only = message.state == "waiting"
        self.notify(message.message, title="Index", timeout=8)
        self._show_index_state()

    def on_index_vectors_state(self, message: messages.IndexVectorsState) -> None:
        self.status.set_vectors(message.available)
        self.notify(
            message.message,
            title="Vectors",
            severity="information" if message.available else "warning",
            timeout=8,
        )
        if message.available and not self.semantic_ready and self.index is not None:
            self._warm_query_model(self.index)
        elif self._query.strip() and self._mode != "keyword":
            self._start_search()
        if message.available and self.current_path is not None:
            self._load_related_for(self.current_path)

    def on_index_failed(self, message: messages.IndexFailed) -> None:
        if self.live is not None and getattr(self.live, "read_only", False):
            self.read_only = True
        self.notify(message.message, title="Index", severity="warning", timeout=8)
        self._show_index_state()

    def on_query_model_ready(self, message: messages.QueryModelReady) -> None:
        self.query_model = "ready" if message.ok else "failed"
        self.semantic_ready = message.ok
        self.vector_count = message.vectors
        if not message.ok:
            self.notify(
                f"semantic search unavailable: {message.message}", severity="warning", timeout=8
            )
        self._show_model_state()
        if self._query.strip() and self._mode != "keyword":
            self._start_search()
        if self.current_path is not None:
            self._load_related_for(self.current_path)

    def on_manifest_loaded(self, message: messages.ManifestLoaded) -> None:
        self.files = message.files
        self.counts = message.counts
        self.tree.set_files(message.files)
        self._show_index_state()

    @work(thread=True, exclusive=True, group="model", exit_on_error=False)
    def _warm_query_model(self, index: Any) -> None:
        """Open the vector store and warm the query encoder, off the UI thread."""
        from explorer.core.vectors import VectorStoreUnavailable

        try:
            try:
                vectors = index.vectors.count_chunks()
            except VectorStoreUnavailable as error:  # the live index reports it and recovers
                vectors = 0
                self.post_message(messages.IndexVectorsState(False, str(error)))
            load = getattr(index.embedder, "load_query_path", None)
            if load is not None:
                load()
        except Exception as error:  # noqa: BLE001 - keyword search goes on without it
            self.post_message(messages.QueryModelReady(False, f"{type(error).__name__}: {error}"))
            return
        self.post_message(messages.QueryModelReady(True, vectors=vectors))

    @work(thread=True, exclusive=True, group="vector-count", exit_on_error=False)
    def _count_vectors(self) -> None:
        index = self.index
        if index is None:
            return
        try:
            count = index.vectors.count_chunks()
        except Exception:  # noqa: BLE001 - a count is only informative
            return
        self.post_message(messages.VectorsCounted(count))

    def on_vectors_counted(self, message: messages.VectorsCounted) -> None:
        self.vector_count = message.vectors

    def _request_manifest(self, now: bool = False, rerun_search: bool = False) -> None:
        """Read the manifest again, at most every :data:`MANIFEST_INTERVAL` seconds."""
        if self.index is None:
            return
        wait = self._manifest_at + MANIFEST_INTERVAL - time.monotonic()
        if now or wait <= 0:
            if self._manifest_due is not None:
                self._manifest_due.stop()
                self._manifest_due = None
            self._manifest_at = time.monotonic()
            self._load_manifest()
            if rerun_search and self._query.strip():
                self._start_search()
        elif self._manifest_due is None:
            self._manifest_due = self.set_timer(wait, lambda: self._manifest_timer(rerun_search))

    def _manifest_timer(self, rerun_search: bool) -> None:
        self._manifest_due = None
        self._request_manifest(now=True, rerun_search=rerun_search)

    @work(thread=True, exclusive=True, group="manifest", exit_on_error=False)
    def _load_manifest(self) -> None:
        index = self.index
        if index is None:
            return
        try:
            files = index.keywords.files()
            counts = index.keywords.counts()
        except Exception as error:  # noqa: BLE001 - e.g. the index closed while quitting
            self.post_message(messages.IndexFailed(f"cannot read the manifest: {error}"))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(messages.ManifestLoaded(files, counts))

    def _show_index_state(self) -> None:
        progress = self.progress
        if self.read_only:
            text = "read-only (another process is writing this index)"
        elif self.document_model == "loading" and (progress is None or progress.phase != "embed"):
            files = sum(self.counts.get(state, 0) for state in ("fresh", "pending"))
            waiting = self.counts.get("chunks", 0) - self.counts.get("embedded", 0)
            text = f"{files} files · embedding {waiting} chunks once the model has loaded"
        elif progress is None or progress.phase == "done":
            text = self._counts_text()
        elif progress.phase == "scan":
            text = "scanning files…"
        elif progress.phase == "keywords":
            text = f"indexing {progress.files_done}/{progress.files_total} files"
        elif progress.phase == "embed":
            total = max(1, progress.chunks_total)
            percent = 100 * progress.chunks_done // total
            files = sum(self.counts.get(state, 0) for state in ("fresh", "pending"))
            text = (
                f"{files} files · embedding {progress.chunks_done}/{progress.chunks_total} "
                f"chunks ({percent}%)"
            )
        else:
            text = self._counts_text()
        self.status.set_index(text)

    def _counts_text(self) -> str:
        counts = self.counts
        if not counts:
            return "opening index…" if self.index is None else "reading index…"
        files = sum(counts.get(state, 0) for state in ("fresh", "pending"))
        text = f"{files} files · {counts.get('chunks', 0)} chunks"
        extra = []
        if counts.get("pending"):
            extra.append(f"{counts['pending']} pending")
        if counts.get("skipped"):
            extra.append(f"{counts['skipped']} skipped")
        if counts.get("failed"):
            extra.append(f"{counts['failed']} failed")
        return text + (f" ({', '.join(extra)})" if extra else "")

    def _show_model_state(self) -> None:
        states = (self.query_model, self.document_model)
        if "failed" in states:
            state = "failed"
        elif "loading" in states or "waiting" in states:
            state = "loading"
        else:
            state = "ready"
        self.status.set_model(state)

    # -- searching ----------------------------------------------------------------------------
    @on(SearchBox.Changed)
    def _search_changed(self, event: SearchBox.Changed) -> None:
        self._text = event.text
        self._query = event.query
        self._paths = event.paths
        self._mode = event.mode
        self.status.set_filters(event.paths)
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
                "Type to search." if not self._paths else "Type some words to search for."
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
            self._paths,
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
        paths: tuple[str, ...],
        mode: str,
        semantic_ready: bool,
        width: int,
    ) -> None:
        from explorer.core.query import QueryError
        from explorer.core.search import SearchRequest, search
        from explorer.core.vectors import VectorStoreUnavailable

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
                paths,
                limit=RESULT_FILES,
                per_file=PASSAGES_PER_FILE,
                prefix_last=prefix,
            )
            try:
                response = search(index, request)
            except VectorStoreUnavailable:  # semantic mode with the server gone: keywords
                answered = "keyword"
                response = search(index, replace(request, mode="keyword"))
                response.notes.append("vectors unavailable")
            if answered != "keyword" and any("vectors unavailable" in n for n in response.notes):
                answered = "keyword"
            if any("vectors unavailable" in n for n in response.notes):
                note = "vectors unavailable: keyword results"
            elif answered == "hybrid" and any("no vectors yet" in n for n in response.notes):
                answered, note = "keyword", "no vectors yet: keyword results"
            elif answered == "semantic" and not response.results and self.vector_count == 0:
                if worker.is_cancelled:
                    return
                response = search(
                    index,
                    SearchRequest(
                        query, "keyword", paths, RESULT_FILES, PASSAGES_PER_FILE, prefix_last=prefix
                    ),
                )
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
            message.query, message.answered, message.response, message.rows, message.width
        )
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

    # -- opening files ------------------------------------------------------------------------
    def open_file(
        self, path: str, passages: list[tuple[int, int]] | None = None, index: int = 0
    ) -> None:
        """Show ``path`` in the preview at ``passages[index]`` and load its related files."""
        self.current_path = path
        self.preview.open_file(path, self.settings.root / path, passages, index)
        self.tree.reveal(path)
        self._load_related_for(path)

    @on(FileTree.Opened)
    def _tree_opened(self, event: FileTree.Opened) -> None:
        self.open_file(event.path)

    @on(ResultsList.Opened)
    def _result_opened(self, event: ResultsList.Opened) -> None:
        passages = [(p.start_line, p.end_line) for p in event.hit.passages]
        self.open_file(event.hit.path, passages, event.passage)

    @on(RelatedList.Opened)
    def _related_opened(self, event: RelatedList.Opened) -> None:
        self.open_file(event.path, [(event.start, event.end)])

    @on(Preview.LinkOpened)
    def _link_opened(self, event: Preview.LinkOpened) -> None:
        if (self.settings.root / event.path).is_file():
            self.open_file(event.path)
        else:
            self.notify(f"no such file in this folder: {event.path}", severity="warning")

    # -- related files ------------------------------------------------------------------------
    def _load_related_for(self, path: str | None) -> None:
        if path is None:
            return
        if self.index is None or not self.semantic_ready:
            note = (
                "Semantic search is unavailable, so related files are too."
                if self.query_model == "failed"
                else "Loading the vector store…"
            )
            self.related.show_related(path, [], note)
            return
        self.related.show_loading(path)
        self._related(self.index, path)

    @work(thread=True, exclusive=True, group="related", exit_on_error=False)
    def _related(self, index: Any, path: str) -> None:
        from explorer.core.related import RelatedError, related_files

        worker = get_current_worker()
        try:
            items = related_files(index, path, RELATED_FILES)
            message = "" if items else "No other file has vectors yet."
        except RelatedError as error:
            items = []
            text = str(error)
            if "no vector yet" in text:
                message = "No vectors yet for this file: embedding is in progress."
            elif "not in the index" in text:
                message = "This file is not in the index."
            else:
                message = text
        except Exception as error:  # noqa: BLE001 - the sidebar says it, the UI stays up
            items, message = [], f"{type(error).__name__}: {error}"
        if not worker.is_cancelled:
            self.post_message(messages.RelatedLoaded(path, items, message))

    def on_related_loaded(self, message: messages.RelatedLoaded) -> None:
        if message.path == self.current_path:
            self.related.show_related(message.path, message.related, message.message)

    # -- actions ------------------------------------------------------------------------------
    def action_focus_search(self) -> None:
        self.search_box.focus_query()

    def action_focus_filter(self) -> None:
        self.search_box.focus_filter()

    def action_cycle_mode(self) -> None:
        mode = self.search_box.cycle_mode()
        self.notify(f"search mode: {mode}", timeout=2)

    def action_set_mode(self, mode: str) -> None:
        self.search_box.set_mode(mode)

    def action_clear_filter(self) -> None:
        self.search_box.set_filter("")
        text = " ".join(w for w in self.search_box.text.split() if not w.startswith("path:"))
        self.search_box.set_text(text)

    def action_fuzzy_jump(self) -> None:
        from explorer.tui.widgets.fuzzy_jump import FuzzyJump  # rapidfuzz: only when asked

        paths = self.tree.paths or sorted(self.files)
        self.app.push_screen(FuzzyJump(paths), self._jumped)

    def _jumped(self, path: str | None) -> None:
        if path:
            self.open_file(path)
            self.preview.focus_content()

    def action_help(self) -> None:
        from explorer.tui.widgets.help import HelpScreen

        self.app.push_screen(HelpScreen())

    def action_toggle_related(self) -> None:
        self.related.display = not self.related.display

    def action_focus(self, target: str) -> None:
        {
            "tree": self.tree.focus,
            "results": self.results.focus,
            "preview": self.preview.focus_content,
            "related": self.related.focus,
        }[target]()

    def selected_path(self) -> tuple[str | None, int | None]:
        """The file the user means: the focused list's item, else the open file."""
        focused = self.focused
        if isinstance(focused, ResultsList) and focused.hits and focused.highlighted is not None:
            hit = focused.hits[focused.highlighted]
            return hit.path, hit.passages[0].start_line if hit.passages else None
        if isinstance(focused, FileTree):
            node = focused.cursor_node
            if node is not None and node.data is not None and not node.data.is_dir:
                return node.data.path, None
        if isinstance(focused, RelatedList) and focused.items and focused.highlighted is not None:
            item = focused.items[focused.highlighted]
            return item.path, item.related_passage.start_line
        passage = self.preview.passage
        return self.current_path, passage[0] if passage else None

    def action_edit(self) -> None:
        path, line = self.selected_path()
        if path is None:
            self.notify("open a file first", severity="warning")
            return
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        command = shlex.split(editor)
        if line and Path(command[0]).name in EDITORS_WITH_LINE:
            command.append(f"+{line}")
        command.append(str(self.settings.root / path))
        try:
            with self.app.suspend():
                subprocess.run(command, check=False)
        except FileNotFoundError:
            self.notify(f"editor not found: {editor} (set $EDITOR)", severity="error")
            return
        except Exception as error:  # noqa: BLE001 - e.g. SuspendNotSupported in a test driver
            self.notify(
                f"cannot open an editor here: {error or type(error).__name__}", severity="warning"
            )
            return
        if path == self.current_path:
            self.preview.reload(self.settings.root / path)

    def system_commands(self) -> Iterable[SystemCommand]:
        """The screen's actions, for the command palette."""
        yield SystemCommand("Search", "Focus the search box (/)", self.action_focus_search)
        yield SystemCommand(
            "Search mode: cycle", "hybrid → semantic → keyword (ctrl+t)", self.action_cycle_mode
        )
        for mode in MODES:
            yield SystemCommand(
                f"Search mode: {mode}",
                f"Rank results by {mode} search",
                lambda mode=mode: self.action_set_mode(mode),
            )
        yield SystemCommand(
            "Path filter", "Focus the path filter field (ctrl+f)", self.action_focus_filter
        )
        yield SystemCommand(
            "Clear path filter", "Search every file again", self.action_clear_filter
        )
        yield SystemCommand(
            "Go to file", "Open a file by name, fuzzy (ctrl+p)", self.action_fuzzy_jump
        )
        yield SystemCommand("Edit file", "Open the selected file in $EDITOR (e)", self.action_edit)
        yield SystemCommand(
            "Next passage", "Mark the next matched passage (n)", self.preview.action_next_passage
        )
        yield SystemCommand(
            "Previous passage",
            "Mark the previous matched passage (N)",
            self.preview.action_previous_passage,
        )
        yield SystemCommand(
            "Toggle related sidebar",
            "Show or hide related files (ctrl+r)",
            self.action_toggle_related,
        )
        for target in ("tree", "results", "preview", "related"):
            yield SystemCommand(
                f"Focus {target}",
                f"Move the focus to the {target}",
                lambda target=target: self.action_focus(target),
            )
        yield SystemCommand("Help", "Keys and how explorer works (?)", self.action_help)


def _touches(paths: Iterable[str], path: str) -> bool:
    """Whether a change reported for ``paths`` (files or folders) may concern ``path``."""
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in paths)
