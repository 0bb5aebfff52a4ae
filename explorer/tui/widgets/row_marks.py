"""The marks the preview puts on a Markdown page: the search result's passage and the line
find in page went to. A block drawn as rows (a list, a table, a code block) marks the rows
that show the lines; another block takes the mark's CSS class on its whole background."""

from __future__ import annotations

from enum import Enum


class RowMark(Enum):
    """A mark, named as the component class that colours a drawn block's rows."""

    PASSAGE = "passage-row"
    """The search result's passage."""
    FOUND = "found-row"
    """The line find in page went to."""

    @property
    def block_class(self) -> str:
        """The CSS class a block that is not drawn as rows takes for this mark."""
        return "-passage" if self is RowMark.PASSAGE else "-found"
