"""Related files: the other files most alike in content, each with the passage pair explaining it.

Signals, added into one ranking value per candidate file:

- **Passage pairs** (meaning). Each embedded passage of the source file (at most 64, spread over
  the file) asks the vector store for its nearest passages, in one batched query. A pair counts
  by how far its cosine stands above the source passage's *background*, the mean cosine of that
  passage's 10 nearest passages in other files: a boilerplate passage ("Before you begin:
  install NGINX Plus") is close to dozens of pages and so explains none of them, while a
  passage whose one close match stands out explains that match. A candidate's pairs are
  matched one to one, strongest first, and the ``pairs`` strongest averaged, a missing pair
  counting 0: two strong matches beat one, and a one-passage stub cannot win on one line.
- **Passages many files share count less** (a passage-level document frequency, as a word in
  every document counts little in BM25). A source passage whose near copies (cosine at least
  ``near_cosine``) lie in ``df`` other files weighs ``(log((k + 1) / df) / log(k + 1))``, ``k``
  the neighbours asked: a section repeated on three Lambda pages, a shared footer or console
  transcript explains little. A passage mostly made of links (a "Learn more" list) or of
  references to pages (a PDF's contents or index) weighs ``link_list_weight``. The frequency
  comes from the neighbours the query fetched anyway, so it costs nothing.
- **More like this** (words). The source file's most distinctive index terms (tf-idf over the
  keyword index) are OR-ed into one BM25 query; a candidate scores the BM25 of its best chunks
  relative to the best candidate's, times ``keyword_weight``: a tie-breaker among the files the
  pairs found (letting in files found by words alone did not help).
- **Structure** (:mod:`explorer.core.retrieval.related_structure`): the files link to each other,
  are cited together, link alike, share tags, or sit in one folder, each with its weight; like
  the words, they re-rank the files the pairs found (letting in linked files no pair found
  moved no measure, and cost a vector read per file). A folder's landing page (``_index.md``)
  counts ``section_page_factor`` of its value: a list of the section's pages is an index, not a
  neighbour. A *contents page*, known by its text (at least ``contents_share`` of its passages
  lists of links: a manual's table of contents, a chapter's list of its sections; HTML keeps
  no link syntax, so there a list is known by its links' lines), counts ``contents_factor``.
  A *directory* of the folder, known by its links (a file linking to a quarter of the files: a
  table of contents, a general index), counts ``directory_factor`` (nothing) as the neighbour
  of a page that is not one; and of a series of release notes the page does not link to, only
  the first ``release_notes_listed`` are listed.

**Evidence first**: a file is listed only when one of its passages stands above a source
passage's background, or a link, a tag or a small folder ties the two (``needs_evidence``). A
file that was among a passage's nearest but below its background everywhere, with nothing but
the "more like this" words for it, shares words, not a subject (a catch-all note, a list of
apps, a page using one of the source's terms in another sense); the list is then shorter than
asked rather than padded with such files.

The value is multiplied by a length factor ``min(1, characters / full_length) ** 0.5`` (a
near-empty page cannot crowd out real ones) and shown as ``1 - exp(-value / 0.1)``: 0 when no
passage stands above its background, about 0.6 for a typical best neighbour, toward 1 for
passages nearly alike. Each neighbour says which signals put it there (:class:`Reasons`:
``linked · same section · 3 shared passages``) and whether the source links to it already.
The weights were chosen on the nginx docs and an Obsidian vault (``benchmarks/related.py``).

Passages not embedded yet take no part: a source file with some vectors answers from those, and a
file none of whose passages is embedded is not listed until it is. A source with no vectors at all
is a :class:`RelatedError` ("run explorer index"). The explaining pair of each neighbour is its
strongest passage pair.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.core.models import FileState
from explorer.core.retrieval.passage_order import is_link_list, is_reference_list
from explorer.core.retrieval.related_structure import (
    Evidence,
    FolderStructure,
    LinkDamping,
    damped,
    folder_structure,
)
from explorer.core.store.index import Index
from explorer.core.store.keywords import StoredChunk


class RelatedError(ExplorerError, ValueError):
    """A file whose neighbours cannot be given; the message is meant for the user."""


class FileNotIndexed(RelatedError):
    """The file is not in the manifest (not indexed, or not an indexed kind of file)."""


class NoVectorYet(RelatedError):
    """The file is in the manifest but has no vector: still ``pending``, or ``skipped`` or
    ``failed`` (then ``reason`` says why)."""

    def __init__(self, path: str, state: FileState, reason: str, command: str) -> None:
        """``command`` brings the index up to date (``explorer index ROOT``, with its
        ``--index-dir`` when the index is not in its default place)."""
        self.path = path
        self.state = state
        self.reason = reason
        why = f"{state}: {reason}" if reason else str(state)
        super().__init__(f"{path} has no vector yet ({why}); run `{command}` to finish embedding")


@dataclass
class PassageRef:
    """A passage named by its place in a file."""

    heading: str
    start_line: int
    end_line: int
    text: str
    page: int | None = None
    """1-based page in a paged document (PDF); None elsewhere."""


class Signal(StrEnum):
    """A reason a file is related to the source, as the explanation names it."""

    LINKED = "linked"
    """The source links to it."""
    LINKS_HERE = "links here"
    """It links to the source."""
    CITED_TOGETHER = "cited together"
    """Other files link to both."""
    LINKS_ALIKE = "links alike"
    """Both link to the same files."""
    SHARED_TAGS = "shared tags"
    SAME_SECTION = "same section"
    """Both in one folder."""
    SHARED_PASSAGES = "shared passages"
    """Passages of the two stand out as alike."""
    CLOSE_IN_MEANING = "close in meaning"
    """A passage pair stands above its background, below a shared passage: named only when
    nothing stronger is, so that every neighbour says why it is listed."""


@dataclass(frozen=True)
class Reasons:
    """The signals that put a file among the source's related files."""

    signals: tuple[Signal, ...] = ()
    shared_passages: int = 0
    """Passages of the source with a match in the file standing out of their background."""
    tags: tuple[str, ...] = ()
    """The tags both files carry, rarest first."""

    def text(self) -> str:
        """``linked · same section · 3 shared passages``: the signals, strongest kind first."""
        parts = []
        for signal in self.signals:
            if signal is Signal.SHARED_PASSAGES:
                count = self.shared_passages
                parts.append(f"{count} shared passage{'s' if count != 1 else ''}")
            elif signal is Signal.SHARED_TAGS:
                shown = ", ".join(f"#{tag}" for tag in self.tags[:TAGS_SHOWN])
                more = "…" if len(self.tags) > TAGS_SHOWN else ""
                parts.append(f"tagged {shown}{more}")
            else:
                parts.append(str(signal))
        return " · ".join(parts)


