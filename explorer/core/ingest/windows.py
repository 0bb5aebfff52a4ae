"""Sections of a text and the chunker that turns them into chunks of at most ``max_tokens``.

A :class:`Section` is chunked whole when it fits, else at its finer structure, else into
overlapping token windows cut at line, paragraph, sentence or word boundaries.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass

from explorer.core.ingest.documents import Chunk

TokenSpans = Callable[[str], list[tuple[int, int]]]
"""Character ``(start, end)`` of each model token in a text, without special tokens."""

_NON_BLANK = re.compile(r"\S")


@dataclass
class Section:
    """A span of the text to chunk, and how to split it more finely if it is too long."""

    start: int
    end: int
    heading: str
    finer: Callable[[], list[Section]] | None = None


class Chunker:
    """Turns sections of one text into chunks no longer than ``max_tokens`` tokens."""

    def __init__(self, text: str, token_spans: TokenSpans, max_tokens: int, overlap: int) -> None:
        self.text = text
        self.token_spans = token_spans
        self.max_tokens = max_tokens
        self.overlap = overlap
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.chunks: list[Chunk] = []

    def line_range(self, first: int, last: int) -> tuple[int, int]:
        """Character span of the 1-based lines ``first``..``last`` (inclusive)."""
        starts = self.line_starts
        return starts[first - 1], starts[last] if last < len(starts) else len(self.text)

    def line_start(self, pos: int) -> int:
        return self.line_starts[bisect_right(self.line_starts, pos) - 1]

    def trim(self, start: int, end: int) -> tuple[int, int] | None:
        """The span without leading blank lines and trailing whitespace; None if blank."""
        first = _NON_BLANK.search(self.text, start, end)
        if first is None:
            return None
        end = start + len(self.text[start:end].rstrip())
        return max(start, self.line_start(first.start())), end

    def emit(self, start: int, end: int, heading: str) -> None:
        if (span := self.trim(start, end)) is not None:
            start, end = span
            first, last = (bisect_right(self.line_starts, pos) for pos in (start, end - 1))
            self.chunks.append(Chunk(self.text[start:end], heading, first, last, start, end))

    def add(self, section: Section) -> None:
        """Chunk one section: whole, at its finer structure, or in windows."""
        span = self.trim(section.start, section.end)
        if span is None:
            return
        start, end = span
        spans = self.token_spans(self.text[start:end])
        if len(spans) <= self.max_tokens:
            self.emit(start, end, section.heading)
            return
        finer = section.finer() if section.finer is not None else []
        if len(finer) > 1:
            for part in finer:
                self.add(part)
            return
        self.windows(start, end, [(a + start, b + start) for a, b in spans], section.heading)

    def windows(self, start: int, end: int, spans: list[tuple[int, int]], heading: str) -> None:
        """Overlapping windows of at most ``max_tokens`` tokens over ``text[start:end]``."""
        text, n = self.text, len(spans)
        starts = [a for a, _ in spans]
        i, ws, prev_cut = 0, start, start
        while i < n:
            j = min(i + self.max_tokens, n)
            while True:
                if j == n:
                    cut, mid_line = end, False
                else:
                    cut, mid_line = self._cut(spans, i, j, prev_cut)
                if not (mid_line or ws != self.line_start(ws)) or j - i <= 1:
                    break
                if _at_word_edge(text, ws) and _at_word_edge(text, cut):
                    break  # word-piece tokens never span white space: the count holds
                count = len(self.token_spans(text[ws:cut]))  # a mid-word edge may re-tokenize
                if count <= self.max_tokens:
                    break
                j = max(i + 1, j - (count - self.max_tokens))
            self.emit(ws, cut, heading)
            k = bisect_left(starts, cut)
            if k >= n:
                return
            prev_cut = cut
            nxt = max(k - self.overlap, i + 1)
            # The next window starts near ``nxt``, at a line start if one is close, else at a
            # sentence start, else at a word boundary, else at a token.
            floor = max(i + 1, k - 2 * self.overlap)
            near = sorted(range(floor, k), key=lambda m: (m > nxt, abs(m - nxt)))
            m = next((m for m in near if self.line_start(starts[m]) == starts[m]), None)
            if m is None:
                m = next((m for m in near if _sentence_start(text, starts[m])), None)
            if m is None:
                m = next((m for m in range(nxt, i, -1) if text[starts[m] - 1].isspace()), nxt)
            ws, i = starts[m], m

    def _cut(self, spans: list[tuple[int, int]], i: int, j: int, floor: int) -> tuple[int, bool]:
        """Where a window holding tokens ``i``..``j-1`` ends; True if that is not a line break."""
        text, target, first = self.text, spans[j][0], spans[i][0]
        line = self.line_start(target)
        half = i + (j - i) // 2
        if line > max(first, floor) and bisect_left(spans, (line, -1)) >= half:
            para = max(text.rfind("\n\n", first, target), text.rfind("\n\r\n", first, target))
            if para >= 0:
                para = self.line_start(para + 1)
                starts_before = bisect_left(spans, (para, -1)) - i
                if para > floor and para > first and starts_before >= (j - i) // 2:
                    return para, False
            return line, False
        for m in range(j, half, -1):  # a sentence end in the second half of the window
            if spans[m][0] > floor and _sentence_start(text, spans[m][0]):
                return spans[m][0], True
        for m in range(j, i, -1):
            if spans[m][0] > floor and text[spans[m][0] - 1].isspace():
                return spans[m][0], True
        return spans[j - 1][1], True


def _at_word_edge(text: str, pos: int) -> bool:
    """True if ``pos`` sits next to white space (or at an end) of ``text``."""
    return pos <= 0 or pos >= len(text) or text[pos - 1].isspace() or text[pos].isspace()


def _sentence_start(text: str, pos: int) -> bool:
    """True if ``pos`` follows a sentence end and a space (``…done. Next``)."""
    return pos >= 2 and text[pos - 1].isspace() and text[pos - 2] in ".?!;"
