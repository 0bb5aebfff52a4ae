"""The preview's Markdown widget: Textual's, with lists and tables drawn as text.

Textual's ``Markdown`` makes four widgets of every list item (a row, its bullet, a column and
the item's paragraph) and one of every table cell, and opening a page costs a styling and a
layout pass per widget: a changelog or an install guide of sixty items took half a second to
show. Here a run of list items whose blocks are paragraphs and lists of the same kind is one
widget, drawn as the items' text with their bullets or numbers and a hanging indent, as the
widget draws them; an item that holds anything else (code, a quote, a table) keeps Textual's
widgets. A table is one widget drawing its grid: columns as wide as their cells, widened or
narrowed in proportion to fit the pane (a narrowed cell wraps; a word too long for its cell
ends in an ellipsis, a run of Chinese or Japanese breaks between characters), lines between
rows, each column aligned as its delimiter row says. A link in an item or a cell is followed
as in any paragraph: its click action is part of the text. Each of these blocks knows the row
its every source line is drawn on, as a code block does (a line a row): a result deep in one
opens on its row, and only its rows are marked. Any other block of text (a paragraph, a quote's
blocks) places a line as far down it as the line's characters lie in its text: a result deep in
a long quote opens on its paragraph, about on its line, and only the paragraphs showing it are
marked.

The block classes swapped in are Textual's own (``textual.widgets._markdown``, not public):
the tests draw pages with both widgets and compare the screens, so a change there fails them.
"""

from __future__ import annotations

from abc import abstractmethod
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from rich.cells import cell_len
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.visual import Visual
from textual.widgets import Label, Markdown
from textual.widgets._markdown import (
    MarkdownBlock,
    MarkdownBullet,
    MarkdownBulletList,
    MarkdownFence,
    MarkdownList,
    MarkdownListItem,
    MarkdownOrderedList,
    MarkdownOrderedListItem,
    MarkdownParagraph,
    MarkdownTable,
    MarkdownTD,
    MarkdownTH,
    MarkdownTR,
)

from explorer.tui.widgets.row_marks import RowMark

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

    from markdown_it.token import Token
    from textual.app import ComposeResult
    from textual.css.styles import RulesMap
    from textual.selection import Selection
    from textual.strip import Strip
    from textual.style import Style
    from textual.visual import RenderOptions
    from textual.widget import Widget

BULLET_STYLE = ".bullet"
"""A bullet's or number's component class (coloured as the widget colours its bullets)."""
HEADER_STYLE = ".table-header"
LINE_STYLE = ".table-lines"
CELL_PADDING = 1
"""Blank cells each side of a table cell's text."""
ColumnAlign = Literal["left", "center", "right"]
"""Where a table column's text sits, as its delimiter row says (``:--``, ``:-:``, ``--:``)."""


@dataclass(frozen=True)
class ItemLine:
    """A paragraph of a list item: its marker (a bullet, a number, or blanks under them for the
    item's later paragraphs) ``indent`` cells in, and the paragraph, wrapped beside it."""

    indent: int
    marker: str
    text: Content
    source: int
    """The paragraph's first line in the Markdown text (0-based)."""


@dataclass(frozen=True)
class Drawing:
    """A block's lines at one width, and where each of its source lines starts among them."""

    lines: list[Content]
    starts: list[tuple[int, int]]
    """(line of the Markdown text, row of :attr:`lines`) of each item's paragraph or table
    row, in order."""


