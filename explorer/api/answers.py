"""The answers explorer gives scripts and agents, declared once as pydantic models.

The MCP server's structured content and output schemas, and the CLI's ``--json``, come from
these models: each is built from the core's result objects by its ``build`` class method and
turned into JSON by :meth:`Answer.to_json`, which leaves out every field that is None (an
empty title, a detail not asked for), so a default answer stays lean.

One vocabulary: ``path`` is a file relative to the root in every answer; ``snippet`` is a cut
excerpt made for the query and ``text`` a passage's (or a file's) whole text; ``excerpt`` is
the cut text of a related file's passage; times are ISO 8601 (UTC); ``stale`` says that the
folder has changed since the index last saw it (on an answer: how much; on a file: that its
line numbers may have moved).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from explorer.core.ingest.references import LinkSyntax, ReferenceKind
from explorer.core.models import SearchMode
from explorer.core.retrieval.link_resolution import LinkState
from explorer.core.store.damaged_store import Store

if TYPE_CHECKING:
    from explorer.core.indexing.report import IndexReport
    from explorer.core.retrieval.agent_context import AgentAnswer, BudgetReport
    from explorer.core.retrieval.links import FileLinks, Link, ReferenceCheck
    from explorer.core.retrieval.related import PassageRef, RelatedFile
    from explorer.core.retrieval.search import FileHit, Passage
    from explorer.core.store.damaged_store import Repair
    from explorer.core.store.index import Permissions, Status
    from explorer.core.store.manifest_records import DiskChanges

STALE_PATHS_SHOWN = 20
"""The most changed paths an answer names (``stale.files`` counts them all)."""


class Answer(BaseModel):
    """Base of every answer model: fields documented by their docstrings, nothing else.

    Each model's validator and serializer are built when it is first used, not when this
    module is imported: a one-shot ``explorer search --json`` builds the few it prints (about
    60 ms less than building all of them)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, defer_build=True)

    def to_json(self) -> dict[str, Any]:
        """The JSON object: every field that is None left out."""
        return self.model_dump(mode="json", exclude_none=True)


# -- how far the index is behind ------------------------------------------------------------------
class Staleness(Answer):
    """How far the index is behind the folder on disk at the time of the answer."""

    files: int
    """Files changed on disk (edited, new or deleted) that the index does not reflect yet;
    0 when the index is up to date."""
    edited: int | None = None
    """Of those, files edited since they were indexed."""
    new: int | None = None
    """Of those, files on disk the index does not hold yet."""
    deleted: int | None = None
    """Of those, files the index holds that are gone from disk."""
    paths: list[str] | None = None
    """The first changed paths, sorted (at most 20)."""
    waiting_for_vectors: int | None = None
    """Files searchable by keyword whose vectors are still being computed: search by meaning
    does not see them yet."""
    missing_chunks: int | None = None
    """Files the index holds as indexed whose passages are missing from its database (deleted
    behind explorer's back): ``explorer index`` reads them again."""
    folders_gone: list[str] | None = None
    """Folders gone from disk (deleted or moved away) whose files the index holds: each of
    their files counts as deleted, and answers leave them out until a folder is there again."""

    @classmethod
    def combine(cls, named: Sequence[tuple[str, Staleness]]) -> Staleness:
        """Several collections' staleness as one: counts added up, each path named
        ``COLLECTION/PATH``."""
        paths = sorted(f"{name}/{path}" for name, each in named for path in each.paths or ())

        def total(field: str) -> int | None:
            return sum(getattr(each, field) or 0 for _name, each in named) or None

        return cls(
            files=sum(each.files for _name, each in named),
            edited=total("edited"),
            new=total("new"),
            deleted=total("deleted"),
            paths=paths[:STALE_PATHS_SHOWN] or None,
            waiting_for_vectors=total("waiting_for_vectors"),
            missing_chunks=total("missing_chunks"),
            folders_gone=[root for _name, each in named for root in each.folders_gone or ()]
            or None,
        )

    @classmethod
    def build(
        cls, changes: DiskChanges, waiting_for_vectors: int = 0, missing_chunks: int = 0
    ) -> Staleness:
        """From the folder's differences with the manifest (and the files without vectors,
        or without their passages)."""
        changed = sorted({*changes.edited, *changes.new, *changes.deleted})
        return cls(
            files=len(changed),
            edited=len(changes.edited) or None,
            new=len(changes.new) or None,
            deleted=len(changes.deleted) or None,
            paths=changed[:STALE_PATHS_SHOWN] or None,
            waiting_for_vectors=waiting_for_vectors or None,
            missing_chunks=missing_chunks or None,
        )