TAGS_SHOWN = 2
"""Shared tags named in an explanation."""


@dataclass
class RelatedFile:
    """A neighbour of the source file."""

    path: str
    title: str
    score: float
    """The fused score, 0–1 (see the module docstring)."""
    source_passage: PassageRef
    """The passage of the source file closest to ``related_passage``."""
    related_passage: PassageRef
    linked: bool = False
    """The source file links to this one already."""
    reasons: Reasons = field(default_factory=Reasons)
    """The signals that put it among the related files."""


@dataclass(frozen=True)
class RelatedTuning:
    """The knobs of the method; defaults chosen on the nginx docs and an Obsidian vault
    (benchmarks/related.py)."""

    neighbours_per_passage: int = 40
    """Nearest passages asked of the vector store for each source passage."""
    background: int = 10
    """A source passage's background is the mean cosine of its this-many nearest passages in
    other files; a pair counts by how far it stands above that. 0: raw cosines."""
    score_scale: float = 0.1
    """The score shown is ``1 - exp(-d / score_scale)`` of the ranking value ``d`` (a pair's
    distance above its background): 0 for none, 0.63 at ``score_scale``, toward 1 above."""
    headroom: bool = False
    """Count a pair as the share of the way from its background to 1 it goes, rather than
    the plain difference."""
    max_source_passages: int = 64
    """A longer source file asks for this many of its passages, spread evenly over the file."""
    pairs: int = 2
    """Strongest one-to-one passage pairs averaged into a candidate's pair score."""
    keyword_weight: float = 0.05
    """Added to the pair score: this times the candidate's BM25 relative to the best
    candidate's. Pair scores sit around 0.05-0.2, so this is a tie-breaker; 0 turns the
    keyword signal off."""
    terms: int = 24
    """Distinctive terms in the "more like this" query; 0 turns the keyword signal off."""
    keyword_chunks: int = 200
    """Chunks the "more like this" query ranks."""
    keyword_file_chunks: int = 3
    """A candidate's keyword score sums the BM25 of its best this-many chunks."""
    full_length: int = 600
    """Characters of text from which a file's length no longer lowers its score; 0: no factor."""
    long_length: int = 0
    """Characters of text above which a file counts ``(long_length / characters) **
    long_power`` of its value; 0: no such factor."""
    long_power: float = 0.5
    long_thin_shared: int = 0
    """The long-page factor applies only to a file with fewer than this many shared passages
    (a long page matching in passing); 0: to every long file."""
    near_cosine: float = 0.85
    """A neighbour at least this close is a near copy of the source passage: the files holding
    one are the passage's document frequency. 1.0 or more: no frequency."""
    link_list_weight: float = 0.5
    """The weight of a source passage mostly made of links (a "Learn more" list)."""
    linked_weight: float = 0.06
    """Added when the source links to the candidate."""
    linked_from_weight: float = 0.08
    """Added when the candidate links to the source; 0.04 and 0.08 measured, own links hidden:
    nginx link recall@5 0.429 and 0.453, the vault 0.591 and 0.585."""
    cited_together_weight: float = 0.04
    """Added times the candidate's co-citation with the source (capped at 1); 0.02 and 0.04
    measured on the vault, own links hidden: link recall@5 0.591 and 0.599."""
    links_alike_weight: float = 0.02
    """Added times the candidate's bibliographic coupling with the source (capped at 1)."""
    tags_weight: float = 0.03
    """Added times the shared tags' rarity (0-1)."""
    section_weight: float = 0.03
    """Added times the same-folder value (``1 / log2(1 + files in the folder)``)."""
    section_page_factor: float = 0.7
    """A folder's landing page (``_index.md``) counts this share of its value."""
    shared_passage: float = 0.04
    """A pair whose weighted value reaches this counts as a shared passage in the explanation."""
    evidence_pair: float = 0.0
    """A passage pair is evidence (``needs_evidence``) when it stands above its background and
    its weighted value reaches this."""
    needs_evidence: bool = True
    """List a file only when a passage pair stands above its background or a link, a tag or a
    small folder ties it to the source (see the module docstring); False: every file a
    passage's nearest held."""
    link_damping: LinkDamping = field(default_factory=LinkDamping)
    """How much a link counts by how many links its ends have (see :class:`LinkDamping`)."""
    lone_pair_factor: float = 1.0
    """A file held by a single passage pair above background and nothing in the structure (one
    passage of another subject sharing a sentence's meaning) counts this share of its value."""
    lone_pair_passages: int = 0
    """The lone-pair factor applies to a source of at least this many passages asked (one pair
    of a two-passage note is half of it)."""
    bare_structure_factor: float = 1.0
    """The structure of a file with no passage pair above background counts this share."""
    contents_share: float = 0.9
    """A file of which at least this share of passages are lists of links is a contents page
    (a manual's table of contents, a chapter's list of its sections)."""
    contents_factor: float = 0.5
    """A contents page counts this share of its value: it lists every page of its part, so its
    passages and links match them all; measured on the Python manual (Sphinx HTML, 47 such
    pages), own links hidden: link recall@5 0.238 to 0.255, hit@5 0.728 to 0.748; no page of
    the nginx docs or the vault is one."""
    release_notes_factor: float = 1.0
    """Release notes (a changelog, "what's new") count this share of their value as the
    neighbours of a page that is not one and does not link to them: they name most of a
    project's pages in passing."""
    directory_factor: float = 0.0
    """A directory of the folder (a table of contents, a general index: a file linking to a
    large share of the files) counts this share of its value as a neighbour of a page that is
    not one."""
    release_notes_listed: int | None = 1
    """At most this many release notes the page does not link to are listed for a page that is
    not release notes (None: no bound). A manual's notes come as a series (one "what's new" a
    version), each naming a module the release touched, so a module's page drew up to five of
    them; the best one says when it came."""
    small_folder: int = 32
    """A folder of at most this many files ties its files as evidence; a larger one (a vault's
    folder of hundreds of notes) only adds its ``section_weight``."""


