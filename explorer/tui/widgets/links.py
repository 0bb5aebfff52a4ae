"""The links section of the sidebar: what the open file links to, and what links to it.

Separate from the neighbours by meaning (the related list): these are the references written in
the files, read from the index. The list owns its loading worker; Enter on a link opens its
target, on a backlink the linking file at the link's line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from explorer.core.safe_text import safe_name

if TYPE_CHECKING:
    from explorer.core.retrieval.links import FileLinks
    from explorer.core.store.index import Index


@dataclass(frozen=True)
class LinkRow:
    """One selectable row: the file Enter opens, and the line to show."""

    path: str
    line: int | None
    exists: bool


def _row_prompt(arrow: str, path: str, line: int, state: str, kind: str) -> Content:
    """One link: where it leads, its line, its kind, and whether it is missing or leads
    outside the root (``state``, a :class:`~explorer.core.retrieval.links.LinkState`)."""
    style = {"resolved": "$text-primary", "outside-root": "$text-muted"}
    parts = [
        (f"{arrow} ", "$text-muted"),
        (safe_name(path), style.get(state, "$text-error strike")),
        (f"  L{line}", "$text-muted"),
    ]
    if kind != "link":
        parts.append((f" {kind}", "$text-muted italic"))
    if state == "missing":
        parts.append((" missing", "bold $text-error"))
    elif state == "outside-root":
        parts.append((" outside the root", "italic $text-warning"))
    return Content.assemble(*parts)


def _header(text: str) -> Option:
    return Option(Content.styled(text, "bold $text-secondary"), disabled=True)


class LinksList(OptionList):
    """Links and backlinks of the open file."""

    BORDER_TITLE = "Links"
    DEFAULT_CSS = """
    LinksList {
        /* Rows wrap: they are measured for a width the scrollbar never takes back later. */
        scrollbar-gutter: stable;
        /* Never shown (overflow-x is hidden), yet a stable gutter adds its height to an
           auto-height list. */
        scrollbar-size-horizontal: 0;
    }
    """

    @dataclass
    class Opened(Message):
        """Open ``path`` (at ``line`` when it is a backlink's source)."""

        links: LinksList
        path: str
        line: int | None

        @property
        def control(self) -> LinksList:
            return self.links

    class Loaded(Message, bubble=False):
        """The worker's answer (posted by the list to itself)."""

        def __init__(self, path: str, found: FileLinks | None, message: str) -> None:
            super().__init__()
            self.path = path
            self.found = found
            self.message = message

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source: str | None = None
        """The file whose links are shown (or being loaded)."""
        self.found: FileLinks | None = None
        """The :class:`~explorer.core.retrieval.links.FileLinks` shown, if any."""
        self.rows: list[LinkRow | None] = []
        """Per option: the row Enter opens, or None for a header or message."""

    def on_mount(self) -> None:
        self.show_message("Open a file to see its links.")

    # -- public API ---------------------------------------------------------------------------
    def load(self, index: Index | None, path: str) -> None:
        """Read the links of ``path`` from ``index`` (None while it opens) off the UI thread."""
        if index is None:
            self.source = path
            self._message("Opening the index…")
            return
        if self.source != path:
            self.source = path
            self.found = None
            self._message("Reading links…")
        self.border_subtitle = Content(safe_name(path.rsplit("/", 1)[-1]))  # text, not markup
        self._load(index, path)

    def show_links(self, path: str, found: FileLinks) -> None:
        """Show ``found`` (a :class:`~explorer.core.retrieval.links.FileLinks`) for ``path``; links
        read
        again for the file on show stay where the user scrolled them."""
        scroll_y = self.scroll_y if self.found is not None and self.source == path else 0
        self.source = path
        self.found = found
        self.border_subtitle = Content(safe_name(path.rsplit("/", 1)[-1]))  # text, not markup
        previous = self.rows[self.highlighted] if self.highlighted is not None else None
        options: list[Option] = [_header(f"Links to ({len(found.outgoing)})")]
        rows: list[LinkRow | None] = [None]
        for link in found.outgoing:
            prompt = _row_prompt("→", link.target, link.line, str(link.state), str(link.kind))
            options.append(Option(prompt))
            rows.append(LinkRow(link.target, None, link.exists))
        options.append(_header(f"Linked from ({len(found.backlinks)})"))
        rows.append(None)
        for link in found.backlinks:
            prompt = _row_prompt("←", link.source, link.line, "resolved", str(link.kind))
            options.append(Option(prompt))
            rows.append(LinkRow(link.source, link.line, True))
        self.rows = rows
        self.set_options(options)
        self.scroll_to(y=scroll_y, animate=False, immediate=True)
        self.highlighted = rows.index(previous) if previous in rows else None

    def show_message(self, text: str) -> None:
        self.source = None
        self.found = None
        self.border_subtitle = ""
        self._message(text)

    @property
    def selected(self) -> LinkRow | None:
        """The highlighted link, if the cursor is on one."""
        if self.highlighted is None or self.highlighted >= len(self.rows):
            return None
        return self.rows[self.highlighted]

    # -- internals ----------------------------------------------------------------------------
    def _message(self, text: str) -> None:
        self.rows = [None]
        self.set_options([Option(Content.styled(text, "$text-muted"), disabled=True)])

    @work(thread=True, exclusive=True, group="links", exit_on_error=False)
    def _load(self, index: Index, path: str) -> None:
        from explorer.core.retrieval.links import LinksUnavailable, file_links

        worker = get_current_worker()
        try:
            found, message = file_links(index, path), ""
        except LinksUnavailable:
            found, message = None, "Links appear once the index has been updated."
        except Exception as error:  # noqa: BLE001 - the list says it, the UI stays up
            found, message = None, f"{type(error).__name__}: {error}"
        if not worker.is_cancelled:
            self.post_message(self.Loaded(path, found, message))

    def on_links_list_loaded(self, message: Loaded) -> None:
        if message.path != self.source:
            return  # another file was opened meanwhile
        if message.found is None:
            self._message(message.message)
        else:
            self.show_links(message.path, message.found)

    def on_focus(self) -> None:
        """Arriving from the keyboard, the first link is ready for Enter."""
        if self.highlighted is None:
            first = next((i for i, row in enumerate(self.rows) if row is not None), None)
            if first is not None:
                self.highlighted = first

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        row = self.rows[event.option_index] if event.option_index < len(self.rows) else None
        if row is not None:
            self.post_message(self.Opened(self, row.path, row.line))
