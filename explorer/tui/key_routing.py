"""Every key handled in the order it was pressed, by the widget focused when it was pressed.

Textual hands a key to the focused widget's message queue and resolves that widget's bindings
only once the key has bubbled back up to the app; meanwhile the next keys of the same read have
been handed out already, to the widget focused *then*. So a key that moves the focus left the
keys typed after it with the pane it left: "webhook" typed after Esc in the preview ran ``w``,
``o``, ``k`` there, and ``/service`` sent in one write opened an empty find field.

:class:`KeyRouter` resolves each key when the app receives it, before it takes the next: a
character for a focused text field is typed into it at once (whatever a pane around the field
binds to it: Textual lets ``/``, ``?`` and ``[`` through), else the binding the footer shows
for it (:attr:`Screen.active_bindings`, priority bindings first, then from the focused widget
up) runs at once; Esc and a character in one read (which a terminal sends as ``alt+w``) are the
two keys they were. What neither takes goes Textual's usual way. After a key's action, the keys
behind it wait for the next frame, in order (what the action set going, a picker pushed or a
message posted, is handled first), and while a picker that was just pushed has no focus yet,
until it has one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import ScreenStackError
from textual.widgets import Input

OPENING_FRAMES = 20
"""Frames the keys wait at most for a screen that opens to focus its field."""
WINDOW_FRAMES = 600
"""Frames the keys typed as the app starts wait at most for its window to focus a pane (it
does in a few; this only keeps a window that never focuses anything from eating the keys)."""

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
        """Keys that came while an earlier key's work was under way."""
        self._held = False
        self._ready = False
        """The window has shown its first screen with a pane focused (see :meth:`_opening`)."""

    async def route(self, event: events.Key) -> bool:
        """Handle ``event`` now (or after the keys before it); False when Textual's usual way
        should (nothing takes it)."""
        if self._held or self._waiting or self._opening():
            self._waiting.append(event)
            self._hold()
            return True
        return await self._handle(event)

    async def _handle(self, event: events.Key) -> bool:
        screen = self.app.screen
        focused = screen.focused
        character = _escaped_character(event, focused)
        field_move = isinstance(focused, Input) and event.key in ESCAPED_WORD_KEYS
        if character is not None and (field_move or event.key not in screen.active_bindings):
            # Esc and a letter in one read reach the app as alt+letter (or, for b and f, as
            # ctrl+left and ctrl+right): they are two keys.
            self._waiting.appendleft(events.Key(character, character))
            if not await self._handle(events.Key("escape", "\x1b")):
                await self.usual(events.Key("escape", "\x1b"))
            self._hold()
            return True
        if isinstance(focused, Input) and event.is_printable and event.character:
            # A character in a text field is typed, whatever an outer pane binds to it
            # (Textual lets ``/``, ``?`` and ``[`` through to the panes around a field).
            selection = focused.selection
            if selection.is_empty:
                focused.insert_text_at_cursor(event.character)
            else:
                focused.replace(event.character, *selection)
            return True
        active = screen.active_bindings.get(event.key)
        if (
            active is not None
            and active.enabled
            and await self.app.run_action(active.binding.action, active.node)
        ):
            # What the action set going (a message, a screen pushed) comes first: the keys
            # after it wait for the next frame.
            self._hold()
            return True
        return False

    def _opening(self) -> bool:
        """Whether the screen on top is still opening: the window itself until it has first
        given a pane the focus (keys typed as it starts wait for its search box: run earlier,
        a pane's key found no pane yet and the app failed), or a picker or dialog just pushed
        (it focuses its field once mounted)."""
        if not self._window_ready():
            return True
        return _dialog_opening(self.app.screen)

    def _window_ready(self) -> bool:
        """Whether the app's first screen has been shown with a pane focused (once true, it
        stays true)."""
        if self._ready:
            return True
        try:
            screen = self.app.screen
        except ScreenStackError:  # not even the first screen yet
            return False
        self._ready = screen.is_mounted and screen.focused is not None
        return self._ready

    def _hold(self) -> None:
        if not self._held:
            self._held = True
            self.app.call_after_refresh(self._release)

    async def _release(self, frames: int = 0) -> None:
        """The keys that waited, in order, once the app has handled what came before them
        (a screen just pushed has its focus, or a few frames have passed)."""
        limit = OPENING_FRAMES if self._window_ready() else WINDOW_FRAMES
        if self._opening() and frames < limit:
            self.app.call_after_refresh(self._release, frames + 1)
            return
        self._held = False
        while self._waiting and not self._held:
            event = self._waiting.popleft()
            if not await self._handle(event):
                await self.usual(event)


ESCAPED_WORD_KEYS = {"ctrl+left": "b", "ctrl+right": "f"}
"""Textual reads Esc then ``b`` (or ``f``) in one read as ctrl+left (ctrl+right), the word
moves some terminals send; outside a text field, where no pane binds them, they are the Esc and
the letter typed (seen in tmux: Esc then "backup" copied the path with the ``c`` of it). In a
text field they are Esc and the letter where the word move would do nothing but drop what is
selected: the field empty or wholly selected (a restored query), or the cursor already at the
end it moves to (seen in tmux: a restored query, Esc, then "free will" gave the query with
"ree will" after it)."""


def _escaped_character(event: events.Key, focused: object) -> str | None:
    """The character typed right after Esc when ``event`` is what a terminal makes of the two
    in one read (``alt+w``; ``ctrl+left`` for ``b`` and ``ctrl+right`` for ``f`` outside a
    text field, or in one where the word move would not move: see
    :data:`ESCAPED_WORD_KEYS`), else None."""
    character = event.character
    if (
        event.key.startswith("alt+")
        and character is not None
        and len(character) == 1
        and character.isprintable()
    ):
        return character
    letter = ESCAPED_WORD_KEYS.get(event.key)
    if letter is None or not isinstance(focused, Input):
        return letter
    value, selection = focused.value, focused.selection
    if not value or (selection.start, selection.end) in ((0, len(value)), (len(value), 0)):
        return letter
    at = focused.cursor_position
    idle = at == len(value) if letter == "f" else at == 0
    return letter if selection.is_empty and idle else None


def _dialog_opening(screen: Screen[Any]) -> bool:
    """Whether ``screen`` is a picker or dialog still opening (it focuses its field once
    mounted)."""
    from textual.screen import ModalScreen

    if screen.focused is not None or not isinstance(screen, ModalScreen):
        return False
    return not screen.is_mounted or bool(screen.focus_chain)