DEFAULT_TUNING = RelatedTuning()
CONTENTS_WINDOW = 3
"""The files asked whether they are contents pages: this many times the files asked for (a
contents page beyond them cannot reach the list)."""
PASSAGE_CHARS = 300
"""A passage that explains a neighbour is cut (at a word) after this many characters."""
NAMED_STRUCTURE = 0.2
"""Co-citation or coupling below this (a citer of hundreds of files) is not named."""


def related_files(
    index: Index,
    path: str,
    limit: int = 10,
    source_vectors: dict[str, np.ndarray] | None = None,
    tuning: RelatedTuning = DEFAULT_TUNING,
    structure: FolderStructure | None = None,
    unlinked: bool = False,
) -> list[RelatedFile]:
    """The ``limit`` other files most related to ``path`` (relative to the root), best first.

    ``source_vectors`` ({chunk id: vector}) stand in for the stored vectors of ``path``: a
    reader computes them in memory for a file whose vectors are still pending. ``structure``
    stands in for the index's links, tags and folders (a benchmark hides a page's own links).
    ``unlinked``: only the files ``path`` does not link to yet (the links it is missing).
    """
    if limit < 1:
        raise RelatedError("{0} must be at least 1", fields=("limit",))
    keywords = index.keywords
    record = keywords.file(path)
    if record is None:
        raise FileNotIndexed(f"{path} is not in the index of {index.settings.root}")
    source_ids = keywords.chunk_ids(path)
    if not source_vectors:
        source_vectors = index.vectors.chunk_vectors(source_ids) if source_ids else {}
    if not source_vectors:
        raise NoVectorYet(path, record.state, record.reason, index.settings.repair_command)
    ordered, matrix = source_passages(source_ids, source_vectors, tuning)
    structure = structure if structure is not None else folder_structure(index)
    link_lists = link_list_passages(index, ordered, structure.link_lines.get(path, frozenset()))

    pairs = _passage_pairs(index, path, ordered, matrix, len(source_ids), link_lists, tuning)
    use_words = tuning.terms > 0 and tuning.keyword_weight > 0
    terms = keywords.distinctive_terms(path, tuning.terms) if use_words else []
    keyword_hits = keywords.more_like_this(terms, tuning.keyword_chunks, path) if terms else []
    keyword_best = _best_chunk_per_file(keyword_hits, tuning.keyword_file_chunks)
    top_bm25 = max((score for _cid, score in keyword_best.values()), default=0.0) or 1.0
    words = {other: score / top_bm25 for other, (_cid, score) in keyword_best.items()}

    candidates = set(pairs.best)  # words and structure re-rank files with vectors; add none
    if not candidates:
        return []
    evidence = {other: structure.evidence(path, other, tuning.link_damping) for other in candidates}
    candidates = with_evidence(candidates, pairs, evidence, tuning)
    lengths = keywords.text_lengths(sorted(candidates))
    chosen = rank(
        candidates,
        pairs,
        words,
        lengths,
        evidence,
        min(tuning.pairs, len(ordered)),
        tuning,
        contents=lambda other: link_list_share(index, other, structure) >= tuning.contents_share,
        window=limit * CONTENTS_WINDOW,
    )
    if unlinked:
        chosen = not_linked(chosen, evidence)
    return _explain(index, chosen[:limit], pairs, evidence)


