"""The footer: the focused pane's keys, each shown whole or not at all.

Textual's footer lays its keys out in a row and cuts the row at the screen's edge, so at 80
columns the last key read ``Esc leave``'s half. Here the keys that do not fit whole are hidden
(the ``?`` help lists every key), and below :data:`COMPACT_BELOW` columns the footer is compact
(less space between keys), so more of them fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

COMPACT_BELOW = 120
"""Terminals narrower than this get the compact footer."""


class FittingFooter(Footer):
    """A footer whose keys are shown whole or hidden."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._composed_for: tuple[object, ...] | None = None
        self._extra: dict[tuple[bool, str], int] = {}
        """Cells a key takes beyond its text, by (compact, kind), as :meth:`_fit` measured."""

    def compose(self) -> ComposeResult:
        """Textual's keys, those that do not fit already hidden when the cells they take have
        been measured once (:meth:`_fit`): the footer then changes in one layout, not two."""
        keys = list(super().compose())
        known = [self._cells_known(key) for key in keys]
        cells = [cell for cell in known if cell is not None]
        if keys and len(cells) == len(keys):
            room = self.size.width or self.app.size.width
            for key, shown in zip(keys, _whole(keys, cells, room), strict=True):
                key.display = shown
        yield from keys

    async def recompose(self) -> None:
        """Lay the keys out anew, unless they are the keys on show: one focus change tells the
        footer twice (the field left, the pane focused), and each recompose mounts every key
        again and lays the screen out twice (the keys, then their fit)."""
        shown = self._shown()
        if shown == self._composed_for:
            return
        self._composed_for = shown
        await super().recompose()
        self.call_after_refresh(self._fit)

    def _shown(self) -> tuple[object, ...]:
        """What :meth:`Footer.compose` shows, as a value to compare."""
        if not self._bindings_ready:
            return ()
        return tuple(
            (binding.key, binding.action, binding.description, binding.group, enabled, tooltip)
            for _node, binding, enabled, tooltip in self.screen.active_bindings.values()
            if binding.show or binding.key == self.app.COMMAND_PALETTE_BINDING
        )

    def on_resize(self, event: events.Resize) -> None:
        self.compact = event.size.width < COMPACT_BELOW
        for key in self.query(FooterKey):
            key.display = True
        self.call_after_refresh(self._fit)

    def _cells_known(self, key: Widget) -> int | None:
        """The cells ``key`` (not yet mounted) will take, from its text and what :meth:`_fit`
        measured of a key of its kind; None when that is not known."""
        if not isinstance(key, FooterKey):
            return None
        extra = self._extra.get((self.compact, _kind(key)))
        if extra is None:
            return None
        return cell_len(key.key_display) + cell_len(key.description) + extra

    def _fit(self) -> None:
        """Show the keys, in order, while each fits whole beside the command palette's key
        (docked at the right); hide the rest. Widths are measured from what each key renders,
        not from the layout, which a screen under a picker does not update."""
        keys = list(self.query(FooterKey))
        cells = [_cells(key) for key in keys]
        for key, cell in zip(keys, cells, strict=True):
            text = cell_len(key.key_display) + cell_len(key.description)
            self._extra[(self.compact, _kind(key))] = cell - text
        room = self.size.width or self.app.size.width
        for key, shown in zip(keys, _whole(keys, cells, room), strict=True):
            if key.display != shown:
                key.display = shown


def _whole(keys: Sequence[Widget], cells: list[int], room: int) -> list[bool]:
    """Which of ``keys`` (taking ``cells`` each) show: in order, while each fits whole in
    ``room`` beside the command palette's key (docked at the right, always shown)."""
    room -= sum(cell for key, cell in zip(keys, cells, strict=True) if _palette(key))
    used, cut, shown = 0, False, []
    for key, cell in zip(keys, cells, strict=True):
        if not _palette(key):
            used += cell
            cut = cut or used > room
        shown.append(_palette(key) or not cut)
    return shown


def _palette(key: Widget) -> bool:
    """Whether ``key`` is the command palette's (docked at the footer's right)."""
    return key.has_class("-command-palette")


def _kind(key: FooterKey) -> str:
    """Keys of one kind take the same cells beyond their text: the classes Textual gives a key
    when it is made that change its padding or margin (``-compact``, set once it is mounted,
    is the footer's own state), and whether it has a description (with none, no padding)."""
    classes = [name for name in ("-grouped", "-command-palette") if key.has_class(name)]
    return f"{classes}:{bool(key.description)}"


def _cells(key: FooterKey) -> int:
    """The cells ``key`` takes in the footer's row: what it renders, its padding and border,
    and its margin."""
    return key.render().cell_len + key.styles.gutter.width + key.styles.margin.width
