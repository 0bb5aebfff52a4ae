"""The related sidebar: the files nearest in meaning to the open one, and why.

The list owns its loading worker (:meth:`RelatedList.load`): the screen says which file is
open and what the index can do; the list asks the core, and says why when it has nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from textual import events, on, work
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from explorer.core.errors import ExplorerError
from explorer.core.ingest.formats import format_for
from explorer.core.live.events import ModelState
from explorer.core.models import FileState
from explorer.core.safe_text import safe_label, safe_name, safe_text
from explorer.tui.index_state import IndexState

if TYPE_CHECKING:
    from explorer.core.retrieval.related import RelatedFile
    from explorer.core.store.index import Index

PASSAGE_CHARS = 140
SCORE_CELLS = 5
"""The width of the score in front of a path ("0.83 ")."""
DEFAULT_WIDTH = 34
"""The width rows are laid out for before the list has a size."""
RELATED_FILES = 8
PENDING_FILE = "Embedding this file first… its related files appear once its vectors are ready."
"""The related sidebar while the open file waits for its vectors and the live index embeds."""
PENDING_NEIGHBOURS = "No other file has vectors yet: embedding its likely neighbours next…"


def fit_name(name: str, width: int) -> str:
    """``name`` cut in the middle (``2026-03-…review.md``) to at most ``width`` cells."""
    if cell_len(name) <= width or width < 3:
        return name
    keep = width - 1
    head, tail = name[: (keep + 1) // 2], name[len(name) - keep // 2 :]
    while cell_len(head) + cell_len(tail) + 1 > width and (head or tail):
        head, tail = (head[:-1], tail) if len(head) >= len(tail) else (head, tail[1:])
    return f"{head}…{tail}"


def wrap_path(path: str, width: int) -> list[str]:
    """``path`` on lines of at most ``width`` cells, broken only after a ``/``; a folder or
    name too long for a line of its own is cut in the middle."""
    parts = [part + "/" for part in path.split("/")[:-1]] + [path.rsplit("/", 1)[-1]]
    lines: list[str] = []
    line = ""
    for part in parts:
        part = fit_name(part, width)
        if line and cell_len(line + part) > width:
            lines.append(line)
            line = ""
        line += part
    lines.append(line)
    return lines


def short_path(path: str, width: int) -> str:
    """``path`` in at most ``width`` cells, keeping the file name and as many of the folders
    next to it as fit (``…/guides/index.md``)."""
    if cell_len(path) <= width:
        return path
    parts = path.split("/")
    shown = parts[-1]
    for folder in reversed(parts[:-1]):
        if cell_len(f"…/{folder}/{shown}") > width:
            break
        shown = f"{folder}/{shown}"
    if cell_len(f"…/{shown}") <= width:
        return f"…/{shown}"
    return fit_name(shown, width)


def plain_passage(text: str, path: str) -> str:
    """A passage as plain words: Markdown (of a file whose text is Markdown, or written like
    it: a notebook, an HTML page's or a DOCX's text) is rendered to its text, so ``**bold**``,
    ``[links](url)`` and ``#`` marks do not show; code is kept as is."""
    if format_for(path).markdown_text:
        text = _markdown_text(text)
    return " ".join(text.split())


def _markdown_text(text: str) -> str:
    from markdown_it import MarkdownIt  # comes with Textual; imported on first use

    words: list[str] = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type == "inline":
            for child in token.children or []:
                if child.type in ("text", "code_inline"):
                    words.append(child.content)
                elif child.type in ("softbreak", "hardbreak"):
                    words.append(" ")
                elif child.type == "image":
                    words.append(child.content)  # its alt text
        elif token.type in ("fence", "code_block"):
            words.append(f" {token.content} ")
        elif token.block and token.nesting <= 0:
            words.append(" ")
    return "".join(words)


