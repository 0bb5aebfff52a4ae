"""The results list: one row per file, with its best passages and the matched words marked.

Results change on every keystroke, so the list is built for speed: the rows are laid out (cut
and wrapped to the list's width) by the search worker, off the UI thread, and the widget only
draws the lines on screen (a line-API scroll view, no widget per row). A full page ends with a
"more" row: moving past the last result (or Enter on that row) asks for the next page. The
border says what a score means in the mode that answered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from explorer.core.models import SearchMode
from explorer.core.safe_text import safe_label, safe_name, safe_spans, safe_text
from explorer.tui.messages import OpenFile
from explorer.tui.text_fit import fit_label, middle_path

if TYPE_CHECKING:
    from explorer.core.retrieval.search import FileHit, Passage, SearchResponse

SNIPPET_LINES = 2
"""Most lines of snippet under a file."""
MATCH_STYLE = "bold $text-accent"
PATH_STYLE = "bold $text-primary"
MUTED_STYLE = "$text-muted"
HEADING_STYLE = "$text-secondary"
INDENT = "  "
MORE_ROW = "▾ more results (↓ or Enter)"
SCORE_MEANING = {
    SearchMode.HYBRID: "score 0.5 = this query's average match",
    SearchMode.SEMANTIC: "score = closeness in meaning (cosine)",
    SearchMode.KEYWORD: "score = words matched (BM25) ÷ the best",
}
"""What a score means in each mode, in the results' border (the README's score table says it
in full; the tooltip says a little more)."""
SCORE_DETAIL = {
    SearchMode.HYBRID: (
        "Hybrid: keyword and meaning ranks fused and calibrated for this query: 0.5 is an "
        "average candidate, 0.9 about two standard deviations above it. Scores compare within "
        "one query, not across modes."
    ),
    SearchMode.SEMANTIC: (
        "Semantic: the passage's cosine similarity to the query, blended with its whole file's "
        "(0-1). Related texts often score 0.3-0.6."
    ),
    SearchMode.KEYWORD: (
        "Keyword: the passage's BM25 (and its file's) divided by the best of this query, so the "
        "top result scores near 1."
    ),
}


def short_heading(heading: str, title: str) -> str:
    """The heading path without the document title in front (the path already says it)."""
    if title and heading.startswith(title + " > "):
        return heading[len(title) + 3 :]
    return heading


def _place(passage: Passage) -> str:
    """Where a passage is: ``L12``, or ``p. 3 L120`` in a paged document (a PDF)."""
    line = f"L{passage.start_line}"
    return line if passage.page is None else f"p. {passage.page} {line}"


def hit_lines(hit: FileHit, width: int) -> list[Content]:
    """The lines of one :class:`~explorer.core.retrieval.search.FileHit`, cut to ``width`` cells.

    Pure and thread-safe: the search worker calls it. Score and path, followed on the same
    line when they fit there (else on the next) by the best passage's heading and line and the
    other passages' lines; then its snippet on up to two lines. Names and passages are shown
    with their control characters escaped.
    """
    width = max(20, width)
    score = f"{hit.score:.2f} "
    # A long path gives up its middle folders, never its file's name (a vault's notes sit
    # four folders deep: cut at the end, every result read "04. Organized Knowledge - Old…").
    shown = middle_path(safe_name(hit.path), width - len(score))
    path = Content.assemble((score, MUTED_STYLE), (shown, PATH_STYLE))
    if not hit.passages:
        return [_cut(path, width)]
    best = hit.passages[0]
    others = ", ".join(_place(p) for p in hit.passages[1:])
    also = f"  (also {others})" if others else ""
    place = f"  {_place(best)}"
    if best.entry:  # a manual's entry ends the label: the sections above give way first
        top = best.heading == hit.title  # the page's own title: the path says it
        section = "" if top else safe_label(short_heading(best.heading, hit.title))
        room = width - len(INDENT) - len(place)
        label = fit_label(section, safe_label(best.entry), room)
    else:
        label = safe_label(short_heading(best.heading, hit.title)) or "(top)"
    heading = Content.assemble((label, HEADING_STYLE), (place, MUTED_STYLE))
    one_line = path.cell_length + len(INDENT) + heading.cell_length <= width
    before = path.cell_length if one_line else 0
    if best.entry and before + len(INDENT) + heading.cell_length + len(also) > width:
        also = ""  # the entry and its line whole, rather than the other passages' lines cut
    where = heading + Content.styled(also, MUTED_STYLE)
    if one_line:
        lines = [_cut(path + INDENT + where, width)]
    else:
        lines = [_cut(path, width), _cut(INDENT + where, width)]
    snippet, highlights = safe_spans(best.snippet, best.highlights)
    lines.extend(snippet_lines(snippet, highlights, width - len(INDENT)))
    return lines


def snippet_lines(
    snippet: str, highlights: list[tuple[int, int]], width: int, most: int = SNIPPET_LINES
) -> list[Content]:
    """``snippet`` wrapped at spaces to ``most`` lines of ``width`` cells, matches marked."""
    breaks: list[tuple[int, int]] = []
    start = 0
    while start < len(snippet) and len(breaks) < most:
        end = _fit(snippet, start, width)
        if end < len(snippet) and len(breaks) == most - 1:
            end = _fit(snippet, start, width - 1)
            breaks.append((start, end))
            break
        breaks.append((start, end))
        start = end
        while start < len(snippet) and snippet[start] == " ":
            start += 1
    lines = []
    for number, (begin, end) in enumerate(breaks):
        text = snippet[begin:end].rstrip()
        more = number == len(breaks) - 1 and end < len(snippet)
        content = Content(INDENT + text + ("…" if more else ""))
        for hit_start, hit_end in highlights:
            left, right = max(hit_start, begin), min(hit_end, begin + len(text))
            if left < right:
                offset = len(INDENT) - begin
                content = content.stylize(MATCH_STYLE, left + offset, right + offset)
        lines.append(content)
    return lines


def _fit(text: str, start: int, width: int) -> int:
    """The end of the longest piece of ``text`` from ``start`` that fits ``width`` cells,
    broken after a space when there is one."""
    end, used = start, 0
    while end < len(text):
        used += cell_len(text[end])
        if used > width:
            break
        end += 1
    if end < len(text):
        space = text.rfind(" ", start, end + 1)
        if space > start:
            return space
    return max(end, start + 1)


def _cut(content: Content, width: int) -> Content:
    if content.cell_length <= width:
        return content
    return content.truncate(width, ellipsis=True)


class ResultsList(ScrollView, can_focus=True):
    """Search results; Up/Down move, Enter (or a click) opens the file at its best passage."""

    BORDER_TITLE = "Results"
    BINDINGS = [
        Binding("enter", "open", "Open", tooltip="Open the result at its best passage"),
        Binding("up,k", "move(-1)", "Up", show=False, tooltip="Previous result"),
        Binding(
            "down,j", "move(1)", "Down", show=False, tooltip="Next result (past the last: more)"
        ),
        Binding("pageup", "move(-5)", "Page up", show=False, tooltip="Five results up"),
        Binding("pagedown", "move(5)", "Page down", show=False, tooltip="Five results down"),
        Binding("home", "first", "First", show=False, tooltip="The first result"),
        Binding("end", "last", "Last", show=False, tooltip="The last result"),
        # The open result's passages, stepped from the list (after Enter the focus stays here).
        Binding(
            "n", "screen.next_passage", "Next", show=False, tooltip="The open file's next passage"
        ),
        Binding(
            "N",
            "screen.previous_passage",
            "Previous",
            show=False,
            tooltip="The open file's previous passage",
        ),
    ]
    COMPONENT_CLASSES = {"results-list--cursor"}

    highlighted: reactive[int | None] = reactive(None, init=False)

    @dataclass
    class MoreWanted(Message):
        """The user moved past the last result of a full page: search for the next page."""

        results: ResultsList

        @property
        def control(self) -> ResultsList:
            return self.results

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.hits: list[FileHit] = []
        self.shown_query: str | None = None
        """The query text whose results are on screen (None: a message is shown)."""
        self.shown_mode: SearchMode | None = None
        """The mode that answered the shown results."""
        self.shown_request: SearchMode | None = None
        """The mode the user asked for when the shown results were searched."""
        self.message = ""
        """The explanation shown instead of results (empty when results are shown)."""
        self._rows: list[list[Content]] = []
        self._lines: list[tuple[int, int]] = []
        """(hit number, line of that hit) per line."""
        self._first_line: list[int] = []
        self._rows_width = 0
        self._cache: LRUCache[tuple[int, int, bool, bool], Strip] = LRUCache(256)
        self.has_more = False
        """The results fill their page: there may be more (a "more" row ends the list)."""
        self._advance = False
        """Move to the next result once the next page arrives (the user moved past the end)."""

    # -- public API ---------------------------------------------------------------------------
    @property
    def row_width(self) -> int:
        """The width rows are laid out for (what a search worker should pass to hit_lines)."""
        return max(20, self.scrollable_content_region.width - 1)

    def show_response(
        self,
        query: str,
        answered: SearchMode,
        response: SearchResponse,
        rows: list[list[Content]] | None = None,
        width: int | None = None,
        requested: SearchMode | None = None,
        more: bool = False,
    ) -> None:
        """Show the hits of ``response`` (the answer to ``query``, by mode ``answered``; the
        user asked for ``requested``, by default the same).

        ``rows`` are the hits' lines already laid out for ``width`` (by the search worker).
        The same question answered again (files changed, vectors arrived) keeps the highlighted
        file; a new query or a new mode starts at the top, on the best result. ``more``: the
        page is full, so a "more" row ends the list.
        """
        requested = requested or answered
        same_query = query == self.shown_query and requested == self.shown_request
        previous = (
            self.hits[self.highlighted].path
            if same_query and self.highlighted is not None and self.highlighted < len(self.hits)
            else None
        )
        self.hits = list(response.results)
        self.has_more = more and bool(self.hits)
        self.shown_query = query
        self.shown_mode = answered
        self.shown_request = requested
        if not self.hits:
            note = "; ".join(response.notes) if response.notes else ""
            text = f"No results for “{query.strip()}”" + (f" ({note})" if note else "")
            self._show_message(text)
            return
        self.message = ""
        if rows is None or len(rows) != len(self.hits) or width != self.row_width:
            width = self.row_width
            rows = [hit_lines(hit, width) for hit in self.hits]
        self._set_rows(self._with_more(rows), width)
        ids = [hit.path for hit in self.hits]
        index = ids.index(previous) if previous in ids else 0
        if self._advance and previous in ids and index + 1 < len(ids):
            index += 1
        self._advance = False
        self.set_reactive(ResultsList.highlighted, index)
        self.scroll_to(y=0 if index == 0 else self.scroll_y, animate=False, immediate=True)
        self._scroll_to_highlight()
        title = f"Results · {SCORE_MEANING[answered]}"
        if self.border_title != title:  # per keystroke: only when the mode changes
            self.border_title = title
            self.tooltip = SCORE_DETAIL[answered]
        below = " · more below" if self.has_more else ""
        self.border_subtitle = f"{len(self.hits)} files · {answered}{below}"

    def show_message(self, text: str) -> None:
        """Replace the results by one line of explanation (no query shown)."""
        self.hits = []
        self.shown_query = None
        self.shown_mode = None
        self.shown_request = None
        self._show_message(text)

    @property
    def highlighted_hit(self) -> FileHit | None:
        """The result under the cursor, if any."""
        number = self.highlighted
        return self.hits[number] if number is not None and number < len(self.hits) else None

    def open_highlighted(self) -> None:
        """Open the highlighted result at its best passage (its other passages marked)."""
        if self.highlighted is not None and self.highlighted < len(self.hits):
            hit = self.hits[self.highlighted]
            spans = tuple((p.start_line, p.end_line) for p in hit.passages)
            line = hit.passages[0].opens_at if hit.passages else None
            focus = {
                (p.start_line, p.end_line): p.match_line
                for p in hit.passages
                if p.match_line is not None
            }
            self.post_message(OpenFile(hit.path, line, spans, focus))

    # -- layout -------------------------------------------------------------------------------
    def _with_more(self, rows: list[list[Content]]) -> list[list[Content]]:
        """``rows`` and, when the page is full, the "more" row after them."""
        return [*rows, [Content.styled(MORE_ROW, MUTED_STYLE)]] if self.has_more else rows

    def _show_message(self, text: str) -> None:
        self.hits = []
        self.has_more = False
        if self.border_title != "Results":
            self.border_title = "Results"
            self.tooltip = None
        self.message = text = safe_text(text)
        width = self.row_width
        self._set_rows([snippet_lines(text, [], width, most=3)], width)
        self.set_reactive(ResultsList.highlighted, None)
        self.scroll_to(y=0, animate=False, immediate=True)
        self.border_subtitle = ""

    def _set_rows(self, rows: list[list[Content]], width: int) -> None:
        """Lay the rows one under the other: no blank line between them (the bold path line
        starts each), so a tall list shows as many results as it can."""
        self._rows = rows
        self._rows_width = width
        self._lines = []
        self._first_line = []
        for number, row in enumerate(rows):
            self._first_line.append(len(self._lines))
            self._lines.extend((number, line) for line in range(len(row)))
        self._cache.clear()
        self._set_virtual_size(Size(width, len(self._lines)))
        self.refresh()

    def _set_virtual_size(self, size: Size) -> None:
        """Change the scrollable size without a layout of the whole screen.

        Assigning ``virtual_size`` asks for a screen layout (about 19 ms on the nginx corpus,
        every widget repainted), but this list's own size is fixed by the CSS, so only its
        scrollbars depend on it. Textual updates a size the same way when no layout is needed
        (``Widget._size_updated``); a scrollbar that appears or goes still asks for a layout.
        """
        if size == self.virtual_size:
            return
        self.set_reactive(ResultsList.virtual_size, size)
        self._scroll_update(size)

    def on_resize(self, _event: events.Resize) -> None:
        if self._rows and self.row_width != self._rows_width:
            if self.hits:
                width = self.row_width
                self._set_rows(self._with_more([hit_lines(hit, width) for hit in self.hits]), width)
            elif self.message:
                self._show_message(self.message)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    # -- drawing ------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        if index >= len(self._lines):
            return Strip.blank(width, self.rich_style)
        number, line = self._lines[index]
        marked = number == self.highlighted and bool(self.hits)
        key = (index, width, marked, self.has_focus)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        style = self.get_visual_style("results-list--cursor") if marked else self.get_visual_style()
        # One styled line, no wrapping or alignment: segments straight from the content,
        # five times cheaper than the general Visual.to_strips (measured: 0.03 against
        # 0.16 ms a line), and every visible line is drawn again on each keystroke.
        content = self._rows[number][line]
        strip = Strip(content.render_segments(style)).crop(0, width)
        strip = strip.extend_cell_length(width, style.rich_style)
        self._cache[key] = strip
        return strip

    def watch_highlighted(self, _old: int | None, _new: int | None) -> None:
        self._cache.clear()
        self.refresh()
        self._scroll_to_highlight()

    def on_focus(self) -> None:
        self._cache.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._cache.clear()
        self.refresh()

    def _scroll_to_highlight(self) -> None:
        number = self.highlighted
        if number is None or number >= len(self._rows):
            return
        top = self._first_line[number]
        bottom = top + len(self._rows[number])
        height = self.scrollable_content_region.height
        if top < self.scroll_y:
            self.scroll_to(y=top, animate=False, immediate=True)
        elif height and bottom > self.scroll_y + height:
            self.scroll_to(y=max(top, bottom - height), animate=False, immediate=True)

    # -- keys and mouse -----------------------------------------------------------------------
    def action_move(self, delta: int) -> None:
        if not self.hits:
            return
        current = self.highlighted if self.highlighted is not None else 0
        if current + delta >= len(self.hits) and self.has_more:
            self.want_more()
        self.highlighted = max(0, min(len(self.hits) - 1, current + delta))

    def want_more(self) -> None:
        """Ask for the next page; the cursor moves on to its first result when it comes."""
        if self.has_more and not self._advance:
            self._advance = self.highlighted == len(self.hits) - 1
            self.post_message(self.MoreWanted(self))

    def action_first(self) -> None:
        if self.hits:
            self.highlighted = 0

    def action_last(self) -> None:
        if self.hits:
            self.highlighted = len(self.hits) - 1

    def action_open(self) -> None:
        self.open_highlighted()

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = int(self.scroll_y) + offset.y
        if self.hits and 0 <= index < len(self._lines):
            number = self._lines[index][0]
            if number >= len(self.hits):
                self.want_more()
                return
            self.highlighted = number
            self.open_highlighted()