def source_passages(
    source_ids: list[str], vectors: Mapping[str, np.ndarray], tuning: RelatedTuning
) -> tuple[list[str], np.ndarray]:
    """The source passages asked about (at most ``max_source_passages``, spread over the
    file) and their vectors, one row each."""
    ordered = [cid for cid in source_ids if cid in vectors]
    if len(ordered) > tuning.max_source_passages:
        step = len(ordered) / tuning.max_source_passages
        ordered = [ordered[int(i * step)] for i in range(tuning.max_source_passages)]
    return ordered, np.asarray([vectors[cid] for cid in ordered], dtype=np.float32)


def link_list_passages(
    index: Index, ordered: list[str], link_lines: frozenset[int] = frozenset()
) -> set[str]:
    """The passages of ``ordered`` mostly made of links (``link_lines``: the lines of their
    file holding one) or of references to pages (a PDF's contents or index)."""
    chunks = index.keywords.chunks_by_id(ordered)
    return {
        cid
        for cid, chunk in chunks.items()
        if is_link_list(chunk.text, link_lines, chunk.start_line) or is_reference_list(chunk.text)
    }


def link_list_share(index: Index, path: str, structure: FolderStructure) -> float:
    """The share of ``path``'s passages that are lists of links: near 1 for a contents page
    (a manual's table of contents, a chapter's list of its sections, a site map). Kept in
    ``structure`` while the index's files and links stay as they are."""
    share = structure.link_list_shares.get(path)
    if share is None:
        ids = index.keywords.chunk_ids(path)
        lists = link_list_passages(index, ids, structure.link_lines.get(path, frozenset()))
        share = structure.link_list_shares[path] = len(lists) / len(ids) if ids else 0.0
    return share


