"""The links section of the sidebar: what the open file links to, and what links to it.

Separate from the neighbours by meaning (the related list): these are the references written in
the files, read from the index. The list owns its loading worker; Enter on a link opens its
target, on a backlink the linking file at the link's line. Each row is one line: the path is
shortened in the middle to the list's width.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual import events, work
from textual.content import Content
from textual.message import Message
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from explorer.core.errors import ExplorerError
from explorer.core.safe_text import safe_name
from explorer.tui.messages import OpenFile
from explorer.tui.text_fit import middle_path
from explorer.tui.widgets.picker import note_row
from explorer.tui.widgets.sidebar_panel import SidebarPanel

if TYPE_CHECKING:
    from explorer.core.retrieval.links import FileLinks
    from explorer.tui.workspace import Workspace


@dataclass(frozen=True)
class LinkRow:
    """One selectable row: the file Enter opens, and the line to show."""

    path: str
    line: int | None
    exists: bool


def _row_prompt(arrow: str, path: str, line: int, state: str, kind: str, width: int) -> Content:
    """One link on one line: the arrow, the path (shortened in the middle to fit ``width``
    cells with what follows it), the line, its kind, and whether it is missing or leads outside
    the root (``state``, a :class:`~explorer.core.retrieval.links.LinkState`)."""
    after = [(f"  L{line}", "$text-muted")]
    if kind != "link":
        after.append((f" {kind}", "$text-muted italic"))
    if state == "missing":
        after.append((" missing", "bold $text-error"))
    elif state == "outside-root":
        after.append((" outside the root", "italic $text-warning"))
    room = width - len(arrow) - 1 - sum(len(text) for text, _style in after)
    shown = middle_path(safe_name(path), max(8, room))
    style = {"resolved": "$text-primary", "outside-root": "$text-muted"}
    parts = [
        (f"{arrow} ", "$text-muted"),
        (shown, style.get(state, "$text-error strike")),
        *after,
    ]
    return Content.assemble(*parts)


ROWS_SHOWN = 100
"""Links listed at most each way (the headers give the counts): a manual's table of contents
links to 14,000 places, and listing them all held the screen for 0.75-1 s when it opened."""


def _header(text: str) -> Option:
    return Option(Content.styled(text, "bold $text-secondary"), disabled=True)


def _more(count: int, where: str) -> Option:
    """The row saying ``count`` links are not listed, and ``where`` they are."""
    return note_row(f"  … {count:,} more ({where})")


class LinksList(SidebarPanel):
    """Links and backlinks of the open file."""

    BORDER_TITLE = "Links"
    DEFAULT_CSS = """
    LinksList {
        /* Never shown (overflow-x is hidden), yet a stable gutter adds its height to an
           auto-height list. */
        scrollbar-size-horizontal: 0;
    }
    """

    class Loaded(Message, bubble=False):
        """The worker's answer (posted by the list to itself)."""

        def __init__(self, path: str, found: FileLinks | None, message: str) -> None:
            super().__init__()
            self.path = path
            self.found = found
            self.message = message

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.found: FileLinks | None = None
        """The :class:`~explorer.core.retrieval.links.FileLinks` shown, if any."""
        self.rows: list[LinkRow | None] = []
        """Per option: the row Enter opens, or None for a header or message."""
        self._rows_width = 0

    def on_mount(self) -> None:
        self.show_message("Open a file to see its links.")

    def row_target(self, index: int) -> OpenFile | None:
        row = self.rows[index] if 0 <= index < len(self.rows) else None
        if row is None:
            return None
        return OpenFile(row.path, row.line)

    # -- public API ---------------------------------------------------------------------------
    def load(self, workspace: Workspace | None, path: str) -> None:
        """Read the links of ``path`` from the index of its folder (in the window's
        ``workspace``, None while it opens) off the UI thread."""
        if workspace is None or not workspace.opened_for(path):
            self.source = path
            self._message("Opening the index…")
            return
        if self.source != path:
            self.found = None
            self.rows = []  # the rows left on show open nothing (see SidebarPanel.await_rows)
            self.await_rows(path, "Reading links…")
        else:
            self.name_source(path)
        self.call_after_refresh(self._load, workspace, path)  # the page being opened first

    def show_links(self, path: str, found: FileLinks) -> None:
        """Show ``found`` (a :class:`~explorer.core.retrieval.links.FileLinks`) for ``path``; links
        read again for the file on show stay where the user scrolled them, on the same row;
        another file's start on the first link."""
        again = self.found is not None and self.source == path
        scroll_y = self.scroll_y if again else 0
        previous = self.selected if again else None
        self.source = path
        self.found = found
        self.name_source(path)
        width = self.row_width()
        self._rows_width = width
        options: list[Option] = [_header(f"Links to ({len(found.outgoing)})")]
        rows: list[LinkRow | None] = [None]
        for link in found.outgoing[:ROWS_SHOWN]:
            kind = str(link.kind)
            prompt = _row_prompt("→", link.target, link.line, str(link.state), kind, width)
            options.append(Option(prompt))
            rows.append(LinkRow(link.target, None, link.exists))
        if len(found.outgoing) > ROWS_SHOWN:
            options.append(_more(len(found.outgoing) - ROWS_SHOWN, "f in the page lists all"))
            rows.append(None)
        options.append(_header(f"Linked from ({len(found.backlinks)})"))
        rows.append(None)
        for link in found.backlinks[:ROWS_SHOWN]:
            prompt = _row_prompt("←", link.source, link.line, "resolved", str(link.kind), width)
            options.append(Option(prompt))
            rows.append(LinkRow(link.source, link.line, True))
        if len(found.backlinks) > ROWS_SHOWN:
            options.append(_more(len(found.backlinks) - ROWS_SHOWN, "explorer links FILE"))
            rows.append(None)
        self.rows = rows
        self.set_options(options)
        self.scroll_to(y=scroll_y, animate=False, immediate=True)
        # A header is None too: only a link row is kept, else the first link (never a header,
        # where Enter opens nothing).
        kept = previous is not None and previous in rows
        self.highlighted = rows.index(previous) if kept else self.first_row()
        self.scroll_to(y=scroll_y, animate=False, immediate=True)

    def show_message(self, text: str) -> None:
        self.found = None
        super().show_message(text)

    @property
    def selected(self) -> LinkRow | None:
        """The highlighted link, if the cursor is on one."""
        if self.highlighted is None or self.highlighted >= len(self.rows):
            return None
        return self.rows[self.highlighted]

    # -- internals ----------------------------------------------------------------------------
    def _message(self, text: str) -> None:
        self.rows = [None]
        super()._message(text)

    def on_resize(self, _event: events.Resize) -> None:
        stale = self.row_width() != self._rows_width
        if self.found is not None and self.source is not None and stale:
            self.show_links(self.source, self.found)
        if self.source is not None:
            self.name_source(self.source)

    @work(thread=True, exclusive=True, group="links", exit_on_error=False)
    def _load(self, workspace: Workspace, path: str) -> None:
        from explorer.core.retrieval.links import LinksUnavailable

        worker = get_current_worker()
        try:
            found, message = workspace.links(path), ""
        except LinksUnavailable:
            found, message = None, "Links appear once the index has been updated."
        except ExplorerError as error:  # its folder closed meanwhile
            found, message = None, str(error)
        if not worker.is_cancelled:
            self.post_message(self.Loaded(path, found, message))

    def on_links_list_loaded(self, message: Loaded) -> None:
        if message.path != self.source:
            return  # another file was opened meanwhile
        if message.found is None:
            self._message(message.message)
        else:
            self.show_links(message.path, message.found)