def related_prompt(item: RelatedFile, width: int = DEFAULT_WIDTH) -> Content:
    """The row of one :class:`~explorer.core.retrieval.related.RelatedFile`, laid out for ``width``
    cells: the path broken at ``/`` (never inside a name), the explaining passage's heading
    and line, and the passage as plain text."""
    passage = item.related_passage
    text = safe_text(plain_passage(passage.text, item.path))
    if len(text) > PASSAGE_CHARS:
        text = text[: PASSAGE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    path_lines = wrap_path(safe_name(item.path), max(8, width - SCORE_CELLS))
    path_style = "bold $text-primary"
    lines = [Content.assemble((f"{item.score:.2f} ", "$text-muted"), (path_lines[0], path_style))]
    lines.extend(
        Content.assemble((" " * SCORE_CELLS, ""), (line, path_style)) for line in path_lines[1:]
    )
    lines += [
        Content.assemble(
            ("  ", ""),
            (safe_label(passage.heading) or "(top)", "$text-secondary"),
            (f"  L{passage.start_line}", "$text-muted"),
        ),
        Content.assemble(("  ", ""), (text, "")),
    ]
    return Content("\n").join(lines)


class RelatedState(StrEnum):
    """What the related list shows."""

    IDLE = "idle"
    """No file open: a hint."""
    LOADING = "loading"
    READY = "ready"
    """The open file's neighbours."""
    EMPTY = "empty"
    """A file is open but has no neighbours to show; a message says why."""


class RelatedList(OptionList):
    """Neighbours of the open file; Enter opens one at its explaining passage."""

    BORDER_TITLE = "Related"
    DEFAULT_CSS = """
    RelatedList {
        /* The rows wrap: a scrollbar that took its cell from them only once it appeared would
           leave every row measured a cell too wide, and its last line cut off. */
        scrollbar-gutter: stable;
    }
    """

    @dataclass
    class Opened(Message):
        """Open ``path`` at lines ``start``–``end``."""

        related: RelatedList
        path: str
        start: int
        end: int

        @property
        def control(self) -> RelatedList:
            return self.related

    @dataclass
    class _Loaded(Message, bubble=False):
        """The worker's answer for ``path`` (``message`` explains an empty one)."""

        path: str
        related: list[RelatedFile]
        message: str

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source: str | None = None
        """The file whose neighbours are shown (or being loaded)."""
        self.items: list[RelatedFile] = []
        self.state = RelatedState.IDLE
        self._rows_width = 0
        """The width the rows on show were laid out for."""

    def on_mount(self) -> None:
        self.show_message("Open a file to see the files related to it.")

    # -- loading ------------------------------------------------------------------------------
    def load(
        self,
        index: Index | None,
        path: str,
        state: IndexState,
        embedding: bool,
        refresh: bool = False,
    ) -> None:
        """Find the neighbours of ``path``; ``embedding``: the live index is embedding, so a
        missing vector is coming. ``refresh``: the same file again, so what is shown stays
        until the new answer comes."""
        if index is None or not state.semantic_ready:
            note = (
                "Semantic search is unavailable, so related files are too."
                if state.query_model is ModelState.FAILED
                else "Loading the vector store…"
            )
            self.show_related(path, [], note)
            return
        if not (refresh and self.source == path):
            self.show_loading(path)
        self._find(index, path, embedding)

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
    def _find(self, index: Index, path: str, embedding: bool) -> None:
        from explorer.core.retrieval.related import FileNotIndexed, NoVectorYet, related_files

        worker = get_current_worker()
        items: list[RelatedFile] = []
        try:
            items = related_files(index, path, RELATED_FILES)
            message = ""
            if not items:
                message = PENDING_NEIGHBOURS if embedding else "No other file has vectors yet."
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
        except Exception as error:  # noqa: BLE001 - the sidebar says it, the UI stays up
            items, message = [], f"{type(error).__name__}: {error}"
        if not worker.is_cancelled:
            self.post_message(self._Loaded(path, items, message))

    @on(_Loaded)
    def _loaded(self, message: _Loaded) -> None:
        if message.path == self.source:
            self.show_related(message.path, message.related, message.message)

    # -- showing ------------------------------------------------------------------------------

    def show_loading(self, source: str) -> None:
        if self.source != source or self.state is not RelatedState.READY:
            self.source = source
            self.state = RelatedState.LOADING
            self._message("Finding related files…")
        self._show_source(source)

    def show_related(self, source: str, items: list[RelatedFile], message: str = "") -> None:
        """Show the neighbours of ``source`` (or ``message`` when there are none); a refresh
        of the neighbours on show stays where the user scrolled it."""
        refresh = self.source == source and self.state is RelatedState.READY
        self.source = source
        self.items = list(items)
        self._show_source(source)
        if not self.items:
            self.state = RelatedState.EMPTY
            self._message(message or "No related files.")
            return
        self.state = RelatedState.READY
        self._show_rows(keep_scroll=refresh)

    def _show_rows(self, keep_scroll: bool) -> None:
        """Lay the rows out for the list's width; ``keep_scroll``: at the same scroll offset
        (another file's neighbours start at the top)."""
        previous = self.highlighted_option.id if self.highlighted_option else None
        scroll_y = self.scroll_y if keep_scroll else 0
        width = self._row_width()
        self._rows_width = width
        self.set_options([Option(related_prompt(item, width), id=item.path) for item in self.items])
        self.scroll_to(y=scroll_y, animate=False, immediate=True)
        ids = [item.path for item in self.items]
        self.highlighted = ids.index(previous) if previous in ids else None

    def _row_width(self) -> int:
        """The cells a row may use (the scrollbar's gutter is kept out of them)."""
        width = self.scrollable_content_region.width
        return width if width > 10 else DEFAULT_WIDTH

    def _show_source(self, source: str) -> None:
        """Name the open file in the border, with its folder (``guides/index.md``)."""
        width = self.outer_size.width
        room = width - 6 if width > 16 else DEFAULT_WIDTH
        self.border_subtitle = Content(safe_name(short_path(source, room)))

    def on_resize(self, _event: events.Resize) -> None:
        if self.state is RelatedState.READY and self._row_width() != self._rows_width:
            self._show_rows(keep_scroll=True)
        if self.source is not None:
            self._show_source(self.source)

    def show_message(self, text: str) -> None:
        self.source = None
        self.state = RelatedState.IDLE
        self.border_subtitle = ""
        self._message(text)

    def _message(self, text: str) -> None:
        self.items = []
        self.set_options([Option(Content.styled(safe_text(text), "$text-muted"), disabled=True)])

    def on_focus(self) -> None:
        """Arriving from the keyboard, the first neighbour is ready for Enter."""
        if self.items and self.highlighted is None:
            self.highlighted = 0

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_index < len(self.items):
            item = self.items[event.option_index]
            passage = item.related_passage
            self.post_message(self.Opened(self, item.path, passage.start_line, passage.end_line))
