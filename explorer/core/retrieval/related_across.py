"""Related files across collections: a file's neighbours in every open folder, ranked as one.

The method is :mod:`explorer.core.retrieval.related`'s, over several indexes: each embedded
passage of the source file asks every collection's vector store for its nearest passages, and
the answers are merged per passage before anything is counted, so a passage's *background*
(the mean cosine of its 10 nearest passages in other files) is taken over every folder, as one
index holding them all would take it. Cosines are comparable across collections: one model
embeds them all (:class:`~explorer.core.retrieval.collections.Collections` refuses another).

The words tie-breaker ("more like this": the source's most distinctive terms as one BM25
query) asks each collection and weighs a candidate's BM25 against the best candidate's *of its
own collection*: it breaks ties (weight 0.05), and each collection's best words count the same.

The folder's structure (links, tags, place: :mod:`~explorer.core.retrieval.related_structure`)
is the source collection's own: links between folders are not resolved, so a file of another
collection is related by content alone.

With one collection the answer is exactly :func:`~explorer.core.retrieval.related.related_files`'s
(a test holds the two together).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from explorer.core.retrieval.merged_search import qualified, unqualified
from explorer.core.retrieval.related import (
    CONTENTS_WINDOW,
    DEFAULT_TUNING,
    FileNotIndexed,
    NoVectorYet,
    RelatedError,
    RelatedFile,
    RelatedTuning,
    _best_chunk_per_file,
    _explained_files,
    _Pairs,
    _reasons_of,
    link_list_passages,
    link_list_share,
    not_linked,
    rank,
    source_passages,
    with_evidence,
)
from explorer.core.retrieval.related_structure import Evidence, folder_structure
from explorer.core.store.index import Index
from explorer.core.store.manifest_records import StoredChunk


@dataclass(frozen=True)
class RelatedAcross:
    """A neighbour of the source file, and the collection that holds it."""

    collection: str
    related: RelatedFile


def related_across(
    indexes: Sequence[tuple[str, Index]],
    source: str,
    path: str,
    limit: int = 10,
    tuning: RelatedTuning = DEFAULT_TUNING,
    unlinked: bool = False,
) -> list[RelatedAcross]:
    """The ``limit`` files of any of ``indexes`` (name, index) most related to ``path`` of
    collection ``source``, best first; the file itself is never among them. ``unlinked``:
    only the files ``path`` does not link to yet."""
    if limit < 1:
        raise RelatedError("{0} must be at least 1", fields=("limit",))
    by_name = dict(indexes)
    own = by_name[source]
    record = own.keywords.file(path)
    if record is None:
        raise FileNotIndexed(f"{path} is not in the index of {own.settings.root}")
    source_ids = own.keywords.chunk_ids(path)
    vectors = own.vectors.chunk_vectors(source_ids) if source_ids else {}
    if not vectors:
        raise NoVectorYet(path, record.state, record.reason, own.settings.repair_command)
    ordered, matrix = source_passages(source_ids, vectors, tuning)
    structure = folder_structure(own)
    own_lists = link_list_passages(own, ordered, structure.link_lines.get(path, frozenset()))
    link_lists = {qualified(source, cid) for cid in own_lists}

    me = qualified(source, path)
    pairs = _pairs_across(by_name, source, me, ordered, matrix, len(source_ids), link_lists, tuning)
    words = _words_across(by_name, source, path, tuning)
    candidates = set(pairs.best)
    if not candidates:
        return []
    lengths: dict[str, int] = {}
    evidence: dict[str, Evidence] = {}
    for name, paths in _by_collection(candidates).items():
        found = by_name[name].keywords.text_lengths(paths)
        lengths.update((qualified(name, other), n) for other, n in found.items())
        if name == source:
            evidence.update(
                (qualified(name, other), structure.evidence(path, other, tuning.link_damping))
                for other in paths
            )
    candidates = with_evidence(candidates, pairs, evidence, tuning)
    needed = min(tuning.pairs, len(ordered))

    structures = {source: structure}  # each collection's, read once a call, when asked

    def contents(key: str) -> bool:
        name, other = unqualified(key)
        index = by_name[name]
        if name not in structures:
            structures[name] = folder_structure(index)
        return link_list_share(index, other, structures[name]) >= tuning.contents_share

    window = limit * CONTENTS_WINDOW
    chosen = rank(candidates, pairs, words, lengths, evidence, needed, tuning, contents, window)
    if unlinked:
        chosen = not_linked(chosen, evidence)
    return _explain(by_name, chosen[:limit], pairs, evidence)


def _pairs_across(
    by_name: dict[str, Index],
    source: str,
    me: str,
    ordered: list[str],
    matrix: np.ndarray,
    own_count: int,
    link_lists: set[str],
    tuning: RelatedTuning,
) -> _Pairs:
    """Each source passage's nearest passages of other files in every collection, merged
    before they are counted (see ``related._passage_pairs``; keys are qualified)."""
    merged: list[list[tuple[str, str, float]]] = [[] for _ in ordered]
    for name, index in by_name.items():
        extra = min(own_count, tuning.neighbours_per_passage) if name == source else 0
        answers = index.vectors.query_chunks_many(matrix, tuning.neighbours_per_passage + extra)
        places = index.keywords.chunk_places(
            list(dict.fromkeys(cid for answer in answers for cid, _sim in answer))
        )
        for slot, answer in zip(merged, answers, strict=True):
            slot.extend(
                (qualified(name, place[0]), qualified(name, other_id), similarity)
                for other_id, similarity in answer
                if (place := places.get(other_id)) is not None
            )
    pairs = _Pairs(tuning)
    for source_id, neighbours in zip(ordered, merged, strict=True):
        others = sorted((hit for hit in neighbours if hit[0] != me), key=lambda hit: -hit[2])[
            : tuning.neighbours_per_passage
        ]
        key = qualified(source, source_id)
        pairs.add_above_background(others, key, key in link_lists)
    return pairs


def _words_across(
    by_name: dict[str, Index], source: str, path: str, tuning: RelatedTuning
) -> dict[str, float]:
    """Each candidate file's "more like this" BM25 over its collection's best (0-1)."""
    if tuning.terms <= 0 or tuning.keyword_weight <= 0:
        return {}
    terms = by_name[source].keywords.distinctive_terms(path, tuning.terms)
    if not terms:
        return {}
    words: dict[str, float] = {}
    for name, index in by_name.items():
        excluded = path if name == source else ""
        hits = index.keywords.more_like_this(terms, tuning.keyword_chunks, excluded)
        best = _best_chunk_per_file(hits, tuning.keyword_file_chunks)
        top = max((score for _cid, score in best.values()), default=0.0) or 1.0
        words.update((qualified(name, other), score / top) for other, (_c, score) in best.items())
    return words


def _by_collection(values: Sequence[str] | set[str]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for value in sorted(values):
        name, rest = unqualified(value)
        grouped.setdefault(name, []).append(rest)
    return grouped


def _explain(
    by_name: dict[str, Index],
    chosen: list[tuple[float, str]],
    pairs: _Pairs,
    evidence: dict[str, Evidence],
) -> list[RelatedAcross]:
    """Each chosen neighbour with its explaining passage pair (its strongest) and reasons."""
    explained = {other: pairs.best[other][1:] for _score, other in chosen}
    wanted = [cid for pair in explained.values() for cid in pair]
    chunks: dict[str, StoredChunk] = {}
    for name, ids in _by_collection(set(wanted)).items():
        found = by_name[name].keywords.chunks_by_id(ids)
        chunks.update((qualified(name, cid), chunk) for cid, chunk in found.items())
    titles: dict[str, str] = {}
    for name, paths in _by_collection({other for _s, other in chosen}).items():
        found_titles = by_name[name].keywords.titles(paths)
        titles.update((qualified(name, p), title) for p, title in found_titles.items())
    results = []
    reasons_of = _reasons_of(pairs, evidence)
    for neighbour in _explained_files(chosen, explained, chunks, titles, reasons_of):
        name, own_path = unqualified(neighbour.path)
        results.append(RelatedAcross(name, replace(neighbour, path=own_path)))
    return results
