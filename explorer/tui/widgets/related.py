"""The related sidebar: the files nearest in meaning to the open one, and why.

The list owns its loading worker (:meth:`RelatedList.load`): the screen says which file is
open and what the index can do; the list asks the core, and says why when it has nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from textual import events, on, work
from textual.content import Content
from textual.message import Message
from textual.widgets.option_list import Option
from textual.worker import Worker, get_current_worker

from explorer.core.errors import ExplorerError
from explorer.core.live.events import ModelState
from explorer.core.models import FileState
from explorer.core.safe_text import safe_label, safe_name, safe_text
from explorer.tui.index_state import IndexState
from explorer.tui.messages import OpenFile
from explorer.tui.text_fit import ELLIPSIS, distinct_paths, fit_name, middle_path, plain_passage
from explorer.tui.widgets.results import INDENT, snippet_lines
from explorer.tui.widgets.sidebar_panel import DEFAULT_WIDTH, SidebarPanel

if TYPE_CHECKING:
    from explorer.core.retrieval.related import RelatedFile
    from explorer.tui.workspace import Workspace

SCORE_CELLS = 5
"""The width of the score in front of a path ("0.83 ")."""
PASSAGE_LINES = 2
"""Lines of the explaining passage under a related file's path."""
RELATED_FILES = 8
PENDING_FILE = "Embedding this file first… its related files appear once its vectors are ready."
"""The related sidebar while the open file waits for its vectors and the live index embeds."""
PENDING_NEIGHBOURS = "No other file has vectors yet: embedding its likely neighbours next…"
"""The related sidebar while no neighbour was found and the live index still embeds."""
NO_NEIGHBOURS = "No related files found."
"""The related sidebar when no neighbour was found and none is coming (the folder is embedded,
or its index cannot embed now)."""


def related_prompt(
    item: RelatedFile, width: int = DEFAULT_WIDTH, shown: str | None = None
) -> Content:
    """The row of one :class:`~explorer.core.retrieval.related.RelatedFile`, laid out for ``width``
    cells and compact (three lines): the score and the path, shortened in the middle on one
    line; then why it is there (``linked · same section · 3 shared passages``: a file the
    open one links to already starts with ``linked``); then the explaining passage's heading
    and text as plain words.

    When the shortened path would keep none of the file's folders (a long name: two versions of
    one page, ``nic/…`` and ``nic/lts/…``, would read alike), the folder takes the first line and
    the name the second, and the passage one line. ``shown``: the path as the list shortens it
    (:func:`~explorer.tui.text_fit.distinct_paths`, so that two rows never read alike)."""
    passage = item.related_passage
    room = related_path_width(width)
    full = safe_name(item.path)
    path = shown if shown is not None else middle_path(full, room)
    folder, _slash, name = full.rpartition("/")
    names = [path]
    if folder and "/" not in path.removeprefix(f"{ELLIPSIS}/"):
        names = [middle_path(f"{folder}/", room), INDENT + fit_name(name, width - len(INDENT))]
    heading = safe_label(passage.heading)
    text = safe_text(plain_passage(passage.text, item.path))
    words = f"{heading} · {text}" if heading else text
    lines = [
        Content.assemble((f"{item.score:.2f} ", "$text-muted"), (names[0], "bold $text-primary"))
    ]
    lines.extend(Content.styled(line, "bold $text-primary") for line in names[1:])
    most = PASSAGE_LINES + 1 - len(names)
    why = safe_text(item.reasons.text())
    if why and most >= 2:
        lines.append(Content.styled(INDENT + fit_name(why, width - len(INDENT)), "$text-muted"))
        most -= 1
        why = ""
    start = len(INDENT)
    if why:  # no room for a line of its own: before the passage
        words = f"{why} · {words}"
        start += len(why) + 3
    body = snippet_lines(words, [], max(8, width - len(INDENT)), most=most)
    if heading and body:
        body[0] = body[0].stylize("$text-secondary", start, start + len(heading))
    lines.extend(body)
    return Content("\n").join(lines)


def related_path_width(width: int) -> int:
    """The cells a related row's path may take on its first line, after the score."""
    return max(8, width - SCORE_CELLS)


class RelatedState(StrEnum):
    """What the related list shows."""

    IDLE = "idle"
    """No file open: a hint."""
    LOADING = "loading"
    READY = "ready"
    """The open file's neighbours."""
    EMPTY = "empty"
    """A file is open but has no neighbours to show; a message says why."""


