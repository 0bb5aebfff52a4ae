"""The main screen: composes the widgets and routes the messages between them.

Widgets own their behaviour and their background work: the search panel searches (debounce,
stale answers, its worker), the file tree reads the manifest, the related and links lists load
their own rows, the status bar shows an :class:`~explorer.tui.index_state.IndexState`. Widgets
never talk to each other: they post messages up to this screen, which keeps the index's state,
reacts to the live index's events (by their type, never their text) and calls the widgets'
public methods. The screen also holds the key bindings' actions and the command palette.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input

from explorer.config import Settings
from explorer.core.ingest.root_paths import OutsideRoot, resolve_inside_root
from explorer.core.live.events import (
    ErrorEvent,
    FilesChangedEvent,
    FilesEmbeddedEvent,
    ModelState,
    ModelStateEvent,
    ProgressEvent,
    RootState,
    RootStateEvent,
    VectorsReadyEvent,
    VectorsStateEvent,
    WriterEvent,
    WriterState,
)
from explorer.core.models import SearchMode, SyncPhase
from explorer.core.retrieval.file_filter import parse_filter_words
from explorer.core.safe_text import safe_text
from explorer.tui import messages
from explorer.tui.bridge import IndexBridge
from explorer.tui.index_state import IndexState
from explorer.tui.widgets.file_tree import Entry, FileTree
from explorer.tui.widgets.links import LinksList
from explorer.tui.widgets.preview import Preview
from explorer.tui.widgets.related import RelatedList
from explorer.tui.widgets.results import ResultsList
from explorer.tui.widgets.search_box import SearchBox
from explorer.tui.widgets.search_panel import SearchPanel
from explorer.tui.widgets.status import StatusBar

if TYPE_CHECKING:
    from explorer.core.embed.embedder import Embedder
    from explorer.core.live.writer import LiveIndex
    from explorer.core.store.index import Index

FOLLOW_EMBEDDED_INTERVAL = 1.0
"""Least seconds between two refreshes (related files, search) for files embedded meanwhile."""
EDITORS_WITH_LINE = {"vi", "vim", "nvim", "nano", "emacs", "micro", "kak", "hx", "helix", "joe"}
"""Editors that open a file at a line given as ``+LINE``."""
FOCUS_TARGETS = ("tree", "results", "preview", "links", "related")


class MainScreen(Screen[None]):
    """Tree, search panel (box and results), preview, sidebar (links, related), status bar."""

    BINDINGS = [
        # A priority binding runs when the app receives the key, before it hands the next key
        # of the same read to the focused widget; see check_action.
        Binding("slash", "focus_search", "Search", key_display="/", priority=True),
        Binding("ctrl+t", "cycle_mode", "Mode"),
        Binding("ctrl+f", "focus_filter", "Filter", show=False),
        Binding("ctrl+p", "fuzzy_jump", "Go to file"),
        Binding("e", "edit", "Edit"),
        # The preview's own n/N, from anywhere but a text field: after Enter on a result the
        # focus stays in the list, and n must still step through that file's passages.
        Binding("n", "next_passage", "Next passage", show=False),
        Binding("N", "previous_passage", "Previous passage", show=False),
        Binding("ctrl+r", "toggle_related", "Related", show=False),
        Binding("question_mark", "help", "Help", key_display="?"),
    ]

    def __init__(
        self, settings: Settings, embedder: Embedder | None = None, watch: bool = True
    ) -> None:
        super().__init__()
        self.settings = settings
        self.embedder = embedder
        self.watch_files = watch
        """Start the file watcher (``watch`` itself is Textual's method for reactives)."""
        self.bridge: IndexBridge | None = None
        self.live: LiveIndex | None = None
        self.index: Index | None = None
        self.current_path: str | None = None
        """The file open in the preview."""
        self._browsed_folder: str | None = None
        """The folder of the tree's cursor while the user moves it (a hint for embedding)."""
        self._embedded_since: set[str] = set()
        """Files made fresh since the screen last followed them (see _files_embedded)."""
        self._embedded_due: Timer | None = None
        self._embedded_at = 0.0

    # -- composition --------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            yield FileTree(self.settings.root.name, id="tree")
            with Vertical(id="centre"):
                yield SearchPanel(f"Search · {self.settings.root.name}", id="search-panel")
                yield Preview(id="preview")
            with Vertical(id="sidebar"):
                yield LinksList(id="links")
                yield RelatedList(id="related")
        yield StatusBar(id="status")
        yield Footer()

    @property
    def search_panel(self) -> SearchPanel:
        return self.query_one(SearchPanel)

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
    def links(self) -> LinksList:
        return self.query_one(LinksList)

    @property
    def file_tree(self) -> FileTree:
        return self.query_one(FileTree)

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def state(self) -> IndexState:
        """The index as the UI sees it (the status bar shows it)."""
        return self.status.index_state

    def _set_state(self, **changes: Any) -> IndexState:
        """A new index state: the status bar shows it, the search panel searches with it."""
        state = replace(self.status.index_state, **changes)
        self.status.index_state = state
        self.search_panel.state = state
        return state

    def on_mount(self) -> None:
        # The first frame comes first: the index (and everything it imports) opens after it.
        self.call_after_refresh(self._start_index)

    def on_unmount(self) -> None:
        if self.bridge is not None:
            self.bridge.stop()

    def _start_index(self) -> None:
        self.bridge = IndexBridge(
            self.settings, self, embedder=self.embedder, watch=self.watch_files
        )
        self.bridge.start()

    # -- opening files ------------------------------------------------------------------------
    def open_file(
        self, path: str, passages: list[tuple[int, int]] | None = None, index: int = 0
    ) -> None:
        """Show ``path`` in the preview at ``passages[index]``; load its links and related files."""
        absolute = self.file_on_disk(path)
        if absolute is None:
            return
        self.current_path = path
        self.preview.open_file(path, absolute, passages, index)
        self.file_tree.reveal(path)
        self.links.load(self.index, path)
        self.load_related(path)
        self.send_focus()

    def load_related(self, path: str | None, refresh: bool = False) -> None:
        """Load the related files of ``path``; ``refresh``: the same file again (what the
        sidebar shows stays until the new answer comes)."""
        if path is not None:
            self.related.load(self.index, path, self.state, self._embedding_here(), refresh)

    def _embedding_here(self) -> bool:
        """Whether this screen's live index is embedding (so a missing vector is coming)."""
        return (
            self.live is not None
            and not self.state.read_only
            and self.state.document_model is not ModelState.FAILED
            and self.live.vectors_available
        )

    def send_focus(self) -> None:
        """Tell the live index what the user looks at, so it embeds that first (a hint only:
        its writer thread does the embedding)."""
        if self.live is None:
            return
        from explorer.core.indexing.embed_priority import Focus

        results = tuple(hit.path for hit in self.results.hits)
        self.live.focus(Focus(self.current_path, results, self._browsed_folder))

    def file_on_disk(self, path: str) -> Path | None:
        """The file the root-relative ``path`` names, or None (and a warning) when it leads
        outside the root and the settings do not allow that."""
        try:
            return resolve_inside_root(
                self.settings.root, path, allow_outside_links=self.settings.allow_outside_links
            )
        except OutsideRoot as error:
            self.notify(safe_text(f"not shown: {error}"), severity="warning")
            return None

    @on(FileTree.NodeHighlighted)
    def _tree_moved(self, event: FileTree.NodeHighlighted[Entry]) -> None:
        entry = event.node.data
        if entry is None or not self.file_tree.has_focus:
            return  # the cursor moved for a file opened elsewhere: not browsing
        folder = entry.path.rstrip("/") if entry.is_dir else entry.path.rpartition("/")[0]
        if folder != self._browsed_folder:
            self._browsed_folder = folder
            self.send_focus()

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

    @on(LinksList.Opened)
    def _links_opened(self, event: LinksList.Opened) -> None:
        if not (self.settings.root / event.path).is_file():
            self.notify(f"no such file in this folder: {event.path}", severity="warning")
        elif event.line is None:
            self.open_file(event.path)
        else:
            self.open_file(event.path, [(event.line, event.line)])

    @on(Preview.LinkOpened)
    def _link_opened(self, event: Preview.LinkOpened) -> None:
        if (self.settings.root / event.path).is_file():
            self.open_file(event.path)
        else:
            self.notify(f"no such file in this folder: {event.path}", severity="warning")

    # -- the search panel and the tree report -------------------------------------------------
    @on(SearchBox.Changed)
    def _search_changed(self, event: SearchBox.Changed) -> None:
        filters = event.filter.words()
        if filters != self.status.filters:
            self.status.filters = filters

    @on(SearchPanel.Answered)
    def _search_answered(self, event: SearchPanel.Answered) -> None:
        self.status.search = event.summary
        if event.summary is not None:
            self.send_focus()  # the results' files are embedded next

    @on(SearchPanel.NothingToLeaveFor)
    def _search_left_empty(self) -> None:
        self.set_focus(self.file_tree)

    @on(SearchPanel.QueryPathReady)
    def _query_path_ready(self, event: SearchPanel.QueryPathReady) -> None:
        model = ModelState.READY if event.ok else ModelState.FAILED
        self._set_state(query_model=model, vectors=event.vectors)
        if not event.ok:
            self.notify(
                f"semantic search unavailable: {event.error}", severity="warning", timeout=8
            )
        if event.vectors_error:
            self._vectors_state(VectorsStateEvent(False, event.vectors_error))
        self._follow_new_vectors()

    @on(SearchPanel.VectorsCounted)
    def _vectors_counted(self, event: SearchPanel.VectorsCounted) -> None:
        self._set_state(vectors=event.vectors)

    @on(FileTree.Loaded)
    def _manifest_loaded(self, event: FileTree.Loaded) -> None:
        state = self._set_state(counts=event.counts)
        progress = state.progress
        keywords = progress is not None and progress.phase is SyncPhase.KEYWORDS
        if keywords and self.search_panel.has_query:
            self.search_panel.search_again()  # keyword results grow as files are indexed

    # -- the live index -----------------------------------------------------------------------
    def on_index_opened(self, message: messages.IndexOpened) -> None:
        self.live = message.live
        self.index = index = message.live.index
        self._set_state(opened=True, query_model=ModelState.LOADING)
        self.send_focus()
        self.file_tree.use_index(index)
        self.search_panel.use_index(index)
        if self.current_path is not None:
            self.links.load(index, self.current_path)

    def on_index_unavailable(self, message: messages.IndexUnavailable) -> None:
        self._set_state(error=message.error)
        self.notify(message.error, severity="error", timeout=10)

    def on_live_index_event(self, message: messages.LiveIndexEvent) -> None:
        event = message.event
        if isinstance(event, ProgressEvent):
            self._set_state(progress=event)
            if event.phase is SyncPhase.KEYWORDS:
                self.file_tree.reload()
        elif isinstance(event, FilesChangedEvent):
            self._files_changed(event)
        elif isinstance(event, VectorsReadyEvent):
            self.file_tree.reload(now=True)
            if self.state.semantic_ready:
                self.search_panel.count_vectors()
            self._follow_new_vectors()
        elif isinstance(event, FilesEmbeddedEvent):
            self._files_embedded(event)
        elif isinstance(event, ModelStateEvent):
            self._model_state(event)
        elif isinstance(event, WriterEvent):
            self._set_state(read_only=event.state is WriterState.WAITING)
            self.notify(event.message, title="Index", timeout=8)
        elif isinstance(event, VectorsStateEvent):
            self._vectors_state(event)
        elif isinstance(event, RootStateEvent):
            self._root_state(event)
        elif isinstance(event, ErrorEvent):
            if self.live is not None and self.live.read_only:
                self._set_state(read_only=True)
            self.notify(event.message, title="Index", severity="warning", timeout=8)

    def _files_changed(self, event: FilesChangedEvent) -> None:
        self.file_tree.reload(now=True)
        panel = self.search_panel
        if panel.has_query:
            panel.search_again()
        current = self.current_path
        if current is None:
            return
        self.links.load(self.index, current)  # its backlinks may come from any changed file
        if _touches(event.paths, current):
            absolute = self.file_on_disk(current)
            if absolute is not None:
                self.preview.reload(absolute)
            self.load_related(current)
        elif self.related.shows_any_of(lambda path: _touches(event.paths, path)):
            self.load_related(current)

    def _files_embedded(self, event: FilesEmbeddedEvent) -> None:
        """Files became fresh while embedding goes on: the open file's related list and the
        results' semantic scores follow, at most every :data:`FOLLOW_EMBEDDED_INTERVAL`."""
        self._embedded_since |= event.paths
        wait = self._embedded_at + FOLLOW_EMBEDDED_INTERVAL - time.monotonic()
        if wait <= 0:
            self._follow_embedded()
        elif self._embedded_due is None:
            self._embedded_due = self.set_timer(wait, self._follow_embedded)

    def _follow_embedded(self) -> None:
        self._embedded_due = None
        self._embedded_at = time.monotonic()
        paths, self._embedded_since = self._embedded_since, set()
        if not paths:
            return
        self.file_tree.reload()
        current = self.current_path
        if current is not None and (current in paths or self.related.needs_refresh(paths)):
            self.load_related(current, refresh=True)
        panel = self.search_panel
        if panel.searches_by_meaning and self.state.semantic_ready and panel.shows_any_of(paths):
            panel.search_again()  # the list refines in place; the highlight stays on its file

    def _follow_new_vectors(self) -> None:
        """More vectors, or the query model, are ready: search by meaning again (a keyword-only
        search has nothing new to show) and recompute the related files."""
        if self.search_panel.searches_by_meaning:
            self.search_panel.search_again()
        if self.current_path is not None:
            self.load_related(self.current_path)

    def _model_state(self, event: ModelStateEvent) -> None:
        self._set_state(document_model=event.state)
        if event.state is ModelState.FAILED:
            self.notify(event.message, title="Model", severity="warning", timeout=8)

    def _vectors_state(self, event: VectorsStateEvent) -> None:
        state = self._set_state(vectors_available=event.available)
        self.notify(
            event.message,
            title="Vectors",
            severity="information" if event.available else "warning",
            timeout=8,
        )
        if event.available and not state.semantic_ready and self.index is not None:
            self.search_panel.warm_query_path()
        elif self.search_panel.searches_by_meaning:
            self.search_panel.search_again()
        if event.available and self.current_path is not None:
            self.load_related(self.current_path)

    def _root_state(self, event: RootStateEvent) -> None:
        """The root went missing (the status bar says so until it is back) or is back (the
        re-sync's ``files_changed`` reloads the tree; the tree is read again now too)."""
        missing = event.state is RootState.MISSING
        self._set_state(root_missing=event.message if missing else "")
        self.notify(
            event.message,
            title="Folder",
            severity="warning" if missing else "information",
            timeout=8,
        )
        if not missing:
            self.file_tree.reload(now=True)

    # -- actions ------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``/`` is a character in a text field (paths, "http/3"): there it is typed, not bound."""
        return not (action == "focus_search" and isinstance(self.focused, Input))

    def action_focus_search(self) -> None:
        self.search_box.focus_query()

    def action_focus_filter(self) -> None:
        self.search_box.focus_filter()

    def action_next_passage(self) -> None:
        self.preview.action_next_passage()

    def action_previous_passage(self) -> None:
        self.preview.action_previous_passage()

    def action_cycle_mode(self) -> None:
        mode = self.search_box.cycle_mode()
        self.notify(f"search mode: {mode}", timeout=2)

    def action_set_mode(self, mode: SearchMode) -> None:
        self.search_box.set_mode(mode)

    def action_clear_filter(self) -> None:
        box = self.search_box
        box.set_filter("")
        box.set_text(parse_filter_words(box.text).query.strip())

    def action_fuzzy_jump(self) -> None:
        from explorer.tui.widgets.fuzzy_jump import FuzzyJump  # rapidfuzz: only when asked

        tree = self.file_tree
        paths = tree.paths or sorted(tree.records)
        self.app.push_screen(FuzzyJump(paths, tree.titles()), self._jumped)

    def _jumped(self, path: str | None) -> None:
        if path:
            self.open_file(path)
            self.preview.focus_content()

    def action_help(self) -> None:
        from explorer.tui.widgets.help import HelpScreen

        self.app.push_screen(HelpScreen())

    def action_toggle_related(self) -> None:
        sidebar = self.query_one("#sidebar")
        sidebar.display = not sidebar.display

    def focus_pane(self, target: str) -> None:
        focus: dict[str, Callable[[], object]] = {
            "tree": self.file_tree.focus,
            "results": self.results.focus,
            "preview": self.preview.focus_content,
            "related": self.related.focus,
            "links": self.links.focus,
        }
        focus[target]()

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
        if isinstance(focused, LinksList) and focused.selected is not None:
            return focused.selected.path, focused.selected.line
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
        absolute = self.file_on_disk(path)
        if absolute is None:
            return
        command.append(str(absolute))
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
            self.preview.reload(absolute)

    def system_commands(self) -> Iterable[SystemCommand]:
        """The screen's actions, for the command palette."""
        yield SystemCommand("Search", "Focus the search box (/)", self.action_focus_search)
        yield SystemCommand(
            "Search mode: cycle", "hybrid → semantic → keyword (ctrl+t)", self.action_cycle_mode
        )
        for mode in SearchMode:
            yield SystemCommand(
                f"Search mode: {mode}",
                f"Rank results by {mode} search",
                lambda mode=mode: self.action_set_mode(mode),
            )
        yield SystemCommand(
            "Path filter", "Focus the path filter field (ctrl+f)", self.action_focus_filter
        )
        yield SystemCommand(
            "Clear filters", "Drop path, tag and version filters", self.action_clear_filter
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
            "Show or hide the links and related files (ctrl+r)",
            self.action_toggle_related,
        )
        for target in FOCUS_TARGETS:
            yield SystemCommand(
                f"Focus {target}",
                f"Move the focus to the {target}",
                lambda target=target: self.focus_pane(target),
            )
        yield SystemCommand("Help", "Keys and how explorer works (?)", self.action_help)


def _touches(paths: Iterable[str], path: str) -> bool:
    """Whether a change reported for ``paths`` (files or folders) may concern ``path``."""
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in paths)
