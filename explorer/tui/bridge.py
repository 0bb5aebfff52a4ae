"""The bridge between the live index (background threads) and the UI (messages).

:class:`IndexBridge` has ``start()`` and ``stop()``. ``start()`` returns at once: a thread imports
the live index module (watchdog and friends stay off the UI thread), opens the index, posts
:class:`~explorer.tui.messages.IndexOpened` and starts the writer. Every event of the live index
is posted to the target as it is, wrapped in one
:class:`~explorer.tui.messages.LiveIndexEvent` (``post_message`` is thread-safe); the bridge
never touches a widget.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from textual.message_pump import MessagePump

from explorer.core.live.events import LiveEvent
from explorer.settings.config import Settings
from explorer.tui import messages

if TYPE_CHECKING:
    from explorer.core.embed.embedder import Embedder
    from explorer.core.live.writer import LiveIndex


class IndexBridge:
    """Owns the :class:`~explorer.core.live.writer.LiveIndex` of one folder of the UI; reports
    only by messages."""

    def __init__(
        self,
        settings: Settings,
        target: MessagePump,
        embedder: Embedder | None = None,
        watch: bool = True,
        folder: str = "",
    ) -> None:
        self.settings = settings
        self.folder = folder
        """The collection name of the folder (every message says it)."""
        self.target = target
        self.embedder = embedder
        self.watch = watch
        self.live: LiveIndex | None = None
        self._lock = threading.Lock()
        self._stopped = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Open and start the live index on a thread; a no-op after the first call."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._open, name="explorer-tui-open", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the live index (joins its writer); idempotent, safe before it has opened."""
        with self._lock:
            self._stopped = True
            live, self.live = self.live, None
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        if live is not None:
            live.stop()

    def _open(self) -> None:
        try:
            from explorer.core.embed.embedder import keep_loaded_embedders
            from explorer.core.live.writer import LiveIndex

            # The window's folders (one, or several, added while it runs) share one copy of a
            # model's weights, as the resident reader's commands do.
            keep_loaded_embedders()

            live = LiveIndex(
                self.settings,
                self._on_event,
                embedder=self.embedder,
                watch=self.watch,
                holder="the explorer TUI",
            )
        except Exception as error:  # noqa: BLE001 - the UI shows the one line and stays up
            self.target.post_message(
                messages.IndexUnavailable(f"cannot open the index: {error}", self.folder)
            )
            return
        with self._lock:
            if self._stopped:
                live.index.close()
                return
            self.live = live
        self.target.post_message(messages.IndexOpened(live, self.folder))
        live.start()

    def _on_event(self, event: LiveEvent) -> None:
        """Called on the writer thread: post the event, nothing else."""
        self.target.post_message(messages.LiveIndexEvent(event, self.folder))
