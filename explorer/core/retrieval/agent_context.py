"""What a search hands a script or an agent: full passages, a token budget, or metadata only.

A :class:`~explorer.core.retrieval.search.SearchResponse` carries snippets made for a person. An
agent
often wants more (each passage's whole text, to answer from it without reading the file) or
less (paths, titles, descriptions and scores, to decide what to open), and always wants to know
how much of its context window the answer takes. :func:`shape_answer` turns a response into an
:class:`AgentAnswer` under :class:`ContextOptions`:

- ``content``: every passage carries its full text as the index holds it;
- ``max_tokens``: passages are kept best first (by score, across files) while their tokens,
  counted with the model's own tokenizer, fit the budget; the first one that does not fit ends
  the answer, and :class:`BudgetReport` says what was cut. An answer with results is never
  emptied: when not even the best passage fits, its file is kept with its path and title;
- ``metadata_only``: each file is reduced to path, title, description, tags and score.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from explorer.core.models import SearchMode
from explorer.core.retrieval.query import QueryError
from explorer.core.retrieval.search import FileHit, Passage, SearchRequest, SearchResponse
from explorer.core.store.index import Index

TokenCounter = Callable[[str], int]
"""Counts the model tokens of a text."""


@dataclass(frozen=True)
class ContextOptions:
    """How much of each result an answer carries."""

    content: bool = False
    """Each passage's full text, not only its snippet."""
    max_tokens: int | None = None
    """Fill the answer best first up to this many tokens (None: no budget)."""
    metadata_only: bool = False
    """Paths, titles, descriptions, tags and scores only: no passages."""

    def check(self) -> None:
        """Raise :class:`QueryError` for options that cannot be honoured together."""
        if self.max_tokens is not None and self.max_tokens < 1:
            raise QueryError("{0} must be at least 1", fields=("max_tokens",))
        if self.metadata_only and self.content:
            raise QueryError("{0} and {1} exclude each other", fields=("metadata_only", "content"))


@dataclass
class BudgetReport:
    """What a token budget kept and cut."""

    max_tokens: int
    used: int = 0
    passages_kept: int = 0
    passages_cut: int = 0
    files_kept: int = 0
    files_cut: list[str] = field(default_factory=list)
    """Files of the response left out entirely, in rank order."""
    needed: int | None = None
    """When not even the best passage (or, metadata only, the best file) fitted: the tokens
    it needs. The best file is then kept anyway, with its path and title alone."""

    @property
    def cut_anything(self) -> bool:
        return bool(self.passages_cut or self.files_cut or self.needed)

    def note(self) -> str:
        """One line for a person: the budget, what it held and what it cut."""
        if not self.cut_anything:
            return f"token budget {self.max_tokens}: {self.used} tokens used, nothing cut"
        cut = []
        if self.passages_cut:
            cut.append(f"{self.passages_cut} passage{_plural(self.passages_cut)}")
        if self.files_cut:
            names = ", ".join(self.files_cut[:5]) + (", …" if len(self.files_cut) > 5 else "")
            cut.append(f"{len(self.files_cut)} file{_plural(len(self.files_cut))} ({names})")
        cuts = f"; cut {' and '.join(cut)}" if cut else ""
        if self.needed is not None:
            return (
                f"token budget {self.max_tokens}: the best result needs {self.needed} tokens;"
                f" kept only its file's path and title ({self.used} tokens){cuts}"
            )
        kept = (
            f"{self.passages_kept} passage{_plural(self.passages_kept)}"
            if self.passages_kept
            else f"{self.files_kept} file{_plural(self.files_kept)}"
        )
        return f"token budget {self.max_tokens}: kept {kept} in {self.used} tokens{cuts}"


def _plural(count: int) -> str:
    return "" if count == 1 else "s"


@dataclass
class AgentAnswer:
    """A search response shaped for a script or an agent."""

    response: SearchResponse
    options: ContextOptions
    texts: dict[str, str] = field(default_factory=dict)
    """Full text by chunk id (with ``content``)."""
    budget: BudgetReport | None = None


def build_request(
    query: str,
    mode: SearchMode = SearchMode.HYBRID,
    paths: Sequence[str] = (),
    tags: Sequence[str] = (),
    versions: Sequence[str] = (),
    limit: int = 10,
    offset: int = 0,
    per_file: int = 3,
    min_score: float = 0.0,
) -> SearchRequest:
    """The :class:`SearchRequest` the CLI and the MCP server both run: ``paths``, ``tags``
    and ``versions`` restrict both legs before ranking."""
    return SearchRequest(
        query=query,
        mode=mode,
        paths=tuple(paths),
        tags=tuple(tags),
        versions=tuple(versions),
        limit=limit,
        offset=offset,
        per_file=per_file,
        min_score=min_score,
    )