def rank(
    candidates: Iterable[str],
    pairs: _Pairs,
    words: Mapping[str, float],
    lengths: Mapping[str, int],
    evidence: Mapping[str, Evidence],
    needed: int,
    tuning: RelatedTuning,
    contents: Callable[[str], bool] | None = None,
    window: int = 0,
) -> list[tuple[float, str]]:
    """(score shown, file) of every candidate, best first: the signals of the module
    docstring added, times the length factor (and the landing-page factor). ``contents``
    tells a contents page, asked of the first ``window`` files only (it reads a file's
    passages), each counting ``contents_factor`` of its value. A directory that counts
    nothing is left out, and so are the release notes past ``release_notes_listed``."""
    scored = []
    for other in candidates:
        found = evidence.get(other)
        if found is not None and found.directory and not tuning.directory_factor:
            continue  # counts nothing: not a neighbour at 0.00 either
        value = pairs.score(other, needed) + tuning.keyword_weight * words.get(other, 0.0)
        if found is not None:
            structure = structure_value(found, tuning)
            if tuning.bare_structure_factor != 1.0 and pairs.above_background(other) == 0:
                structure *= tuning.bare_structure_factor
            value += structure
            if found.section_page:
                value *= tuning.section_page_factor
            if found.release_notes:
                value *= tuning.release_notes_factor
            if found.directory:
                value *= tuning.directory_factor
        if (
            tuning.lone_pair_factor != 1.0
            and len(pairs.background) >= tuning.lone_pair_passages
            and pairs.above_background(other) <= 1
            and not ties(found, tuning)
        ):
            value *= tuning.lone_pair_factor
        thin = not tuning.long_thin_shared or pairs.shared(other) < tuning.long_thin_shared
        factor = _length_factor(lengths.get(other, 0), tuning, long=thin)
        scored.append((value * factor, other))
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    if contents is not None and tuning.contents_factor != 1.0:
        head = [
            (value * tuning.contents_factor if contents(other) else value, other)
            for value, other in scored[:window]
        ]
        scored = sorted(head + scored[window:], key=lambda pair: (-pair[0], pair[1]))
    scored = bounded_release_notes(scored, evidence, tuning.release_notes_listed)
    return [(_shown(value, tuning), other) for value, other in scored]


def bounded_release_notes(
    chosen: list[tuple[float, str]], evidence: Mapping[str, Evidence], bound: int | None
) -> list[tuple[float, str]]:
    """``chosen`` without the release notes past the first ``bound`` of them (those
    :attr:`Evidence.release_notes` marks: the source is not release notes and does not link to
    them)."""
    if bound is None:
        return chosen
    kept, seen = [], 0
    for value, other in chosen:
        found = evidence.get(other)
        if found is not None and found.release_notes:
            seen += 1
            if seen > bound:
                continue
        kept.append((value, other))
    return kept