def _qualified(collection: str | None, path: str) -> str:
    """``COLLECTION/PATH`` for a file of a collection, the path alone otherwise (how answers
    over several collections name files in ``stale_paths``)."""
    return f"{collection}/{path}" if collection else path


def _stale_mark(path: str, stale_paths: Collection[str]) -> bool | None:
    """``True`` for a path that changed on disk since it was indexed, else None (left out)."""
    return True if path in stale_paths else None


# -- search -------------------------------------------------------------------------------------
class PassageExplain(Answer):
    """Why a passage ranks where it does (with ``explain``)."""

    keyword_rank: int | None = None
    keyword_score: float | None = None
    """BM25 (higher is better)."""
    vector_rank: int | None = None
    vector_similarity: float | None = None
    """Cosine similarity (measured, with no rank, when the vector leg did not return it)."""
    file_similarity: float | None = None
    """Cosine similarity of the passage's whole file."""
    file_keyword_score: float | None = None
    """BM25 of the passage's whole file."""
    fused: float | None = None
    """The fused value before it was shown as a 0-1 score."""


class SearchPassage(Answer):
    """One matching passage of a file."""

    heading: str | None = None
    """The heading path, e.g. ``Install > Linux`` (left out when the passage has none)."""
    entry: str | None = None
    """The API entry its words stand in, in a reference manual's page (``os.walk`` under
    ``Files and Directories``); left out elsewhere."""
    start_line: int
    """First line (1-based) as the file was indexed."""
    end_line: int
    """Last line (inclusive)."""
    page: int | None = None
    """The page (1-based) of a paged document, such as a PDF."""
    score: float
    """0-1, higher is better, relative to this query's candidates. hybrid: 0.5 is an average
    candidate for the query, 0.9 about two standard deviations above it (meaning and keywords
    fused); semantic: the passage's cosine similarity to the query, blended with its file's;
    keyword: BM25 over the query's best, blended with its file's (1 is the best match)."""
    snippet: str | None = None
    """A cut excerpt around the query's words (left out when ``text`` is given)."""
    text: str | None = None
    """The passage's whole text as indexed (with ``content``)."""
    chunk_id: str | None = None
    """The passage's id in the index (with ``offsets``)."""
    start_char: int | None = None
    """Where the passage starts in the file, in characters (with ``offsets``)."""
    end_char: int | None = None
    """Where it ends, exclusive (with ``offsets``)."""
    highlights: list[tuple[int, int]] | None = None
    """Character spans of the query's words in ``snippet`` (with ``offsets``)."""
    explain: PassageExplain | None = None
    """Each leg's rank and score (with ``explain``)."""

    @classmethod
    def build(
        cls, passage: Passage, text: str | None, offsets: bool, explain: bool
    ) -> SearchPassage:
        """From the core's passage; ``text`` is its whole text when it was asked for."""
        return cls(
            heading=passage.heading or None,
            entry=passage.entry or None,
            start_line=passage.start_line,
            end_line=passage.end_line,
            # A paged format's passages carry their page (formats adds the field to Passage).
            page=getattr(passage, "page", None),
            score=passage.score,
            snippet=None if text is not None else passage.snippet,
            text=text,
            chunk_id=passage.chunk_id if offsets else None,
            start_char=passage.start_char if offsets else None,
            end_char=passage.end_char if offsets else None,
            highlights=list(passage.highlights) if offsets and text is None else None,
            explain=PassageExplain(
                keyword_rank=passage.keyword_rank,
                keyword_score=passage.keyword_score,
                vector_rank=passage.vector_rank,
                vector_similarity=passage.vector_similarity,
                file_similarity=passage.file_similarity,
                file_keyword_score=passage.file_keyword_score,
                fused=passage.fused,
            )
            if explain
            else None,
        )


