"""Which panes the main screen shows at a width, and what the user asked for instead.

The screen's columns share its width in proportions (the tree 2, the centre 6, the sidebar 3:
``fr`` units in ``app.tcss``), so a wide terminal widens every pane. Below
:data:`TREE_MIN_WIDTH` columns the tree is hidden, then below :data:`SIDEBAR_MIN_WIDTH` the
sidebar too, so the search box, the results and the preview keep room to read (see the README's
"Layout" for why these widths). A key toggles each pane; that choice holds until the terminal
crosses one of these widths, when the automatic layout takes over again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

TREE_MIN_WIDTH = 120
"""Below this many columns the tree is hidden: at 120 the tree gets 22 columns (2 of 11
shares), enough for a file name at two levels of folders, and the centre keeps 65."""
SIDEBAR_MIN_WIDTH = 80
"""Below this the sidebar is hidden too: at 80 with the tree gone, the sidebar gets 26 columns
(3 of 9 shares: a related file's shortened path and two lines of its passage) and the centre
54, the least in which a result line shows its score, path and heading."""


class Pane(StrEnum):
    """The panes that can be hidden."""

    TREE = "tree"
    SIDEBAR = "sidebar"


@dataclass
class PaneLayout:
    """The panes shown at the terminal's width, with the user's toggles on top."""

    width: int | None = None
    """The terminal's width (None before the first resize)."""
    chosen: dict[Pane, bool] = field(default_factory=dict)
    """Panes the user showed (True) or hid (False) at this band of widths."""

    @staticmethod
    def band(width: int) -> int:
        """0 below :data:`SIDEBAR_MIN_WIDTH`, 1 below :data:`TREE_MIN_WIDTH`, 2 above."""
        return (width >= SIDEBAR_MIN_WIDTH) + (width >= TREE_MIN_WIDTH)

    def resize(self, width: int) -> bool:
        """The terminal is ``width`` columns wide; True when the panes shown may change
        (a width was crossed: the user's toggles end)."""
        crossed = self.width is None or self.band(width) != self.band(self.width)
        self.width = width
        if crossed:
            self.chosen.clear()
        return crossed

    def automatic(self, pane: Pane) -> bool:
        """Whether ``pane`` shows at this width when the user chose nothing."""
        minimum = TREE_MIN_WIDTH if pane is Pane.TREE else SIDEBAR_MIN_WIDTH
        return self.width is None or self.width >= minimum

    def shows(self, pane: Pane) -> bool:
        return self.chosen.get(pane, self.automatic(pane))

    def toggle(self, pane: Pane) -> bool:
        """Show ``pane`` if hidden, else hide it; returns whether it shows now."""
        self.chosen[pane] = not self.shows(pane)
        return self.chosen[pane]