def with_evidence(
    candidates: set[str], pairs: _Pairs, evidence: Mapping[str, Evidence], tuning: RelatedTuning
) -> set[str]:
    """The candidates that :func:`has_evidence` (all of them unless ``tuning.needs_evidence``);
    a file without structure (another collection's) counts by its passage pairs alone."""
    if not tuning.needs_evidence:
        return candidates
    nothing = Evidence()
    return {o for o in candidates if has_evidence(pairs, o, evidence.get(o, nothing), tuning)}


def has_evidence(pairs: _Pairs, other: str, found: Evidence, tuning: RelatedTuning) -> bool:
    """Whether more than shared words ties ``other`` to the source: a passage pair above its
    background, a link either way, a citer or a target in common, a shared tag, or a folder of
    at most ``tuning.small_folder`` files (one of hundreds ties nothing)."""
    best = pairs.best.get(other)
    paired = best is not None and best[0] > 0.0 and best[0] >= tuning.evidence_pair
    return paired or ties(found, tuning)


def ties(found: Evidence | None, tuning: RelatedTuning) -> bool:
    """Whether the structure ties a candidate to the source: a link either way, a citer or a
    target in common, a shared tag, or a folder of at most ``tuning.small_folder`` files."""
    if found is None:
        return False
    small_folder = damped(tuning.small_folder)  # what same_section is for a folder that size
    return (
        found.links_to
        or found.linked_from
        or found.cited_together > 0.0
        or found.links_alike > 0.0
        or bool(found.tags)
        or found.same_section >= small_folder
    )


def not_linked(
    chosen: list[tuple[float, str]], evidence: Mapping[str, Evidence]
) -> list[tuple[float, str]]:
    """The ranked files the source does not link to."""
    return [
        (score, other)
        for score, other in chosen
        if (found := evidence.get(other)) is None or not found.links_to
    ]


def structure_value(found: Evidence, tuning: RelatedTuning) -> float:
    """What the links, tags and place of a candidate add to its value."""
    return (
        found.link_weight
        * (tuning.linked_weight * found.links_to + tuning.linked_from_weight * found.linked_from)
        + tuning.cited_together_weight * min(1.0, found.cited_together)
        + tuning.links_alike_weight * min(1.0, found.links_alike)
        + tuning.tags_weight * found.tag_weight
        + tuning.section_weight * found.same_section
    )


def reasons(found: Evidence | None, shared_passages: int, paired: bool = False) -> Reasons:
    """The signals to name for a neighbour: its links, tags and place, and its passages.
    ``paired``: a passage pair stands above its background. When none reaches the strength
    that names it, what let the file in (:func:`has_evidence`) is named all the same: a
    co-citation, links alike, or the pair ("close in meaning"); 9 % of the vault's
    neighbours said nothing."""
    signals: list[Signal] = []
    tags: tuple[str, ...] = ()
    if found is not None:
        named = (
            (found.links_to, Signal.LINKED),
            (found.linked_from, Signal.LINKS_HERE),
            (found.cited_together >= NAMED_STRUCTURE, Signal.CITED_TOGETHER),
            (found.links_alike >= NAMED_STRUCTURE, Signal.LINKS_ALIKE),
            (bool(found.tags), Signal.SHARED_TAGS),
            (found.same_section > 0, Signal.SAME_SECTION),
        )
        signals = [signal for present, signal in named if present]
        tags = found.tags
    if shared_passages:
        signals.append(Signal.SHARED_PASSAGES)
    if not signals:
        weak = (
            (found is not None and found.cited_together > 0.0, Signal.CITED_TOGETHER),
            (found is not None and found.links_alike > 0.0, Signal.LINKS_ALIKE),
            (paired, Signal.CLOSE_IN_MEANING),
        )
        signals = [signal for present, signal in weak if present]
    return Reasons(tuple(signals), shared_passages, tags)