class SearchFile(Answer):
    """A file that matched, with its best passages."""

    collection: str | None = None
    """The collection (named folder) the file is in, when several are searched."""
    path: str
    """Relative to the indexed folder (to its collection's folder)."""
    title: str | None = None
    description: str | None = None
    """The front matter's ``description``."""
    tags: list[str] | None = None
    """The front matter's ``tags``."""
    score: float
    """The file's score: that of its best passage (0-1)."""
    stale: bool | None = None
    """True when the file changed on disk since it was indexed: its line numbers may have
    moved (the index catches up by itself while the server runs)."""
    passages: list[SearchPassage] | None = None
    """Best first (left out with ``metadata_only``)."""


class Budget(Answer):
    """What a token budget (``max_tokens``) kept and cut."""

    max_tokens: int
    used: int
    """Tokens the answer's passages take, counted with the model's tokenizer."""
    passages_kept: int
    passages_cut: int
    files_kept: int
    files_cut: list[str]
    """Files of the ranking left out entirely, best first."""
    needed: int | None = None
    """When not even the best passage (or file, with ``metadata_only``) fitted: the tokens it
    needs. The best file is then given anyway, with its path and title only."""

    @classmethod
    def build(cls, report: BudgetReport) -> Budget:
        return cls(
            max_tokens=report.max_tokens,
            used=report.used,
            passages_kept=report.passages_kept,
            passages_cut=report.passages_cut,
            files_kept=report.files_kept,
            files_cut=list(report.files_cut),
            needed=report.needed,
        )


class SearchExplain(Answer):
    """How the search ran (with ``explain``)."""

    query: str
    """The words searched for, after filter words (``path:``, ``tag:``) were taken out."""
    fusion: str | None = None
    """How the two legs were combined, with this query's numbers (hybrid)."""
    filters: dict[str, str]
    """Per leg, the set of files it searched."""


class SearchAnswer(Answer):
    """The answer to a search: files best first, each with its best passages."""

    mode: SearchMode
    """The mode that answered: keyword when a hybrid search had no vectors to use."""
    results: list[SearchFile]
    notes: list[str] | None = None
    """What the results alone do not say (no keyword match, vectors unavailable, a budget)."""
    budget: Budget | None = None
    """With ``max_tokens``."""
    next_cursor: str | None = None
    """Pass it as ``cursor`` (with the same arguments) for the next files; absent on the last
    page."""
    stale: Staleness | None = None
    """How far the index is behind the folder."""
    explain: SearchExplain | None = None

    @classmethod
    def build(
        cls,
        answer: AgentAnswer,
        *,
        explain: bool = False,
        offsets: bool = False,
        stale: Staleness | None = None,
        stale_paths: Collection[str] = (),
        next_cursor: str | None = None,
    ) -> SearchAnswer:
        """From the core's shaped answer; ``offsets`` adds chunk ids and character offsets,
        ``stale_paths`` are files changed on disk since they were indexed."""
        response = answer.response
        metadata_only = answer.options.metadata_only
        files = []
        for hit in response.results:
            files.append(_search_file(hit, answer, metadata_only, offsets, explain, stale_paths))
        return cls(
            mode=response.answered_by,
            results=files,
            notes=list(response.notes) or None,
            budget=Budget.build(answer.budget) if answer.budget is not None else None,
            next_cursor=next_cursor,
            stale=stale,
            explain=SearchExplain(
                query=response.query, fusion=response.fusion or None, filters=response.filters
            )
            if explain
            else None,
        )


def _search_file(
    hit: FileHit,
    answer: AgentAnswer,
    metadata_only: bool,
    offsets: bool,
    explain: bool,
    stale_paths: Collection[str],
) -> SearchFile:
    content = answer.options.content
    return SearchFile(
        collection=hit.collection or None,
        path=hit.path,
        title=hit.title or None,
        description=hit.description or None,
        tags=list(hit.tags) or None,
        score=hit.score,
        stale=_stale_mark(_qualified(hit.collection, hit.path), stale_paths),
        passages=None
        if metadata_only
        else [
            SearchPassage.build(
                passage,
                answer.texts.get(passage.chunk_id, "") if content else None,
                offsets,
                explain,
            )
            for passage in hit.passages
        ],
    )


