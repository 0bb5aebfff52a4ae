"""Fuzzy file-name matching for "quick open": rank files by how well a few typed keys match their
path or their title.

Matching works the way an editor's quick open does: the typed characters usually appear in order
in the path (``gsta`` finds ``guides/getting-started.md``), hits in the file name count more than
hits in the folders, and a small typo still finds the file (rapidfuzz's weighted ratio). A
file's title counts too (``only database`` finds the ADR titled "SQLite as the only database"):
the typed words found in the title, or a close fuzzy match of them. Words typed apart match in
any order, each in the path or the title (``getting started python`` finds
``languages/python/getting-started.md``), as fzf and VS Code do. Each match carries the
positions of the matched characters (in the path and in the title) so a UI can mark them. Case,
accents and compatibility forms are folded one character for one (``zurich`` finds
``Zürich.md``; see :func:`~explorer.core.ingest.keyword_text.match_fold`), so the positions
stay those of the path as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from explorer.core.ingest.keyword_text import match_fold

TYPO_CUTOFF = 72.0
"""Least rapidfuzz score for a path whose characters do not contain the query in order."""
TITLE_CUTOFF = 80.0
"""Least rapidfuzz partial ratio for a title that does not contain every typed word."""
TITLE_WORDS_BONUS = 15.0
"""Added (per word, at most three) when every typed word is in the title."""
WORD_IN_NAME = 130.0
"""A typed word found whole in the file name (the words' scores are averaged)."""
WORD_IN_PATH = 110.0
"""...in a folder name."""
WORD_IN_TITLE = 105.0
"""...in the title."""
WORD_SCATTERED = 70.0
"""...only as letters in order (``gs`` in ``getting-started``), times their contiguity."""
WORD_START_BONUS = 10.0
"""Added when a word found whole starts a word of the path or title."""
CANCEL_EVERY = 500
"""Files a match on a thread scores between two looks at whether it is still wanted."""


@dataclass(frozen=True)
class PathMatch:
    """A path that matches a query, its score (higher is better) and the matched places."""

    path: str
    score: float
    positions: tuple[int, ...] = ()
    """Indexes into ``path`` of the characters that matched, for highlighting."""
    title: str = ""
    """The file's title (for :func:`match_files`)."""
    title_positions: tuple[int, ...] = ()
    """Indexes into ``title`` of the characters that matched."""


@dataclass(slots=True)
class _Name:
    """A file as the matcher reads it: its path and title, and both folded once (not frozen:
    a frozen dataclass is made several times slower, and a tree holds thousands)."""

    path: str
    title: str
    folded: str
    folded_title: str
    name_start: int
    """Where the file name starts in :attr:`folded`."""
    stem: str
    """The folded file name without its suffix."""

    @classmethod
    def of(cls, path: str, title: str = "") -> _Name:
        folded = match_fold(path)
        name_start = folded.rfind("/") + 1
        name = folded[name_start:]
        stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
        return cls(path, title, folded, match_fold(title), name_start, stem)


class FileMatcher:
    """Quick open over one set of files: each path and title folded once, when the picker
    opens, not again at every key (a 3,607-file tree took 50-60 ms a key)."""

    def __init__(self, titles: Mapping[str, str]) -> None:
        """``titles``: ``{path: title}`` (an empty title where a file has none)."""
        self._names = [_Name.of(path, title) for path, title in titles.items()]

    def __len__(self) -> int:
        return len(self._names)

    def match(
        self, query: str, limit: int = 50, cancelled: Callable[[], bool] | None = None
    ) -> list[PathMatch] | None:
        """The ``limit`` best matches of ``query``, best first; a file matches by its path (as
        :func:`match_paths`), by its title or by the query's words, whichever is best.

        ``cancelled`` is asked every :data:`CANCEL_EVERY` files (a match on a thread, made
        stale by the next key): None when it says so."""
        keys = "".join(match_fold(query).split())
        if not keys:
            first = sorted(self._names, key=lambda name: name.path)[:limit]
            return [PathMatch(name.path, 0.0, title=name.title) for name in first]
        typed = match_fold(query).split()
        words = list(dict.fromkeys(typed))
        in_order = _in_order(keys)
        matches = []
        for count, name in enumerate(self._names, 1):
            if cancelled is not None and count % CANCEL_EVERY == 0 and cancelled():
                return None
            by_path = _score(keys, name, in_order)
            by_title = _title_score(typed, name.title, name.folded_title)
            by_words = _words_score(words, name) if len(words) > 1 else None
            if by_path is None and by_title is None and by_words is None:
                continue
            score, positions = (by_path.score, by_path.positions) if by_path else (0.0, ())
            title_positions: tuple[int, ...] = ()
            if by_title is not None:
                title_positions = by_title[1]
                if by_title[0] > score:
                    score, positions = by_title[0], ()
            if by_words is not None and by_words.score > score:
                score, positions = by_words.score, by_words.positions
                title_positions = by_words.title_positions
            matches.append(PathMatch(name.path, score, positions, name.title, title_positions))
        matches.sort(key=lambda m: (-m.score, len(m.path), m.path))
        return matches[:limit]


def match_paths(query: str, paths: Sequence[str], limit: int = 50) -> list[PathMatch]:
    """The ``limit`` best matches of ``query`` among ``paths``, best first.

    White space in the query is ignored. An empty query gives the first paths in sorted order.
    """
    keys = "".join(match_fold(query).split())
    if not keys:
        return [PathMatch(path, 0.0) for path in sorted(paths)[:limit]]
    in_order = _in_order(keys)
    matches = []
    for path in paths:
        match = _score(keys, _Name.of(path), in_order)
        if match is not None:
            matches.append(match)
    matches.sort(key=lambda m: (-m.score, len(m.path), m.path))
    return matches[:limit]


def match_files(query: str, titles: Mapping[str, str], limit: int = 50) -> list[PathMatch]:
    """The ``limit`` best matches of ``query`` among files ``{path: title}``, best first (one
    query; a picker keeps a :class:`FileMatcher`)."""
    return FileMatcher(titles).match(query, limit) or []


def _in_order(keys: str) -> Callable[[str], object]:
    """A test of whether ``keys`` appear in order in a text, run in C (most paths fail it;
    only those that pass are walked in Python for their positions). Each key is taken at its
    first place after the one before, with no going back (possessive runs): one pass over the
    text, where ``a.*?b.*?c`` took exponential time on a long query that fails."""
    pattern = "".join(f"[^{re.escape(char)}]*+{re.escape(char)}" for char in keys)
    return re.compile(pattern, re.DOTALL).match


def _words_score(words: Sequence[str], name: _Name) -> PathMatch | None:
    """Each of ``words`` matched on its own, in any order, in the path or the title; None
    when one of them matches nowhere. The score is the words' mean (a word whole in the file
    name counts most), on the path scores' scale."""
    lowered, lowered_title, name_start = name.folded, name.folded_title, name.name_start
    total = 0.0
    positions: set[int] = set()
    title_positions: set[int] = set()
    for word in words:
        found = lowered.find(word, name_start)
        if found == -1:
            found = lowered.find(word)
        if found != -1:
            score = WORD_IN_NAME if found >= name_start else WORD_IN_PATH
            score += WORD_START_BONUS if _starts_word(lowered, found) else 0.0
            positions.update(range(found, found + len(word)))
        elif (found := lowered_title.find(word)) != -1:
            score = WORD_IN_TITLE + (WORD_START_BONUS if _starts_word(lowered_title, found) else 0)
            title_positions.update(range(found, found + len(word)))
        else:
            scattered = _greedy(word, lowered, 0)
            if scattered is None:
                return None
            score = WORD_SCATTERED * _contiguity(scattered)
            positions.update(scattered)
        total += score
    return PathMatch(
        name.path,
        round(total / len(words), 2),
        tuple(sorted(positions)),
        name.title,
        tuple(sorted(title_positions)),
    )


def _starts_word(text: str, start: int) -> bool:
    return start == 0 or not text[start - 1].isalnum()


def _title_score(
    words: Sequence[str], title: str, lowered: str
) -> tuple[float, tuple[int, ...]] | None:
    """How well the query's ``words`` match ``title`` (folded: ``lowered``), on the path
    scores' scale, and where; or None."""
    if not title or not words:
        return None
    found = [lowered.find(word) for word in words]
    if all(start >= 0 for start in found):
        positions = sorted(
            {
                p
                for word, start in zip(words, found, strict=True)
                for p in range(start, start + len(word))
            }
        )
        ratio = fuzz.partial_ratio(" ".join(words), lowered)
        return round(ratio + TITLE_WORDS_BONUS * min(3, len(words)), 2), tuple(positions)
    alignment = fuzz.partial_ratio_alignment(" ".join(words), lowered, score_cutoff=TITLE_CUTOFF)
    if alignment is None or alignment.score < TITLE_CUTOFF:
        return None
    return round(alignment.score * 0.8, 2), tuple(range(alignment.dest_start, alignment.dest_end))


def _score(keys: str, file: _Name, in_order: Callable[[str], object]) -> PathMatch | None:
    path, lowered, name_start, stem = file.path, file.folded, file.name_start, file.stem
    name = lowered[name_start:]
    if not in_order(lowered):
        # A typo at best: below the cutoff rapidfuzz gives up early and says 0.
        best = max(
            fuzz.WRatio(keys, stem, score_cutoff=TYPO_CUTOFF),
            fuzz.WRatio(keys, lowered, score_cutoff=TYPO_CUTOFF),
        )
        if best < TYPO_CUTOFF:
            return None
        alignment = fuzz.partial_ratio_alignment(keys, lowered)
        span = range(alignment.dest_start, alignment.dest_end) if alignment else range(0)
        return PathMatch(path, round(best * 0.8, 2), tuple(span))

    positions = _positions(keys, lowered, name_start)
    assert positions is not None  # the keys are in order
    score = max(fuzz.WRatio(keys, stem) + 10.0, fuzz.WRatio(keys, lowered))
    if keys in name:
        score += 30.0 if stem.startswith(keys) else 20.0
    elif keys in lowered:
        score += 10.0
    in_name = sum(1 for p in positions if p >= name_start)
    score += 15.0 * in_name / len(keys)
    score += 10.0 * _contiguity(positions)
    return PathMatch(path, round(score, 2), positions)


def _positions(keys: str, lowered: str, name_start: int) -> tuple[int, ...] | None:
    """Where ``keys`` appear in order in ``lowered``, preferring the file name; None if not."""
    found = lowered.find(keys, name_start)
    if found == -1:
        found = lowered.find(keys)
    if found != -1:
        return tuple(range(found, found + len(keys)))
    # Match as much of the end of the keys as possible in the file name, the rest before it.
    tail = _greedy(keys, lowered, name_start)
    if tail is not None:
        return tail
    split = len(keys)
    name_part: list[int] = []
    index = len(lowered) - 1
    while split > 0 and index >= name_start:
        if lowered[index] == keys[split - 1]:
            name_part.append(index)
            split -= 1
        index -= 1
    head = _greedy(keys[:split], lowered[:name_start], 0) if split else ()
    if head is None:
        return _greedy(keys, lowered, 0)
    return tuple(head) + tuple(reversed(name_part))


def _greedy(keys: str, text: str, start: int) -> tuple[int, ...] | None:
    """In-order positions of ``keys`` in ``text`` from ``start``, preferring word starts."""
    return _walk(keys, text, start, prefer_word_starts=True) or _walk(keys, text, start, False)


def _walk(keys: str, text: str, start: int, prefer_word_starts: bool) -> tuple[int, ...] | None:
    positions: list[int] = []
    index = start
    for char in keys:
        found = text.find(char, index)
        if found == -1:
            return None
        if prefer_word_starts and not (positions and positions[-1] + 1 == found):
            # A later occurrence at the start of a word reads better ("gs" -> getting-Started).
            later = found
            while later > 0 and text[later - 1].isalnum():
                later = text.find(char, later + 1)
                if later == -1:
                    break
            if later != -1:
                found = later
        positions.append(found)
        index = found + 1
    return tuple(positions)


def _contiguity(positions: Sequence[int]) -> float:
    """The share of consecutive matched characters that sit next to each other (0–1)."""
    if len(positions) < 2:
        return 1.0
    runs = sum(1 for a, b in zip(positions, positions[1:], strict=False) if b == a + 1)
    return runs / (len(positions) - 1)
