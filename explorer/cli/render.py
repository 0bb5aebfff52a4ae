"""Plain-text rendering of search results, related files and status for the terminal.

Everything shown comes from outside (file names, titles, passages, the user's query): each piece
goes through :mod:`explorer.core.safe_text` so no control character reaches the terminal; names
by ``safe_name`` (a tab escaped too), headings, titles and tags by ``safe_label`` (cut).
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
import time
from typing import TYPE_CHECKING, TextIO

import click

from explorer.core.safe_text import (
    LABEL_MAX,
    quoted,
    safe_json,
    safe_label,
    safe_name,
    safe_spans,
    safe_text,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from explorer.core.retrieval.agent_context import AgentAnswer
    from explorer.core.retrieval.links import FileLinks, Link, ReferenceCheck
    from explorer.core.retrieval.related import RelatedFile
    from explorer.core.store.index import Status

URL = re.compile(
    r"\]\(([^)\s]+)"  # a Markdown link's target: [text](target)
    r"|\]:[ \t]*(\S+)"  # a reference definition: [name]: target
    r"|<([a-zA-Z][a-zA-Z0-9+.-]*:[^>\s]*)>"  # an autolink: <scheme:...>
    r"|([a-zA-Z][a-zA-Z0-9+.-]*://\S+)"  # a bare URL
)
"""Where link targets are in a snippet: matched words inside them are not marked."""


def url_spans(text: str) -> list[tuple[int, int]]:
    """The character ranges of the link targets and URLs in ``text``."""
    spans = []
    for match in URL.finditer(text):
        group = next(g for g in range(1, 5) if match.group(g) is not None)
        spans.append(match.span(group))
    return spans


def is_terminal(out: TextIO | None) -> bool:
    """True when ``out`` (None: stdout) is a terminal, where styles show."""
    # click.get_text_stream is deprecated (Click 9 removes it): sys.stdout is what echo writes to
    return (sys.stdout if out is None else out).isatty()


def _marked(snippet: str, spans: list[tuple[int, int]], styled: bool) -> str:
    """The snippet with matched words in bold on a terminal, or **like this** in a pipe;
    never inside a URL (a marker there would break the link for whoever copies it)."""
    snippet, spans = safe_spans(snippet, spans)
    urls = url_spans(snippet)
    out, last = [], 0
    for start, end in sorted(spans):
        if start < last or any(start < u_end and end > u_start for u_start, u_end in urls):
            continue
        word = snippet[start:end]
        out.append(snippet[last:start])
        out.append(click.style(word, bold=True, fg="yellow") if styled else f"**{word}**")
        last = end
    out.append(snippet[last:])
    return "".join(out)


def search_notes(answer: AgentAnswer, scope: str, skipped: int = 0) -> list[str]:
    """What a search's results alone do not say: the core's notes (a filter that matches no
    file, a missing leg, a token budget) and, when no file was found, that nothing was, with
    the filter (``scope``) and the files passed over (``skipped``, ``--offset``). Text prints
    them as ``note:`` lines on stderr; ``--json`` carries them in ``notes``."""
    response = answer.response
    notes = list(response.notes)
    if response.results or not response.filters:  # no filters: no leg ran, a note says why
        return notes
    where = f" in {scope}" if scope else ""
    past = f" past the first {skipped} file{'' if skipped == 1 else 's'}" if skipped else ""
    notes.append(f"no results for {quoted(response.query)}{where}{past} ({response.mode})")
    return notes


def render_search_notes(notes: Sequence[str], err: TextIO | None = None) -> None:
    """A search's :func:`search_notes` as ``note:`` lines to ``err`` (default: stderr), never
    among the results."""
    for note in notes:
        click.echo(f"note: {safe_text(note)}", file=err, err=err is None)


def render_paths(
    answer: AgentAnswer, out: TextIO | None = None, roots: Mapping[str, Path] | None = None
) -> None:
    """``path<TAB>score`` per file, best first (``--format paths``), to ``out`` (default:
    stdout); a control character or tab in a name is escaped (``safe_name``), so each line
    has exactly one tab.

    With several collections (``roots``: each one's folder), the path is the file's real path
    on disk (its folder joined with its path): what a pipe can open, and what ``explorer
    related`` and ``links`` take; the folder says the collection."""
    for hit in answer.response.results:
        path = str(roots[hit.collection] / hit.path) if roots else hit.path
        click.echo(f"{safe_name(path)}\t{hit.score:.4f}", file=out)


def collection_label(name: str) -> str:
    """``[name] `` before a path, in text, when several collections are open."""
    return f"[{safe_name(name)}] " if name else ""


def render_search(
    answer: AgentAnswer,
    explain: bool,
    first: int = 1,
    out: TextIO | None = None,
    collections: bool = False,
) -> None:
    """An :class:`~explorer.core.retrieval.agent_context.AgentAnswer` as text, to ``out``
    (default: stdout): files best first, each with its passages (snippets, or full text with
    ``--content``), or metadata only; with ``explain``, the legs and the fusion first. Its
    notes are :func:`render_search_notes`'. With ``collections``, ``[name]`` before each
    path says which collection holds the file."""
    response, options = answer.response, answer.options
    styled = is_terminal(out)
    if explain:
        for leg, description in response.filters.items():
            click.echo(f"{leg} leg: {safe_text(description)}", file=out)
        if response.fusion:
            click.echo(f"fusion: {response.fusion}", file=out)
    for number, hit in enumerate(response.results, start=first):
        title = f" — {safe_label(hit.title)}" if hit.title else ""
        path = click.style(safe_name(hit.path), bold=True)
        label = collection_label(hit.collection) if collections else ""
        click.echo(f"{number:>2}. {label}{path}  {hit.score:.2f}{title}", file=out)
        if hit.description:
            click.echo(f"      {safe_label(hit.description, 2 * LABEL_MAX)}", file=out)
        if hit.tags:
            click.echo(f"      tags: {safe_label(', '.join(hit.tags))}", file=out)
        if options.metadata_only:
            continue
        for passage in hit.passages:
            where = f"{_page(passage.page)}L{passage.start_line}-{passage.end_line}"
            heading = f"{safe_label(passage.label)}  " if passage.label else ""
            click.echo(f"      {heading}{where}  {passage.score:.2f}", file=out)
            if options.content:
                text = safe_text(answer.texts.get(passage.chunk_id, passage.snippet), True)
                click.echo(textwrap.indent(text.rstrip("\n"), "        "), file=out)
            else:
                marked = _marked(passage.snippet, passage.highlights, styled)
                click.echo(f"        {marked}", file=out)
            if explain:
                keyword = (
                    f"keyword #{passage.keyword_rank} (bm25 {passage.keyword_score:.2f})"
                    if passage.keyword_rank
                    else "keyword -"
                )
                if passage.vector_rank:
                    vector = f"vector #{passage.vector_rank} (cos {passage.vector_similarity:.3f})"
                elif passage.vector_similarity is not None:  # not returned; cosine measured
                    vector = f"vector - (cos {passage.vector_similarity:.3f}, measured)"
                else:
                    vector = "vector -"
                if passage.file_similarity is not None:
                    vector += f" · file cos {passage.file_similarity:.3f}"
                if passage.file_keyword_score is not None:
                    keyword += f" · file bm25 {passage.file_keyword_score:.2f}"
                click.echo(f"        {keyword} · {vector} · fused {passage.fused:.4f}", file=out)


def _one_line(text: str) -> str:
    """A passage on one line: each run of white space (newlines too) becomes one space."""
    return " ".join(text.split())


def _page(page: int | None) -> str:
    """``p. 3 `` before a passage's lines in a paged document (a PDF), else nothing."""
    return "" if page is None else f"p. {page} "


def render_related(
    path: str,
    neighbours: Sequence[RelatedFile],
    out: TextIO | None = None,
    collections: tuple[str, Sequence[str]] | None = None,
    unlinked: bool = False,
) -> None:
    """``explorer related``: the neighbours best first, each with the signals that put it
    there and the pair of passages that links it to the source. ``collections`` (the
    source's, and each neighbour's) puts ``[name]`` before each path, when several collections
    are open. ``unlinked``: the neighbours are those the source does not link to yet."""
    source_label, labels = (
        (collection_label(collections[0]), [collection_label(n) for n in collections[1]])
        if collections
        else ("", [""] * len(neighbours))
    )
    path = source_label + safe_name(path)
    if not neighbours:
        none = "no related files that it does not link to yet" if unlinked else "no related files"
        click.echo(f"{none} for {path}", file=out)
        return
    if unlinked:
        click.echo(f"files related to {path} that it does not link to yet:", file=out)
    else:
        click.echo(f"files related to {path}:", file=out)
    for number, (other, label) in enumerate(zip(neighbours, labels, strict=True), start=1):
        title = f" — {safe_label(other.title)}" if other.title else ""
        name = click.style(safe_name(other.path), bold=True)
        click.echo(f"{number:>2}. {label}{name}  {other.score:.2f}{title}", file=out)
        if other.reasons.signals:
            click.echo(f"      why   {safe_text(other.reasons.text())}", file=out)
        source, match = other.source_passage, other.related_passage
        click.echo(
            f"      here  {_page(source.page)}L{source.start_line}-{source.end_line} "
            f"{safe_label(source.heading)}: "
            f"{safe_text(_one_line(source.text)[:120])}",
            file=out,
        )
        click.echo(
            f"      there {_page(match.page)}L{match.start_line}-{match.end_line} "
            f"{safe_label(match.heading)}: "
            f"{safe_text(_one_line(match.text)[:120])}",
            file=out,
        )


def _stale_lines(status: Status, writer: str | None = None) -> list[str]:
    """What the stale files are, and what to do (nothing, while a live ``writer`` keeps the
    index current), when there are any."""
    if not status.stale:
        return []
    parts = [
        f"{count} {label}"
        for count, label in (
            (status.edited, "edited"),
            (status.new, "new"),
            (status.deleted, "deleted"),
            (status.waiting_for_vectors, "waiting for vectors"),
            (status.missing_chunks, "missing their chunks"),
        )
        if count
    ]
    command = (
        safe_text(status.index_command)
        if status.index_command
        else (f"explorer index {safe_name(status.root)}")
    )
    if writer is not None:
        return [f"stale       {', '.join(parts)}: the live writer catches up as it runs"]
    return [f"stale       {', '.join(parts)}: run `{command}` to catch up"]


def _permissions_line(status: Status) -> str:
    """Whether other users can read the index, and what to do when they can."""
    permissions = status.permissions
    if permissions.private:
        line = "private (folders 0700, files 0600)"
        if permissions.tightened:
            line += f"; tightened {permissions.tightened}"
        return f"permissions {safe_text(line)}"
    shown = ", ".join(permissions.examples)
    more = permissions.open_count - len(permissions.examples)
    command = status.index_command or f"explorer index {status.root}"
    return safe_text(
        f"permissions open: other users can read {permissions.open_count} files and folders"
        f" ({shown}{f', and {more} more' if more > 0 else ''}); run `{command}` to make"
        " them private"
    )


SKIPPED_SHOWN = 10
"""Skipped files the text of ``status`` names, each with its reason."""


def _skipped_lines(status: Status) -> list[str]:
    """``skipped     manual.pdf: unreadable: encrypted PDF`` for the first few skipped files."""
    shown = [
        f"skipped     {safe_name(path)}: {safe_text(reason)}"
        for path, reason in status.skipped_files[:SKIPPED_SHOWN]
    ]
    more = status.skipped + status.failed - len(shown)
    return shown + ([f"            … and {more} more"] if more > 0 else [])


NOT_READ_SHOWN = 6
"""The types of files no format reads that ``explorer status`` names, the most files first."""


def _not_read_line(status: Status) -> list[str]:
    """``not read    119 .gz, 30 .svg (no format reads them)``: what a search cannot find."""
    if not status.other_types:
        return []
    ranked = sorted(status.other_types.items(), key=lambda item: (-item[1], item[0]))
    named = ", ".join(f"{count} {safe_name(kind)}" for kind, count in ranked[:NOT_READ_SHOWN])
    more = len(ranked) - NOT_READ_SHOWN
    rest = f" and {more} more types" if more > 0 else ""
    return [f"not read    {named}{rest} (no format reads them)"]


def render_status(status: Status, out: TextIO | None = None, writer: str | None = None) -> None:
    """``explorer status`` as text; ``writer``: the live process that keeps the index
    current (a TUI, an MCP server), said instead of the command to catch up."""
    reasons = ", ".join(f"{n} {safe_text(r)}" for r, n in sorted(status.skip_reasons.items()))
    when = (
        time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(status.last_update))
        if status.last_update
        else "never"
    )
    lines = [
        f"root        {safe_name(status.root)}",
        f"index       {safe_name(status.index_dir)} ({status.store_bytes / 1e6:.1f} MB)",
        f"files       {status.indexed} indexed, {status.stale} stale, "
        f"{status.skipped} skipped, {status.failed} failed" + (f" ({reasons})" if reasons else ""),
        *_stale_lines(status, writer),
        *([f"writer      {safe_text(writer)} keeps the index current"] if writer else []),
        *_skipped_lines(status),
        *_not_read_line(status),
        f"chunks      {status.chunks} ({status.vectors} with vectors)",
        f"vectors     {status.vector_store} store at {safe_text(status.vector_location)}"
        + _vectors_problem(status),
        f"model       {safe_text(status.model)}"
        + (f" ({status.dimension} dimensions)" if status.dimension else ""),
        f"updated     {when}",
        "rebuild     "
        + (f"needed: {safe_text(status.rebuild_reason)}" if status.needs_rebuild else "not needed"),
        _permissions_line(status),
    ]
    click.echo("\n".join(lines), file=out)