# -- related files ------------------------------------------------------------------------------
class RelatedPassage(Answer):
    """A passage named by its place in its file."""

    heading: str | None = None
    start_line: int
    end_line: int
    page: int | None = None
    """The page (1-based) of a paged document, such as a PDF."""
    excerpt: str
    """The passage's first words, cut (not its whole text)."""

    @classmethod
    def build(cls, ref: PassageRef) -> RelatedPassage:
        return cls(
            heading=ref.heading or None,
            start_line=ref.start_line,
            end_line=ref.end_line,
            page=ref.page,
            excerpt=ref.text,
        )


class RelatedFileAnswer(Answer):
    """A file about the same thing as the source file."""

    collection: str | None = None
    """The collection the file is in, when several are open (related files cross them)."""
    path: str
    title: str | None = None
    score: float
    """0-1: 0 when no passage pair stands out, about 0.6 for a typical best neighbour."""
    stale: bool | None = None
    """True when the file changed on disk since it was indexed."""
    source_passage: RelatedPassage
    """The source file's passage closest to ``related_passage``."""
    related_passage: RelatedPassage
    """This file's passage that explains the link."""
    linked: bool
    """The source file links to this file already."""
    why: str
    """The signals that put it here: ``linked · same section · 3 shared passages``."""
    signals: list[str]
    """The same signals, one word each (linked, links here, cited together, links alike,
    shared tags, same section, shared passages, close in meaning)."""


class RelatedAnswer(Answer):
    """The files nearest in content to one file."""

    collection: str | None = None
    """The source file's collection, when several are open."""
    path: str
    """The source file."""
    related: list[RelatedFileAnswer]
    """Best first."""
    unlinked: bool | None = None
    """True when only the related files the source does not link to yet are listed: each
    pair of passages is the place a link would go."""
    stale: Staleness | None = None

    @classmethod
    def build(
        cls,
        path: str,
        neighbours: Sequence[RelatedFile],
        *,
        stale: Staleness | None = None,
        stale_paths: Collection[str] = (),
        collection: str | None = None,
        collections: Sequence[str] | None = None,
        unlinked: bool = False,
    ) -> RelatedAnswer:
        """``collections``: each neighbour's collection, when several are open (then
        ``stale_paths`` name files ``COLLECTION/PATH``); ``unlinked``: the neighbours are
        those the source does not link to yet."""
        names: Sequence[str | None] = collections or [None] * len(neighbours)
        return cls(
            collection=collection,
            path=path,
            related=[
                RelatedFileAnswer(
                    collection=name,
                    path=n.path,
                    title=n.title or None,
                    score=n.score,
                    stale=_stale_mark(_qualified(name, n.path), stale_paths),
                    source_passage=RelatedPassage.build(n.source_passage),
                    related_passage=RelatedPassage.build(n.related_passage),
                    linked=n.linked,
                    why=n.reasons.text(),
                    signals=[str(signal) for signal in n.reasons.signals],
                )
                for name, n in zip(names, neighbours, strict=True)
            ],
            unlinked=True if unlinked else None,
            stale=stale,
        )


# -- links --------------------------------------------------------------------------------------
class OutgoingLink(Answer):
    """A reference the file makes."""

    line: int
    kind: ReferenceKind
    syntax: LinkSyntax
    """How it is written: a path or URL, an Obsidian ``[[wikilink]]``, a Hugo ``ref``."""
    raw: str
    """The target as written in the file."""
    path: str
    """Where it leads, relative to the root (when missing: the path nothing is at; when
    outside the root: the URL or path it reads as)."""
    state: LinkState
    """``resolved`` (a file or folder of the tree), ``missing``, or ``outside-root``."""
    exists: bool
    """Whether the target exists on disk now (``state`` is ``resolved``)."""


class Backlink(Answer):
    """A reference another file makes to this one."""

    path: str
    """The file that makes the reference."""
    line: int
    kind: ReferenceKind
    syntax: LinkSyntax
    raw: str
    """The reference as written there."""


class LinksAnswer(Answer):
    """What a file links to, and what links to it."""

    collection: str | None = None
    """The file's collection, when several are open (links stay within it)."""
    path: str
    exists: bool
    """Whether the file exists on disk (a deleted file's backlinks are the links to fix)."""
    links: list[OutgoingLink]
    backlinks: list[Backlink]
    stale: Staleness | None = None

    @classmethod
    def build(cls, found: FileLinks, *, stale: Staleness | None = None) -> LinksAnswer:
        return cls(
            path=found.path,
            exists=found.exists,
            links=[_outgoing(link) for link in found.outgoing],
            backlinks=[
                Backlink(
                    path=link.source,
                    line=link.line,
                    kind=link.kind,
                    syntax=link.syntax,
                    raw=link.raw,
                )
                for link in found.backlinks
            ],
            stale=stale,
        )