class RelatedList(SidebarPanel):
    """Neighbours of the open file; Enter opens one at its explaining passage."""

    BORDER_TITLE = "Related"

    @dataclass
    class _Loaded(Message, bubble=False):
        """The worker's answer for ``path`` (``message`` explains an empty one)."""

        path: str
        related: list[RelatedFile]
        message: str

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.items: list[RelatedFile] = []
        self.state = RelatedState.IDLE
        self._rows_width = 0
        """The width the rows on show were laid out for."""

    def on_mount(self) -> None:
        self.show_message("Open a file to see the files related to it.")

    def row_target(self, index: int) -> OpenFile | None:
        if self.state is not RelatedState.READY or not 0 <= index < len(self.items):
            return None
        item = self.items[index]
        passage = item.related_passage
        span = (passage.start_line, passage.end_line)
        return OpenFile(item.path, passage.start_line, (span,))

    # -- loading ------------------------------------------------------------------------------
    def load(
        self,
        workspace: Workspace | None,
        path: str,
        state: IndexState,
        embedding: bool,
        refresh: bool = False,
    ) -> None:
        """Find the neighbours of ``path``; ``embedding``: the live index is embedding, so a
        missing vector is coming. ``refresh``: the same file again, so what is shown stays
        until the new answer comes."""
        if workspace is None or not workspace.opened_for(path) or not state.semantic_ready:
            note = (
                "Semantic search is unavailable, so related files are too."
                if state.query_model is ModelState.FAILED
                else "Loading the vector store…"
            )
            self.show_related(path, [], note)
            return
        if not (refresh and self.source == path):
            self.show_loading(path)
        # After the next frame: the search holds the interpreter for tens of milliseconds,
        # and the page being opened beside it paints first.
        self.call_after_refresh(self._find, workspace, path, embedding)

    def needs_refresh(self, embedded: set[str] | frozenset[str]) -> bool:
        """Whether files newly embedded (``embedded``) may change the neighbours on show."""
        return (
            self.source in embedded
            or self.state is not RelatedState.READY
            or any(item.path in embedded for item in self.items)
            or len(self.items) < RELATED_FILES
        )

    def shows_any_of(self, paths: Callable[[str], bool]) -> bool:
        """Whether any neighbour on show is one ``paths`` accepts."""
        return any(paths(item.path) for item in self.items)

    @work(thread=True, exclusive=True, group="related", exit_on_error=False)
    def _find(self, workspace: Workspace, path: str, embedding: bool) -> None:
        from explorer.core.retrieval.related import FileNotIndexed, NoVectorYet

        worker = get_current_worker()
        items: list[RelatedFile] = []
        try:
            items = workspace.related(path, RELATED_FILES)
            message = ""
            if not items:
                message = PENDING_NEIGHBOURS if embedding else NO_NEIGHBOURS
        except FileNotIndexed:
            message = "This file is not in the index."
        except NoVectorYet as error:
            if error.state is FileState.PENDING:
                message = (
                    PENDING_FILE
                    if embedding
                    else "No vectors yet for this file: embedding is in progress."
                )
            else:
                why = f"{error.state}: {error.reason}" if error.reason else error.state
                message = f"No vectors for this file ({why})."
        except ExplorerError as error:
            message = str(error)
        if not worker.is_cancelled:
            self.post_message(self._Loaded(path, items, message))

    @on(_Loaded)
    def _loaded(self, message: _Loaded) -> None:
        if message.path == self.source:
            self.show_related(message.path, message.related, message.message)

    def show_failure(self, worker: Worker[Any], text: str) -> None:
        if worker.group == "related" and self.state is RelatedState.LOADING:
            self.state = RelatedState.EMPTY
            self.items = []
            super().show_failure(worker, text)

    # -- showing ------------------------------------------------------------------------------
    def show_loading(self, source: str) -> None:
        """Another file's neighbours are being found (what is on show stays a moment, inert:
        :meth:`~SidebarPanel.await_rows`); the same file's stay until the answer."""
        if self.source != source or self.state is not RelatedState.READY:
            self.state = RelatedState.LOADING
            self.items = []
            self.await_rows(source, "Finding related files…")
        else:
            self.name_source(source)

    def show_related(self, source: str, items: list[RelatedFile], message: str = "") -> None:
        """Show the neighbours of ``source`` (or ``message`` when there are none); a refresh
        of the neighbours on show stays where the user scrolled it and on the same row;
        another file's neighbours start at the top, the cursor on the first."""
        refresh = self.source == source and self.state is RelatedState.READY
        self.source = source
        self.items = list(items)
        self.name_source(source)
        if not self.items:
            self.state = RelatedState.EMPTY
            self._message(message or "No related files.")
            return
        self.state = RelatedState.READY
        self._show_rows(keep_scroll=refresh)

    def _show_rows(self, keep_scroll: bool) -> None:
        """Lay the rows out for the list's width; ``keep_scroll``: at the same scroll offset
        and row (another file's neighbours start at the top, on the first row)."""
        option = self.highlighted_option
        previous = option.id if keep_scroll and option is not None else None
        scroll_y = self.scroll_y if keep_scroll else 0
        width = self.row_width()
        self._rows_width = width
        shown = distinct_paths(
            [safe_name(item.path) for item in self.items], related_path_width(width)
        )
        self.set_options(
            [
                Option(related_prompt(item, width, path), id=item.path)
                for item, path in zip(self.items, shown, strict=True)
            ]
        )
        self.scroll_to(y=scroll_y, animate=False, immediate=True)
        self.place_cursor(previous)
        if keep_scroll:
            self.scroll_to(y=scroll_y, animate=False, immediate=True)

    def on_resize(self, _event: events.Resize) -> None:
        if self.state is RelatedState.READY and self.row_width() != self._rows_width:
            self._show_rows(keep_scroll=True)
        if self.source is not None:
            self.name_source(self.source)

    def show_message(self, text: str) -> None:
        self.state = RelatedState.IDLE
        self.items = []
        super().show_message(text)
