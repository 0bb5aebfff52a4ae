"""The footer: the focused pane's keys, each shown whole or not at all.

Textual's footer lays its keys out in a row and cuts the row at the screen's edge, so at 80
columns the last key read ``Esc leave``'s half. Here the keys that do not fit whole are hidden
(the ``?`` help lists every key), and below :data:`COMPACT_BELOW` columns the footer is compact
(less space between keys), so more of them fit.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

COMPACT_BELOW = 120
"""Terminals narrower than this get the compact footer."""


class FittingFooter(Footer):
    """A footer whose keys are shown whole or hidden."""

    async def recompose(self) -> None:
        await super().recompose()
        self.call_after_refresh(self._fit)

    def on_resize(self, event: events.Resize) -> None:
        self.compact = event.size.width < COMPACT_BELOW
        for key in self.query(FooterKey):
            key.display = True
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """Show the keys, in order, while each fits whole beside the command palette's key
        (docked at the right); hide the rest. Widths are measured from what each key renders,
        not from the layout, which a screen under a picker does not update."""
        keys = list(self.query(FooterKey))
        room = self.size.width or self.app.size.width
        for key in keys:
            if key.has_class("-command-palette"):
                room -= _cells(key)
        used, cut = 0, False
        for key in keys:
            if key.has_class("-command-palette"):
                continue
            used += _cells(key)
            cut = cut or used > room
            key.display = not cut


def _cells(key: FooterKey) -> int:
    """The cells ``key`` takes in the footer's row: what it renders, its padding and border,
    and its margin."""
    return key.render().cell_len + key.styles.gutter.width + key.styles.margin.width