def _outgoing(link: Link) -> OutgoingLink:
    return OutgoingLink(
        line=link.line,
        kind=link.kind,
        syntax=link.syntax,
        raw=link.raw,
        path=link.target,
        state=link.state,
        exists=link.exists,
    )


class CheckedReference(Answer):
    """A reference that ``check-refs`` reports: where it is written, and where it leads."""

    path: str
    """The file that makes the reference."""
    line: int
    kind: ReferenceKind
    syntax: LinkSyntax
    raw: str
    """The target as written in the file."""
    target: str
    """Where it leads, relative to the root: the path nothing is at (``missing``), or the URL
    or path it reads as (``outside-root``)."""
    state: LinkState

    @classmethod
    def build(cls, link: Link) -> CheckedReference:
        return cls(
            path=link.source,
            line=link.line,
            kind=link.kind,
            syntax=link.syntax,
            raw=link.raw,
            target=link.target,
            state=link.state,
        )


class CheckRefsAnswer(Answer):
    """Every reference of the folder that leads to no file (``explorer check-refs``)."""

    root: str
    """The indexed folder."""
    missing: list[CheckedReference]
    """References to files that do not exist, by file and line."""
    outside_root: list[CheckedReference]
    """References into the site or folders around the root, which the index does not hold
    (counted, not failed)."""
    references: int
    """References into the tree (or the site around it) that were checked."""
    resolved: int
    """Of those, the ones that lead to a file or folder of the tree."""
    files: int
    """Files that make any reference."""
    layout: str | None = None
    """How links were resolved, e.g. ``hugo site: /docs/ is ./`` (left out for a plain
    folder)."""

    @classmethod
    def build(cls, root: str, check: ReferenceCheck) -> CheckRefsAnswer:
        return cls(
            root=root,
            missing=[CheckedReference.build(link) for link in check.missing],
            outside_root=[CheckedReference.build(link) for link in check.outside_root],
            references=check.references,
            resolved=check.resolved,
            files=check.files,
            layout=check.layout or None,
        )


# -- status -------------------------------------------------------------------------------------
class Upkeep(StrEnum):
    """Who keeps the index in step with the folder while the answering process runs."""

    LIVE = "live"
    """This process watches the folder and updates the index within a second or two."""
    FOLLOWING = "following"
    """Another explorer process writes the index; this one reads what it writes, and takes
    over when it leaves."""
    WAITING_FOR_FOLDER = "waiting_for_folder"
    """The folder is gone (deleted or moved away): this process looks for it every second and
    takes in what it holds when a folder is there again."""
    OFF = "off"
    """Nobody updates it from here: run ``explorer index`` to catch up."""


class FileCounts(Answer):
    """Files of the index by state."""

    indexed: int
    """Fresh: both stores hold their chunks."""
    stale: int
    """Changed on disk since indexed, new, deleted, or waiting for vectors."""
    skipped: int
    failed: int


class VectorStoreAnswer(Answer):
    """Where the vectors live and whether they can be read."""

    kind: str
    """``local`` or ``server``."""
    location: str
    """The vector store's folder, or the server's URL."""
    available: bool
    problem: str | None = None
    """Why the vectors cannot be read (a server that does not answer, a damaged store)."""
    missing: int | None = None
    """Passages recorded as embedded whose vectors the store lacks (all of them when the
    store is gone): their files wait for their vectors again."""


class FileReason(Answer):
    """A file, and why it was left out of the index."""

    path: str
    reason: str
    """E.g. ``too-large: 250.1 MB > 200.0 MB cap``, ``unreadable: encrypted PDF``."""


class PermissionsAnswer(Answer):
    """Whether other users of the machine can read the index."""

    private: bool
    """True when every folder of the index is 0700 and every file 0600."""
    open: int
    """Files and folders of the index that other users can read."""
    examples: list[str] | None = None
    """The first few of them, with their modes (``index.sqlite 0644``)."""
    tightened: str | None = None
    """When a writer last made an open index private, and how many entries it changed."""

    @classmethod
    def build(cls, permissions: Permissions) -> PermissionsAnswer:
        return cls(
            private=permissions.private,
            open=permissions.open_count,
            examples=list(permissions.examples) or None,
            tightened=permissions.tightened or None,
        )


