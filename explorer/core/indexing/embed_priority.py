"""What is embedded first: the files the user looks at, then the newest, never starving the rest.

Embedding is the one slow step of indexing, so its order matters more than its speed. The
order, best first (:class:`Tier`):

1. the file open in the preview, alone, so its file vector exists after a few model batches;
2. its likely neighbours by keyword (:func:`keyword_neighbours`): the files a related list will
   most likely show;
3. the files in the current search results, in their order;
4. the files under the folder being browsed;
5. everything else, most recently modified first (``explorer index`` uses only this tier).

A user interface sets a :class:`Focus` on an :class:`EmbeddingPriority` from any thread; the
writer thread reads it between model batches through an :class:`EmbeddingQueue`, so the order
follows the user within one batch. The interface also says when the user types a search
(:meth:`EmbeddingPriority.note_typing`): the writer starts no model batch until they pause, so
the keystroke's search does not share the cores with the model. Keywords come first across
folders too: while one folder of a window reads its files into the keyword index
(:class:`KeywordPasses`), no other folder's model batch starts, so every folder is
keyword-searchable before the model takes the cores.

Every :data:`BASE_EVERY`-th window is taken from the base order whatever the focus, so a focus
that never stops (a folder holding everything) cannot starve the rest. Only the order changes:
chunks are marked embedded and files fresh exactly as before, so crash safety and the
one-writer rule are untouched.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import IntEnum

from explorer.core.ingest.function_words import FUNCTION_WORDS
from explorer.core.store.keywords import KeywordIndex
from explorer.core.store.manifest_records import FileRecord, PendingChunk

WINDOW_BATCHES = 4
"""Model batches per window when nothing the user looks at waits: a window's chunks are sorted
longest first (less padding per batch), and its files are finished together when it ends.
While focused files wait, a window holds one batch's worth, so they finish sooner."""
BASE_EVERY = 4
"""While focused files wait, every this-many-th window comes from the base order (newest
first): the rest always gets at least one model batch in four."""
TYPING_PAUSE = 1.0
"""Seconds after the user's last key in a search before the next model batch starts: while
they type, each key's search has the cores to itself (a batch already running finishes; the
TUI's are small, :data:`explorer.core.live.writer.LIVE_EMBED_BATCH`)."""
LONGEST_WAIT = 10.0
"""Most seconds one wait for a pause in the typing lasts: after it, a batch runs anyway."""
KEYWORD_POLL = 0.1
"""Seconds between two looks at whether another folder's keyword pass has ended."""
NEIGHBOURS = 20
"""How many keyword neighbours of the open file follow it."""
NEIGHBOUR_TERMS = 24
"""Most distinct words of the open file that make the neighbours' keyword query."""
_WORD = re.compile(r"[^\W\d_][\w]{3,}", re.UNICODE)


class Tier(IntEnum):
    """Why a file is embedded when it is: lower tiers go first."""

    OPEN = 0
    NEIGHBOUR = 1
    RESULT = 2
    FOLDER = 3
    REST = 4


@dataclass(frozen=True)
class Focus:
    """What the user looks at now; every field is optional."""

    open_file: str | None = None
    """The root-relative path open in the preview."""
    results: tuple[str, ...] = ()
    """The files of the current search results, best first."""
    folder: str | None = None
    """The root-relative folder being browsed (``""`` is the root, which names no file first)."""