def token_counter(index: Index) -> TokenCounter:
    """Token counts by the index's model tokenizer (``tokenizer.json``; never torch for the
    bundled model)."""
    embedder = index.embedder
    return lambda text: len(embedder.token_spans(text))


def shape_answer(
    index: Index,
    response: SearchResponse,
    options: ContextOptions,
    count_tokens: TokenCounter | None = None,
    texts: Mapping[str, str] | None = None,
) -> AgentAnswer:
    """Shape ``response`` under ``options``; the budget trims ``response.results`` in place.
    ``texts``: the passages' full texts by chunk id, when they come from several indexes
    (else read from ``index``)."""
    options.check()
    answer = AgentAnswer(response, options)
    if options.content and texts is not None:
        answer.texts = dict(texts)
    elif options.content:
        ids = [p.chunk_id for hit in response.results for p in hit.passages]
        chunks = index.keywords.chunks_by_id(ids)
        answer.texts = {cid: chunk.text for cid, chunk in chunks.items()}
    if options.max_tokens is not None:
        counter = count_tokens or token_counter(index)
        answer.budget = _fill(answer, options.max_tokens, counter)
        response.notes.append(answer.budget.note())
    return answer


def _fill(answer: AgentAnswer, max_tokens: int, count: TokenCounter) -> BudgetReport:
    """Keep the best passages (or, metadata only, files) while they fit ``max_tokens``.

    The answer is never empty while there are results: when not even the best passage (or
    file) fits, the best file is kept with its path and title alone, and the report says how
    many tokens the passage needed."""
    response = answer.response
    report = BudgetReport(max_tokens)
    if answer.options.metadata_only:
        kept_files = []
        for hit in response.results:
            cost = count(f"{hit.path} {hit.title} {hit.description} {' '.join(hit.tags)}")
            if report.files_cut or report.used + cost > max_tokens:
                report.files_cut.append(hit.path)
                continue
            report.used += cost
            report.files_kept += 1
            kept_files.append(hit)
        if not kept_files and response.results:
            best = response.results[0]
            report.needed = count(
                f"{best.path} {best.title} {best.description} {' '.join(best.tags)}"
            )
            best.description, best.tags = "", []
            _keep_path_only(report, best, count)
            kept_files.append(best)
        response.results = kept_files
        return report
    order = sorted(
        (
            (-passage.score, file_rank, place, hit, passage)
            for file_rank, hit in enumerate(response.results)
            for place, passage in enumerate(hit.passages)
        ),
        key=lambda item: item[:3],
    )
    kept: set[int] = set()
    opened: set[str] = set()
    full = False
    for _score, _rank, _place, hit, passage in order:
        cost = count(_passage_text(answer, passage))
        if hit.path not in opened:
            cost += count(f"{hit.path} {hit.title}")
        if full or report.used + cost > max_tokens:
            if not full and not kept:
                report.needed = cost
            full = True
            report.passages_cut += 1
            continue
        report.used += cost
        report.passages_kept += 1
        opened.add(hit.path)
        kept.add(id(passage))
    results = []
    for hit in response.results:
        hit.passages = [p for p in hit.passages if id(p) in kept]
        if hit.passages:
            results.append(hit)
            report.files_kept += 1
        else:
            report.files_cut.append(hit.path)
    if not results and response.results:
        best = response.results[0]
        report.files_cut.remove(best.path)
        _keep_path_only(report, best, count)
        results.append(best)
    response.results = results
    return report


def _keep_path_only(report: BudgetReport, hit: FileHit, count: TokenCounter) -> None:
    """Count ``hit``, stripped to its path and title (and score), as the one file kept."""
    report.used += count(f"{hit.path} {hit.title}")
    report.files_kept += 1


def _passage_text(answer: AgentAnswer, passage: Passage) -> str:
    """What the answer carries of a passage: its heading (and entry) and its full text or
    snippet."""
    body = passage.snippet
    if answer.options.content:
        body = answer.texts.get(passage.chunk_id, passage.snippet)
    return f"{passage.label}\n{body}" if passage.label else body