class _Pairs:
    """Passage pairs (value, source passage, candidate passage) found per candidate file; the
    value is the pair's cosine above its source passage's background, times the passage's
    weight (its document frequency, and whether it is a list of links)."""

    def __init__(self, tuning: RelatedTuning) -> None:
        self.tuning = tuning
        self.found: dict[str, list[tuple[float, str, str]]] = {}
        self.best: dict[str, tuple[float, str, str]] = {}
        self.background: dict[str, float] = {}
        self.weight: dict[str, float] = {}

    def add_above_background(
        self, others: list[tuple[str, str, float]], source_id: str, link_list: bool
    ) -> None:
        """Add the pairs of the source passage ``source_id`` with its nearest ``others``
        ((file, passage id, cosine), nearest first), each by how far its cosine stands above
        the passage's background (the mean of its ``tuning.background`` nearest; fewer than
        that in a small folder: the missing ones count as unrelated, 0), times the passage's
        weight (see the module docstring)."""
        tuning = self.tuning
        background = 0.0
        if tuning.background > 0:
            nearest = [similarity for _p, _o, similarity in others[: tuning.background]]
            background = max(0.0, sum(nearest) / tuning.background)
        copies = {other for other, _o, similarity in others if similarity >= tuning.near_cosine}
        weight = passage_weight(len(copies), tuning.neighbours_per_passage)
        if link_list:
            weight *= tuning.link_list_weight
        self.background[source_id], self.weight[source_id] = background, weight
        for other, other_id, similarity in others:
            self.add(other, self.value(source_id, similarity), source_id, other_id)

    def value(self, source_id: str, similarity: float) -> float:
        background = self.background[source_id]
        value = max(0.0, similarity - background)
        if self.tuning.headroom and background < 1.0:
            value /= 1.0 - background
        return value * self.weight[source_id]

    def add(self, path: str, similarity: float, source_id: str, other_id: str) -> None:
        self.found.setdefault(path, []).append((similarity, source_id, other_id))
        if path not in self.best or similarity > self.best[path][0]:
            self.best[path] = (similarity, source_id, other_id)

    def one_to_one(self, path: str) -> list[float]:
        """The values of the file's one-to-one pairs, strongest first."""
        used_source: set[str] = set()
        used_other: set[str] = set()
        values = []
        for similarity, source_id, other_id in sorted(self.found.get(path, ()), reverse=True):
            if source_id in used_source or other_id in used_other:
                continue
            used_source.add(source_id)
            used_other.add(other_id)
            values.append(max(0.0, min(1.0, similarity)))
        return values

    def above_background(self, path: str) -> int:
        """The file's one-to-one pairs standing above their background at all."""
        return sum(value > 0.0 for value in self.one_to_one(path))

    def score(self, path: str, needed: int) -> float:
        """The mean of the ``needed`` strongest one-to-one pairs, a missing pair counting 0."""
        if needed < 1:
            return 0.0
        return sum(self.one_to_one(path)[:needed]) / needed

    def shared(self, path: str) -> int:
        """The file's one-to-one pairs that reach ``tuning.shared_passage``."""
        return sum(value >= self.tuning.shared_passage for value in self.one_to_one(path))


def passage_weight(copies: int, neighbours: int) -> float:
    """The weight of a passage whose near copies lie in ``copies`` other files, of the
    ``neighbours`` asked: 1 for a passage with at most one, toward 0 as copies fill them."""
    if copies <= 1 or neighbours < 1:
        return 1.0
    return max(0.0, math.log((neighbours + 1) / copies) / math.log(neighbours + 1))


def _passage_pairs(
    index: Index,
    path: str,
    ordered: list[str],
    matrix: np.ndarray,
    own_count: int,
    link_lists: set[str],
    tuning: RelatedTuning,
) -> _Pairs:
    """Ask the vector store for each source passage's nearest passages of other files.

    The source's own passages come back among the nearest, so as many more are asked for (up
    to a bound); ids the keyword index does not hold (another checkout's on a shared server, or
    replaced a moment ago) are dropped. Each pair counts by how far its cosine stands above the
    source passage's background (see :class:`RelatedTuning`): a boilerplate passage ("Before
    you begin: install NGINX Plus") is close to dozens of pages and so explains none of them.
    """
    k = tuning.neighbours_per_passage + min(own_count, tuning.neighbours_per_passage)
    answers = index.vectors.query_chunks_many(matrix, k)
    places = index.keywords.chunk_places(
        list(dict.fromkeys(cid for answer in answers for cid, _sim in answer))
    )
    pairs = _Pairs(tuning)
    for source_id, answer in zip(ordered, answers, strict=True):
        others = [
            (place[0], other_id, similarity)
            for other_id, similarity in answer
            if (place := places.get(other_id)) is not None and place[0] != path
        ][: tuning.neighbours_per_passage]
        pairs.add_above_background(others, source_id, source_id in link_lists)
    return pairs