class DrawnLines(Visual):
    """A block drawn as lines of text for the width given, kept for the last width (the
    layout asks a block's height, then draws it, at the same width)."""

    def __init__(self) -> None:
        self._drawn: tuple[int, Drawing] | None = None
        self.marks: dict[RowMark, tuple[int, int]] = {}
        """Lines of the Markdown text (first, last) whose rows are marked, by mark."""

    @abstractmethod
    def draw(self, width: int) -> Drawing:
        """The block drawn ``width`` cells wide (at most: wider rows are cut)."""

    def drawing(self, width: int) -> Drawing:
        if self._drawn is None or self._drawn[0] != width:
            self._drawn = (width, self.draw(width))
        return self._drawn[1]

    def lines(self, width: int) -> list[Content]:
        return self.drawing(width).lines

    def row_of(self, line: int, width: int) -> int:
        """The row showing ``line`` of the Markdown text: the row its paragraph or table row
        starts on (the block's first row for a line before them all)."""
        starts = self.drawing(width).starts
        at = bisect_right(starts, (line, len(self.lines(width))))
        return starts[at - 1][1] if at else 0

    def line_at(self, row: int, width: int) -> int | None:
        """The line of the Markdown text drawn on ``row`` (None above the first)."""
        found = None
        for line, start in self.drawing(width).starts:
            if start > row:
                break
            found = line
        return found

    def text(self, width: int) -> Content:
        """The lines as one text (what a selection's offsets count in), the marked rows'
        background across the width."""
        lines = [line.truncate(width) for line in self.lines(width)]
        if self.marks:
            starts = self.drawing(width).starts
            at, line = 0, None
            for row, shown in enumerate(lines):
                while at < len(starts) and starts[at][1] <= row:
                    line = starts[at][0]
                    at += 1
                for mark, (first, last) in self.marks.items():
                    if line is not None and first <= line <= last:
                        padded = shown.pad_right(max(0, width - shown.cell_length))
                        lines[row] = padded.stylize_before(f".{mark.value}")
        return Content("\n").join(lines)

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        if not width:
            return []
        return self.text(width).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return max((line.cell_length for line in self.lines(container_width)), default=0)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return len(self.lines(width))


def selected_text(widget: Widget, drawing: DrawnLines, selection: Selection) -> tuple[str, str]:
    """What a mouse selection covers of a drawn block (the text as the reader sees it)."""
    return selection.extract(drawing.text(widget.content_region.width).plain), "\n"


class ItemLines(DrawnLines):
    """List items' paragraphs wrapped to the width given, each under its marker's right
    edge (a hanging indent)."""

    def __init__(self, lines: Sequence[ItemLine]) -> None:
        super().__init__()
        self.items = lines

    def draw(self, width: int) -> Drawing:
        drawn: list[Content] = []
        starts = []
        for line in self.items:
            starts.append((line.source, len(drawn)))
            lead = line.indent + len(line.marker)
            rows = line.text.wrap(max(1, width - lead)) or [Content("")]
            marker = Content.styled(line.marker, BULLET_STYLE) if line.marker.strip() else None
            for number, row in enumerate(rows):
                if number == 0 and marker is not None:
                    drawn.append(Content.assemble(" " * line.indent, marker, row))
                else:
                    drawn.append(Content.assemble(" " * lead, row))
        return Drawing(drawn, sorted(starts))


