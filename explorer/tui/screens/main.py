"""The main screen: composes the widgets, runs the background work, routes the messages.

Widgets never talk to each other: they post messages up to this screen, which calls their
public methods. Blocking work runs in thread workers, one group per kind of work, so a new
keystroke cancels only the stale search (``search``), never the indexing (which runs on the
live index's own writer thread) or the model warm-up (``model``).

The screen is assembled from mixins in sibling modules: ``index_events_mixin`` (the index's
messages and the status bar text), ``loading_workers_mixin`` (manifest, vector count, query
model and related-files workers), ``search_mixin`` (searching) and ``actions_mixin`` (key
bindings' actions and the command palette). This module keeps the state, the layout and
opening files. The mixins derive from ``MessagePump`` so that its metaclass registers their
``@on`` handlers: on a plain mixin class Textual would silently ignore them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer

from explorer.config import Settings
from explorer.core.ingest.root_paths import OutsideRoot, resolve_inside_root
from explorer.core.retrieval.file_filter import FileFilter
from explorer.safe_text import safe_text
from explorer.tui import messages
from explorer.tui.bridge import IndexBridge
from explorer.tui.screens.actions_mixin import ActionsMixin
from explorer.tui.screens.index_events_mixin import IndexEventsMixin
from explorer.tui.screens.loading_workers_mixin import LoadingWorkersMixin
from explorer.tui.screens.search_mixin import SearchMixin
from explorer.tui.widgets.file_tree import FileTree
from explorer.tui.widgets.links import LinksList
from explorer.tui.widgets.preview import Preview
from explorer.tui.widgets.related import RelatedList
from explorer.tui.widgets.results import ResultsList
from explorer.tui.widgets.search_box import SearchBox
from explorer.tui.widgets.status import StatusBar


class MainScreen(IndexEventsMixin, LoadingWorkersMixin, SearchMixin, ActionsMixin, Screen):
    """Tree, search box, results, preview, sidebar (links and related files), status bar."""

    BINDINGS = [
        # A priority binding runs when the app receives the key, before it hands the next key
        # of the same read to the focused widget; see ActionsMixin.check_action.
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
        self._filter = FileFilter()
        self._mode = "hybrid"
        self._generation = 0
        self._last_keystroke = 0.0
        self._debounce: Timer | None = None
        self._manifest_due: Timer | None = None
        self._manifest_at = 0.0
        self._browsed_folder: str | None = None
        """The folder of the tree's cursor while the user moves it (a hint for embedding)."""
        self._embedded_since: set[str] = set()
        """Files made fresh since the screen last followed them (see on_index_files_embedded)."""
        self._embedded_due: Timer | None = None
        self._embedded_at = 0.0

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
            with Vertical(id="sidebar"):
                yield LinksList(id="links")
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
    def links(self) -> LinksList:
        return self.query_one(LinksList)

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
        self.tree.reveal(path)
        self.links.load(self.index, path)
        self._load_related_for(path)
        self.send_focus()

    def send_focus(self) -> None:
        """Tell the live index what the user looks at, so it embeds that first (a hint only:
        its writer thread does the embedding)."""
        if self.live is None:
            return
        from explorer.core.indexing.embed_priority import Focus

        results = tuple(hit.path for hit in self.results.hits)
        self.live.focus(Focus(self.current_path, results, self._browsed_folder))

    @on(FileTree.NodeHighlighted)
    def _tree_moved(self, event: FileTree.NodeHighlighted) -> None:
        entry = event.node.data
        if entry is None or not self.tree.has_focus:
            return  # the cursor moved for a file opened elsewhere: not browsing
        folder = entry.path.rstrip("/") if entry.is_dir else entry.path.rpartition("/")[0]
        if folder != self._browsed_folder:
            self._browsed_folder = folder
            self.send_focus()

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
