"""The file tree: every indexed file of the window's folders, with a mark for its index state.

With several folders open, each is a top-level node under its collection's name (the
workspace's window paths start with it; see :mod:`explorer.tui.workspace`).

The tree reads the manifest itself (:meth:`FileTree.reload`, on a worker, at most every
:data:`MANIFEST_INTERVAL` seconds) and updates in place: nodes are added, removed and
re-marked, so expanded folders and the cursor stay where they were when files change on disk.
Binary files are left out (ignored files never reach the manifest). Each read is reported up
(:class:`FileTree.Loaded`) with the counts by state, for the status bar. A name too long for
the tree's width is cut in the middle with an ellipsis (``getting-st…python.md``), so two long
names that start alike still read apart.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.binding import Binding
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Tree
from textual.widgets.tree import TreeNode
from textual.worker import get_current_worker

from explorer.core.errors import ExplorerError
from explorer.core.models import FileState
from explorer.core.safe_text import safe_name
from explorer.tui.messages import OpenFile
from explorer.tui.text_fit import ELLIPSIS, fit_name
from explorer.tui.workers import report_worker_failure

if TYPE_CHECKING:
    from explorer.core.store.manifest_records import FileRecord
    from explorer.tui.workspace import Workspace

MARKS = {
    FileState.FRESH: ("●", "file-tree--fresh"),
    FileState.PENDING: ("◌", "file-tree--pending"),
    FileState.SKIPPED: ("⊘", "file-tree--skipped"),
    FileState.FAILED: ("✗", "file-tree--failed"),
}
"""The mark and the component class (styled in app.tcss) of each index state."""
EXPAND_ALL_BELOW = 80
"""With at most this many files, the top-level folders start expanded."""
MANIFEST_INTERVAL = 0.4
"""Least seconds between two reads of the manifest while files change."""


@dataclass
class Entry:
    """What a node stands for: a file (with its state) or a folder."""

    path: str
    is_dir: bool
    state: FileState | None = None
    """None for a folder."""
    reason: str = ""


def is_shown(record: FileRecord) -> bool:
    """Whether a manifest row belongs in the tree (binary files do not)."""
    return not (record.state is FileState.SKIPPED and record.reason.startswith("binary"))


def _sort_key(entry: Entry) -> tuple[bool, str]:
    name = entry.path.rstrip("/").rsplit("/", 1)[-1]
    return (not entry.is_dir, name.lower())


def _node_key(node: TreeNode[Entry]) -> tuple[bool, str]:
    return _sort_key(node.data) if node.data is not None else (False, "")


class FileTree(Tree[Entry]):
    """The indexed files of the root; Enter opens a file."""

    BORDER_TITLE = "Files"
    BINDINGS = [
        Binding("enter", "select_cursor", "Open", tooltip="Open a file, or open or close a folder"),
        Binding("j", "cursor_down", "Down", show=False, tooltip="Next row"),
        Binding("k", "cursor_up", "Up", show=False, tooltip="Previous row"),
    ]
    COMPONENT_CLASSES = {
        "file-tree--fresh",
        "file-tree--pending",
        "file-tree--skipped",
        "file-tree--failed",
    }

    @dataclass
    class Loaded(Message):
        """The tree shows a fresh read of the manifest; ``counts``: files by state, chunks."""

        file_tree: FileTree
        counts: dict[str, int]

        @property
        def control(self) -> FileTree:
            return self.file_tree

    @dataclass
    class _Read(Message, bubble=False):
        records: dict[str, FileRecord]
        counts: dict[str, int]

    on_worker_state_changed = report_worker_failure

    def __init__(self, root_label: str, **kwargs: Any) -> None:
        super().__init__(root_label, Entry("", True), **kwargs)
        self.show_root = False
        self.guide_depth = 3
        self.records: dict[str, FileRecord] = {}
        """The last manifest read: {path: FileRecord}."""
        self._files: dict[str, TreeNode[Entry]] = {}
        self._dirs: dict[str, TreeNode[Entry]] = {"": self.root}
        self._marks: dict[str, tuple[FileState, str]] = {}
        """(state, reason) of every file shown, as last set."""
        self.root.expand()
        self._workspace: Workspace | None = None
        self._read_at = 0.0
        self._read_due: Timer | None = None

    # -- reading the manifest -----------------------------------------------------------------
    def use_workspace(self, workspace: Workspace) -> None:
        """Show the files of the window's open indexes (read at once)."""
        self._workspace = workspace
        self.reload(now=True)

    def reload(self, now: bool = False) -> None:
        """Read the manifest again, at most every :data:`MANIFEST_INTERVAL` seconds (``now``:
        at once)."""
        if self._workspace is None:
            return
        wait = self._read_at + MANIFEST_INTERVAL - time.monotonic()
        if now or wait <= 0:
            if self._read_due is not None:
                self._read_due.stop()
                self._read_due = None
            self._read_at = time.monotonic()
            self._read_manifest(self._workspace)
        elif self._read_due is None:
            self._read_due = self.set_timer(wait, self._reload_due)

    def _reload_due(self) -> None:
        self._read_due = None
        self.reload(now=True)

    @work(thread=True, exclusive=True, group="manifest", exit_on_error=False)
    def _read_manifest(self, workspace: Workspace) -> None:
        records, counts = workspace.files()
        if not get_current_worker().is_cancelled:
            self.post_message(self._Read(records, counts))

    @on(_Read)
    def _manifest_read(self, message: _Read) -> None:
        self.records = message.records
        self.set_files(message.records)
        self.post_message(self.Loaded(self, message.counts))

    # -- public API ---------------------------------------------------------------------------
    @property
    def paths(self) -> list[str]:
        """Every file shown, sorted."""
        return sorted(self._files)

    def state_of(self, path: str) -> FileState | None:
        node = self._files.get(path)
        return node.data.state if node is not None and node.data is not None else None

    def titles(self) -> dict[str, str]:
        """The files' titles (where they have one), by path."""
        return {path: record.title for path, record in self.records.items() if record.title}

    def set_files(self, records: dict[str, FileRecord]) -> None:
        """Show exactly the files of ``records`` ({path: FileRecord}), updating in place.

        Only the difference to what is shown is applied: while a large folder is indexed the
        manifest comes every second, and walking 11,000 nodes each time held the screen for
        0.1-0.4 s (benchmarks/scale.py).
        """
        first_fill = not self._files
        marks = {path: (r.state, r.reason) for path, r in records.items() if is_shown(r)}
        if marks == self._marks:
            return
        old = self._marks
        for path in old.keys() - marks.keys():
            gone = self._files.pop(path)
            parent = gone.parent
            gone.remove()
            self._prune(parent)
        for path in sorted(p for p, mark in marks.items() if old.get(p) != mark):
            state, reason = marks[path]
            node = self._files.get(path)
            if node is None:
                parent = self._folder(path.rpartition("/")[0])
                self._files[path] = self._insert(parent, Entry(path, False, state, reason))
            else:
                node.data = Entry(path, False, state, reason)
                node.refresh()
        self._marks = marks
        if first_fill and self._files:
            if len(self._files) <= EXPAND_ALL_BELOW:
                for child in self.root.children:
                    child.expand()
            self.cursor_line = 0

    def reveal(self, path: str) -> None:
        """Expand the folders of ``path`` and put the cursor on it (no Opened message)."""
        node = self._files.get(path)
        if node is None:
            return
        parent = node.parent
        while parent is not None and parent is not self.root:
            parent.expand()
            parent = parent.parent
        _ = self.last_line  # rebuild the lines so the node knows where it is
        self.move_cursor(node)
        # The folders opened for it may hold names wider than the pane: the scrollbar that
        # comes for them, once laid out, covers the bottom row, where the file may stand.
        self.call_after_refresh(self._keep_in_view, node)

    def _keep_in_view(self, node: TreeNode[Entry]) -> None:
        if self.cursor_node is node:
            self.scroll_to_node(node, animate=False)

    # -- building -----------------------------------------------------------------------------
    def _folder(self, folder: str) -> TreeNode[Entry]:
        node = self._dirs.get(folder)
        if node is None:
            parent = self._folder(folder.rpartition("/")[0])
            node = self._insert(parent, Entry(folder + "/", True))
            self._dirs[folder] = node
        return node

    def _insert(self, parent: TreeNode[Entry], entry: Entry) -> TreeNode[Entry]:
        # A folder's children are kept in sort order, so its place is found by halving: files
        # added beside thousands (a checkout) each walked the folder from its first child.
        key = _sort_key(entry)
        children = parent.children
        before = None
        if children and _node_key(children[-1]) > key:  # else it goes last: a sorted fill
            before = bisect_right(children, key, key=_node_key)
        # A file name is untrusted text: shown escaped, and never parsed as markup.
        name = Text(safe_name(entry.path.rstrip("/").rsplit("/", 1)[-1]))
        if entry.is_dir and parent is self.root:
            name = self._folder_label(entry.path.rstrip("/"), name)
        if entry.is_dir:
            return parent.add(name, entry, before=before)
        return parent.add_leaf(name, entry, before=before)

    def _folder_label(self, name: str, label: Text) -> Text:
        """A window folder's node (several folders open): its collection name, then where it
        is, so two folders named ``en`` and ``src`` still say which is which."""
        root = self.folder_root(name)
        if root is None:
            return label
        label.stylize("bold")
        return Text.assemble(label, ("  " + safe_name(short_location(root)), "dim"))

    def folder_root(self, name: str) -> Path | None:
        """The folder a top-level node stands for, when the window has several."""
        workspace = self._workspace
        if workspace is None or not workspace.several:
            return None
        try:
            return workspace.folder(name).settings.root
        except ExplorerError:
            return None

    def _prune(self, node: TreeNode[Entry] | None) -> None:
        """Remove folders left empty, from ``node`` upwards."""
        while node is not None and node is not self.root and not node.children:
            parent = node.parent
            if node.data is not None:
                self._dirs.pop(node.data.path.rstrip("/"), None)
            node.remove()
            node = parent

    # -- rendering ----------------------------------------------------------------------------
    def render_label(self, node: TreeNode[Entry], base_style: Style, style: Style) -> Text:
        text = super().render_label(node, base_style, style)
        icon = len(self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE)
        prefix, label = text.divide([icon]) if node.allow_expand else (Text(""), text)
        entry = node.data
        if entry is not None and not entry.is_dir:
            mark, component = _mark(entry)
            prefix = Text(mark + " ", self.get_component_rich_style(component))
        room = self.scrollable_content_region.width - self._indent(node) - prefix.cell_len
        return Text.assemble(prefix, _cut_middle(label, room) if room > 3 else label)

    def get_label_width(self, node: TreeNode[Entry]) -> int:
        """The cells of ``node``'s label as :meth:`render_label` draws it, counted without
        drawing it: Textual measures every line each time the tree is built, and drawing
        17,000 labels of a flat folder held the screen for about a second."""
        entry = node.data
        if entry is not None and not entry.is_dir:
            mark, _component = _mark(entry)
            prefix = cell_len(mark + " ")
        elif node.allow_expand:
            prefix = cell_len(self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE)
        else:
            prefix = 0
        label = str(node.label)
        room = self.scrollable_content_region.width - self._indent(node) - prefix
        if room > 3 and cell_len(label) > room:
            return prefix + cell_len(fit_name(label, room))
        return prefix + cell_len(label)

    def _indent(self, node: TreeNode[Entry]) -> int:
        """The cells of guides in front of ``node``'s label (the root is not shown)."""
        depth = 0
        parent = node.parent
        while parent is not None and parent is not self.root:
            depth += 1
            parent = parent.parent
        return depth * self.guide_depth

    @on(Tree.NodeSelected)
    def _selected(self, event: Tree.NodeSelected[Entry]) -> None:
        event.stop()
        entry = event.node.data
        if entry is not None and not entry.is_dir:
            self.post_message(OpenFile(entry.path))


def short_location(root: Path) -> str:
    """Where a folder is, briefly: its path from the home folder (``~/…``), else as is."""
    home = Path.home()
    try:
        return "~/" + root.relative_to(home).as_posix()
    except ValueError:
        return root.as_posix()


def _mark(entry: Entry) -> tuple[str, str]:
    """A file's mark in the tree and the component that styles it (``?`` for a state not
    known)."""
    unknown = ("?", "file-tree--skipped")
    return unknown if entry.state is None else MARKS.get(entry.state, unknown)


def _cut_middle(label: Text, width: int) -> Text:
    """``label`` in at most ``width`` cells, cut in the middle with an ellipsis (its styles
    kept)."""
    if label.cell_len <= width:
        return label
    shown = fit_name(label.plain, width)
    head, _sep, tail = shown.partition(ELLIPSIS)
    if not _sep:
        return label
    end = len(label.plain)
    parts = label.divide([len(head), end - len(tail)])
    return Text.assemble(parts[0], ELLIPSIS, parts[-1]) if len(parts) == 3 else label