class StatusAnswer(Answer):
    """What the index holds, and how far it is behind the folder."""

    collection: str | None = None
    """The collection, when several are open."""
    root: str
    index_dir: str
    files: FileCounts
    skip_reasons: dict[str, int]
    """Skipped files by reason (``too-large``, ``binary``, ``unreadable``, …)."""
    skipped_files: list[FileReason] | None = None
    """The skipped and failed files, each with its reason, by path (the first 100)."""
    chunks: int
    """Passages the index holds."""
    vectors: int
    """Passages with their vectors."""
    model: str
    dimension: int | None = None
    vector_store: VectorStoreAnswer
    store_bytes: int
    last_update: datetime | None = None
    """When the index was last written (ISO 8601)."""
    needs_rebuild: bool
    rebuild_reason: str | None = None
    stale: Staleness
    index_command: str
    """The command that brings this index up to date (``--index-dir`` included when the
    index is not in its default place)."""
    permissions: PermissionsAnswer
    upkeep: Upkeep | None = None
    """Who keeps the index current while this process runs (MCP server)."""
    writer: str | None = None
    """The live explorer process (a TUI, an MCP server) that holds the index's write lock and
    keeps it current while it runs, as it names itself (``explorer mcp (pid 4242)``)."""
    not_read: dict[str, int] | None = None
    """Files of the folder no format reads, by extension (``.svg``) or name: what a search
    cannot find there."""

    @classmethod
    def build(
        cls, status: Status, *, stale: Staleness, upkeep: Upkeep | None = None
    ) -> StatusAnswer:
        """From the core's status; ``stale`` says what changed on disk (the files whose
        passages are missing are added from ``status``)."""
        if status.missing_chunks and stale.missing_chunks is None:
            stale = stale.model_copy(update={"missing_chunks": status.missing_chunks})
        return cls(
            root=status.root,
            index_dir=status.index_dir,
            files=FileCounts(
                indexed=status.indexed,
                stale=status.stale,
                skipped=status.skipped,
                failed=status.failed,
            ),
            skip_reasons=dict(status.skip_reasons),
            skipped_files=[FileReason(path=p, reason=r) for p, r in status.skipped_files] or None,
            chunks=status.chunks,
            vectors=status.vectors,
            model=status.model,
            dimension=status.dimension,
            vector_store=VectorStoreAnswer(
                kind=status.vector_store,
                location=status.vector_location,
                available=status.vectors_available,
                problem=status.vectors_problem or None,
                missing=status.vectors_missing or None,
            ),
            store_bytes=status.store_bytes,
            last_update=iso_time(status.last_update),
            needs_rebuild=status.needs_rebuild,
            rebuild_reason=status.rebuild_reason or None,
            stale=stale,
            index_command=status.index_command,
            permissions=PermissionsAnswer.build(status.permissions),
            upkeep=upkeep,
            not_read=dict(sorted(status.other_types.items(), key=lambda kv: (-kv[1], kv[0])))
            or None,
        )


class CollectionStatusesAnswer(Answer):
    """The status of each open collection (``explorer status A B``)."""

    collections: list[StatusAnswer]
    """One per collection, in the order they were opened, each named."""


# -- indexing -----------------------------------------------------------------------------------
class RepairAnswer(Answer):
    """A damaged store that was set aside and built anew."""

    store: Store
    """``keyword index`` or ``vector store``."""
    reason: str
    """SQLite's or Chroma's words for the damage."""
    kept_in: str | None = None
    """Where the damaged files are now (left out when there was nothing to keep)."""

    @classmethod
    def build(cls, repair: Repair) -> RepairAnswer:
        kept_in = None if repair.kept_in is None else str(repair.kept_in)
        return cls(store=repair.store, reason=repair.reason, kept_in=kept_in)


