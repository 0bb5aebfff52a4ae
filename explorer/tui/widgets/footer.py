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
        """Hide the keys from the first one that crosses the edge (or the command palette's
        key, docked at the right) on."""
        keys = [key for key in self.query(FooterKey) if not key.has_class("-command-palette")]
        palette = [key for key in self.query(FooterKey) if key.has_class("-command-palette")]
        edge = self.region.right
        if palette and palette[0].display:
            edge = min(edge, palette[0].region.x)
        cut = False
        for key in keys:
            cut = cut or key.region.right > edge
            if cut:
                key.display = False
