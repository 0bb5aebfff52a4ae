"""The text content of every tool's answer: the whole answer, readable, for a client that hands
the model only text.

Many MCP clients give a model a tool result's text content and drop its structured content;
the specification says a tool returning structured content SHOULD also return it in a text
block. Here that block is not the JSON again but one rendering of every answer, the same for
every tool: a headline that says what the answer holds (what was read, what was left out and
why), then every field of the structured content, in the answer model's order, as indented
``key: value`` lines (YAML-like, not meant to be parsed): a list item starts ``- ``, a short
list or a mapping of plain values stays on its line (``tags: [a, b]``, ``stale: {files: 0}``),
and a text of several lines (a file read, a passage's whole text) comes last in its mapping as
a block, ``key: |`` and its lines indented below it, each line as it is. So a search's text
holds every passage (path, lines, heading, score, snippet or text) and a read's text every line
read, with no quotes, braces or escapes to pay for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from explorer.api.answers import (
    Answer,
    CollectionsAnswer,
    CollectionStatusesAnswer,
    IndexStatusAnswer,
    LinksAnswer,
    OmittedFile,
    ReadAnswer,
    ReadManyAnswer,
    RelatedAnswer,
    SearchAnswer,
    StatusAnswer,
)

INLINE_WIDTH = 100
"""A list or mapping of plain values longer than this on one line is written one per line."""


def render(answer: Answer) -> str:
    """The text content of ``answer``: its headline, then every field it holds."""
    headline = _HEADLINES.get(type(answer), _no_headline)(answer)
    body = "\n".join(_mapping(answer.to_json(), ""))
    return f"{headline}\n{body}" if headline else body


# -- the headline: what the answer holds ----------------------------------------------------------
def _no_headline(_answer: Any) -> str:
    return ""


def _search(answer: SearchAnswer) -> str:
    more = "; more: pass next_cursor as cursor" if answer.next_cursor else ""
    return f"{len(answer.results)} files ({answer.mode}), best first{more}"


def _read(answer: ReadAnswer) -> str:
    where = f"{_named(answer.collection, answer.path)} lines {answer.start_line}-"
    where += f"{answer.end_line} of {answer.total_lines}"
    if answer.next_start_line is not None:
        go_on = f"start_line {answer.next_start_line}"
        if answer.next_start_char is not None:
            go_on += f", start_char {answer.next_start_char}"
        where += f"; continues at {go_on}"
    return where + (" (changed on disk since indexed)" if answer.stale else "")


def _read_many(answer: ReadManyAnswer) -> str:
    read = ", ".join(_named(f.collection, f.path) for f in answer.files) or "none"
    lines = [
        f"read {len(answer.files)} files ({answer.used:,} of {answer.budget:,} {answer.unit}): "
        f"{read}"
    ]
    omitted = answer.omitted or []
    if omitted:
        why = "; ".join(_omission(file, answer.unit) for file in omitted)
        lines.append(f"left out {len(omitted)}: {why}")
    if answer.more:
        lines.append(f"not looked at: {answer.more} more past max_files")
    return "\n".join(lines)


def _omission(file: OmittedFile, unit: str) -> str:
    name = _named(file.collection, file.path)
    if file.size is not None:
        return f"{name} ({file.reason}: {file.size:,} {unit}, read it with read)"
    return f"{name} ({file.reason}: {file.detail})" if file.detail else f"{name} ({file.reason})"


def _related(answer: RelatedAnswer) -> str:
    return f"{len(answer.related)} files related to {_named(answer.collection, answer.path)}"


def _links(answer: LinksAnswer) -> str:
    missing = sum(not link.exists for link in answer.links)
    return (
        f"{_named(answer.collection, answer.path)}: {len(answer.links)} links ({missing} to "
        f"missing files), {len(answer.backlinks)} backlinks"
    )


def _status(answer: StatusAnswer) -> str:
    files = answer.files
    return (
        f"{files.indexed} files indexed, {files.stale} stale, {files.skipped} skipped, "
        f"{files.failed} failed; {answer.chunks} passages; updates: {answer.upkeep or 'off'}"
    )


def _statuses(answer: CollectionStatusesAnswer) -> str:
    return "\n".join(f"{status.collection}: {_status(status)}" for status in answer.collections)


def _collections(answer: CollectionsAnswer) -> str:
    return f"{len(answer.collections)} collections, {len(answer.scopes)} scopes"


def _index_status(answer: IndexStatusAnswer) -> str:
    counts = ", ".join(f"{n} {state}" for state, n in answer.counts.items()) or "no files"
    return f"{answer.path}: {counts}"


def _named(collection: str | None, path: str) -> str:
    """``COLLECTION: PATH`` when the answer names collections."""
    return f"{collection}: {path}" if collection else path


_HEADLINES: dict[type[Answer], Callable[[Any], str]] = {
    SearchAnswer: _search,
    ReadAnswer: _read,
    ReadManyAnswer: _read_many,
    RelatedAnswer: _related,
    LinksAnswer: _links,
    StatusAnswer: _status,
    CollectionsAnswer: _collections,
    CollectionStatusesAnswer: _statuses,
    IndexStatusAnswer: _index_status,
}


# -- the body: every field ------------------------------------------------------------------------
def _mapping(data: dict[str, Any], indent: str, first: str = "") -> list[str]:
    """The lines of a mapping at ``indent``; its first line starts with ``first`` (``- `` for
    a list item) instead of the indent. Texts of several lines come last."""
    ordered = [k for k in data if not _is_block(data[k])] + [k for k in data if _is_block(data[k])]
    lines: list[str] = []
    for key in ordered:
        lead = first if not lines and first else indent
        lines += _field(key, data[key], lead, indent)
    return lines


def _field(key: str, value: Any, lead: str, indent: str) -> list[str]:
    inline = _inline(value)
    if inline is not None:
        return [f"{lead}{key}: {inline}"]
    inner = indent + "  "
    if isinstance(value, str):  # several lines: a block, each line as it is
        return [f"{lead}{key}: |", *_block(value, inner)]
    if isinstance(value, dict):
        return [f"{lead}{key}:", *_mapping(value, inner)]
    return [f"{lead}{key}:", *_items(value, indent)]


def _items(values: Sequence[Any], indent: str) -> list[str]:
    """A list's items, each starting ``- `` at ``indent``."""
    lines: list[str] = []
    for value in values:
        if isinstance(value, dict) and value:
            lines += _mapping(value, indent + "  ", first=f"{indent}- ")
            continue
        inline = _inline(value)
        if inline is not None:
            lines.append(f"{indent}- {inline}")
        elif isinstance(value, str):
            lines += [f"{indent}- |", *_block(value, indent + "  ")]
        else:
            lines += [f"{indent}-", *_items(value, indent + "  ")]
    return lines


def _inline(value: Any) -> str | None:
    """``value`` on one line, or None when it takes several."""
    if isinstance(value, str):
        return None if _is_block(value) else value if value else '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None or isinstance(value, int | float):
        return "null" if value is None else str(value)
    if isinstance(value, list):
        parts = [_inline(item) for item in value]
        text = "[" + ", ".join(str(part) for part in parts) + "]"
    else:
        parts = [_inline(item) for item in value.values()]
        text = "{" + ", ".join(f"{k}: {part}" for k, part in zip(value, parts, strict=True)) + "}"
    if None in parts:
        return None
    return text if len(text) <= INLINE_WIDTH or not value else None


def _is_block(value: Any) -> bool:
    return isinstance(value, str) and "\n" in value


def _block(text: str, indent: str) -> list[str]:
    """``text``'s lines at ``indent``, each as it is (an empty line stays empty; a last line
    break ends the last line, it adds none)."""
    return [f"{indent}{line}" if line else "" for line in text.removesuffix("\n").split("\n")]