class IndexAnswer(Answer):
    """What ``explorer index`` did: files by outcome, passages embedded, repairs, times."""

    collection: str | None = None
    """The collection, when several folders were indexed."""
    root: str
    """The indexed folder."""
    rebuilt: bool
    """True for ``--rebuild``: a whole index built anew and swapped in."""
    added: int
    updated: int
    removed: int
    unchanged: int
    skipped: dict[str, int]
    """Files skipped by reason (``too-large``, ``binary``, …)."""
    failed: int
    failures: list[FileReason]
    """Each file whose reading or parsing failed, and why (read again by every run)."""
    chunks_written: int
    """Passages written to the keyword index."""
    chunks_embedded: int
    """Passages embedded by the model in this run."""
    chunks_reused: int
    """Passages whose vectors the store already held (another checkout, an interrupted
    run)."""
    chunks_moved: int
    """Passages whose vectors the index's local store gave as the index moved to a Chroma
    server: uploaded there, not embedded again."""
    orphans_removed: int
    """Vectors left by an interrupted run, removed."""
    files_restored: int
    """Files indexed again because their passages were missing from the database."""
    vectors_lost: int
    """Passages whose recorded vectors the store no longer held: embedded again."""
    permissions_tightened: list[str]
    """Files and folders of the index other users could read until this run made them
    private (``index.sqlite 0644``)."""
    repairs: list[RepairAnswer]
    """Damaged stores set aside and built anew."""
    notes: list[str]
    """What else the run changed as it opened the index, one line each (the keyword tables of
    an index made by an older explorer rebuilt, vectors kept)."""
    cancelled: bool
    vectors_unavailable: str | None = None
    """Why the vector store could not be reached after a keyword-only run."""
    keyword_seconds: float
    """Time until every file was searchable by keyword."""
    model_seconds: float
    """Time spent loading the model (not counted in ``embed_seconds``)."""
    embed_seconds: float

    @classmethod
    def build(
        cls,
        root: str,
        report: IndexReport,
        *,
        rebuilt: bool = False,
        repairs: Sequence[Repair] = (),
        notes: Sequence[str] = (),
    ) -> IndexAnswer:
        return cls(
            root=root,
            rebuilt=rebuilt,
            added=report.added,
            updated=report.updated,
            removed=report.removed,
            unchanged=report.unchanged,
            skipped=dict(report.skipped),
            failed=report.failed,
            failures=[FileReason(path=p, reason=r) for p, r in report.failures.items()],
            chunks_written=report.chunks_written,
            chunks_embedded=report.chunks_embedded,
            chunks_reused=report.chunks_reused,
            chunks_moved=report.chunks_moved,
            orphans_removed=report.orphans_removed,
            files_restored=report.files_restored,
            vectors_lost=report.vectors_lost,
            permissions_tightened=list(report.tightened),
            repairs=[RepairAnswer.build(repair) for repair in repairs],
            notes=list(notes),
            cancelled=report.cancelled,
            vectors_unavailable=report.vectors_unavailable or None,
            keyword_seconds=round(report.keyword_seconds, 3),
            model_seconds=round(report.model_seconds, 3),
            embed_seconds=round(report.embed_seconds, 3),
        )


class CollectionsIndexAnswer(Answer):
    """What ``explorer index A B`` did in each folder."""

    collections: list[IndexAnswer]
    """One per collection, in the order they were indexed, each named."""


def iso_time(timestamp: float | None) -> datetime | None:
    """A Unix time as an aware UTC datetime (ISO 8601 in JSON), None kept."""
    return None if timestamp is None else datetime.fromtimestamp(timestamp, tz=UTC)


# -- the index state of files -------------------------------------------------------------------
class FileIndexState(StrEnum):
    """Where one file stands with the index."""

    FRESH = "fresh"
    """Indexed: searchable by keyword and by meaning."""
    WAITING_FOR_VECTORS = "waiting_for_vectors"
    """Searchable by keyword; its vectors are still being computed."""
    EDITED = "edited"
    """Changed on disk since it was indexed; the index shows the old text."""
    NEW = "new"
    """On disk, not indexed yet."""
    DELETED = "deleted"
    """Indexed, but gone from disk."""
    SKIPPED = "skipped"
    """Left out on purpose (binary, too large, …): ``reason`` says why."""
    FAILED = "failed"
    """Reading or parsing it failed: ``reason`` says why."""


