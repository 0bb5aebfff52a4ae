"""The footer: the focused pane's keys on one line, each shown whole or not at all.

Textual's footer is a row of widgets, one per key, mounted anew at every focus change: after a
key that moves the focus it laid the screen out twice more and painted two more frames (on a
long page the find field showed 25 ms after ``/``, and the footer settled at 76–81 ms). Here
the footer is one widget that draws its keys as one line of text, so a focus change repaints
it in the frame that shows the change, and nothing is laid out for it.

Keys that do not fit whole are left out (the ``?`` help lists every key), and below
:data:`COMPACT_BELOW` columns the keys sit closer (no space inside them), so more fit. It looks
like Textual's footer, from the same theme variables; a click on a key presses it, and the
mouse over a key shows what it does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import RenderResult
from textual.binding import Binding
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget

COMPACT_BELOW = 120
"""Terminals narrower than this get the compact footer."""

PALETTE_EDGE = "▏"
"""The thin rule left of the command palette's key (Textual's ``vkey`` border)."""


@dataclass(frozen=True)
class OfferedKey:
    """One key the footer offers: the focused pane's binding, as the footer shows it."""

    key: str
    """The key a click presses."""
    key_display: str
    description: str
    enabled: bool
    tooltip: str
    palette: bool = False
    """The command palette's key, at the right edge."""


class FittingFooter(Widget, can_focus=False):
    """The focused pane's keys, those that fit whole, and the command palette's at the right."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "footer--item",
        "footer--key",
        "footer--description",
        "footer--edge",
    }
    DEFAULT_CSS = """
    FittingFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        & > .footer--item {
            background: $footer-item-background;
        }
        & > .footer--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        & > .footer--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        & > .footer--edge {
            color: $foreground 20%;
        }
    }
    """

    compact = reactive(False)
    """Keys without space inside them (set from the width; a change repaints)."""

    ALLOW_SELECT = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._keys: tuple[OfferedKey, ...] = ()

    @property
    def keys(self) -> tuple[OfferedKey, ...]:
        """The keys the footer offers now (the focused pane's), drawn or left out for want of
        room."""
        return self._keys

    @property
    def shown(self) -> list[OfferedKey]:
        """The keys drawn, in order (those that fit whole, and the command palette's)."""
        return [key for _start, key, _drawn in self._places()]

    def _places(self) -> list[tuple[int, OfferedKey, Text]]:
        """The keys drawn, each with the cell it starts at and its text: the pane's keys from
        the left while each fits whole beside the command palette's key, which ends the line."""
        width = self.size.width or self.app.size.width
        palette = [(key, self._drawn(key)) for key in self._keys if key.palette]
        room = width - sum(drawn.cell_len for _key, drawn in palette)
        places, used = [], 0
        for key in self._keys:
            if key.palette:
                continue
            drawn = self._drawn(key)
            if used + drawn.cell_len > room:
                break  # this key and those after it: not whole
            places.append((used, key, drawn))
            used += drawn.cell_len
        return places + [(room, key, drawn) for key, drawn in palette]

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self.bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen[Any]) -> None:
        """Take the keys of the pane focused now; a repaint in the frame the change makes."""
        if screen is not self.screen:
            return
        keys = self._offered(screen)
        if keys != self._keys:
            self._keys = keys
            self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        self.compact = event.size.width < COMPACT_BELOW

    def _offered(self, screen: Screen[Any]) -> tuple[OfferedKey, ...]:
        """The focused pane's keys to show (a binding's first key per action), and the
        command palette's last."""
        keys: list[OfferedKey] = []
        actions: set[str] = set()
        palette: OfferedKey | None = None
        for _node, binding, enabled, tooltip in screen.active_bindings.values():
            if binding.key == self.app.COMMAND_PALETTE_BINDING and self.app.ENABLE_COMMAND_PALETTE:
                palette = self._key(binding, enabled, binding.tooltip, palette=True)
            elif binding.show and binding.action not in actions:
                actions.add(binding.action)
                keys.append(self._key(binding, enabled, tooltip))
        return (*keys, *([palette] if palette is not None else []))

    def _key(
        self, binding: Binding, enabled: bool, tooltip: str, palette: bool = False
    ) -> OfferedKey:
        return OfferedKey(
            binding.key,
            self.app.get_key_display(binding),
            binding.description,
            enabled,
            tooltip or binding.description,
            palette,
        )

    def render(self) -> RenderResult:
        line = Text(no_wrap=True, overflow="crop", end="")
        for start, _key, drawn in self._places():
            line.append(" " * max(0, start - line.cell_len))  # before the palette's key
            line.append_text(drawn)
        return line

    def _drawn(self, key: OfferedKey) -> Text:
        """``key`` as the footer draws it, the space after it included."""
        item = self.get_component_rich_style("footer--item")
        if not key.enabled:
            item += Style(dim=True)
        key_style = item + self.get_component_rich_style("footer--key")
        description_style = item + self.get_component_rich_style("footer--description")
        edge = item + self.get_component_rich_style("footer--edge")
        if key.palette:  # the same at any width (as Textual's footer draws it)
            parts = [(PALETTE_EDGE, edge), (key.key_display, key_style)]
            parts += [(f" {key.description}", description_style), (" ", item)]
        elif not key.description:
            parts = [(key.key_display, key_style)]
            if self.compact:
                parts.append((" ", Style()))  # the space between keys: the footer's own
        elif self.compact:
            parts = [(key.key_display, key_style), (f" {key.description}", description_style)]
            parts.append((" ", Style()))
        else:
            parts = [
                (f" {key.key_display} ", key_style),
                (f"{key.description} ", description_style),
            ]
        return Text.assemble(*parts)

    def key_at(self, x: int) -> OfferedKey | None:
        """The key drawn at cell ``x``, if any."""
        places = self._places()
        return next(
            (key for start, key, drawn in places if start <= x < start + drawn.cell_len), None
        )

    def on_mouse_move(self, event: events.MouseMove) -> None:
        key = self.key_at(event.x)
        self.tooltip = key.tooltip if key is not None else None

    def on_click(self, event: events.Click) -> None:
        key = self.key_at(event.x)
        if key is None:
            return
        if key.enabled:
            self.app.simulate_key(key.key)
        else:
            self.app.bell()
