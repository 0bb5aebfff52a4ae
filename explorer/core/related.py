"""Related files: the nearest other files by meaning, each with the passage pair that explains it.

Every fresh file has a file vector (the normalised mean of its chunk vectors) in its own Chroma
collection. The neighbours of a file are the nearest file vectors; the explaining pair is the
most similar (passage of this file, passage of that file) by cosine similarity.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from explorer.core.index import Index
from explorer.core.keywords import FRESH
from explorer.core.vectors import file_vector_id


class RelatedError(ValueError):
    """A file whose neighbours cannot be given; the message is meant for the user."""


@dataclass
class PassageRef:
    """A passage named by its place in a file."""

    heading: str
    start_line: int
    end_line: int
    text: str


@dataclass
class RelatedFile:
    """A neighbour of the source file."""

    path: str
    title: str
    score: float
    """Cosine similarity of the two file vectors, clipped to 0–1."""
    source_passage: PassageRef
    """The passage of the source file closest to ``related_passage``."""
    related_passage: PassageRef

    def as_json(self) -> dict:
        return asdict(self)


def related_files(
    index: Index, path: str, limit: int = 10, source_vectors: dict | None = None
) -> list[RelatedFile]:
    """The ``limit`` nearest other files of ``path`` (relative to the root).

    ``source_vectors`` ({chunk id: vector}) stand in for the stored vectors of ``path``: a
    reader computes them in memory for a file whose vectors are still pending.
    """
    if limit < 1:
        raise RelatedError("--limit must be at least 1")
    record = index.keywords.file(path)
    if record is None:
        raise RelatedError(f"{path} is not in the index of {index.settings.root}")
    if source_vectors:
        mean = np.mean(np.asarray(list(source_vectors.values()), dtype=np.float32), axis=0)
        vector = mean / (float(np.linalg.norm(mean)) or 1.0)
    else:
        vector = index.vectors.file_vector(file_vector_id(path, record.hash))
    if vector is None or (record.state != FRESH and not source_vectors):
        raise RelatedError(
            f"{path} has no vector yet ({record.state}"
            + (f": {record.reason}" if record.reason else "")
            + "); run explorer index to finish embedding"
        )
    neighbours = _own_neighbours(index, vector, path, limit)
    if not source_vectors:
        source_vectors = index.vectors.chunk_vectors(index.keywords.chunk_ids(path))
    titles = index.keywords.titles([p for p, _ in neighbours])
    results = []
    for other, similarity in neighbours:
        other_ids = index.keywords.chunk_ids(other)
        pair = _closest_pair(source_vectors, index.vectors.chunk_vectors(other_ids))
        if pair is None:
            continue
        chunks = index.keywords.chunks_by_id(list(pair))
        results.append(
            RelatedFile(
                path=other,
                title=titles.get(other, ""),
                score=round(max(0.0, min(1.0, similarity)), 4),
                source_passage=_reference(chunks[pair[0]]),
                related_passage=_reference(chunks[pair[1]]),
            )
        )
    return results


def _own_neighbours(index: Index, vector, path: str, limit: int) -> list[tuple[str, float]]:
    """(path, similarity) of the nearest fresh files of this index, other than ``path``.

    The file collection may hold vectors this index does not own (a shared server's other
    checkouts, or a file's previous content a moment after it changed): those are skipped,
    asking for more neighbours until ``limit`` are found or the collection is exhausted.
    """
    k = limit
    while True:
        found = index.vectors.query_files(vector, k, exclude_path=path)
        records = index.keywords.files_by_path(sorted({p for _i, p, _s in found}))
        own = []
        for file_id, other, similarity in found:
            record = records.get(other)
            if record is None or record.state != FRESH:
                continue
            if file_id == file_vector_id(other, record.hash):
                own.append((other, similarity))
        if len(own) >= limit or len(found) < k or k >= 16 * limit:
            return own[:limit]
        k *= 4


def _closest_pair(source: dict, other: dict) -> tuple[str, str] | None:
    if not source or not other:
        return None
    source_ids, other_ids = list(source), list(other)
    a = np.asarray([source[i] for i in source_ids], dtype=np.float32)
    b = np.asarray([other[i] for i in other_ids], dtype=np.float32)
    similarities = a @ b.T
    row, column = np.unravel_index(int(np.argmax(similarities)), similarities.shape)
    return source_ids[row], other_ids[column]


def _reference(chunk) -> PassageRef:
    text = " ".join(chunk.text.split())
    return PassageRef(
        heading=chunk.heading,
        start_line=chunk.start_line,
        end_line=chunk.end_line,
        text=text if len(text) <= 300 else text[:299].rsplit(" ", 1)[0] + "…",
    )
