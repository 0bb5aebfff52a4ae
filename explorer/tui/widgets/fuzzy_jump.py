"""Quick open (ctrl+p): type a few letters of a file name or title, Enter opens the best match.

The same dialog lists the recent files (ctrl+y): in the order they were opened, most recent
first, until the user types.
"""

from __future__ import annotations

from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from explorer.core.retrieval.fuzzy import FileMatcher, PathMatch
from explorer.core.safe_text import LABEL_MAX, safe_spans
from explorer.tui.widgets.picker import PickerScreen, note_row

LIMIT = 50
MATCHED_AT_ONCE = 1_000
"""Files matched as each key is typed, in the key's own frame (under 10 ms here). A larger
tree is matched on a thread (3,607 files: about 30 ms a key), so the field shows every key at
once however fast they come and the list follows the last."""
MATCH_STYLE = "bold $text-accent underline"
TITLE_GAP = "  "


def match_prompt(match: PathMatch, width: int | None = None) -> Content:
    """A path and, beside it, the file's title (control characters escaped), the matched
    characters marked; the title is cut to keep the row within ``width`` cells."""
    folder_end = match.path.rfind("/") + 1
    spans = [(p, p + 1) for p in match.positions] + [(0, folder_end)]
    path, spans = safe_spans(match.path, spans, name=True)
    content = Content(path)
    for start, end in spans[:-1]:
        content = content.stylize(MATCH_STYLE, start, end)
    _start, folder_end = spans[-1]
    if folder_end:
        content = content.stylize_before("$text-muted", 0, folder_end)
    if _shows_title(match):
        title, title_spans = safe_spans(
            match.title, [(p, p + 1) for p in match.title_positions], limit=LABEL_MAX
        )
        shown = Content.styled(title, "italic $text-secondary")
        for start, end in title_spans:
            shown = shown.stylize(MATCH_STYLE, start, end)
        content = content + TITLE_GAP + shown
    if width is not None and content.cell_length > width:
        content = content.truncate(width, ellipsis=True)
    return content


def _shows_title(match: PathMatch) -> bool:
    """A title worth showing: one that says more than the file name already does."""
    if not match.title:
        return False
    stem = match.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return match.title.strip().lower() != stem.lower()


class FuzzyJump(PickerScreen[str]):
    """A quick-open dialog over the given paths (and their titles, ``{path: title}``);
    dismisses with the chosen path (or None)."""

    LIST_ID = "fuzzy-list"
    LIST_ROWS = 24

    def __init__(
        self,
        paths: list[str],
        titles: dict[str, str] | None = None,
        title: str = "Go to file",
        ordered: bool = False,
        **kwargs: Any,
    ) -> None:
        """``ordered``: with nothing typed, list ``paths`` in their order (else sorted)."""
        super().__init__(**kwargs)
        self.paths = paths
        self.title = title
        self.ordered = ordered
        titles = titles or {}
        self.titles = {path: titles.get(path, "") for path in paths}
        self.matcher = FileMatcher(self.titles)
        self.matches: list[PathMatch] = []
        self.listed_for: str | None = None
        """The text the list shows the matches of (None before the first)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="fuzzy-dialog"):
            yield Input(placeholder=f"{self.title}…", id="fuzzy-input")
            yield OptionList(id="fuzzy-list")

    def on_mount(self) -> None:
        self.query_one("#fuzzy-dialog").border_title = self.title
        self._refresh_matches("")
        self.query_one("#fuzzy-input", Input).focus()

    @on(Input.Changed, "#fuzzy-input")
    def _changed(self, event: Input.Changed) -> None:
        if len(self.matcher) <= MATCHED_AT_ONCE or not event.value.strip():
            self._refresh_matches(event.value)
        else:
            self._match_on_thread(event.value)

    @work(thread=True, exclusive=True, group="fuzzy-match", exit_on_error=False)
    def _match_on_thread(self, text: str) -> None:
        worker = get_current_worker()
        matches = self.matcher.match(text, LIMIT, cancelled=lambda: worker.is_cancelled)
        if matches is not None and not worker.is_cancelled:
            self.app.call_from_thread(self._show_if_current, text, matches)

    def _show_if_current(self, text: str, matches: list[PathMatch]) -> None:
        if self.is_attached and self.query_one("#fuzzy-input", Input).value == text:
            self._show(text, matches)

    def action_choose(self) -> None:
        typed = self.query_one("#fuzzy-input", Input).value
        if self.listed_for != typed:  # Enter before the list caught up: the typed text's best
            self._refresh_matches(typed)
        super().action_choose()

    def _refresh_matches(self, text: str) -> None:
        if self.ordered and not text.strip():
            matches = [PathMatch(p, 0.0, title=self.titles[p]) for p in self.paths[:LIMIT]]
        else:
            matches = self.matcher.match(text, LIMIT) or []
        self._show(text, matches)

    def _show(self, text: str, matches: list[PathMatch]) -> None:
        self.matches = matches
        self.listed_for = text
        options = self.query_one("#fuzzy-list", OptionList)
        width = options.scrollable_content_region.width - 1
        if width < 10:  # not laid out yet: the dialog's width from the stylesheet
            width = int(min(80, self.app.size.width * 0.9)) - 4
        if self.matches:
            options.set_options([Option(match_prompt(m, width), id=m.path) for m in self.matches])
            options.highlighted = 0
        else:
            options.set_options([note_row("No matching file")])
        self.query_one(
            "#fuzzy-dialog"
        ).border_subtitle = f"{len(self.matches)} of {len(self.paths)}"

    def chosen(self, index: int) -> str | None:
        return self.matches[index].path if 0 <= index < len(self.matches) else None
