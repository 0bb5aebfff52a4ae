"""The status bar: index progress, model state, counts, filter, and the mode that answered."""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.widget import Widget

from explorer.safe_text import safe_text


class StatusBar(Widget):
    """One line of state; the screen feeds it through the ``set_*`` methods.

    A plain widget that repaints itself without asking for a new layout (it is always one line
    high), so a status change per keystroke stays cheap.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.index_text = "opening index…"
        self.model_state = "waiting"
        """``waiting``, ``loading``, ``ready``, ``failed`` (semantic search for queries)."""
        self.model_note = ""
        self.vectors_available = True
        self.search_text = ""
        self.answered: str | None = None
        """The mode that produced the results on screen."""
        self.requested: str | None = None
        self.filters: tuple[str, ...] = ()
        self.note = ""
        self.show_timings = True
        self.seconds: float | None = None

    # -- setters ------------------------------------------------------------------------------
    def set_index(self, text: str) -> None:
        self.index_text = text
        self._redraw()

    def set_model(self, state: str, note: str = "") -> None:
        self.model_state = state
        self.model_note = note
        self._redraw()

    def set_vectors(self, available: bool) -> None:
        self.vectors_available = available
        self._redraw()

    def set_search(
        self,
        files: int,
        requested: str,
        answered: str,
        seconds: float | None = None,
        note: str = "",
    ) -> None:
        self.requested = requested
        self.answered = answered
        self.seconds = seconds
        self.note = note
        self.search_text = f"{files} result{'s' if files != 1 else ''}"
        self._redraw()

    def clear_search(self, note: str = "") -> None:
        self.requested = None
        self.answered = None
        self.seconds = None
        self.note = note
        self.search_text = ""
        self._redraw()

    def set_filters(self, paths: tuple[str, ...]) -> None:
        # Called on every keystroke: a repaint here would take the frame before the results
        # arrive and put them off to the next one (up to 1/60 s later).
        if paths == self.filters:
            return
        self.filters = paths
        self._redraw()

    # -- drawing ------------------------------------------------------------------------------
    def _redraw(self) -> None:
        self.refresh()

    def render(self) -> Content:
        return self.render_status()

    def render_status(self) -> Content:
        parts: list[Content] = [Content.styled(safe_text(self.index_text), "")]
        model_styles = {
            "ready": "$text-success",
            "loading": "$text-warning",
            "failed": "$text-error",
            "waiting": "$text-muted",
        }
        model = Content.assemble(
            ("model ", "$text-muted"),
            (self.model_state, model_styles.get(self.model_state, "")),
        )
        parts.append(model)
        if not self.vectors_available:
            parts.append(Content.styled("vectors unavailable", "bold $text-error"))
        if self.answered is not None:
            mode = Content.assemble(
                (self.search_text + " by ", ""),
                (self.answered, "bold $text-accent"),
            )
            if self.requested and self.requested != self.answered:
                mode += Content.styled(f" (asked {self.requested})", "$text-muted")
            if self.show_timings and self.seconds is not None:
                mode += Content.styled(f" in {self.seconds * 1000:.0f} ms", "$text-muted")
            parts.append(mode)
        if self.filters:
            parts.append(
                Content.assemble(
                    ("filter ", "$text-muted"), (safe_text(" ".join(self.filters)), "bold")
                )
            )
        if self.note:
            parts.append(Content.styled(safe_text(self.note), "$text-warning"))
        return Content(" │ ").join(parts)
