"""The file tree: every indexed file of the root, with a mark for its index state.

The tree is fed from the manifest (:meth:`FileTree.set_files`) and updated in place: nodes are
added, removed and re-marked, so expanded folders and the cursor stay where they were when
files change on disk. Binary files are left out (ignored files never reach the manifest).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.style import Style
from rich.text import Text
from textual import on
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from explorer.safe_text import safe_text

MARKS = {
    "fresh": ("●", "file-tree--fresh"),
    "pending": ("◌", "file-tree--pending"),
    "skipped": ("⊘", "file-tree--skipped"),
    "failed": ("✗", "file-tree--failed"),
}
"""The mark and the component class (styled in app.tcss) of each index state."""
EXPAND_ALL_BELOW = 80
"""With at most this many files, the top-level folders start expanded."""


@dataclass
class Entry:
    """What a node stands for: a file (with its state) or a folder."""

    path: str
    is_dir: bool
    state: str = ""
    reason: str = ""


def is_shown(record: Any) -> bool:
    """Whether a manifest row belongs in the tree (binary files do not)."""
    return not (record.state == "skipped" and record.reason.startswith("binary"))


def _sort_key(entry: Entry) -> tuple[bool, str]:
    name = entry.path.rstrip("/").rsplit("/", 1)[-1]
    return (not entry.is_dir, name.lower())


class FileTree(Tree[Entry]):
    """The indexed files of the root; Enter opens a file."""

    BORDER_TITLE = "Files"
    COMPONENT_CLASSES = {
        "file-tree--fresh",
        "file-tree--pending",
        "file-tree--skipped",
        "file-tree--failed",
    }

    @dataclass
    class Opened(Message):
        """Open the file ``path`` (root-relative)."""

        file_tree: FileTree
        path: str

        @property
        def control(self) -> FileTree:
            return self.file_tree

    def __init__(self, root_label: str, **kwargs: Any) -> None:
        super().__init__(root_label, Entry("", True), **kwargs)
        self.show_root = False
        self.guide_depth = 3
        self._files: dict[str, TreeNode[Entry]] = {}
        self._dirs: dict[str, TreeNode[Entry]] = {"": self.root}
        self.root.expand()

    # -- public API ---------------------------------------------------------------------------
    @property
    def paths(self) -> list[str]:
        """Every file shown, sorted."""
        return sorted(self._files)

    def state_of(self, path: str) -> str | None:
        node = self._files.get(path)
        return node.data.state if node is not None and node.data is not None else None

    def set_files(self, records: dict[str, Any]) -> None:
        """Show exactly the files of ``records`` ({path: FileRecord}), updating in place."""
        first_fill = not self._files
        shown = {path: record for path, record in records.items() if is_shown(record)}
        for path in [p for p in self._files if p not in shown]:
            node = self._files.pop(path)
            parent = node.parent
            node.remove()
            self._prune(parent)
        for path in sorted(shown):
            record = shown[path]
            node = self._files.get(path)
            if node is None:
                parent = self._folder(path.rpartition("/")[0])
                entry = Entry(path, False, record.state, record.reason)
                self._files[path] = self._insert(parent, entry)
            elif node.data is not None and (
                node.data.state != record.state or node.data.reason != record.reason
            ):
                node.data = Entry(path, False, record.state, record.reason)
                node.refresh()
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

    # -- building -----------------------------------------------------------------------------
    def _folder(self, folder: str) -> TreeNode[Entry]:
        node = self._dirs.get(folder)
        if node is None:
            parent = self._folder(folder.rpartition("/")[0])
            node = self._insert(parent, Entry(folder + "/", True))
            self._dirs[folder] = node
        return node

    def _insert(self, parent: TreeNode[Entry], entry: Entry) -> TreeNode[Entry]:
        key = _sort_key(entry)
        before = None
        for index, child in enumerate(parent.children):
            if child.data is not None and _sort_key(child.data) > key:
                before = index
                break
        # A file name is untrusted text: shown escaped, and never parsed as markup.
        name = Text(safe_text(entry.path.rstrip("/").rsplit("/", 1)[-1]))
        if entry.is_dir:
            return parent.add(name, entry, before=before)
        return parent.add_leaf(name, entry, before=before)

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
        entry = node.data
        if entry is None or entry.is_dir:
            return text
        mark, component = MARKS.get(entry.state, ("?", "file-tree--skipped"))
        return Text.assemble((mark + " ", self.get_component_rich_style(component)), text)

    @on(Tree.NodeSelected)
    def _selected(self, event: Tree.NodeSelected) -> None:
        event.stop()
        entry = event.node.data
        if entry is not None and not entry.is_dir:
            self.post_message(self.Opened(self, entry.path))
