"""Keyword indexes filled with files of random words, for the tests of keyword rankings."""

from __future__ import annotations

import random
from collections.abc import Sequence

from explorer.core.ingest.documents import Chunk
from explorer.core.store.keywords import KeywordIndex


def passage(text: str, line: int = 1) -> Chunk:
    """A passage of ``text`` at ``line``, with no heading."""
    return Chunk(
        text=text, heading_path="", start_line=line, end_line=line, start_char=0, end_char=len(text)
    )


def add_file(keywords: KeywordIndex, path: str, text: str) -> None:
    """A file of one passage, titled by its path."""
    keywords.replace_file(path, 100, 1, f"h-{path}", [(f"{path}#0", passage(text))], {}, path)


def add_word_files(
    keywords: KeywordIndex, words: Sequence[str], seed: int, longest: int, files: int = 40
) -> None:
    """``files`` files ``fNN.md`` of 5 passages each, every passage 3 to ``longest`` of
    ``words`` drawn at random (the same ones for the same ``seed``)."""
    pick = random.Random(seed)
    for number in range(files):
        texts = [
            " ".join(pick.choice(words) for _ in range(pick.randint(3, longest))) for _ in range(5)
        ]
        chunks = [(f"f{number:02}#{i}", passage(text, i * 10 + 1)) for i, text in enumerate(texts)]
        keywords.replace_file(
            f"f{number:02}.md", 100, 1, f"h{number}", chunks, {}, f"File {number}"
        )
