"""The search box: the query, the search mode, and a path filter.

Path filters come from ``path:PREFIX`` (or ``path:GLOB``) words typed in the query, and from
the filter field next to it (space- or comma-separated, a pattern with a space in double
quotes); ``tag:TAG`` and ``version:V`` words
filter by front matter. The box only reports what the user
asked for (:class:`SearchBox.Changed`); the search panel around it runs the search. Up in the
query field goes back through the queries asked before (:attr:`SearchBox.history`), Down comes
forward again, as in a shell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.geometry import Size
from textual.message import Message
from textual.reactive import Reactive, reactive
from textual.widgets import Input
from textual.widgets.input import Selection

from explorer.core.models import SearchMode
from explorer.core.retrieval.file_filter import FileFilter, parse_filter_words
from explorer.tui.history import QueryHistory

QUERY_PLACEHOLDER = "words · path:dir/ filters"
"""What the empty query field says (the box's title, "Search", names it)."""


def parse_query(text: str) -> tuple[str, tuple[str, ...]]:
    """Split typed text into the words to search for and the ``path:`` filters in it
    (``tag:`` and ``version:`` words are taken out too; :meth:`SearchBox.filter` has them)."""
    parsed = parse_filter_words(text)
    return parsed.query, parsed.filter.paths


_FIELD_PATTERN = re.compile(r'"([^"]*)"?|([^\s,"]+)')
"""A pattern of the filter field: bare, or in double quotes when it holds a space or a comma."""


def split_filter(text: str) -> tuple[str, ...]:
    """The patterns of the filter field (space- or comma-separated; ``"My Notes/"`` quoted)."""
    found = (quoted.strip() or bare for quoted, bare in _FIELD_PATTERN.findall(text))
    return tuple(pattern for pattern in found if pattern)


class OneLineInput(Input):
    """An input whose growing text never asks the screen for a new layout.

    Textual's input sets its virtual width to the text's width on every keystroke, and a
    changed virtual size is a layout change: the whole screen was laid out and repainted per key
    (about 10 ms of a keystroke at 120x40 on the nginx docs, profiled with cProfile). A one-line
    box of fixed size never changes the layout, so here the virtual size only repaints it.
    """

    virtual_size = Reactive(Size(0, 0), layout=False)


class SearchBox(Horizontal):
    """The query input and the filter field on one line; the mode in the bottom border."""

    BINDINGS = [
        Binding("up", "older_query", "History", tooltip="The query asked before (Down: after)"),
        Binding("ctrl+t", "screen.cycle_mode", "Mode", tooltip="Cycle: hybrid, semantic, keyword"),
        Binding("ctrl+f", "screen.focus_filter", "Filter", tooltip="Go to the path filter"),
        Binding(
            "escape",
            "to_query",
            "Query",
            show=False,
            tooltip="Stay: Esc leads here from every pane (from the filter: to the query)",
        ),
    ]

    mode: reactive[SearchMode] = reactive(SearchMode.HYBRID, init=False)

    @dataclass
    class Changed(Message):
        """The query, the filter or the mode changed."""

        search_box: SearchBox
        text: str
        """The query field exactly as typed."""
        query: str
        """The words to search for (``path:``, ``tag:`` and ``version:`` words removed)."""
        paths: tuple[str, ...]
        mode: SearchMode
        tags: tuple[str, ...] = ()
        versions: tuple[str, ...] = ()

        @property
        def filter(self) -> FileFilter:
            return FileFilter(self.paths, self.tags, self.versions)

        @property
        def control(self) -> SearchBox:
            return self.search_box

    @dataclass
    class Submitted(Message):
        """Enter in the query field."""

        search_box: SearchBox

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.history = QueryHistory()
        """The queries asked before (Up and Down in the query field)."""
        self._from_history: str | None = None
        """The text the history just put in the field (its Changed must not stop the walk)."""

    def compose(self) -> ComposeResult:
        # The box selects its text when Esc (or /) leads here, at once: Textual's own select on
        # focus comes a message later, after the first keys typed, and would select them.
        yield OneLineInput(placeholder=QUERY_PLACEHOLDER, id="query", select_on_focus=False)
        yield OneLineInput(placeholder="path filter", id="path-filter")

    def on_mount(self) -> None:
        self.border_subtitle = self.mode

    # -- public API ---------------------------------------------------------------------------
    @property
    def text(self) -> str:
        return self.query_one("#query", Input).value

    @property
    def paths(self) -> tuple[str, ...]:
        """Every active path filter (typed ``path:`` words and the filter field)."""
        return self.filter.paths

    @property
    def filter(self) -> FileFilter:
        """Every active filter: typed ``path:``, ``tag:``, ``version:`` words and the field."""
        typed = parse_filter_words(self.text).filter
        field = split_filter(self.query_one("#path-filter", Input).value)
        return FileFilter(tuple(dict.fromkeys((*typed.paths, *field))), typed.tags, typed.versions)

    def set_text(self, text: str, selected: bool = False) -> None:
        """Replace the query text (posts :class:`Changed`); ``selected``: select it, so that
        the next key typed replaces it (a restored query, as Esc leaves one)."""
        box = self.query_one("#query", Input)
        box.value = text
        box.cursor_position = len(text)
        if selected:
            box.select_all()

    def remember_query(self) -> None:
        """Keep the query as typed in the history (the user used its results)."""
        self.history.add(self.text)

    def action_older_query(self) -> None:
        """Up in the query field: the query asked before the one shown."""
        if self.screen.focused is not self.query_one("#query", Input):
            return
        older = self.history.older(self.text)
        if older is not None:
            self._show_from_history(older)

    def action_to_query(self) -> None:
        """Esc in the box: the query field, with the text typed before walking the history
        (Esc leads here from every pane, so pressing it again never leaves)."""
        if self.history.browsing:
            typed = self.history.newer()
            while self.history.browsing:
                typed = self.history.newer()
            if typed is not None:
                self._show_from_history(typed)
        self.focus_query()

    def newer_query(self) -> bool:
        """Down while walking the history: the next query (or the text typed before);
        False when not walking (Down then leaves for the results)."""
        newer = self.history.newer()
        if newer is None:
            return False
        self._show_from_history(newer)
        return True

    def _show_from_history(self, text: str) -> None:
        self._from_history = text
        self.set_text(text)

    @property
    def filter_text(self) -> str:
        """The path filter field, as typed."""
        return self.query_one("#path-filter", Input).value

    def set_filter(self, text: str) -> None:
        self.query_one("#path-filter", Input).value = text

    def focus_query(self) -> None:
        self._focus_now(self.query_one("#query", Input))

    def focus_filter(self) -> None:
        self._focus_now(self.query_one("#path-filter", Input))

    def _focus_now(self, box: Input) -> None:
        """Focus ``box`` before the next key is handled.

        ``Widget.focus`` defers the change with ``call_later``, so the keys that reached the app
        in the same read as ``/`` (a fast typist's first letters) went to the widget focused
        before and were lost. ``Screen.set_focus`` changes it at once.
        """
        if self.screen.focused is not box:
            self.screen.set_focus(box)
            box.selection = Selection(0, len(box.value))

    def cycle_mode(self) -> SearchMode:
        """Switch to the next mode (hybrid → semantic → keyword → hybrid)."""
        self.mode = self.mode.next()
        return self.mode

    def set_mode(self, mode: SearchMode | str) -> None:
        """Search in ``mode`` (a :class:`SearchMode` or its name; ValueError for another)."""
        self.mode = SearchMode(mode)

    # -- internals ----------------------------------------------------------------------------
    def watch_mode(self, mode: SearchMode) -> None:
        self.border_subtitle = mode
        self._post_changed()

    def _post_changed(self) -> None:
        query, _typed = parse_query(self.text)
        active = self.filter
        self.post_message(
            self.Changed(
                self, self.text, query, active.paths, self.mode, active.tags, active.versions
            )
        )

    @on(Input.Changed)
    def _input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if event.input.id == "query" and event.value != self._from_history:
            self.history.stop()  # typed: Up starts again from the newest query
        self._from_history = None
        self._post_changed()

    @on(Input.Submitted)
    def _input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Submitted(self))
