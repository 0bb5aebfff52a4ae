"""Messages the main screen routes: opening a file, and the live index's events.

:class:`OpenFile` is the one way any widget asks for a file (the tree, the results, the related
and links lists, a link in the preview, the pickers): the screen opens it, records it in the
navigation history and loads its sidebar. The others come from
:class:`~explorer.tui.bridge.IndexBridge`: every event of the live index arrives as one
:class:`LiveIndexEvent` carrying the core's typed event; progress events merge
(``can_replace``) so a busy indexer never floods the UI's queue. Widgets' own messages
(``SearchPanel.Answered``...) live with the widgets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from textual.message import Message

from explorer.core.live.events import LiveEvent, ProgressEvent

if TYPE_CHECKING:
    from explorer.core.live.writer import LiveIndex


@dataclass
class OpenFile(Message):
    """Open ``path`` (root-relative) in the preview at ``line``.

    ``passages`` are the line ranges (1-based, inclusive) to mark and step through with n/N, a
    search hit's; with none, ``line`` alone is marked. ``line`` None: the best passage, or the
    top of the file. ``focus``: in a passage, the line of the query's words (a passage taller
    than the view is shown from there rather than from its start).
    """

    path: str
    line: int | None = None
    passages: tuple[tuple[int, int], ...] = ()
    focus: Mapping[tuple[int, int], int] = field(default_factory=dict)


@dataclass
class FollowLink(Message):
    """A link in the preview of ``source`` was clicked; ``href`` is its destination as the
    page writes it. The screen resolves it as ``explorer links`` does (a docs site's route,
    a vault's note) and opens the file, or says where it leads when that is no file here."""

    source: str
    href: str


@dataclass
class IndexOpened(Message):
    """The live index of the window's folder ``folder`` (its collection name) exists (its
    SQLite store is open); searches may run on ``live.index``."""

    live: LiveIndex
    folder: str = ""


@dataclass
class IndexUnavailable(Message):
    """The index of ``folder`` could not be opened; ``error`` is one line for the user."""

    error: str
    folder: str = ""


@dataclass
class LiveIndexEvent(Message):
    """One event of the live index of ``folder``, as the core sent it (its paths relative to
    that folder)."""

    event: LiveEvent
    folder: str = ""

    def can_replace(self, message: Message) -> bool:
        """A newer progress event replaces an older one of the same folder still queued."""
        return (
            isinstance(self.event, ProgressEvent)
            and isinstance(message, LiveIndexEvent)
            and isinstance(message.event, ProgressEvent)
            and message.folder == self.folder
        )
