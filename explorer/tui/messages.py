"""Messages that come from the live index's threads to the main screen.

Widgets' own messages (``SearchPanel.Answered``, ``ResultsList.Opened``...) live with the
widgets; these are the ones :class:`~explorer.tui.bridge.IndexBridge` posts. Every event of the
live index arrives as one :class:`LiveIndexEvent` carrying the core's typed event; progress
events merge (``can_replace``) so a busy indexer never floods the UI's queue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

from explorer.core.live.events import LiveEvent, ProgressEvent

if TYPE_CHECKING:
    from explorer.core.live.writer import LiveIndex


@dataclass
class IndexOpened(Message):
    """The live index exists (its SQLite store is open); searches may run on ``live.index``."""

    live: LiveIndex


@dataclass
class IndexUnavailable(Message):
    """The index could not be opened; ``error`` is one line for the user."""

    error: str


@dataclass
class LiveIndexEvent(Message):
    """One event of the live index, as the core sent it."""

    event: LiveEvent

    def can_replace(self, message: Message) -> bool:
        """A newer progress event replaces an older one still queued."""
        return (
            isinstance(self.event, ProgressEvent)
            and isinstance(message, LiveIndexEvent)
            and isinstance(message.event, ProgressEvent)
        )
