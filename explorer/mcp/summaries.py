"""The short text that goes with each structured answer.

A tool's answer is its structured content (typed by its output schema), sent once; its text
content is a few lines that say what the answer holds: for a client that shows only text, the
paths and line ranges to go on with, never the whole answer a second time.
"""

from __future__ import annotations

from explorer.api.answers import (
    Answer,
    CollectionsAnswer,
    IndexStatusAnswer,
    LinksAnswer,
    ReadAnswer,
    ReadManyAnswer,
    RelatedAnswer,
    SearchAnswer,
    Staleness,
    StatusAnswer,
)


def summary(answer: Answer) -> str:
    """A few lines for ``answer``; the structured content carries every field."""
    if isinstance(answer, SearchAnswer):
        return _search(answer)
    if isinstance(answer, RelatedAnswer):
        lines = [f"{len(answer.related)} files related to {answer.path}"]
        lines += [
            f"{_named(f.collection, f.path)} ({f.score:.2f}){_mark(f.stale)}"
            for f in answer.related
        ]
        return _with_stale(lines, answer.stale)
    if isinstance(answer, ReadAnswer):
        return _read(answer)
    if isinstance(answer, ReadManyAnswer):
        omitted = f"; {len(answer.omitted)} left out" if answer.omitted else ""
        names = ", ".join(f.path for f in answer.files)
        return (
            f"{len(answer.files)} files, {answer.used} of {answer.budget} {answer.unit}"
            f"{omitted}: {names}"
        )
    if isinstance(answer, LinksAnswer):
        missing = sum(not link.exists for link in answer.links)
        return _with_stale(
            [
                f"{answer.path}: {len(answer.links)} links ({missing} to missing files), "
                f"{len(answer.backlinks)} backlinks"
            ],
            answer.stale,
        )
    if isinstance(answer, StatusAnswer):
        files = answer.files
        return _with_stale(
            [
                f"{files.indexed} files indexed, {files.stale} stale, {files.skipped} skipped, "
                f"{files.failed} failed; {answer.chunks} passages; updates: "
                f"{answer.upkeep or 'off'}"
            ],
            answer.stale,
        )
    if isinstance(answer, CollectionsAnswer):
        lines = [
            f"collection {c.name}: {c.root}, {c.files} files"
            + (f" ({c.problem})" if c.problem else "")
            for c in answer.collections
        ]
        lines += [f"scope {s.name}: {s.description or 'no description'}" for s in answer.scopes]
        return "\n".join(lines)
    if isinstance(answer, IndexStatusAnswer):
        counts = ", ".join(f"{n} {state}" for state, n in answer.counts.items()) or "no files"
        return f"{answer.path}: {counts}"
    return type(answer).__name__


def _search(answer: SearchAnswer) -> str:
    lines = [f"{len(answer.results)} files ({answer.mode}); fields in the structured content"]
    for hit in answer.results:
        spans = ", ".join(f"{p.start_line}-{p.end_line}" for p in hit.passages or ())
        lines.append(
            f"{_named(hit.collection, hit.path)} ({hit.score:.2f})"
            f"{' lines ' + spans if spans else ''}"
        )
        lines[-1] += _mark(hit.stale)
    lines += answer.notes or []
    if answer.next_cursor:
        lines.append("more: pass next_cursor as cursor")
    return _with_stale(lines, answer.stale)


def _read(answer: ReadAnswer) -> str:
    where = f"{answer.path} lines {answer.start_line}-{answer.end_line} of {answer.total_lines}"
    if answer.next_start_line is not None:
        go_on = f"start_line {answer.next_start_line}"
        if answer.next_start_char is not None:
            go_on += f", start_char {answer.next_start_char}"
        where += f"; continues at {go_on}"
    return where + _mark(answer.stale)


def _named(collection: str | None, path: str) -> str:
    """``COLLECTION: PATH`` when the answer names collections."""
    return f"{collection}: {path}" if collection else path


def _mark(stale: bool | None) -> str:
    return " [changed on disk since indexed]" if stale else ""


def _with_stale(lines: list[str], stale: Staleness | None) -> str:
    if stale is not None and stale.files:
        lines.append(f"index behind the folder: {stale.files} files changed on disk")
    return "\n".join(lines)