class KeywordPasses:
    """The keyword passes running in one process: a folder's scan into its keyword index, or a
    batch of changed files. Each live index of a window counts its own here, and waits for the
    others' before a model batch (:meth:`wait_for_none`): the model takes both cores, and a
    folder still being read would wait behind another folder's embedding (the kernel's docs
    beside ``../shared/corpora`` were both keyword-searchable after 47.5 s without this rule,
    40.2 s with it: ``benchmarks/keywords_first.py``). A pass never waits; only embedding
    does."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0

    @contextmanager
    def running(self) -> Iterator[None]:
        """Count a keyword pass while the ``with`` block runs."""
        with self._lock:
            self._running += 1
        try:
            yield
        finally:
            with self._lock:
                self._running -= 1

    @property
    def any_running(self) -> bool:
        with self._lock:
            return self._running > 0

    def wait_for_none(self, cancel: threading.Event | None) -> float:
        """Block until no keyword pass runs (an embedding writer's own pass is never running
        while it embeds: both are its thread's) or ``cancel`` is set; the seconds waited."""
        began = time.monotonic()
        while self.any_running and not (cancel is not None and cancel.is_set()):
            if cancel is not None:
                cancel.wait(KEYWORD_POLL)
            else:
                time.sleep(KEYWORD_POLL)
        return time.monotonic() - began


KEYWORD_PASSES = KeywordPasses()
"""The keyword passes of this process's live indexes."""


class ModelSteps:
    """The document model's steps in one process, taken one at a time. Each live index of a
    window embeds on a thread of its own; two folders' steps at once split the cores between
    two model calls, each spreading its threads over all of them, and hold two sets of
    activations: a window of the kernel's docs and ``../shared/corpora``, 90 s into their
    embedding, peaked at 1,063-1,081 MB with both folders' steps at once and 988-1,008 MB one
    at a time (``benchmarks/RESULTS.md``, stop 63). A step waits for the one running; a
    writer told to stop while it waits stops waiting."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    @contextmanager
    def turn(self, cancel: threading.Event | None) -> Iterator[bool]:
        """Hold the model for one step while the ``with`` block runs; False (nothing held)
        when ``cancel`` is set while waiting."""
        while not self._lock.acquire(timeout=KEYWORD_POLL):
            if cancel is not None and cancel.is_set():
                yield False
                return
        try:
            yield True
        finally:
            self._lock.release()


MODEL_STEPS = ModelSteps()
"""The model steps of this process's syncs."""


class EmbeddingPriority:
    """The user's current :class:`Focus`, and when they last typed, shared between a UI thread
    and the writer thread; and the :class:`KeywordPasses` whose end a model batch waits for."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        keyword_passes: KeywordPasses | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._focus = Focus()
        self._generation = 0
        self._clock = clock
        self._typed_at: float | None = None
        self.keyword_passes = keyword_passes
        """The passes of the other folders of the process (None: this one is alone)."""

    def note_typing(self) -> None:
        """The user typed a key of a search: the writer starts no model batch until they
        pause (:meth:`wait_while_typing`). Safe from any thread, returns at once."""
        with self._lock:
            self._typed_at = self._clock()

    def typing_pause_left(self) -> float:
        """Seconds until the user counts as paused (0: paused now)."""
        with self._lock:
            typed_at = self._typed_at
        if typed_at is None:
            return 0.0
        return max(0.0, typed_at + TYPING_PAUSE - self._clock())

    def wait_while_typing(self, cancel: threading.Event | None) -> float:
        """Block the writer while the user types (until :data:`TYPING_PAUSE` after their last
        key), at most :data:`LONGEST_WAIT` at a time so the rest is never starved, or until
        ``cancel`` is set. Returns the seconds waited."""
        began = self._clock()
        while (left := self.typing_pause_left()) > 0:
            left = min(left, began + LONGEST_WAIT - self._clock())
            if left <= 0 or (cancel is not None and cancel.is_set()):
                break
            if cancel is not None:
                cancel.wait(left)
            else:
                time.sleep(left)
        return self._clock() - began

    def wait_for_turn(self, cancel: threading.Event | None) -> float:
        """Before a model batch: wait until no other folder's keyword pass runs, then for a
        pause in the typing (:meth:`wait_while_typing`); the seconds waited."""
        waited = 0.0
        if self.keyword_passes is not None:
            waited = self.keyword_passes.wait_for_none(cancel)
        return waited + self.wait_while_typing(cancel)

    def set_focus(self, focus: Focus) -> None:
        """Make ``focus`` the current one; the writer follows it from its next model batch."""
        with self._lock:
            if focus != self._focus:
                self._focus = focus
                self._generation += 1

    @property
    def focus(self) -> Focus:
        with self._lock:
            return self._focus

    def snapshot(self) -> tuple[int, Focus]:
        """(generation, focus): the generation changes whenever the focus does."""
        with self._lock:
            return self._generation, self._focus


def keyword_neighbours(keywords: KeywordIndex, path: str, limit: int = NEIGHBOURS) -> list[str]:
    """The ``limit`` files nearest to ``path`` by keyword, best first (not ``path`` itself).

    The query is the file's title and headings plus its most frequent longer words, OR-ed; BM25
    weighs the rare ones up. It stands in for related files before any vector exists.
    """
    chunks = keywords.chunks_by_id(keywords.chunk_ids(path))
    if not chunks:
        return []
    counts: Counter[str] = Counter()
    for chunk in chunks.values():
        for word in _WORD.findall(f"{chunk.title} {chunk.heading}".lower()):
            counts[word] += 3  # a title or heading word says more than a body word
        counts.update(_WORD.findall(chunk.text.lower()))
    terms = [w for w, _n in counts.most_common() if w not in FUNCTION_WORDS]
    terms = terms[:NEIGHBOUR_TERMS]
    if not terms:
        return []
    expression = " OR ".join(f'"{term}"' for term in terms)
    scores: dict[str, float] = {}
    for _chunk_id, other, score in keywords.search(expression, 40 * limit):
        if other != path:
            scores[other] = scores.get(other, 0.0) + score
    return sorted(scores, key=lambda p: -scores[p])[:limit]


class EmbeddingQueue:
    """Pending chunks handed out a model batch at a time, in the order the focus asks for.

    Chunks are grouped by file. A window takes whole files of one tier in priority order until
    it holds a batch of chunks (:data:`WINDOW_BATCHES` batches once no focused file waits; the
    open file always makes a window of its own), and hands them out longest first. A new focus
    drops the rest of the window: its chunks go back and the order is worked out again.
    """

    def __init__(
        self,
        chunks: Iterable[PendingChunk],
        records: Mapping[str, FileRecord],
        batch_size: int,
        priority: EmbeddingPriority | None = None,
        neighbours: Callable[[str], list[str]] | None = None,
    ) -> None:
        """``records``: the manifest (for modification times); ``neighbours``: the keyword
        neighbours of a path."""
        self._by_path: dict[str, dict[str, PendingChunk]] = {}
        for chunk in chunks:
            self._by_path.setdefault(chunk.path, {})[chunk.id] = chunk
        self._batch = max(1, batch_size)
        self._priority = priority
        self._neighbours = neighbours
        self._neighbours_of: tuple[str, list[str]] | None = None
        self._base = sorted(
            self._by_path,
            key=lambda p: (-(records[p].mtime_ns if p in records else 0), p),
        )
        self._base_rank = {path: rank for rank, path in enumerate(self._base)}
        self._base_at = 0
        """Every file of the base order before this one has been handed out whole (files only
        leave the queue): a window starts here rather than at the first file."""
        self._generation = -1
        self._tiers: dict[str, tuple[Tier, int]] = {}
        self._focused: list[str] = []
        """The files the focus ranks, best first (worked out once per focus)."""
        self._focused_at = 0
        self._window: list[PendingChunk] = []
        self._windows = 0
        self.remaining = sum(len(c) for c in self._by_path.values())

    def next_batch(self) -> list[PendingChunk]:
        """The next model batch (empty once every chunk has been handed out)."""
        self._follow_focus()
        if not self._window:
            self._window = self._fill_window()
        batch, self._window = self._window[: self._batch], self._window[self._batch :]
        for chunk in batch:
            left = self._by_path[chunk.path]
            del left[chunk.id]
            if not left:
                del self._by_path[chunk.path]
        self.remaining -= len(batch)
        return batch

    def tier_of(self, path: str) -> Tier:
        """The tier ``path`` is in under the current focus."""
        return self._tiers.get(path, (Tier.REST, 0))[0]

    # -- ordering -----------------------------------------------------------------------------
    def _follow_focus(self) -> None:
        if self._priority is None:
            if self._generation < 0:
                self._generation = 0
            return
        generation, focus = self._priority.snapshot()
        if generation == self._generation:
            return
        self._generation = generation
        self._window = []  # its chunks are still in _by_path: they come back in the new order
        self._tiers = tiers = self._rank(focus)
        rank = self._base_rank
        self._focused = sorted(tiers, key=lambda p: (*tiers[p], rank[p]))
        self._focused_at = 0

    def _rank(self, focus: Focus) -> dict[str, tuple[Tier, int]]:
        tiers: dict[str, tuple[Tier, int]] = {}

        def put(path: str, tier: Tier, rank: int) -> None:
            if path in self._by_path and (path not in tiers or tiers[path][0] > tier):
                tiers[path] = (tier, rank)

        if focus.open_file:
            put(focus.open_file, Tier.OPEN, 0)
            for rank, other in enumerate(self._neighbours_for(focus.open_file)):
                put(other, Tier.NEIGHBOUR, rank)
        for rank, path in enumerate(focus.results):
            put(path, Tier.RESULT, rank)
        if focus.folder:
            prefix = focus.folder.rstrip("/") + "/"
            for rank, path in enumerate(self._base):
                if path.startswith(prefix):
                    put(path, Tier.FOLDER, rank)
        return tiers

    def _neighbours_for(self, path: str) -> list[str]:
        if self._neighbours is None:
            return []
        if self._neighbours_of is None or self._neighbours_of[0] != path:
            self._neighbours_of = (path, self._neighbours(path))
        return self._neighbours_of[1]

    def _pending_from(self, paths: list[str], start: int) -> tuple[int, Iterator[str]]:
        """The first index from ``start`` on whose file still waits, and the waiting files of
        ``paths`` from there, in order (each window reads only the start of an order, not all
        of it: sorting every waiting file for each batch took 9 ms with 10,000 files)."""
        while start < len(paths) and paths[start] not in self._by_path:
            start += 1
        waiting = self._by_path
        return start, (paths[at] for at in range(start, len(paths)) if paths[at] in waiting)

    def _fill_window(self) -> list[PendingChunk]:
        self._focused_at, focused = self._pending_from(self._focused, self._focused_at)
        focused_left = self._focused_at < len(self._focused)
        if focused_left:
            self._windows += 1
        order: Iterator[str]
        if not focused_left or self._windows % BASE_EVERY == 0:
            self._base_at, order = self._pending_from(self._base, self._base_at)
            tier = None
        else:
            order, tier = focused, self.tier_of(self._focused[self._focused_at])
        # While files the user looks at wait, a window is one batch's worth of whole files, so
        # each of them finishes within a batch or two and the base order gets one batch in
        # BASE_EVERY; otherwise windows are longer and better packed.
        size = self._batch if focused_left else WINDOW_BATCHES * self._batch
        window: list[PendingChunk] = []
        for path in order:
            if tier is not None and self.tier_of(path) != tier:
                break  # one tier per window: sorting by length must not put the rest first
            window.extend(self._by_path[path].values())
            if tier == Tier.OPEN or len(window) >= size:
                break  # the open file makes a window of its own: its vector is awaited
        window.sort(key=lambda c: c.length, reverse=True)
        return window
