"""Sessions: reopen a folder where the user left it.

Per window (named like an index directory: the folder's name and a hash of its absolute path; a
window on several folders has one session for that set of folders), one small JSON file in the
platform's state directory (``$XDG_STATE_HOME/explorer/sessions``, found by platformdirs;
``EXPLORER_STATE_DIR`` moves it) holds the query, the mode, the filter
field, the open file and the line at the top of the preview, the queries typed (Up in the
search box) and the files opened recently (the recent-files picker).

Remembering is on unless ``EXPLORER_NO_SESSION`` is set (to anything but ``0``) or the TUI's
preferences file says ``"remember_session": false`` (the command palette's "Stop remembering
sessions" writes it). A session file that cannot be read (nested too deeply, huge, binary, a
pipe, a folder) is set aside and the window says so once (see :mod:`explorer.core.state_files`);
one that cannot be written is not an error: the state is only a convenience. A state folder
that other users can write is refused: sessions are then off, and the window says why.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from explorer.core.models import SearchMode
from explorer.core.state_files import (
    StateFolderUnsafe,
    folder_problem,
    read_json_object,
    write_state,
)
from explorer.settings.locations import STATE_DIR_ENV, state_dir

NO_SESSION_ENV = "EXPLORER_NO_SESSION"
"""Set (to anything but 0), sessions are neither read nor written."""
REMEMBER_KEY = "remember_session"
"""The key of the TUI's preferences (``tui.json``) that turns sessions off when false."""
VERSION = 1


def enabled(preferences: dict[str, object]) -> bool:
    """Whether sessions are remembered, by the environment and the TUI's ``preferences``."""
    if os.environ.get(NO_SESSION_ENV, "0") not in ("", "0"):
        return False
    return preferences.get(REMEMBER_KEY, True) is not False


@dataclass
class Session:
    """Where the user left a folder."""

    query: str = ""
    mode: SearchMode = SearchMode.HYBRID
    filter: str = ""
    """The path filter field, as typed."""
    path: str | None = None
    """The file open in the preview."""
    top: int = 1
    """The 1-based line at the top of the preview."""
    line: int | None = None
    """The marked line, if any."""
    queries: list[str] = field(default_factory=list)
    recent: list[str] = field(default_factory=list)
    history: dict[str, object] = field(default_factory=dict)
    """Back and forward (:meth:`explorer.tui.history.NavigationHistory.to_data`; it reads it
    back and drops what is of the wrong shape)."""

    def to_json(self) -> str:
        data = asdict(self)
        data["mode"] = str(self.mode)
        data["version"] = VERSION
        return json.dumps(data, indent=1, ensure_ascii=False) + "\n"

    @classmethod
    def from_data(cls, data: dict[str, object]) -> Session:
        """A session from its JSON object; anything of the wrong shape is left at its default."""
        session = cls()
        query, mode, filter, path = (data.get(k) for k in ("query", "mode", "filter", "path"))
        top, line = data.get("top"), data.get("line")
        if isinstance(query, str):
            session.query = query
        if isinstance(mode, str) and mode in {str(each) for each in SearchMode}:
            session.mode = SearchMode(mode)
        if isinstance(filter, str):
            session.filter = filter
        if isinstance(path, str) and path:
            session.path = path
        if isinstance(top, int) and top >= 1:
            session.top = top
        if isinstance(line, int) and line >= 1:
            session.line = line
        for key in ("queries", "recent"):
            value = data.get(key)
            if isinstance(value, list):
                setattr(session, key, [item for item in value if isinstance(item, str)])
        _read_history(data, session)
        return session


def _read_history(data: dict[str, object], session: Session) -> None:
    """The back-and-forward history, as saved (its own reader checks the places)."""
    history = data.get("history")
    if isinstance(history, dict):
        session.history = history


def session_path(roots: Sequence[Path]) -> Path:
    """The session file of a window on the folders ``roots`` (one folder's is named after it;
    several folders share one session, whatever their order)."""
    resolved = sorted(str(root.resolve()) for root in roots)
    digest = hashlib.sha1("\n".join(resolved).encode("utf-8")).hexdigest()[:12]
    label = Path(resolved[0]).name if len(resolved) == 1 else f"{len(resolved)}-folders"
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in label) or "root"
    return state_dir() / "sessions" / f"{name}-{digest}.json"


def sessions_problem() -> str:
    """Why sessions cannot be kept safely (their folder can be written by other users), or
    ``""``; the window then neither reads nor writes them and says this once."""
    problem = folder_problem(state_dir() / "sessions", state_dir())
    if not problem:
        return ""
    return f"sessions are off: {problem}; make it private (chmod 700) or set {STATE_DIR_ENV}"


def load_session(roots: Sequence[Path]) -> tuple[Session, str]:
    """The session of a window on ``roots``, or a new one (none yet, or unreadable), and the
    note that says a session file was set aside (else ``""``)."""
    read = read_json_object(session_path(roots), "the session file")
    if read.data is None:
        return Session(), read.note
    return Session.from_data(read.data), ""


def save_session(roots: Sequence[Path], session: Session) -> None:
    """Write the session of a window on ``roots`` (private to the user: it holds queries and
    file names); best effort, never into a folder other users can write."""
    try:
        write_state(session_path(roots), session.to_json(), state_dir())
    except (OSError, StateFolderUnsafe):
        pass