def _link_line(where: str, link: Link) -> str:
    """``where`` (a path and line) and the target as written, marked when it is missing or
    leads outside the root."""
    if link.exists:
        mark = ""
    elif link.state == "outside-root":
        mark = click.style("  outside the root", fg="yellow")
    else:
        mark = click.style("  missing", fg="red", bold=True)
    kind = "" if link.kind == "link" else f"  ({link.kind})"
    return f"  {where}  {safe_label(link.raw)}{kind}{mark}"


def render_links(found: FileLinks, out: TextIO | None = None, err: TextIO | None = None) -> None:
    """``explorer links``: outgoing links, then backlinks, with lines, to ``out`` (default:
    stdout); a note to ``err`` (default: stderr) when the file itself does not exist."""
    path = safe_name(found.path)
    if not found.exists:
        click.echo(
            f"note: {path} does not exist; these files link to it", file=err, err=err is None
        )
    click.echo(f"{path} links to {len(found.outgoing)}:", file=out)
    for link in found.outgoing:
        click.echo(_link_line(f"L{link.line} → {safe_name(link.target)}", link), file=out)
    click.echo(f"linked from {len(found.backlinks)}:", file=out)
    for link in found.backlinks:
        click.echo(_link_line(f"{safe_name(link.source)}:{link.line}", link), file=out)


