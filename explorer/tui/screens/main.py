"""The main screen: composes the widgets and routes the messages between them.

Widgets own their behaviour and their background work: the search panel searches (one at a time,
stale answers, its worker), the file tree reads the manifest, the related and links lists load
their own rows, the status bar shows an :class:`~explorer.tui.index_state.IndexState`. Widgets
never talk to each other: they post messages up to this screen, which keeps the index's state,
reacts to the live index's events (by their type, never their text) and calls the widgets'
public methods. Every widget asks for a file with one :class:`~explorer.tui.messages.OpenFile`,
and every worker failure arrives as one :class:`~explorer.tui.workers.WorkerFailed`.

The screen also keeps what spans the widgets: the navigation history (back and forward, the
recent files), the session (saved per folder, restored at start), which panes show at the
terminal's width (:class:`~explorer.tui.layout.PaneLayout`) and the zoomed pane, the key
bindings' actions and the command palette.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input

from explorer.core.errors import ExplorerError
from explorer.core.ingest.file_reading import decode_leniently, read_head
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
from explorer.core.retrieval.link_resolution import LinkState
from explorer.core.retrieval.scopes import Scope
from explorer.core.safe_text import safe_text
from explorer.settings.config import NamedFolder, Settings
from explorer.tui import messages, session, themes
from explorer.tui.bridge import IndexBridge
from explorer.tui.history import NavigationHistory, Place, RecentFiles
from explorer.tui.index_state import FOLDER_FIELDS, IndexState, combined
from explorer.tui.layout import Pane, PaneLayout
from explorer.tui.link_following import Destination
from explorer.tui.selection import Selection
from explorer.tui.widgets.anchors import anchor_line, label_line, link_anchor
from explorer.tui.widgets.file_tree import Entry, FileTree
from explorer.tui.widgets.footer import FittingFooter
from explorer.tui.widgets.links import LinksList
from explorer.tui.widgets.preview import MAX_PREVIEW_BYTES, Preview
from explorer.tui.widgets.related import RelatedList, RelatedState
from explorer.tui.widgets.results import ResultsList
from explorer.tui.widgets.search_box import SearchBox
from explorer.tui.widgets.search_panel import SearchPanel
from explorer.tui.widgets.status import StatusBar
from explorer.tui.workers import ShowsFailure, WorkerFailed, report_worker_failure
from explorer.tui.workspace import Workspace

if TYPE_CHECKING:
    from explorer.core.embed.embedder import Embedder
    from explorer.core.live.writer import LiveIndex
    from explorer.core.retrieval.links import Link
    from explorer.core.store.index import Index

FOLLOW_EMBEDDED_INTERVAL = 1.0
"""Least seconds between two refreshes (related files, search) for files embedded meanwhile."""
SESSION_SAVE_DELAY = 1.0
"""Seconds after a change before the session is written (it is written at exit too)."""
FOCUS_TARGETS = ("tree", "results", "preview", "links", "related")


class MainScreen(Screen[None]):
    """Tree, search panel (box and results), preview, sidebar (links, related), status bar.

    The keys here work in every pane; each pane's own keys are its widget's bindings, and
    :mod:`explorer.tui.key_table` lists them all. The keyboard model (README, "Keys"): Esc
    from any pane leads back to the search box, where typing searches (a find, a picker or a
    zoom closes first); keys that hand the file to another program are control keys, which
    typing a word cannot hit; each key is handled by the pane focused when it was pressed
    (:mod:`explorer.tui.key_routing`).
    """

    ALLOW_IN_MAXIMIZED_VIEW = "FittingFooter, StatusBar"
    ESCAPE_TO_MINIMIZE = False
    """Esc is :meth:`action_leave`'s: it leaves the zoom and goes to the search box at once."""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape",
            "leave",
            "Search",
            key_display="Esc",
            show=False,
            tooltip="Back to the search box, where typing searches (a zoom ends first)",
        ),
        Binding(
            "slash",
            "focus_search",
            "Search",
            key_display="/",
            priority=True,
            tooltip="Go to the search box (in the preview: find in the page)",
        ),
        Binding("ctrl+p", "fuzzy_jump", "Go to file", tooltip="Go to a file by name or title"),
        Binding(
            "ctrl+y",
            "recent_files",
            "Recent",
            show=False,
            tooltip="Recent files, the last opened first",
        ),
        Binding("alt+left", "back", "Back", show=False, tooltip="Back to the place read before"),
        Binding("alt+right", "forward", "Forward", show=False, tooltip="Forward again"),
        Binding(
            "left_square_bracket,backspace",
            "back",
            "Back",
            key_display="[",
            show=False,
            tooltip="Back to the place read before",
        ),
        Binding(
            "right_square_bracket",
            "forward",
            "Forward",
            key_display="]",
            show=False,
            tooltip="Forward again",
        ),
        Binding(
            "ctrl+t",
            "cycle_mode",
            "Mode",
            show=False,
            tooltip="Cycle the search mode: hybrid, semantic, keyword",
        ),
        Binding("ctrl+f", "focus_filter", "Filter", show=False, tooltip="Go to the path filter"),
        Binding("f2", "toggle_pane('tree')", "Tree", show=False, tooltip="Show or hide the tree"),
        Binding(
            "ctrl+r,f3",
            "toggle_pane('sidebar')",
            "Sidebar",
            show=False,
            tooltip="Show or hide the sidebar (links and related files)",
        ),
        # Keys that hand the file to another program: control keys, never typed in a word.
        Binding(
            "ctrl+o",
            "open_external",
            "Open in app",
            show=False,
            tooltip="Open with the system's application (a PDF in its viewer)",
        ),
        Binding(
            "ctrl+e",
            "edit",
            "Edit",
            show=False,
            tooltip="Edit in $EDITOR, then come back (in a text field: the end of the line)",
        ),
        Binding("z", "zoom", "Zoom", tooltip="Give the focused pane the whole screen, or back"),
        Binding("c", "copy('line')", "Copy", tooltip="Copy path:line of the selection"),
        Binding("C", "copy('path')", "Copy path", show=False, tooltip="Copy the path"),
        Binding(
            "p",
            "copy('passage')",
            "Copy passage",
            show=False,
            tooltip="Copy the passage (the marked lines, or the result's or related passage)",
        ),
        Binding("question_mark", "help", "Help", key_display="?", tooltip="This help"),
    ]

    def __init__(
        self,
        folders: Settings | Sequence[NamedFolder],
        embedder: Embedder | None = None,
        watch: bool = True,
        scopes: Sequence[Scope] = (),
    ) -> None:
        super().__init__()
        self.workspace = Workspace.of(folders, scopes)
        """The window's folders, their indexes as they open, and window paths."""
        self.settings = self.workspace.first.settings
        """The first folder's settings."""
        self.embedder = embedder
        self.watch_files = watch
        """Start the file watcher (``watch`` itself is Textual's method for reactives)."""
        self.bridges: dict[str, IndexBridge] = {}
        """Each folder's bridge to its live index, by collection name."""
        self.lives: dict[str, LiveIndex] = {}
        """Each folder's live index once it has opened."""
        self._folder_states: dict[str, IndexState] = {}
        """Each folder's part of the index state (see :func:`combined`)."""
        self.current_path: str | None = None
        """The file open in the preview."""
        self.history = NavigationHistory()
        """The places read, for back and forward."""
        self.recent = RecentFiles()
        """The files opened, for the recent-files picker."""
        self.layout_state = PaneLayout()
        self.remember = session.enabled(themes.load_preferences())
        """Sessions are read and written (see :mod:`explorer.tui.session`)."""
        self._session_due: Timer | None = None
        self._reveal_pending: str | None = None
        """A file opened before the tree held it (a restored session): revealed once it does."""
        self._browsed_folder: str | None = None
        """The folder of the tree's cursor while the user moves it (a hint for embedding)."""
        self._embedded_since: set[str] = set()
        """Files made fresh since the screen last followed them (see _files_embedded)."""
        self._embedded_due: Timer | None = None
        self._embedded_at = 0.0
        self.selection = Selection(self)
        """What the user means by "this file": copy, open and edit act on it."""
        self._stopping: threading.Thread | None = None
        """The thread that stops the live indexes once the user quits."""
        self._preview_width = 0
        """The preview's width before it was zoomed (its rows are wrapped for it on the way
        back)."""

    # -- composition --------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            yield FileTree(self.workspace.title, id="tree")
            with Vertical(id="centre"):
                yield SearchPanel(f"Search · {self.workspace.title}", id="search-panel")
                yield Preview(id="preview")
            with Vertical(id="sidebar"):
                yield LinksList(id="links")
                yield RelatedList(id="related")
        yield StatusBar(id="status")
        yield FittingFooter()

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
    def live(self) -> LiveIndex | None:
        """The first folder's live index (None until it opens)."""
        return self.lives.get(self.workspace.first.name)

    @property
    def index(self) -> Index | None:
        """The first folder's index (None until it opens)."""
        live = self.live
        return live.index if live is not None else None

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

    def _set_folder_state(self, folder: str, **changes: Any) -> IndexState:
        """A folder's live index changed: its part of the state, folded with the others'."""
        if folder not in {f.name for f in self.workspace.folders}:
            return self.state  # a folder removed meanwhile
        mine = replace(self._folder_states.get(folder, IndexState()), **changes)
        self._folder_states[folder] = mine
        return self._fold_states()

    def _fold_states(self) -> IndexState:
        state = combined(self.state, self._folder_states)
        return self._set_state(**{name: getattr(state, name) for name in FOLDER_FIELDS})

    def on_mount(self) -> None:
        self._restore_session()
        # The first frame comes first: the index (and everything it imports) opens after it.
        self.call_after_refresh(self._start_index)

    def stop_indexes_soon(self) -> None:
        """The window is closing: its folders' live indexes stop on a thread while the widgets
        go (each waits for its writer's model step and closes its index, 0.1-0.6 s while
        embedding, which came after the widgets' own 0.2 s); :meth:`on_unmount` waits for it."""
        if self._stopping is None:
            self._stopping = threading.Thread(
                target=self._stop_indexes, name="explorer-tui-close", daemon=True
            )
            self._stopping.start()

    def _stop_indexes(self) -> None:
        for bridge in list(self.bridges.values()):
            bridge.stop()

    def on_unmount(self) -> None:
        if self._stopping is not None:
            self._stopping.join()
        self._stop_indexes()  # a folder added meanwhile, or no quit before (idempotent)

    def _start_index(self) -> None:
        for folder in self.workspace.folders:
            self._start_folder(folder)

    def _start_folder(self, folder: NamedFolder) -> None:
        """Open the folder's live index on a thread (it reports by messages)."""
        bridge = IndexBridge(
            folder.settings,
            self,
            embedder=self.embedder,
            watch=self.watch_files,
            folder=folder.name,
        )
        self.bridges[folder.name] = bridge
        self._folder_states[folder.name] = IndexState()
        bridge.start()

    # -- opening files ------------------------------------------------------------------------
    @on(messages.OpenFile)
    def _open_asked(self, message: messages.OpenFile) -> None:
        message.stop()
        if not self.workspace.is_file(message.path):
            self.notify(f"no such file in this folder: {message.path}", severity="warning")
            return
        self.open_file(message.path, list(message.passages), message.line, focus=message.focus)

    @on(messages.FollowLink)
    def _follow_asked(self, message: messages.FollowLink) -> None:
        message.stop()
        self._follow_link(message.source, message.href)

    @work(thread=True, exclusive=True, group="link", exit_on_error=False)
    def _follow_link(self, source: str, href: str) -> None:
        """Resolve a followed link off the UI thread (the first one resolves the index's
        links), and the line its anchor names (``#heading``, ``[[Note#^block]]``)."""
        found = self.workspace.destination(source, href)
        anchor = link_anchor(href)
        line = None
        target = found.path if found.path is not None else None if found.note else source
        if (anchor or found.label) and target is not None:
            line = self._anchor_in(target, anchor, found.label)
        self.app.call_from_thread(self._link_followed, found, source, line)

    def _anchor_in(self, path: str, anchor: str, label: str = "") -> int | None:
        """The line of ``path`` (a window path) that ``anchor`` names, or that marks the
        Sphinx ``label``, if one does."""
        try:
            text = decode_leniently(read_head(self.workspace.absolute(path), MAX_PREVIEW_BYTES))
        except (OSError, ExplorerError):
            return None
        text = text.replace("\r\n", "\n")
        return label_line(text, label) if label else anchor_line(text, anchor)

    def _link_followed(
        self, found: Destination, source: str | None = None, line: int | None = None
    ) -> None:
        if found.path is not None:
            self.post_message(messages.OpenFile(found.path, line))
        elif found.note:
            self.notify(safe_text(found.note), timeout=4)
        elif line is not None and source == self.current_path:  # a heading of this page
            self._outline_chosen(line)

    def action_pick_link(self) -> None:
        """``f`` in the preview: the page's links, to follow one from the keyboard."""
        from explorer.tui.widgets.link_picker import LinkPicker

        path = self.current_path
        found = self.links.found
        if path is None:
            return
        if found is None or self.links.source != path:
            self.status.say("links: not read yet for this file (the index is opening)")
            return
        picker = LinkPicker(path, list(found.outgoing))
        self.app.push_screen(picker, lambda link: self._link_picked(path, link))

    def _link_picked(self, source: str, link: Link | None) -> None:
        if link is None:
            return
        if link.state is LinkState.MISSING:
            self.notify(safe_text(f"this link leads nowhere: {link.raw}"), timeout=4)
        elif link.state is LinkState.OUTSIDE_ROOT:
            self.notify(safe_text(f"outside this folder: {link.target}"), timeout=4)
        else:
            self._follow_link(source, link.raw)

    on_worker_state_changed = report_worker_failure

    def open_file(
        self,
        path: str,
        passages: list[tuple[int, int]] | None = None,
        line: int | None = None,
        *,
        top: int | None = None,
        record: bool = True,
        focus: Mapping[tuple[int, int], int] | None = None,
    ) -> None:
        """Show ``path`` in the preview at ``line`` (its ``passages`` marked, each shown from
        its ``focus`` line when it is taller than the view; see :meth:`Preview.open_file`), or
        with ``top`` at the top of the view; load its links and related files. ``record``: a
        new place in the history (back and forward do not)."""
        absolute = self.file_on_disk(path)
        if absolute is None:
            return
        if record:
            self._leave_place()
            spans = tuple(sorted(set(passages or ())))
            self.history.visit(Place(path, top or 1, spans, line))
        self.current_path = path
        self.recent.add(path)
        self.preview.open_file(path, absolute, passages, line, top, focus)
        self.file_tree.reveal(path)
        if self.file_tree.state_of(path) is None:
            self._reveal_pending = path
        self.links.load(self.workspace, path)
        self.load_related(path)
        self.send_focus()
        self._session_changed()

    def _leave_place(self) -> None:
        """The reader leaves the open file: coming back shows where they were."""
        if self.current_path is not None and self.preview.loaded:
            self.history.remember_top(self.preview.position())

    def _go_to(self, place: Place | None) -> None:
        if place is None:
            return
        if self.file_on_disk(place.path) is None or not self.workspace.is_file(place.path):
            self.notify(f"no longer here: {place.path}", severity="warning")
            self.recent.forget(place.path)
            return
        self.open_file(place.path, list(place.passages), place.line, top=place.top, record=False)

    def action_back(self) -> None:
        """Back to the place read before (alt+left, [, backspace)."""
        self._leave_place()
        place = self.history.back()
        if place is None:
            self.status.say("back: nothing before this place")
        self._go_to(place)

    def action_forward(self) -> None:
        """Forward again after going back (alt+right, ])."""
        self._leave_place()
        place = self.history.forward()
        if place is None:
            self.status.say("forward: nothing after this place")
        self._go_to(place)

    def action_recent_files(self) -> None:
        """Pick one of the files opened recently (ctrl+y)."""
        from explorer.tui.widgets.fuzzy_jump import FuzzyJump  # rapidfuzz: only when asked

        paths = [path for path in self.recent.paths if path != self.current_path]
        if not paths:
            self.status.say("recent files: none yet")
            return
        titles = self.file_tree.titles()
        self.app.push_screen(
            FuzzyJump(paths, titles, title="Recent files", ordered=True), self._jumped
        )

    def load_related(self, path: str | None, refresh: bool = False) -> None:
        """Load the related files of ``path``; ``refresh``: the same file again (what the
        sidebar shows stays until the new answer comes)."""
        if path is not None:
            embedding = self._embedding_here(path)
            self.related.load(self.workspace, path, self.state, embedding, refresh)

    def _embedding_here(self, path: str) -> bool:
        """Whether the live index of ``path``'s folder is embedding (so a missing vector is
        coming): it writes, can embed, and has not finished its sync."""
        folder = self._folder_of(path)
        if folder is None:
            return False
        live = self.lives.get(folder)
        return (
            live is not None
            and not live.read_only
            and self.state.document_model is not ModelState.FAILED
            and live.vectors_available
            and self._folder_states.get(folder, IndexState()).syncing
        )

    def send_focus(self) -> None:
        """Tell each folder's live index what the user looks at there, so it embeds that
        first (a hint only: its writer thread does the embedding)."""
        if not self.lives:
            return
        from explorer.core.indexing.embed_priority import Focus

        def mine(name: str, path: str | None) -> str | None:
            if path is None:
                return None
            try:
                place = self.workspace.split(path)
            except ExplorerError:
                return None
            return place.path if place.folder.name == name else None

        results = [hit.path for hit in self.results.hits]
        for name, live in self.lives.items():
            own = tuple(p for p in (mine(name, path) for path in results) if p is not None)
            folder = mine(name, self._browsed_folder)  # a folder's node: "" is its root
            live.focus(Focus(mine(name, self.current_path), own, folder))

    def file_on_disk(self, path: str) -> Path | None:
        """The file the window path ``path`` names, or None (and a warning) when it leads
        outside its folder and the settings do not allow that, or names no open folder."""
        try:
            return self.workspace.absolute(path)
        except ExplorerError as error:
            self.notify(safe_text(f"not shown: {error}"), severity="warning")
            return None

    @on(FileTree.NodeHighlighted)
    def _tree_moved(self, event: FileTree.NodeHighlighted[Entry]) -> None:
        entry = event.node.data
        if entry is None or not self.file_tree.has_focus:
            return  # the cursor moved for a file opened elsewhere: not browsing
        folder = entry.path.rstrip("/") if entry.is_dir else entry.path.rpartition("/")[0]
        root = self.file_tree.folder_root(folder) if entry.is_dir else None
        if root is not None:  # a window folder's node: where it is
            self.status.say(safe_text(f"{folder}: {root}"))
        if folder != self._browsed_folder:
            self._browsed_folder = folder
            self.send_focus()

    @on(Preview.OutlineWanted)
    def _outline_wanted(self, event: Preview.OutlineWanted) -> None:
        from explorer.tui.widgets.outline import OutlineScreen

        if not event.headings:
            self.status.say("outline: no headings in this file")
            return
        path = self.current_path or ""
        outline = OutlineScreen(path, event.headings, self.preview.position())
        self.app.push_screen(outline, self._outline_chosen)

    def _outline_chosen(self, line: int | None) -> None:
        if line is not None:
            self._leave_place()
            current = self.history.current
            if current is not None:
                self.history.visit(replace(current, top=line))
            self.preview.go_to_line(line)
            self.preview.focus_content()

    # -- worker failures ----------------------------------------------------------------------
    @on(WorkerFailed)
    def _worker_failed(self, message: WorkerFailed) -> None:
        """Every worker's unexpected failure, in one place: the widget says it where it
        shows its work, and a notification names it (one line, never a traceback)."""
        message.stop()
        if isinstance(message.node, ShowsFailure):
            message.node.show_failure(message.worker, message.text)
        self.notify(message.text, title=f"{message.worker.group} failed", severity="error")

    # -- the search panel and the tree report -------------------------------------------------
    @on(SearchBox.Changed)
    def _search_changed(self, event: SearchBox.Changed) -> None:
        for live in self.lives.values():
            live.user_typed()  # the keystroke's search gets the cores, not the model
        filters = event.filter.words()
        if filters != self.status.filters:
            self.status.filters = filters

    @on(SearchPanel.Answered)
    def _search_answered(self, event: SearchPanel.Answered) -> None:
        self.status.search = event.summary
        if event.summary is not None:
            self.send_focus()  # the results' files are embedded next
        self._session_changed()

    @on(SearchPanel.NothingToLeaveFor)
    def _search_left_empty(self) -> None:
        self.set_focus(self.file_tree if self.file_tree.display else self.results)

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
        pending = self._reveal_pending
        if pending is not None and self.file_tree.state_of(pending) is not None:
            self._reveal_pending = None  # a file opened before the tree held it
            if pending == self.current_path:
                self.file_tree.reveal(pending)
        state = self._set_state(counts=event.counts)
        progress = state.progress
        keywords = progress is not None and progress.phase is SyncPhase.KEYWORDS
        if keywords and self.search_panel.has_query:
            self.search_panel.search_again()  # keyword results grow as files are indexed

    # -- the live index -----------------------------------------------------------------------
    def on_index_opened(self, message: messages.IndexOpened) -> None:
        folder = message.folder or self.workspace.first.name
        bridge = self.bridges.get(folder)
        if bridge is None or bridge.live is not message.live:
            return  # the folder was removed while its index opened
        try:
            self.workspace.attach(folder, message.live.index)
        except ExplorerError as error:  # another model than the other folders'
            self.notify(f"{folder} not opened: {error}", severity="error", timeout=10)
            self._remove_folder(folder)  # it leaves the window, as "Remove a folder" does
            return
        self.lives[folder] = message.live
        if not self.state.semantic_ready:
            self._set_state(query_model=ModelState.LOADING)
        self._set_folder_state(folder, opened=True)
        self.send_focus()
        self.file_tree.use_workspace(self.workspace)
        self.search_panel.use_workspace(self.workspace)
        if self.current_path is not None:
            self.links.load(self.workspace, self.current_path)

    def on_index_unavailable(self, message: messages.IndexUnavailable) -> None:
        folder = message.folder or self.workspace.first.name
        self._set_folder_state(folder, error=message.error)
        self.notify(self._from(folder, message.error), severity="error", timeout=10)

    def on_live_index_event(self, message: messages.LiveIndexEvent) -> None:
        folder = message.folder or self.workspace.first.name
        if folder not in self.lives:
            return  # a folder removed meanwhile
        event = message.event
        if isinstance(event, FilesChangedEvent | FilesEmbeddedEvent):
            event = replace(event, paths=self.workspace.window_paths(folder, event.paths))
        if isinstance(event, ProgressEvent):
            was_syncing = self._folder_states.get(folder, IndexState()).syncing
            self._set_folder_state(folder, progress=event)
            if was_syncing and event.phase is SyncPhase.DONE:
                self._sync_done(folder)
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
            self._model_state(folder, event)
        elif isinstance(event, WriterEvent):
            self._set_folder_state(folder, read_only=event.state is WriterState.WAITING)
            self.notify(self._from(folder, event.message), title="Index", timeout=8)
        elif isinstance(event, VectorsStateEvent):
            self._vectors_state(event, folder)
        elif isinstance(event, RootStateEvent):
            self._root_state(folder, event)
        elif isinstance(event, ErrorEvent):
            if self.lives[folder].read_only:
                self._set_folder_state(folder, read_only=True)
            said = self._from(folder, event.message)
            self.notify(said, title="Index", severity="warning", timeout=8)

    def _sync_done(self, folder: str) -> None:
        """A folder's sync ended: a related list that said vectors were coming for the open
        file of that folder is asked again (it shows what there is, or that there is none)."""
        current = self.current_path
        if current is None or self.related.state is RelatedState.READY:
            return
        if self._folder_of(current) == folder:
            self.load_related(current, refresh=True)

    def _folder_of(self, path: str) -> str | None:
        """The name of the open folder a window path is in (None: in none of them)."""
        try:
            return self.workspace.split(path).folder.name
        except ExplorerError:
            return None

    def _from(self, folder: str, text: str) -> str:
        """What a folder's live index says, naming the folder when the window has several."""
        return f"{folder}: {text}" if self.workspace.several else text

    def _files_changed(self, event: FilesChangedEvent) -> None:
        self.file_tree.reload(now=True)
        panel = self.search_panel
        if panel.has_query:
            panel.search_again()
        current = self.current_path
        if current is None:
            return
        self.links.load(self.workspace, current)  # its backlinks may come from any changed file
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

    def _model_state(self, folder: str, event: ModelStateEvent) -> None:
        self._set_folder_state(folder, document_model=event.state)
        if event.state is ModelState.FAILED:
            said = self._from(folder, event.message)
            self.notify(said, title="Model", severity="warning", timeout=8)

    def _vectors_state(self, event: VectorsStateEvent, folder: str | None = None) -> None:
        """The vector store stopped or answers again (``folder``'s, else the search's)."""
        if folder is None:
            state = self._set_state(vectors_available=event.available)
        else:
            state = self._set_folder_state(folder, vectors_available=event.available)
        self.notify(
            self._from(folder, event.message) if folder is not None else event.message,
            title="Vectors",
            severity="information" if event.available else "warning",
            timeout=8,
        )
        if event.available and not state.semantic_ready and self.workspace.opened:
            self.search_panel.warm_query_path()
        elif self.search_panel.searches_by_meaning:
            self.search_panel.search_again()
        if event.available and self.current_path is not None:
            self.load_related(self.current_path)

    def _root_state(self, folder: str, event: RootStateEvent) -> None:
        """A folder went missing (the status bar says so until it is back) or is back (the
        re-sync's ``files_changed`` reloads the tree; the tree is read again now too)."""
        missing = event.state is RootState.MISSING
        self._set_folder_state(folder, root_missing=event.message if missing else "")
        self.notify(
            self._from(folder, event.message),
            title="Folder",
            severity="warning" if missing else "information",
            timeout=8,
        )
        if not missing:
            self.file_tree.reload(now=True)

    # -- actions ------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``/`` in the preview finds in the page (the preview's own binding); in a text field
        ``/`` and ``?`` are typed (the key router types them), so the footer does not show
        them there."""
        focused = self.focused
        if action in ("focus_search", "help") and isinstance(focused, Input):
            return False
        in_preview = focused is not None and self.preview in focused.ancestors
        return not (action == "focus_search" and in_preview)

    def action_focus_search(self) -> None:
        self.search_box.focus_query()

    def action_leave(self) -> None:
        """Esc: back to the search box, the zoom ended, at once (the keys typed after it are
        the box's)."""
        if self.maximized is not None:
            self._unzoom()
        self.search_box.focus_query()

    def action_focus_filter(self) -> None:
        self.search_box.focus_filter()

    def action_next_passage(self) -> None:
        """The preview's ``n``, from the results (after Enter the focus stays in the list)."""
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
        from explorer.tui.keys import markdown_tables
        from explorer.tui.widgets.help import HelpScreen

        self.app.push_screen(HelpScreen(markdown_tables(self.BINDINGS)))

    # -- layout -------------------------------------------------------------------------------
    def on_resize(self, event: events.Resize) -> None:
        if self.layout_state.resize(event.size.width):
            self._apply_layout()

    def _apply_layout(self) -> None:
        layout = self.layout_state
        self.file_tree.display = layout.shows(Pane.TREE)
        self.query_one("#sidebar").display = layout.shows(Pane.SIDEBAR)
        focused = self.focused
        if focused is not None and not all(
            node.display for node in focused.ancestors_with_self if isinstance(node, Widget)
        ):
            self.search_box.focus_query()  # the focused pane was hidden

    def action_toggle_pane(self, pane: str) -> None:
        """Show or hide the tree (F2) or the sidebar (ctrl+r, F3)."""
        shown = self.layout_state.toggle(Pane(pane))
        self._apply_layout()
        if shown:
            self.focus_pane("tree" if pane == "tree" else "related")

    def action_toggle_related(self) -> None:
        self.action_toggle_pane("sidebar")

    def action_zoom(self) -> None:
        """Give the focused pane the whole screen, or back (z; Esc leaves it for the search
        box). The preview keeps the line at its top: its lines wrap anew at the new width."""
        if self.maximized is not None:
            self._unzoom()
            return
        focused = self.focused
        if focused is None:
            return
        pane: Widget = focused
        for ancestor in focused.ancestors_with_self:
            if isinstance(ancestor, Preview | SearchPanel):
                pane = ancestor
                break
        with self._keeping_the_reading_place():
            if pane is self.preview:
                self._preview_width = pane.outer_size.width
                self.preview.wrap_for(self.size.width)  # the zoomed pane's width (app.tcss)
            self.maximize(pane, container=False)

    def _unzoom(self) -> None:
        with self._keeping_the_reading_place():
            if self.maximized is self.preview and self._preview_width:
                self.preview.wrap_for(self._preview_width)
            self.minimize()

    def _watch_maximized(self, before: Widget | None, after: Widget | None) -> None:
        """Only the zoomed pane takes the ``-maximized`` class (app.tcss fills the screen with
        it). Textual's own watcher also sets ``-maximized-view`` on the screen, whose rules this
        screen does not need (it is laid out vertically already, and the zoomed pane fills it);
        a class on the screen restyles every widget under it: 24-37 ms of each zoom of a long
        page, over half of what the app spent on the key."""
        if before is not None:
            before.remove_class("-maximized")
        if after is not None:
            after.add_class("-maximized")

    @contextmanager
    def _keeping_the_reading_place(self) -> Iterator[None]:
        """The layout changes inside: the preview shows the same line at its top after, unless
        a key read with the change (``z`` then ``G`` in one read) moved the page meanwhile."""
        preview = self.preview
        top = preview.position() if preview.loaded else None
        moves = preview.moves
        yield
        if top is not None:
            self.call_after_refresh(self._back_to_line, top, moves)

    def _back_to_line(self, top: int, moves: int) -> None:
        if self.preview.moves == moves:
            self.preview.go_to_line(top)

    def focus_pane(self, target: str) -> None:
        focus: dict[str, Callable[[], object]] = {
            "tree": self.file_tree.focus,
            "results": self.results.focus,
            "preview": self.preview.focus_content,
            "related": self.related.focus,
            "links": self.links.focus,
        }
        focus[target]()

    # -- the selection: copy, open, edit ------------------------------------------------------
    def selected_path(self) -> tuple[str | None, int | None]:
        """The file the user means (see :meth:`Selection.path`)."""
        return self.selection.path()

    def action_copy(self, what: str) -> None:
        """Copy the selected file's path (``C``), ``path:line`` (``c``) or its passage (``p``)."""
        self.selection.copy(what)

    def action_open_external(self) -> None:
        """Open the selected file with the system's application (``ctrl+o``)."""
        self.selection.open_with_system()

    def action_edit(self) -> None:
        """Edit the selected file in ``$EDITOR`` (``ctrl+e``)."""
        self.selection.edit()

    # -- the window's folders -----------------------------------------------------------------
    def action_add_folder(self) -> None:
        """Open one more folder in this window (its index opens and follows it as the first
        one's does)."""
        from explorer.tui.widgets.folder_prompt import FolderPrompt

        self.app.push_screen(FolderPrompt(self.folder_to_add), self._add_folder)

    def folder_to_add(self, text: str) -> NamedFolder:
        """The folder the path ``text`` names, with its collection name and settings (see
        :meth:`Workspace.folder_at`); :class:`ExplorerError` when it is no folder or open
        already."""
        root = Path(text).expanduser()
        if not root.is_dir():
            raise ExplorerError(f"no such folder: {text}")
        return self.workspace.folder_at(root)

    def _add_folder(self, folder: NamedFolder | None) -> None:
        if folder is None:
            return
        several = self.workspace.several
        renamed = self.workspace.add_folder(folder)
        if not several:  # the window's paths now start with their folder's name
            self._rename_paths(renamed)
        self._start_folder(folder)
        self._set_titles()
        self.notify(f"opened {folder.settings.root} as {folder.name}", title="Folders", timeout=4)

    def action_remove_folder(self) -> None:
        """Close one of the window's folders (its index stays on disk)."""
        from explorer.tui.widgets.fuzzy_jump import FuzzyJump

        if not self.workspace.several:
            self.notify("the window's last folder cannot be removed", timeout=3)
            return
        names = [folder.name for folder in self.workspace.folders]
        picker = FuzzyJump(names, title="Remove a folder", ordered=True)
        self.app.push_screen(picker, self._remove_folder)

    def _remove_folder(self, name: str | None) -> None:
        if name is None:
            return
        self._close_folder(name)
        folder, renamed = self.workspace.remove_folder(name)
        self._rename_paths(renamed)
        self._fold_states()
        self._set_titles()
        self.notify(f"closed {folder.name} ({folder.settings.root})", title="Folders", timeout=4)

    def _close_folder(self, name: str) -> None:
        """Stop a folder's live index (on a thread: its writer may take a moment to finish a
        batch); the workspace stops asking its index when the folder leaves it."""
        self.lives.pop(name, None)
        self._folder_states.pop(name, None)
        bridge = self.bridges.pop(name, None)
        if bridge is not None:
            threading.Thread(target=bridge.stop, name="explorer-close-folder", daemon=True).start()

    def _rename_paths(self, renamed: Callable[[str], str | None]) -> None:
        """The window's paths changed (a folder opened or closed): what the screen keeps follows
        ``renamed``, and the tree, the panes and the results are read again."""
        self.history.rename(renamed)
        self.recent.rename(renamed)
        self._embedded_since = set()
        self._browsed_folder = None
        self.file_tree.reload(now=True)
        current, self.current_path = self.current_path, None
        new = renamed(current) if current is not None else None
        if new is None:
            if current is not None:
                self.preview.clear("The folder of the file you read was closed.")
                self.links.show_message("")
                self.related.show_message("")
        elif self.preview.loaded:
            passage = self.preview.passage
            top = self.preview.position()
            self.open_file(
                new,
                list(self.preview.passages),
                passage[0] if passage else None,
                top=top,
                record=False,
            )
        if self.search_panel.has_query:
            self.search_panel.search_again()
        self._session_changed()

    def _set_titles(self) -> None:
        self.search_box.border_title = f"Search · {self.workspace.title}"

    # -- the session --------------------------------------------------------------------------
    def _restore_session(self) -> None:
        """Reopen the folder where the user left it: query, mode, filter, open file and place,
        the queries asked before and the recent files."""
        if not self.remember:
            return
        if problem := session.sessions_problem():  # another user could plant what is read
            self.remember = False
            self.notify(problem, title="Session", severity="warning", timeout=10)
            return
        saved, note = session.load_session(self.workspace.roots)
        if note:
            self.notify(note, title="Session", severity="warning", timeout=10)
        box = self.search_box
        box.history = type(box.history)(saved.queries)
        self.recent = RecentFiles([p for p in saved.recent if self.workspace.is_file(p)])
        if saved.mode is not box.mode:
            box.set_mode(saved.mode)
        if saved.filter:
            box.set_filter(saved.filter)
        if saved.query:
            box.set_text(saved.query, selected=True)
        self.history = NavigationHistory.from_data(saved.history, self.workspace.is_file)
        if saved.path is not None and self.workspace.is_file(saved.path):
            current = self.history.current
            again = current is not None and current.path == saved.path  # back leads on from it
            self.open_file(saved.path, None, saved.line, top=saved.top, record=not again)

    def _session_changed(self) -> None:
        """Something worth remembering changed: write the session soon."""
        if self.remember and self._session_due is None and self.is_mounted:
            self._session_due = self.set_timer(SESSION_SAVE_DELAY, self.save_session)

    def save_session(self) -> None:
        """Write where the user is (the app calls it before it quits, the screen after each
        change that matters)."""
        self._session_due = None
        if not self.remember or not self.is_mounted:
            return
        box = self.search_box
        preview = self.preview
        passage = preview.passage
        saved = session.Session(
            query=box.text,
            mode=box.mode,
            filter=box.filter_text,
            path=self.current_path,
            top=preview.position() if self.current_path else 1,
            line=passage[0] if passage else None,
            queries=list(box.history.queries),
            recent=list(self.recent.paths),
            history=self._history_to_keep(),
        )
        session.save_session(self.workspace.roots, saved)

    def _history_to_keep(self) -> dict[str, object]:
        """Back and forward as the session keeps them, the open place at the line read."""
        if self.current_path is not None and self.preview.loaded:
            self.history.remember_top(self.preview.position())
        return self.history.to_data()

    def action_forget_session(self) -> None:
        """Stop remembering sessions (and forget this folder's)."""
        self.remember = False
        themes.save_preference(session.REMEMBER_KEY, False)
        session.session_path(self.workspace.roots).unlink(missing_ok=True)
        self.notify("sessions are no longer remembered", timeout=4)

    def action_remember_session(self) -> None:
        self.remember = True
        themes.save_preference(session.REMEMBER_KEY, True)
        self.save_session()
        self.notify("sessions are remembered again", timeout=4)

    # -- the command palette ------------------------------------------------------------------
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
        yield SystemCommand(
            "Recent files", "Reopen a recent file (ctrl+y)", self.action_recent_files
        )
        yield SystemCommand("Back", "The place read before (alt+left, [)", self.action_back)
        yield SystemCommand("Forward", "The next place again (alt+right, ])", self.action_forward)
        yield SystemCommand("Outline", "The open file's headings (t)", self.preview.action_outline)
        yield SystemCommand(
            "Follow a link", "The open page's links, to follow one (f)", self.action_pick_link
        )
        yield SystemCommand(
            "Find in page", "Find words in the open file (/ in the preview)", self._find_in_page
        )
        yield SystemCommand(
            "Edit file", "Open the selected file in $EDITOR (ctrl+e)", self.action_edit
        )
        yield SystemCommand(
            "Open with the system's app",
            "Open the selected file with xdg-open / open (ctrl+o)",
            self.action_open_external,
        )
        yield SystemCommand(
            "Copy path:line", "Copy the selected place (c)", lambda: self.action_copy("line")
        )
        yield SystemCommand(
            "Copy path", "Copy the selected file's path (C)", lambda: self.action_copy("path")
        )
        yield SystemCommand(
            "Copy passage",
            "Copy the selected passage's text (p)",
            lambda: self.action_copy("passage"),
        )
        yield SystemCommand(
            "Next passage", "Mark the next matched passage (n)", self.preview.action_next_passage
        )
        yield SystemCommand(
            "Previous passage",
            "Mark the previous matched passage (N)",
            self.preview.action_previous_passage,
        )
        yield SystemCommand(
            "Wrap long lines", "Wrap or scroll sideways (w)", self.preview.action_toggle_wrap
        )
        yield SystemCommand(
            "Toggle tree",
            "Show or hide the file tree (F2)",
            lambda: self.action_toggle_pane("tree"),
        )
        yield SystemCommand(
            "Toggle related sidebar",
            "Show or hide the links and related files (ctrl+r, F3)",
            self.action_toggle_related,
        )
        yield SystemCommand(
            "Zoom", "Give the focused pane the whole screen, or back (z)", self.action_zoom
        )
        for target in FOCUS_TARGETS:
            yield SystemCommand(
                f"Focus {target}",
                f"Move the focus to the {target}",
                lambda target=target: self.focus_pane(target),
            )
        if self.remember:
            yield SystemCommand(
                "Stop remembering sessions",
                "Forget where you left folders, and the queries typed",
                self.action_forget_session,
            )
        else:
            yield SystemCommand(
                "Remember sessions",
                "Reopen each folder where you left it",
                self.action_remember_session,
            )
        yield SystemCommand(
            "Add a folder", "Open one more folder in this window", self.action_add_folder
        )
        if self.workspace.several:
            yield SystemCommand(
                "Remove a folder", "Close one of this window's folders", self.action_remove_folder
            )
        yield SystemCommand("Help", "Keys and how explorer works (?)", self.action_help)

    def _find_in_page(self) -> None:
        self.preview.focus_content()
        self.preview.action_find()


def _touches(paths: Iterable[str], path: str) -> bool:
    """Whether a change reported for ``paths`` (files or folders) may concern ``path``."""
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in paths)
