"""What the user did, in the order they did it: the places read (back and forward, as in a
browser), the files opened most recently, and the queries typed (Up and Down in the search box,
as in a shell). Plain data, no widget: the screen and the search box keep one each, and the
session stores them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

PLACES_KEPT = 100
"""Places back and forward remember."""
RECENT_KEPT = 50
"""Files the recent-files picker lists."""
QUERIES_KEPT = 200
"""Queries Up in the search box goes back through."""


@dataclass(frozen=True)
class Place:
    """Where the reader was: a file, the line at the top of the view, and the passages marked."""

    path: str
    top: int = 1
    """The 1-based line at the top of the preview."""
    passages: tuple[tuple[int, int], ...] = ()
    line: int | None = None
    """The marked line (a passage's start), if any."""


class NavigationHistory:
    """Back and forward over the places read, as a browser does: opening a file after going
    back drops the places ahead."""

    def __init__(self, limit: int = PLACES_KEPT) -> None:
        self.limit = limit
        self.places: list[Place] = []
        self.index = -1
        """The place shown (-1: none yet)."""

    @property
    def current(self) -> Place | None:
        return self.places[self.index] if 0 <= self.index < len(self.places) else None

    @property
    def can_go_back(self) -> bool:
        return self.index > 0

    @property
    def can_go_forward(self) -> bool:
        return self.index + 1 < len(self.places)

    def visit(self, place: Place) -> None:
        """``place`` is now shown: it follows the current one, and what was ahead is dropped
        (the place shown again is not a new one: back would show the same)."""
        if place == self.current:
            return
        del self.places[self.index + 1 :]
        self.places.append(place)
        if len(self.places) > self.limit:
            del self.places[: len(self.places) - self.limit]
        self.index = len(self.places) - 1

    def remember_top(self, top: int) -> None:
        """The reader scrolled: coming back to the current place shows ``top`` again."""
        current = self.current
        if current is not None:
            self.places[self.index] = replace(current, top=top)

    def rename(self, renamed: Callable[[str], str | None]) -> None:
        """Every place's path as ``renamed`` says (a window opened or closed a folder, so its
        paths changed); a place whose path it maps to None is dropped."""
        kept: list[Place] = []
        current = self.index
        for position, place in enumerate(self.places):
            path = renamed(place.path)
            if path is None:
                if position <= self.index:
                    current -= 1
                continue
            kept.append(replace(place, path=path))
        self.places = kept
        self.index = min(max(current, 0 if kept else -1), len(kept) - 1)

    def to_data(self) -> dict[str, object]:
        """The places and which is shown, as JSON-ready data (the session keeps them)."""
        places = [
            {
                "path": p.path,
                "top": p.top,
                "passages": [list(s) for s in p.passages],
                "line": p.line,
            }
            for p in self.places
        ]
        return {"places": places, "index": self.index}

    @classmethod
    def from_data(
        cls, data: Mapping[str, object], keep: Callable[[str], bool]
    ) -> NavigationHistory:
        """The history saved by :meth:`to_data`, with only the places whose path ``keep``
        accepts (a file gone since); anything of the wrong shape is left out."""
        history = cls()
        places = data.get("places")
        index = data.get("index")
        if not isinstance(places, list) or not isinstance(index, int):
            return history
        current = index
        for position, item in enumerate(places):
            place = _place(item)
            if place is None or not keep(place.path):
                if position <= index:
                    current -= 1
                continue
            history.places.append(place)
        del history.places[: max(0, len(history.places) - history.limit)]
        history.index = min(max(current, 0 if history.places else -1), len(history.places) - 1)
        return history

    def back(self) -> Place | None:
        """The place before the current one (and it becomes current), or None."""
        if not self.can_go_back:
            return None
        self.index -= 1
        return self.places[self.index]

    def forward(self) -> Place | None:
        """The place after the current one (and it becomes current), or None."""
        if not self.can_go_forward:
            return None
        self.index += 1
        return self.places[self.index]


def _place(item: object) -> Place | None:
    """A place as :meth:`NavigationHistory.to_data` wrote it, or None."""
    if not isinstance(item, dict):
        return None
    path, top, spans, line = (item.get(k) for k in ("path", "top", "passages", "line"))
    if not isinstance(path, str) or not path or not isinstance(top, int) or top < 1:
        return None
    passages = tuple(
        (span[0], span[1])
        for span in (spans if isinstance(spans, list) else [])
        if isinstance(span, list)
        and len(span) == 2
        and all(isinstance(n, int) and n >= 1 for n in span)
    )
    return Place(path, top, passages, line if isinstance(line, int) and line >= 1 else None)


class RecentFiles:
    """The files opened, most recent first, each once."""

    def __init__(self, paths: list[str] | None = None, limit: int = RECENT_KEPT) -> None:
        self.limit = limit
        self.paths: list[str] = list(dict.fromkeys(paths or []))[:limit]

    def add(self, path: str) -> None:
        if path in self.paths:
            self.paths.remove(path)
        self.paths.insert(0, path)
        del self.paths[self.limit :]

    def forget(self, path: str) -> None:
        """A file that no longer exists leaves the list."""
        if path in self.paths:
            self.paths.remove(path)

    def rename(self, renamed: Callable[[str], str | None]) -> None:
        """Every path as ``renamed`` says; one it maps to None leaves the list."""
        paths = (renamed(path) for path in self.paths)
        self.paths = list(dict.fromkeys(path for path in paths if path is not None))


class QueryHistory:
    """Queries typed, oldest first; Up and Down walk through them like a shell's history.

    While walking, the text being typed before the first Up is kept, and Down past the newest
    query brings it back.
    """

    def __init__(self, queries: list[str] | None = None, limit: int = QUERIES_KEPT) -> None:
        self.limit = limit
        self.queries: list[str] = list(queries or [])[-limit:]
        self._position: int | None = None
        """The query shown while walking (None: not walking)."""
        self._typed = ""

    @property
    def browsing(self) -> bool:
        return self._position is not None

    def add(self, query: str) -> None:
        """Remember ``query`` (the newest; an earlier copy of it moves here)."""
        query = query.strip()
        self._position = None
        if not query:
            return
        if query in self.queries:
            self.queries.remove(query)
        self.queries.append(query)
        del self.queries[: max(0, len(self.queries) - self.limit)]

    def older(self, typed: str) -> str | None:
        """The query before the one shown (``typed``: the field's text now), or None at the
        oldest."""
        if self._position is None:
            if not self.queries:
                return None
            self._typed = typed
            start = len(self.queries)
            # Up on a query just typed (and remembered) goes to the one before it.
            if self.queries[-1] == typed.strip():
                start -= 1
            if start == 0:
                return None
            self._position = start - 1
            return self.queries[self._position]
        if self._position == 0:
            return None
        self._position -= 1
        return self.queries[self._position]

    def newer(self) -> str | None:
        """The query after the one shown, the text typed before walking after the newest, or
        None when not walking."""
        if self._position is None:
            return None
        if self._position + 1 < len(self.queries):
            self._position += 1
            return self.queries[self._position]
        self._position = None
        return self._typed

    def stop(self) -> None:
        """The user typed: no longer walking."""
        self._position = None
