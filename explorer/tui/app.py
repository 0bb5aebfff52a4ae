"""The explorer app: loads settings and themes, shows the main screen.

``make_app`` is shared by the CLI (``explorer [ROOT]`` → :func:`run_app`) and the tests. Nothing
slow is imported here: the index, Chroma and the model open on threads after the first frame.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App, SystemCommand
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.theme import Theme

from explorer.core.retrieval.scopes import Scope
from explorer.core.safe_text import safe_text
from explorer.settings.config import NamedFolder, Settings
from explorer.tui import themes
from explorer.tui.key_routing import KeyRouter
from explorer.tui.screens.main import MainScreen
from explorer.tui.terminal_watch import EXIT_STATUS, terminal_present, watch_terminal

if TYPE_CHECKING:
    from explorer.core.embed.embedder import Embedder

FIRST_FRAME_ENV = "EXPLORER_FIRST_FRAME_FILE"
"""If set, the app writes the wall-clock time of its first painted frame to this file..."""
EXIT_AFTER_FIRST_FRAME_ENV = "EXPLORER_EXIT_AFTER_FIRST_FRAME"
"""...and, if this is set too, quits right after (used by benchmarks/tui.py)."""


COLLECTOR_THRESHOLDS = (10_000, 10, 10)
"""The cyclic garbage collector's thresholds while the window runs (Python's: 700, 10, 10). A
window holds a long document's lines and Textual's nodes (some 200,000 objects with a 345-page
PDF open); each full collection walks them all, 100-140 ms on this machine, and with Python's
thresholds one came every second or third key (19 in 40 zooms and page keys). Collecting the
young objects every 10,000 allocations instead of 700 made that none in the same 40 keys; what
refcounting frees (nearly everything) is freed as before."""


class ExplorerApp(App[None]):
    """A terminal document explorer with live hybrid search."""

    CSS_PATH = "app.tcss"
    TITLE = "explorer"
    COMMAND_PALETTE_BINDING = "f1"
    """ctrl+p is quick open, as in editors; F1 opens the command palette (as in VS Code)."""

    def __init__(
        self,
        folders: Settings | Sequence[NamedFolder],
        embedder: Embedder | None = None,
        watch: bool = True,
        scopes: Sequence[Scope] = (),
    ) -> None:
        """A window on one folder (its settings) or on several named folders (collections,
        searched as one; ``scopes`` are the config file's named scopes)."""
        super().__init__()
        if "TEXTUAL_ANIMATIONS" not in os.environ:
            # A key moves the view in the frame after it, never over half a second (Textual
            # animates the scroll of Home, End and the page keys in a scrolling pane).
            self.animation_level = "none"
        self.folders = folders
        self.scopes = tuple(scopes)
        self.embedder = embedder
        self.watch_files = watch
        """Start the file watcher (``watch`` itself is Textual's method for reactives)."""
        self.theme_problems: list[str] = []
        self._load_themes()
        self.key_router = KeyRouter(self, super().on_event)
        """Each key handled in order, by the widget focused when it was pressed."""

    # -- themes -------------------------------------------------------------------------------
    def _load_themes(self) -> None:
        loaded = themes.load_themes()
        self.theme_problems = list(loaded.problems)
        for theme in loaded.themes:
            self.register_theme(theme)
        preferences = themes.read_preferences()
        if preferences.note:
            self.theme_problems.append(preferences.note)
        if problem := themes.preferences_problem():
            self.theme_problems.append(problem)
        wanted = (preferences.data or {}).get("theme")
        if isinstance(wanted, str) and wanted in self.available_themes:
            self.theme = wanted
        else:
            if isinstance(wanted, str) and wanted != themes.DEFAULT_THEME:
                self.theme_problems.append(
                    f"theme {wanted!r} is not available; using {themes.DEFAULT_THEME}"
                )
            self.theme = themes.DEFAULT_THEME

    def _remember_theme(self, theme: Theme) -> None:
        themes.save_preference("theme", theme.name)

    async def on_event(self, event: events.Event) -> None:
        if (
            isinstance(event, events.Key)
            and not event.is_forwarded
            and await self.key_router.route(event)
        ):
            return
        await super().on_event(event)

    # -- lifecycle ----------------------------------------------------------------------------
    def get_default_screen(self) -> Screen[None]:
        return MainScreen(
            self.folders, embedder=self.embedder, watch=self.watch_files, scopes=self.scopes
        )

    def on_mount(self) -> None:
        gc.set_threshold(*COLLECTOR_THRESHOLDS)
        for problem in self.theme_problems:
            self.notify(problem, title="Theme", severity="warning", timeout=10)
        self.theme_changed_signal.subscribe(self, self._remember_theme)
        if os.environ.get(FIRST_FRAME_ENV):
            self.call_after_refresh(self._first_frame)
        if not self.is_headless and sys.__stdin__ is not None:
            watch_terminal(sys.__stdin__.fileno(), asyncio.get_running_loop(), self.exit)

    def _first_frame(self) -> None:
        Path(os.environ[FIRST_FRAME_ENV]).write_text(repr(time.time()))
        if os.environ.get(EXIT_AFTER_FIRST_FRAME_ENV):
            self.exit()

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every notification passes here: its text (error messages name files) is shown with
        control characters escaped and, unless asked, not parsed as markup."""
        kwargs: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        super().notify(
            safe_text(message, keep_lines=True),
            title=safe_text(title),
            severity=severity,
            markup=markup,
            **kwargs,
        )

    async def action_quit(self) -> None:
        """Quit (ctrl+q), the session written first (widgets are gone once it exits)."""
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                screen.save_session()
                screen.stop_indexes_soon()
        await super().action_quit()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, MainScreen):
            yield from screen.system_commands()


def make_app(
    root: Path,
    index_dir: Path | None = None,
    model: str | None = None,
    embedder: Embedder | None = None,
    watch: bool = True,
    chroma_url: str | None = None,
) -> ExplorerApp:
    """The app for ``root`` (the index dir and model resolved as everywhere else).

    ``embedder`` replaces the model (tests pass a fake one; its ``name`` becomes the model name
    stored with the index). ``watch=False`` leaves the file watcher off.
    """
    if model is None and embedder is not None:
        model = getattr(embedder, "name", None)
    settings = Settings.for_root(root, index_dir, model=model, chroma_url=chroma_url)
    return ExplorerApp(settings, embedder=embedder, watch=watch)


def run_app(
    root: Path,
    index_dir: Path | None = None,
    model: str | None = None,
    chroma_url: str | None = None,
) -> int:
    """Run the explorer on ``root`` in this terminal until the user quits; its exit status."""
    return run_in_terminal(
        make_app(Path(root), index_dir=index_dir, model=model, chroma_url=chroma_url)
    )


def run_window(folders: Sequence[NamedFolder], scopes: Sequence[Scope] = ()) -> int:
    """Run the explorer on several named folders in this terminal until the user quits; its
    exit status."""
    return run_in_terminal(ExplorerApp(folders, scopes=scopes))


def run_in_terminal(app: App[Any]) -> int:
    """Run ``app`` until it ends; its exit status. A terminal that went away ends it as a
    hang-up (:data:`~explorer.tui.terminal_watch.EXIT_STATUS`), not as an error: Textual's
    input thread then fails on the lost terminal and leaves its traceback to be printed
    there at exit, which fails in turn."""
    try:
        app.run()
    except OSError:
        if sys.__stdin__ is None or terminal_present(sys.__stdin__.fileno()):
            raise
        return EXIT_STATUS
    return app.return_code or 0