class FileIndexEntry(Answer):
    """One file's index state."""

    collection: str | None = None
    """The file's collection, when several are open."""
    path: str
    state: FileIndexState
    reason: str | None = None
    """Why it was skipped or failed."""
    chunks: int | None = None
    """Passages the index holds for it."""
    indexed_at: datetime | None = None
    """When the index last took it in (ISO 8601)."""


class IndexStatusAnswer(Answer):
    """The index state of the files under a path."""

    collection: str | None = None
    """The collection asked about (left out: every open collection)."""
    path: str
    """The file or folder asked about (``.``: the whole folder)."""
    counts: dict[FileIndexState, int]
    """Files under ``path`` by state (states with no file left out)."""
    files: list[FileIndexEntry]
    """The files, not-fresh ones first, then by path (at most ``limit``)."""
    more: int | None = None
    """Files under ``path`` not listed (raise ``limit`` to see them)."""


# -- reading files ------------------------------------------------------------------------------
class ReadAnswer(Answer):
    """Lines of a file as they are on disk now."""

    collection: str | None = None
    """The file's collection, when several are open."""
    path: str
    start_line: int
    end_line: int
    """The last line given, whole or (``next_start_char``) in part."""
    total_lines: int
    start_char: int | None = None
    """Where in ``start_line`` the text starts, when it continues a line (0-based)."""
    text: str
    truncated: bool
    """True when the range asked for goes on past ``text``."""
    next_start_line: int | None = None
    """Where to continue: pass it as ``start_line``."""
    next_start_char: int | None = None
    """With ``next_start_line``, when a line is longer than one answer: pass it as
    ``start_char``."""
    stale: bool | None = None
    """True when the file changed on disk since it was indexed: line numbers of search results
    may not match this text (the index catches up by itself while the server runs)."""


class OmitReason(StrEnum):
    """Why ``read_many`` left a file out."""

    OVER_BUDGET = "over_budget"
    """It does not fit in what is left of the budget: read it with ``read``."""
    UNREADABLE = "unreadable"
    """No such file, outside the root, not a file explorer indexes, or not text."""


class ReadManyFile(Answer):
    """One whole file."""

    collection: str | None = None
    """The file's collection, when several are open."""
    path: str
    total_lines: int
    text: str
    stale: bool | None = None
    """True when the file changed on disk since it was indexed."""


class OmittedFile(Answer):
    """A file ``read_many`` did not return, and why."""

    collection: str | None = None
    """The file's collection, when several are open and it is known."""
    path: str
    reason: OmitReason
    detail: str | None = None
    size: int | None = None
    """Its size: bytes, or tokens under a token budget."""


class ReadManyAnswer(Answer):
    """Several whole files, in order, within a budget."""

    files: list[ReadManyFile]
    omitted: list[OmittedFile] | None = None
    more: int | None = None
    """Files past ``max_files``, neither read nor listed: raise ``max_files`` or narrow the
    glob."""
    used: int
    """Bytes (or, with ``max_tokens``, tokens) the files take."""
    budget: int
    """The budget they had to fit: ``max_bytes``, or ``max_tokens``."""
    unit: str
    """``bytes`` or ``tokens``."""


# -- collections --------------------------------------------------------------------------------
class CollectionAnswer(Answer):
    """One open collection: a named folder with its own index."""

    name: str
    """What ``collection`` arguments and ``collection:NAME`` words call it."""
    root: str
    """Its folder; the paths of its files are relative to it."""
    files: int
    """Files indexed (searchable)."""
    chunks: int
    """Passages indexed."""
    stale: Staleness | None = None
    """How far its index is behind its folder."""
    upkeep: Upkeep | None = None
    problem: str | None = None
    """Why its index cannot be read (none yet, damaged): what to run."""


class ScopeAnswer(Answer):
    """A named scope: a saved set of files, and what it holds."""

    name: str
    """What ``scopes`` arguments and ``scope:NAME`` words call it."""
    description: str | None = None
    paths: list[str] | None = None
    """Prefixes or globs (any of them); left out: every path."""
    extensions: list[str] | None = None
    """Extensions (any of them); left out: every extension."""
    collections: list[str] | None = None
    """The collections it covers; left out: all of them."""


class CollectionsAnswer(Answer):
    """The open collections and the named scopes."""

    collections: list[CollectionAnswer]
    scopes: list[ScopeAnswer]
