"""A call due after a delay that stopping really cancels.

Textual's ``set_timer`` does not call its callback when the delay ends: it queues it on the
widget with ``call_next``. Stopping the timer after the delay has ended but before the queued
call has run therefore cancels nothing, and the stale call runs after whatever stopped it.
The related-files panel met that race: its answer came at the note's delay, the rows went on
show, then the queued note ("Finding related files…") took their place for good.
:class:`Later` checks, when the call runs, that it was not stopped in the meantime.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.message_pump import MessagePump


class Later:
    """``callback`` runs on ``owner`` after ``delay`` seconds unless :meth:`stop` came first."""

    def __init__(self, owner: MessagePump, delay: float, callback: Callable[[], object]) -> None:
        self._callback: Callable[[], object] | None = callback
        self._timer = owner.set_timer(delay, self._due)

    @property
    def pending(self) -> bool:
        """The call has neither run nor been stopped."""
        return self._callback is not None

    def stop(self) -> None:
        """The call will not run, even when Textual has already queued it."""
        self._callback = None
        self._timer.stop()

    def _due(self) -> None:
        callback, self._callback = self._callback, None
        if callback is not None:
            callback()
