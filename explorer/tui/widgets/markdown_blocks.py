"""The preview's Markdown widget: Textual's, with lists drawn as text instead of widgets.

Textual's ``Markdown`` makes four widgets of every list item (a row, its bullet, a column and
the item's paragraph), and opening a page costs a styling and a layout pass per widget: a
changelog or an install guide of sixty items took half a second to show. Here a run of list
items whose blocks are paragraphs and lists of the same kind is one widget, drawn as the items'
text with their bullets or numbers and a hanging indent, as the widget draws them; an item that
holds anything else (code, a quote, a table) keeps Textual's widgets. A link in an item is
followed as in any paragraph: its click action is part of the text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.visual import Visual
from textual.widgets import Markdown
from textual.widgets._markdown import (
    MarkdownBlock,
    MarkdownBullet,
    MarkdownBulletList,
    MarkdownList,
    MarkdownListItem,
    MarkdownOrderedList,
    MarkdownOrderedListItem,
    MarkdownParagraph,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from textual.app import ComposeResult
    from textual.css.styles import RulesMap
    from textual.strip import Strip
    from textual.style import Style
    from textual.visual import RenderOptions

BULLET_STYLE = ".bullet"
"""A bullet's or number's component class (coloured as the widget colours its bullets)."""


@dataclass(frozen=True)
class ItemLine:
    """A paragraph of a list item: its marker (a bullet, a number, or blanks under them for the
    item's later paragraphs) ``indent`` cells in, and the paragraph, wrapped beside it."""

    indent: int
    marker: str
    text: Content


class ItemLines(Visual):
    """List items' paragraphs wrapped to the width given, each under its marker's right
    edge (a hanging indent)."""

    def __init__(self, lines: Sequence[ItemLine]) -> None:
        self.lines = lines

    def _wrapped(self, width: int) -> Iterator[Content]:
        for line in self.lines:
            lead = line.indent + len(line.marker)
            rows = line.text.wrap(max(1, width - lead)) or [Content("")]
            marker = Content.styled(line.marker, BULLET_STYLE) if line.marker.strip() else None
            for number, row in enumerate(rows):
                if number == 0 and marker is not None:
                    yield Content.assemble(" " * line.indent, marker, row)
                else:
                    yield Content.assemble(" " * lead, row)

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        if not width:
            return []
        rows = Content("\n").join(self._wrapped(width))
        return rows.render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return max(
            (line.indent + len(line.marker) + line.text.cell_length for line in self.lines),
            default=0,
        )

    def get_height(self, rules: RulesMap, width: int) -> int:
        return sum(1 for _row in self._wrapped(width)) if width else len(self.lines)


class ListItemsBlock(MarkdownBlock):
    """A run of a list's plain items (and the plain lists inside them), drawn as one block."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {*MarkdownBlock.COMPONENT_CLASSES, "bullet"}
    DEFAULT_CSS = """
    ListItemsBlock > .bullet {
        color: $text-primary;
    }
    ListItemsBlock:light > .bullet {
        color: $text-secondary;
    }
    """

    def __init__(self, markdown: Markdown, token: Any, lines: Sequence[ItemLine]) -> None:
        super().__init__(markdown, token)
        self._lines = ItemLines(lines)

    def render(self) -> Visual:
        return self._lines


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
            lines.append(ItemLine(indent, shown, block._content))
        elif isinstance(block, MarkdownList):
            nested = _list_lines(block, indent + len(marker))
            if nested is None:
                return None
            if nested and not lines:  # a list straight after the bullet: on the bullet's row
                first = nested[0]
                nested[0] = ItemLine(indent, shown + first.marker, first.text)
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
    items = [item for item in block._blocks if isinstance(item, MarkdownListItem)]
    for item, marker in zip(items, _markers(block), strict=True):
        lines = _item_lines(item, marker, 0)
        if lines is not None:
            run.extend(lines)
            continue
        if run:
            yield ListItemsBlock(block._markdown, block._token, run)
            run = []
        bullet = MarkdownBullet()
        bullet.symbol = marker
        yield Horizontal(bullet, Vertical(*item._blocks))
    if run:
        yield ListItemsBlock(block._markdown, block._token, run)
    block._blocks.clear()


class BulletList(MarkdownBulletList):
    """A bullet list whose plain items are drawn as text."""

    def compose(self) -> ComposeResult:
        yield from _compose_list(self)


class OrderedList(MarkdownOrderedList):
    """A numbered list whose plain items are drawn as text."""

    def compose(self) -> ComposeResult:
        yield from _compose_list(self)


class PreviewMarkdown(Markdown):
    """Textual's Markdown widget with :class:`BulletList` and :class:`OrderedList`."""

    BLOCKS: dict[str, type[MarkdownBlock]] = {
        **Markdown.BLOCKS,
        "bullet_list_open": BulletList,
        "ordered_list_open": OrderedList,
    }