def _best_chunk_per_file(
    hits: list[tuple[str, str, float]], per_file: int
) -> dict[str, tuple[str, float]]:
    """Each file's best chunk and its keyword score: the BM25 of its ``per_file`` best chunks."""
    best: dict[str, tuple[str, float]] = {}
    counted: dict[str, int] = {}
    for chunk_id, other, score in hits:
        if other not in best:
            best[other], counted[other] = (chunk_id, score), 1
        elif counted[other] < per_file:
            best[other] = (best[other][0], best[other][1] + score)
            counted[other] += 1
    return best


def _shown(value: float, tuning: RelatedTuning) -> float:
    """The 0–1 score shown for a ranking value (monotonic, so the order is kept)."""
    if tuning.score_scale <= 0:
        return value
    return 1.0 - math.exp(-max(0.0, value) / tuning.score_scale)


def _length_factor(characters: int, tuning: RelatedTuning, long: bool = True) -> float:
    """Below ``full_length`` characters a file counts less (a stub); above ``long_length``
    too (a page that mentions everything in passing has a passage near any other)."""
    factor = 1.0
    if tuning.full_length > 0:
        factor = math.sqrt(min(1.0, characters / tuning.full_length))
    if long and 0 < tuning.long_length < characters:
        factor *= (tuning.long_length / characters) ** tuning.long_power
    return factor


def _explain(
    index: Index,
    chosen: list[tuple[float, str]],
    pairs: _Pairs,
    evidence: Mapping[str, Evidence],
) -> list[RelatedFile]:
    """Give each chosen neighbour its explaining passage pair (its strongest), its reasons,
    and build them."""
    explained = {other: pairs.best[other][1:] for _score, other in chosen}
    chunks = index.keywords.chunks_by_id([cid for pair in explained.values() for cid in pair])
    titles = index.keywords.titles([other for _s, other in chosen])
    return _explained_files(chosen, explained, chunks, titles, _reasons_of(pairs, evidence))


def _reasons_of(
    pairs: _Pairs, evidence: Mapping[str, Evidence]
) -> Callable[[str], tuple[bool, Reasons]]:
    """Whether the source links to a neighbour, and the reasons it is related."""

    def of(other: str) -> tuple[bool, Reasons]:
        found = evidence.get(other)
        best = pairs.best.get(other)
        paired = best is not None and best[0] > 0.0
        return (found is not None and found.links_to), reasons(found, pairs.shared(other), paired)

    return of


def _explained_files(
    chosen: list[tuple[float, str]],
    explained: Mapping[str, tuple[str, str]],
    chunks: Mapping[str, StoredChunk],
    titles: Mapping[str, str],
    reasons_of: Callable[[str], tuple[bool, Reasons]],
) -> list[RelatedFile]:
    """Each chosen neighbour (named as ``chosen`` names it) with its explaining pair
    (``explained``: its source and related passage ids) and its reasons, skipped when a
    passage of the pair changed between the reads."""
    results = []
    for score, other in chosen:
        pair = explained.get(other)
        if pair is None or pair[0] not in chunks or pair[1] not in chunks:
            continue  # changed between the reads
        linked, why = reasons_of(other)
        results.append(
            RelatedFile(
                path=other,
                title=titles.get(other, ""),
                score=round(max(0.0, min(1.0, score)), 4),
                source_passage=_reference(chunks[pair[0]]),
                related_passage=_reference(chunks[pair[1]]),
                linked=linked,
                reasons=why,
            )
        )
    return results


def _reference(chunk: StoredChunk) -> PassageRef:
    """The passage as it stands in the file (its lines kept, so a reader can still tell a code
    fence or a list from prose), cut at a word after 300 characters."""
    text = chunk.text.strip()
    if len(text) > PASSAGE_CHARS:
        text = text[: PASSAGE_CHARS - 1].rsplit(" ", 1)[0].rstrip() + "…"
    return PassageRef(
        heading=chunk.heading,
        start_line=chunk.start_line,
        end_line=chunk.end_line,
        text=text,
        page=chunk.page,
    )