def render_missing_references(check: ReferenceCheck) -> None:
    """``explorer check-refs``: one ``file:line: missing target`` line per broken reference."""
    for link in check.missing:
        kind = "" if link.kind == "link" else f" ({link.kind})"
        click.echo(
            f"{safe_name(link.source)}:{link.line}: missing {safe_label(link.raw)}{kind}"
            + (f" → {safe_name(link.target)}" if link.raw != link.target else "")
        )
    outside = len(check.outside_root)
    elsewhere = f", {outside} outside the root" if outside else ""
    if check.missing:
        files = len({link.source for link in check.missing})
        click.echo(
            f"{len(check.missing)} missing reference{'s' if len(check.missing) != 1 else ''}"
            f" in {files} file{'s' if files != 1 else ''}"
            f" ({check.references} checked: {check.resolved} resolved{elsewhere})",
            err=True,
        )
    else:
        click.echo(
            f"no missing references ({check.references} checked in {check.files} files)"
            + (f"; {outside} lead outside the root" if outside else ""),
            err=True,
        )
    if check.layout:
        click.echo(f"links resolved as: {safe_text(check.layout)}", err=True)


def _vectors_problem(status: Status) -> str:
    """What keeps the vectors from being counted: a server that does not answer, or a local
    store that is damaged (its message names the command that repairs it)."""
    command = status.index_command or f"explorer index {status.root}"
    if status.vectors_available:
        if not status.vectors_missing:
            return ""
        return safe_text(
            f" — {status.vectors_missing} chunks recorded as embedded have no vector:"
            f" run `{command}` to embed them again"
        )
    if status.vectors_missing:  # the whole store is gone
        return f" — {safe_text(status.vectors_problem)}"
    if status.vector_store == "server":
        return " — unreachable: counts are from the manifest"
    return f" — unreadable, counts are from the manifest: {safe_text(status.vectors_problem)}"


def print_json(data: object, out: TextIO | None = None) -> None:
    """Print ``data`` as JSON to ``out`` (default: stdout); no control character is written raw
    (see :func:`safe_json`)."""
    click.echo(safe_json(json.dumps(data, indent=2, ensure_ascii=False)), file=out)