class ListItemsBlock(MarkdownBlock):
    """A run of a list's plain items (and the plain lists inside them), drawn as one block."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        *MarkdownBlock.COMPONENT_CLASSES,
        "bullet",
        *(mark.value for mark in RowMark),
    }
    DEFAULT_CSS = """
    ListItemsBlock > .bullet {
        color: $text-primary;
    }
    ListItemsBlock:light > .bullet {
        color: $text-secondary;
    }
    """

    def __init__(
        self, markdown: Markdown, token: Any, lines: Sequence[ItemLine], span: tuple[int, int]
    ) -> None:
        super().__init__(markdown, token, source_range=span)
        self.drawing = ItemLines(lines)

    def render(self) -> Visual:
        return self.drawing

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selected_text(self, self.drawing, selection)


def _markers(block: MarkdownList) -> list[str]:
    """Each item's marker, as Textual's list draws it: the bullet the parser chose for its
    depth, or its number right-aligned to the widest number of the list."""
    items = [item for item in block._blocks if isinstance(item, MarkdownListItem)]
    if not isinstance(block, MarkdownOrderedList):
        return [item.bullet for item in items]
    start = 1
    if items and isinstance(items[0], MarkdownOrderedListItem):
        try:
            start = int(items[0].bullet)
        except ValueError:
            pass
    numbers = [f"{number}. " for number in range(start, start + len(items))]
    size = max((len(number) for number in numbers), default=0)
    return [number.rjust(size + 1) for number in numbers]


def _item_lines(item: MarkdownListItem, marker: str, indent: int) -> list[ItemLine] | None:
    """An item's paragraphs and nested lists as lines (none for an empty item, which Textual
    draws as nothing), or None when it holds another block."""
    lines: list[ItemLine] = []
    for block in item._blocks:
        shown = marker if not lines else " " * len(marker)
        if type(block) is MarkdownParagraph:
            lines.append(ItemLine(indent, shown, block._content, block.source_range[0]))
        elif isinstance(block, MarkdownList):
            nested = _list_lines(block, indent + len(marker))
            if nested is None:
                return None
            if nested and not lines:  # a list straight after the bullet: on the bullet's row
                first = nested[0]
                nested[0] = ItemLine(indent, shown + first.marker, first.text, first.source)
            lines.extend(nested)
        else:
            return None
    return lines


def _list_lines(block: MarkdownList, indent: int) -> list[ItemLine] | None:
    """A whole list as lines, or None when one of its items holds another block."""
    lines: list[ItemLine] = []
    items = [item for item in block._blocks if isinstance(item, MarkdownListItem)]
    for item, marker in zip(items, _markers(block), strict=True):
        item_lines = _item_lines(item, marker, indent)
        if item_lines is None:
            return None
        lines.extend(item_lines)
    return lines


def _compose_list(block: MarkdownList) -> Iterator[Any]:
    """A list's children: runs of plain items as one :class:`ListItemsBlock`; an item holding
    code, a quote or a table as Textual draws it (a bullet beside a column of its blocks)."""
    run: list[ItemLine] = []
    span: tuple[int, int] | None = None
    items = [item for item in block._blocks if isinstance(item, MarkdownListItem)]
    for item, marker in zip(items, _markers(block), strict=True):
        lines = _item_lines(item, marker, 0)
        if lines is not None:
            run.extend(lines)
            start, end = item.source_range
            span = (start, end) if span is None else (span[0], max(span[1], end))
            continue
        if run and span is not None:
            yield ListItemsBlock(block._markdown, block._token, run, span)
        run, span = [], None
        bullet = MarkdownBullet()
        bullet.symbol = marker
        yield Horizontal(bullet, Vertical(*item._blocks))
    if run and span is not None:
        yield ListItemsBlock(block._markdown, block._token, run, span)
    block._blocks.clear()


class BulletList(MarkdownBulletList):
    """A bullet list whose plain items are drawn as text."""

    def compose(self) -> ComposeResult:
        yield from _compose_list(self)


class OrderedList(MarkdownOrderedList):
    """A numbered list whose plain items are drawn as text."""

    def compose(self) -> ComposeResult:
        yield from _compose_list(self)


@dataclass(frozen=True)
class TableCells:
    """A table's cells: its header row, its other rows, and each column's alignment."""

    header: list[Content]
    rows: list[list[Content]]
    align: list[ColumnAlign]
    sources: list[int]
    """The line of the Markdown text of the header row, then of each row."""


class TableDrawing(DrawnLines):
    """A table drawn with box lines, its columns fitted to the width given."""

    def __init__(self, cells: TableCells) -> None:
        super().__init__()
        self.cells = cells

    def column_widths(self, width: int) -> list[int]:
        """Each column's width, padding included, for a table ``width`` cells wide: as wide
        as its widest cell, then all widened in proportion to fill the width, or narrowed
        from the room above their longest word (then below it) to fit."""
        cells = self.cells
        columns = len(cells.align)
        pad = 2 * CELL_PADDING
        rows = [cells.header, *cells.rows]
        natural = [
            pad + max((row[n].cell_length for row in rows if n < len(row)), default=0)
            for n in range(columns)
        ]
        least = [
            pad + max((_longest_word(row[n]) for row in rows if n < len(row)), default=0)
            for n in range(columns)
        ]
        room = max(columns, width - columns - 1)
        total = sum(natural)
        if total <= room:
            return _share(natural, room)
        floor = [min(low, high) for low, high in zip(least, natural, strict=True)]
        if sum(floor) <= room:
            slack = [high - low for low, high in zip(floor, natural, strict=True)]
            cut = _share(slack, sum(slack) - (total - room))
            return [low + extra for low, extra in zip(floor, cut, strict=True)]
        # Not even the longest words fit: every column narrowed in proportion, to a cell of
        # text at least (a word longer than its cell ends in an ellipsis).
        widths = [max(pad + 1, size) for size in _share(floor, room)]
        while sum(widths) > room and max(widths) > pad + 1:
            widths[widths.index(max(widths))] -= 1
        return widths

    def draw(self, width: int) -> Drawing:
        widths = self.column_widths(width)
        rule = {edge: _rule(widths, *edge) for edge in ("┌┬┐", "├┼┤", "└┴┘")}
        drawn = [rule["┌┬┐"]]
        starts = []
        header = self.cells.header
        sources = self.cells.sources or [0]
        for number, row in enumerate([header, *self.cells.rows] if header else self.cells.rows):
            if number:
                drawn.append(rule["├┼┤"])
            starts.append((sources[min(number, len(sources) - 1)], len(drawn)))
            drawn.extend(self._row(row, widths, HEADER_STYLE if header and not number else ""))
        drawn.append(rule["└┴┘"])
        return Drawing(drawn, sorted(starts))

    def _row(self, row: list[Content], widths: list[int], style: str) -> list[Content]:
        """One table row, as many lines high as its longest wrapped cell."""
        wrapped: list[list[Content]] = []
        for number, size in enumerate(widths):
            cell = row[number] if number < len(row) else Content("")
            room = max(1, size - 2 * CELL_PADDING)
            # A run of Chinese or Japanese breaks between any two characters (folded); a word
            # of other scripts too long for its cell is cut short with an ellipsis.
            if not cell.plain:
                wrapped.append([Content("")])
            elif _wide(cell.plain):
                wrapped.append(cell.wrap(room, overflow="fold"))
            else:
                wrapped.append(cell.wrap(room, overflow="ellipsis"))
        bar = Content.styled("│", LINE_STYLE)
        pad = " " * CELL_PADDING
        lines = []
        for line in range(max(len(cell_lines) for cell_lines in wrapped)):
            parts: list[Content | str] = [bar]
            for cell_lines, size, align in zip(wrapped, widths, self.cells.align, strict=True):
                shown = cell_lines[line] if line < len(cell_lines) else Content("")
                shown = _aligned(shown, max(1, size - 2 * CELL_PADDING), align)
                if style:
                    shown = shown.stylize_before(style)
                parts.extend([pad, shown, pad, bar])
            lines.append(Content.assemble(*parts))
        return lines


def _aligned(text: Content, room: int, align: ColumnAlign) -> Content:
    """``text`` padded to ``room`` cells, on the side its column's alignment says."""
    blank = max(0, room - text.cell_length)
    before = blank if align == "right" else blank // 2 if align == "center" else 0
    return text.pad(before, blank - before)


