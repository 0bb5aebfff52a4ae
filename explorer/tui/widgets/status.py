"""The status bar: the index's state, the models, the filter, and how the last search answered.

Three reactives hold everything it shows: :attr:`StatusBar.index_state` (an
:class:`~explorer.tui.index_state.IndexState`), :attr:`StatusBar.search` (the search panel's
last answer) and :attr:`StatusBar.filters`. The screen assigns them; the bar repaints.
"""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from explorer.core.live.events import ModelState
from explorer.core.models import SearchMode
from explorer.core.safe_text import safe_text
from explorer.tui.index_state import IndexState
from explorer.tui.later import Later
from explorer.tui.widgets.search_panel import SearchSummary

MODEL_STYLES = {
    ModelState.READY: "$text-success",
    ModelState.LOADING: "$text-warning",
    ModelState.FAILED: "$text-error",
    ModelState.UNLOADED: "$text-muted",
}
HINT_SECONDS = 4.0
"""How long a key's word (:meth:`StatusBar.say`) stays."""
MODEL_WORDS = {ModelState.UNLOADED: "waiting"}
"""How a model state reads where its value would not say it (no index open yet)."""


class StatusBar(Widget):
    """One line of state.

    It repaints without asking for a new layout (it is always one line high), so a status
    change per keystroke stays cheap.
    """

    index_state: reactive[IndexState] = reactive(IndexState, layout=False)
    search: reactive[SearchSummary | None] = reactive(None, layout=False)
    """The answer on show in the results (None: no search shown)."""
    filters: reactive[tuple[str, ...]] = reactive((), layout=False)
    """The active filters, as typed (``guides/``, ``tag:x``)."""
    show_timings: reactive[bool] = reactive(True, layout=False)
    """Show how long the search took (snapshot tests turn it off)."""
    hint: reactive[str] = reactive("", layout=False)
    """A key's word on why it did nothing (``back: nothing before this place``), shown first
    for a few seconds (:meth:`say`)."""

    def __init__(self, **kwargs: str | None) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._hint_timer: Later | None = None

    def say(self, text: str, seconds: float = HINT_SECONDS) -> None:
        """Show ``text`` first in the bar for ``seconds``."""
        self.hint = text
        if self._hint_timer is not None:
            self._hint_timer.stop()
        self._hint_timer = Later(self, seconds, self._forget_hint)

    def _forget_hint(self) -> None:
        self._hint_timer = None
        self.hint = ""

    # -- what tests and the screen read -------------------------------------------------------
    @property
    def index_text(self) -> str:
        return self.index_state.summary()

    @property
    def answered(self) -> SearchMode | None:
        """The mode that produced the results on screen."""
        return self.search.answered if self.search is not None else None

    @property
    def requested(self) -> SearchMode | None:
        """The mode the user asked for when the results on screen were searched."""
        return self.search.requested if self.search is not None else None

    # -- drawing ------------------------------------------------------------------------------
    def render(self) -> Content:
        state = self.index_state
        model = state.model
        parts: list[Content] = [
            *([Content.styled(safe_text(self.hint), "bold $text-warning")] if self.hint else []),
            Content.styled(safe_text(state.summary()), ""),
            Content.assemble(
                ("model ", "$text-muted"),
                (MODEL_WORDS.get(model, model.value), MODEL_STYLES[model]),
            ),
        ]
        if not state.vectors_available:
            parts.append(Content.styled("vectors unavailable", "bold $text-error"))
        search = self.search
        if search is not None:
            files = f"{search.files} result{'s' if search.files != 1 else ''}"
            mode = Content.assemble((files + " by ", ""), (search.answered, "bold $text-accent"))
            if search.requested != search.answered:
                mode += Content.styled(f" (asked {search.requested})", "$text-muted")
            if self.show_timings:
                mode += Content.styled(f" in {search.seconds * 1000:.0f} ms", "$text-muted")
            parts.append(mode)
        if self.filters:
            parts.append(
                Content.assemble(
                    ("filter ", "$text-muted"), (safe_text(" ".join(self.filters)), "bold")
                )
            )
        if search is not None and search.note:
            parts.append(Content.styled(safe_text(search.note), "$text-warning"))
        return _whole_parts(parts, self.size.width)


SEPARATOR = " │ "


def _whole_parts(parts: list[Content], width: int) -> Content:
    """The parts that fit ``width`` cells whole, in order (a part never shows cut: at 80
    columns the bar read ``│ 15``); all of them before the bar has a size."""
    shown: list[Content] = []
    used = 0
    for part in parts:
        needed = part.cell_length + (len(SEPARATOR) if shown else 0)
        if width and shown and used + needed > width:
            break
        shown.append(part)
        used += needed
    return Content(SEPARATOR).join(shown)
