"""Every key handled in the order it was pressed, by the widget focused when it was pressed.

Textual hands a key to the focused widget's message queue and resolves that widget's bindings
only once the key has bubbled back up to the app; meanwhile the next keys of the same read have
been handed out already, to the widget focused *then*. So a key that moves the focus left the
keys typed after it with the pane it left: "webhook" typed after Esc in the preview ran ``w``,
``o``, ``k`` there, and ``/service`` sent in one write opened an empty find field.

:class:`KeyRouter` resolves each key when the app receives it, before it takes the next: the
binding the footer shows for it (:attr:`Screen.active_bindings`, priority bindings first, then
from the focused widget up) runs at once, and a character for a focused text field is typed into
it at once. What neither takes goes Textual's usual way. While a screen that was just pushed
(a picker) has no focus yet, keys wait, in order, until it has one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from textual import events
from textual.widgets import Input

if TYPE_CHECKING:
    from textual.app import App
    from textual.screen import Screen


class KeyRouter:
    """Routes the app's keys (see the module's docstring); the app calls :meth:`route`."""

    def __init__(self, app: App[Any], usual: Callable[[events.Key], Awaitable[None]]) -> None:
        """``usual``: Textual's own handling of a key the router leaves (``App.on_event``)."""
        self.app = app
        self.usual = usual
        self._waiting: deque[events.Key] = deque()
        """Keys that came while the screen on top had no focus yet."""

    async def route(self, event: events.Key) -> bool:
        """Handle ``event`` now; False when Textual's usual way should (nothing takes it)."""
        screen = self.app.screen
        if self._waiting or (screen.focused is None and _will_focus(screen)):
            self._waiting.append(event)
            if len(self._waiting) == 1:
                self.app.call_after_refresh(self._replay)
            return True
        return await self._handle(event)

    async def _handle(self, event: events.Key) -> bool:
        screen = self.app.screen
        active = screen.active_bindings.get(event.key)
        if (
            active is not None
            and active.enabled
            and await self.app.run_action(active.binding.action, active.node)
        ):
            return True
        focused = screen.focused
        if isinstance(focused, Input) and event.is_printable and event.character:
            selection = focused.selection
            if selection.is_empty:
                focused.insert_text_at_cursor(event.character)
            else:
                focused.replace(event.character, *selection)
            return True
        return False

    async def _replay(self, tries: int = 0) -> None:
        """The keys that waited for a screen's focus, in order, once it has one (or after a
        few frames, whatever it has)."""
        screen = self.app.screen
        if screen.focused is None and _will_focus(screen) and tries < 20:
            self.app.call_after_refresh(self._replay, tries + 1)
            return
        while self._waiting:
            event = self._waiting.popleft()
            if not await self._handle(event):
                await self.usual(event)


def _will_focus(screen: Screen[Any]) -> bool:
    """Whether ``screen``, which has no focus, is a picker or dialog still opening (it focuses
    its field once mounted)."""
    from textual.screen import ModalScreen

    return isinstance(screen, ModalScreen) and (not screen.is_mounted or bool(screen.focus_chain))