def _wide(text: str) -> bool:
    """Whether ``text`` holds a character two cells wide (Chinese, Japanese, Korean)."""
    return cell_len(text) != len(text)


def _longest_word(cell: Content) -> int:
    """The cells of a cell's longest unbreakable run: a word, or one wide character (a line
    of Chinese or Japanese may break between any two)."""
    return max(
        (2 if _wide(word) else len(word) for word in cell.plain.split()),
        default=0,
    )


def _share(sizes: list[int], total: int) -> list[int]:
    """``sizes`` scaled to add up to ``total``, rounded so that they do (the largest
    remainders round up)."""
    whole = sum(sizes)
    if not sizes:
        return []
    if not whole:
        even = [total // len(sizes)] * len(sizes)
        for number in range(total - sum(even)):
            even[number] += 1
        return even
    exact = [size * total / whole for size in sizes]
    shares = [int(share) for share in exact]
    order = sorted(range(len(sizes)), key=lambda n: shares[n] - exact[n])
    for number in order[: total - sum(shares)]:
        shares[number] += 1
    return shares


def _rule(widths: list[int], left: str, middle: str, right: str) -> Content:
    """A table's top, inner or bottom line."""
    line = left + middle.join("─" * size for size in widths) + right
    return Content.styled(line, LINE_STYLE)


class TableBlock(MarkdownTable):
    """A table drawn as one block (see :class:`TableDrawing`)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        *MarkdownBlock.COMPONENT_CLASSES,
        "table-header",
        "table-lines",
        *(mark.value for mark in RowMark),
    }
    DEFAULT_CSS = """
    TableBlock > .table-header {
        color: $primary;
    }
    TableBlock > .table-lines {
        color: $foreground 20%;
    }
    """

    def __init__(self, markdown: Markdown, token: Any) -> None:
        super().__init__(markdown, token)
        self.drawing: TableDrawing | None = None

    def compose(self) -> ComposeResult:
        self.drawing = TableDrawing(_table_cells(self))  # its cells are parsed by now
        self._blocks.clear()
        return iter(())

    def render(self) -> Visual:
        return self.drawing if self.drawing is not None else Content("")

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selected_text(self, self.drawing, selection) if self.drawing else None


def _table_cells(table: MarkdownTable) -> TableCells:
    """A parsed table's cells and its columns' alignment (from its header cells' style)."""

    def walk(block: MarkdownBlock) -> Iterator[MarkdownBlock]:
        for child in block._blocks:
            yield child
            yield from walk(child)

    header: list[Content] = []
    align: list[ColumnAlign] = []
    rows: list[list[Content]] = []
    sources: list[int] = []
    for block in walk(table):
        if isinstance(block, MarkdownTH):
            header.append(block._content)
            style = str(block._token.attrs.get("style", ""))
            side = style.partition("text-align:")[2].strip()
            align.append("right" if side == "right" else "center" if side == "center" else "left")
        elif isinstance(block, MarkdownTR):
            sources.append(block.source_range[0])
            if header and len(header) == len(align):
                rows.append([])
        elif isinstance(block, MarkdownTD) and rows:
            rows[-1].append(block._content)
    kept = [n for n, row in enumerate(rows) if row]
    body = sources[1:] if header else sources
    return TableCells(
        header,
        [rows[n] for n in kept],
        align,
        sources[:1] + [body[n] for n in kept if n < len(body)],
    )


class CodeBlock(MarkdownFence):
    """A code block (fenced or indented) whose marked lines are coloured, not the whole block:
    it draws one line of code a row."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        *MarkdownFence.COMPONENT_CLASSES,
        *(mark.value for mark in RowMark),
    }

    def __init__(self, markdown: Markdown, token: Any, code: str) -> None:
        super().__init__(markdown, token, code)
        self.marks: dict[RowMark, tuple[int, int]] = {}

    @property
    def first_line(self) -> int:
        """The line of the Markdown text its code starts on (after a fence's opening line)."""
        start = self.source_range[0]
        return start + 1 if self._token.type == "fence" else start

    @property
    def line_count(self) -> int:
        return self.code.count("\n") + 1

    def mark(self, mark: RowMark, lines: tuple[int, int] | None) -> None:
        """Mark the code lines among ``lines`` of the Markdown text (none: None)."""
        before = self.marks.get(mark)
        first = self.first_line
        if lines is not None and lines[0] < first + self.line_count and lines[1] >= first:
            self.marks[mark] = lines
        else:
            self.marks.pop(mark, None)
        if self.marks.get(mark) != before:
            self._show_marks()

    def _show_marks(self) -> None:
        code = self._highlighted_code
        if self.marks:
            rows = code.split("\n", allow_blank=True)
            width = max((row.cell_length for row in rows), default=0)
            for mark, (first, last) in self.marks.items():
                style = self.get_visual_style(mark.value, partial=True)
                start = max(0, first - self.first_line)
                for number in range(start, min(len(rows), last - self.first_line + 1)):
                    padded = rows[number].pad_right(width - rows[number].cell_length)
                    rows[number] = padded.stylize_before(style)
            code = Content("\n").join(rows)
        self.set_content(code)

    def notify_style_update(self) -> None:
        super().notify_style_update()  # highlighted again for the theme: marks drawn again
        if self.marks:
            self._show_marks()


class PreviewMarkdown(Markdown):
    """Textual's Markdown widget with :class:`BulletList`, :class:`OrderedList`,
    :class:`TableBlock` and :class:`CodeBlock`, which knows the row each line of a drawn list
    or table, or of a code block, is on."""

    BLOCKS: dict[str, type[MarkdownBlock]] = {
        **Markdown.BLOCKS,
        "bullet_list_open": BulletList,
        "ordered_list_open": OrderedList,
        "table_open": TableBlock,
        "fence": CodeBlock,
        "code_block": CodeBlock,
    }
    _offsets: tuple[str, list[int]] | None = None
    """The text the offsets of its lines were worked out for, and those (see
    :meth:`_line_offsets`)."""

    def _parse_markdown(self, tokens: Iterable[Token]) -> Iterable[MarkdownBlock]:
        """Textual's blocks of ``tokens``, but for a rule inside a quote or a list item, which
        stays in it: Textual puts every rule at the top of the page, so a quote with a rule
        (an answer pasted into a note, its parts between ``---``) was drawn below its own
        rules, and the page read out of order."""
        return super()._parse_markdown(
            token.copy(type=_NESTED_RULE) if token.type == "hr" and token.level else token
            for token in tokens
        )

    def unhandled_token(self, token: Token) -> MarkdownBlock | None:
        if token.type == _NESTED_RULE:
            return self.get_block_class("hr")(self, token)
        return super().unhandled_token(token)

    def top_of(self, widget: Widget) -> int:
        """``widget``'s top, in rows below this widget's top."""
        top = 0
        node: Any = widget
        while node is not self and node is not None:
            top += node.virtual_region.y
            node = node.parent
        return top

    def _row_blocks(self, within: Widget | None = None) -> Iterator[Widget]:
        """The blocks drawn a line a row (a list's run of items, a table, a code block) in
        one block of the page (``within``), or in the whole page."""
        for root in [within] if within is not None else list(self.children):
            if isinstance(root, (ListItemsBlock, TableBlock, CodeBlock)):
                yield root
            else:
                for widget in root.walk_children(with_self=False):
                    if isinstance(widget, (ListItemsBlock, TableBlock, CodeBlock)):
                        yield widget

    def _row_in(self, block: Widget, line: int) -> int | None:
        """The row (below this widget's top) ``block`` shows ``line`` of the Markdown text on,
        or None when the block does not hold it."""
        if isinstance(block, CodeBlock):
            first = block.first_line
            label = block.query(Label)
            if not label or not first <= line < first + block.line_count:
                return None
            return self.top_of(label.first()) + label.first().styles.padding.top + line - first
        drawing = getattr(block, "drawing", None)
        if not isinstance(drawing, DrawnLines) or not _holds(block, line):
            return None
        return self.top_of(block) + drawing.row_of(line, block.content_region.width)

    def _line_in(self, block: Widget, y: int) -> int | None:
        """The line of the Markdown text ``block`` shows on row ``y`` (below this widget's
        top), or None when the row is not the block's. A code block's padding above and below
        its code reads as its first and last line."""
        if not self._on_row(block, y):
            return None
        if isinstance(block, CodeBlock):
            label = block.query(Label)
            if not label:
                return None
            row = self.top_of(label.first()) + label.first().styles.padding.top
            return block.first_line + min(max(0, y - row), block.line_count - 1)
        drawing = getattr(block, "drawing", None)
        if not isinstance(drawing, DrawnLines):
            return None
        return drawing.line_at(y - self.top_of(block), block.content_region.width)

    def y_of(self, line: int) -> int | None:
        """The row (below this widget's top) that shows ``line`` of the Markdown text: a
        drawn list's or table's, or a code block's own row for it; in a block of text (a
        paragraph, one of a quote's blocks), the row its text starts on. None when that is
        its block's top, or no block holds it. Only the page's block that holds the line is
        looked into."""
        for page_block in self.children:
            if _holds(page_block, line):
                for block in self._row_blocks(page_block):
                    row = self._row_in(block, line)
                    if row is not None:
                        return row
                inner = self._innermost(page_block, lambda block: _holds(block, line))
                if self.marks_by_row(inner):
                    return None
                row = self.top_of(inner) + self._text_row(inner, line)
                return None if row == self.top_of(page_block) else row
        return None

    def line_at(self, y: int) -> int | None:
        """The line of the Markdown text shown on row ``y`` (below this widget's top): a drawn
        list's or table's, or a code block's own; in a block of text, the first line that
        starts on the row (else the last one before it). None for a row in no block."""
        for page_block in self.children:
            if self._on_row(page_block, y):
                for block in self._row_blocks(page_block):
                    line = self._line_in(block, y)
                    if line is not None:
                        return line
                inner = self._innermost(page_block, lambda block: self._on_row(block, y))
                if self.marks_by_row(inner):
                    return None
                blocks = self._inner_blocks(inner)
                if blocks:  # a row between a quote's blocks: the next one's first line
                    below = [block for block in blocks if self.top_of(block) > y]
                    return _lines_of(below[0])[0] if below else _lines_of(inner)[1] - 1
                return self._text_line(inner, y - self.top_of(inner))
        return None

    def blocks_showing(self, first: int, end: int) -> list[Widget]:
        """The blocks that show lines ``first`` to ``end`` (0-based, ``end`` excluded) of the
        Markdown text, as deep as they lie: a few paragraphs of a long quote, not the whole
        quote; a block the lines cover whole, and one drawn a line a row, as they are."""
        found: list[Widget] = []

        def shows(block: Widget) -> bool:
            start, stop = _lines_of(block)
            return start < end and stop > first

        def visit(block: Widget) -> None:
            start, stop = _lines_of(block)
            inner = (
                []
                if self.marks_by_row(block) or (first <= start and stop <= end)
                else [child for child in self._inner_blocks(block) if shows(child)]
            )
            if not inner:
                found.append(block)
            for child in inner:
                visit(child)

        for block in self.children:
            if shows(block):
                visit(block)
        return found

    def _innermost(self, block: Widget, holds: Callable[[Widget], bool]) -> Widget:
        """The innermost block within ``block`` (a block of the page) that ``holds`` says
        holds what is looked for, through quotes and list items, not into a block drawn a line
        a row; ``block`` itself when none of its blocks does."""
        while not self.marks_by_row(block):
            inner = next((child for child in self._inner_blocks(block) if holds(child)), None)
            if inner is None:
                break
            block = inner
        return block

    @staticmethod
    def _inner_blocks(block: Widget) -> list[Widget]:
        """The Markdown blocks right inside ``block`` (through the containers that lay out a
        list item: its bullet's row, its column)."""
        found: list[Widget] = []
        for child in block.children:
            if isinstance(child, MarkdownBlock):
                found.append(child)
            else:
                found.extend(PreviewMarkdown._inner_blocks(child))
        return found

    def _on_row(self, block: Widget, y: int) -> bool:
        top = self.top_of(block)
        return top <= y < top + block.outer_size.height

    def _line_offsets(self) -> list[int]:
        """Where each line of the Markdown text starts, in characters (and one past its end);
        worked out once per text."""
        source = self.source
        kept = self._offsets
        if kept is None or kept[0] is not source:
            offsets = [0]
            for text in source.split("\n"):
                offsets.append(offsets[-1] + len(text) + 1)
            kept = self._offsets = (source, offsets)
        return kept[1]

    def _text_rows(self, block: Widget) -> list[int]:
        """The row (below ``block``'s top) that each line of a block of text starts on, in
        proportion to the characters before it: the block wraps its lines together, so a line
        of a long paragraph or quote lies about as far down the block as in its text."""
        start, end = _lines_of(block)
        offsets = self._line_offsets()
        end = min(end, len(offsets) - 1)
        spacing = block.styles.gutter
        # Its laid-out size: its region on screen is empty while it is scrolled out of view.
        height = max(1, block.outer_size.height - spacing.height)
        total = offsets[end] - offsets[start]
        if total <= 0:
            return [spacing.top] * (end - start)
        return [
            spacing.top + min(height - 1, (offsets[line] - offsets[start]) * height // total)
            for line in range(start, end)
        ]

    def _text_row(self, block: Widget, line: int) -> int:
        rows = self._text_rows(block)
        index = line - _lines_of(block)[0]
        return rows[min(index, len(rows) - 1)] if rows and index >= 0 else 0

    def _text_line(self, block: Widget, row: int) -> int:
        """The first line of ``block`` that starts on ``row`` (below its top), else the last
        one that starts above it."""
        start = _lines_of(block)[0]
        rows = self._text_rows(block)
        above = bisect_right(rows, row)  # the lines that start on the row or above it
        if above == 0:
            return start
        if rows[above - 1] == row:
            return start + bisect_left(rows, row)
        return start + above - 1

    def mark_rows(self, mark: RowMark, lines: tuple[int, int] | None) -> None:
        """Mark the rows of drawn lists, tables and code blocks that show ``lines`` of the
        Markdown text (first and last, 0-based), or no rows (None)."""
        for block in self._row_blocks():
            if isinstance(block, CodeBlock):
                block.mark(mark, lines)
                continue
            drawing = getattr(block, "drawing", None)
            if not isinstance(drawing, DrawnLines):
                continue
            before = drawing.marks.get(mark)
            start, end = _lines_of(block)
            if lines is not None and lines[0] < end and lines[1] >= start:
                drawing.marks[mark] = lines
            else:
                drawing.marks.pop(mark, None)
            if drawing.marks.get(mark) != before:
                block.refresh()

    def rows_marked(self, mark: RowMark) -> list[Widget]:
        """The drawn lists and tables, and the code blocks, with rows marked ``mark``."""
        return [block for block in self._row_blocks() if mark in _marks_of(block)]

    @staticmethod
    def marks_by_row(block: Widget) -> bool:
        """Whether a block of the page is drawn as rows only (a table, a list of plain items):
        a mark on it is its rows', not its whole background."""
        if isinstance(block, (TableBlock, CodeBlock, ListItemsBlock)):
            return True
        children = list(block.children)
        return (
            isinstance(block, (BulletList, OrderedList))
            and bool(children)
            and all(isinstance(child, ListItemsBlock) for child in children)
        )


_NESTED_RULE = "hr_nested"
"""The type a rule inside a quote or a list item is given, so that
:meth:`PreviewMarkdown.unhandled_token` makes it where it is."""


def _lines_of(block: Widget) -> tuple[int, int]:
    """The lines of the Markdown text ``block`` shows (0-based, the end excluded)."""
    start, end = getattr(block, "source_range", None) or (0, 0)
    return int(start), int(end)


def _holds(block: Widget, line: int) -> bool:
    start, end = _lines_of(block)
    return start <= line < end


def _marks_of(block: Widget) -> dict[RowMark, tuple[int, int]]:
    """The marks on a block drawn a line a row."""
    if isinstance(block, CodeBlock):
        return block.marks
    drawing = getattr(block, "drawing", None)
    return drawing.marks if isinstance(drawing, DrawnLines) else {}
