"""Front matter: the YAML (``---``) or TOML (``+++``) block atop a document, read once, safely.

A document's front matter is untrusted input, so reading it is bounded: a block larger than
:data:`MAX_FRONT_MATTER_CHARS` is not parsed, YAML aliases are refused (a 341-byte "billion
laughs" would otherwise expand into hundreds of millions of characters), nesting deeper than
:data:`MAX_DEPTH` is refused, and every kept field is cut to its cap in :data:`FIELD_CAPS`.

Values are kept as the text the author wrote: ``version: 1.10`` stays ``1.10`` (no float),
``title: yes`` stays ``yes`` (no boolean). ``tags`` may be a list of scalars, each one tag
whatever it holds (``["C, C++"]`` is one tag), or a string of comma-separated tags; a value of
the wrong shape (a mapping as a title, a list inside the tags) is dropped and a note says so.
Nothing here raises: bad front matter is reported, never fatal.

Three fields say where a page is published and by which names it is linked to: ``aliases``
(a list, or one string; ``alias`` too): other names of an Obsidian note, or other URLs of a
Hugo page; ``slug``: the last part of a page's URL; ``url`` (Jekyll's ``permalink``): its
whole URL.
"""

from __future__ import annotations

import datetime
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypedDict

import yaml

from explorer.core.errors import ExplorerError

MAX_FRONT_MATTER_CHARS = 32_000
"""A fenced block longer than this is left unparsed (its fields are not read)."""
MAX_DEPTH = 16
"""Deepest nesting of lists and mappings read; deeper front matter is refused."""
FIELD_CAPS: dict[str, int] = {
    "title": 300,
    "description": 2_000,
    "tags": 1_000,
    "version": 100,
    "aliases": 1_000,
    "slug": 300,
    "url": 500,
}
"""The kept fields and the most characters each may hold (longer values are cut; for ``tags``
and ``aliases``, all of them together)."""
MAX_TAGS = 100
"""Most tags (or aliases) kept from a list."""

_YAML_FENCE = re.compile(r"\A---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*\r?$\n?", re.M | re.S)
_TOML_FENCE = re.compile(r"\A\+\+\+[ \t]*\r?\n(.*?)^\+\+\+[ \t]*\r?$\n?", re.M | re.S)
_NULL_TAG = "tag:yaml.org,2002:null"


class _TextLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """A safe YAML loader that resolves plain scalars to text (only ``null`` stays special)."""

    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag == _NULL_TAG]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }


class FileMetadata(TypedDict, total=False):
    """What the index keeps of a file's front matter; a field the file lacks is absent."""

    title: str
    description: str
    tags: list[str]
    """One entry per tag, as written (a tag may hold a comma)."""
    version: str
    aliases: list[str]
    """Other names of the note (Obsidian) or other URLs of the page (Hugo), as written."""
    slug: str
    """The last part of the page's URL (Hugo, Docusaurus)."""
    url: str
    """The page's whole URL (Hugo ``url``, Jekyll ``permalink``)."""
    notes: str
    """What was dropped or cut, kept by the indexer so it can be looked up."""


class FrontMatterRefused(ExplorerError, ValueError):
    """Front matter that is well fenced but not read (too large, aliases, too deep)."""


@dataclass(frozen=True)
class FrontMatter:
    """What a document's front matter holds, and where its body starts."""

    metadata: FileMetadata = field(default_factory=lambda: FileMetadata())
    """``title``, ``description``, ``tags``, ``version``: text, capped."""
    body_start: int = 0
    """Offset of the first character after the block (0 without front matter)."""
    notes: tuple[str, ...] = ()
    """What was dropped or cut, one short sentence each."""
    fence_end: int = 0
    """Offset after the fenced block, whether it was read or not (0 without a fence): the
    document's own structure (its headings, its links) starts there."""


def read_front_matter(text: str) -> FrontMatter:
    """The front matter of ``text``; never raises.

    Without front matter, or when the block does not parse into a mapping, the result is empty
    and the fenced block counts as body text (``body_start`` 0), though not as structure
    (``fence_end`` is after it). A block that is refused (too
    large, aliases, too deep) gives no metadata, a note, and a body after the block.
    """
    for fence, load in ((_YAML_FENCE, _load_yaml), (_TOML_FENCE, _load_toml)):
        if (match := fence.match(text)) is None:
            continue
        if len(match.group(1)) > MAX_FRONT_MATTER_CHARS:
            note = f"front matter ignored: longer than {MAX_FRONT_MATTER_CHARS} characters"
            return FrontMatter({}, match.end(), (note,), match.end())
        try:
            data = load(match.group(1))
        except FrontMatterRefused as refused:
            note = f"front matter ignored: {refused}"
            return FrontMatter({}, match.end(), (note,), match.end())
        except Exception:  # noqa: BLE001 - malformed front matter is just body text
            return FrontMatter(fence_end=match.end())
        if not isinstance(data, dict):
            body = match.end() if data is None else 0
            return FrontMatter({}, body, fence_end=match.end())
        metadata, notes = _fields(data)
        return FrontMatter(metadata, match.end(), tuple(notes), match.end())
    return FrontMatter()


def parse_front_matter(text: str) -> tuple[FileMetadata, int]:
    """``(metadata, body start)`` of :func:`read_front_matter` (its notes left out)."""
    front = read_front_matter(text)
    return front.metadata, front.body_start


def _load_yaml(source: str) -> object:
    """Parse YAML with every scalar as text, after checking it has no alias and little depth."""
    depth = 0
    try:
        for event in yaml.parse(source, Loader=_TextLoader):
            if isinstance(event, yaml.AliasEvent):
                raise FrontMatterRefused("YAML aliases (*name) are not supported")
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise FrontMatterRefused(f"nested deeper than {MAX_DEPTH} levels")
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    except yaml.scanner.ScannerError as error:
        # PyYAML 6.0.3+ stops its scanner itself at a flow nesting limit, before any event.
        if "nesting depth" in str(error):
            raise FrontMatterRefused(f"nested deeper than {MAX_DEPTH} levels") from error
        raise
    return yaml.load(source, Loader=_TextLoader)


def _load_toml(source: str) -> object:
    """Parse TOML with floats kept as written (``1.10`` stays ``1.10``)."""
    return tomllib.loads(source, parse_float=str)


def _scalar(value: object) -> str | None:
    """A scalar value as text; None for anything else (a list, a mapping, bytes)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return None


def _cap(key: str, value: str, notes: list[str]) -> str:
    cap = FIELD_CAPS[key]
    if len(value) <= cap:
        return value
    notes.append(f"{key} cut to {cap} characters")
    return value[: cap - 1].rstrip() + "…"


def _fields(data: dict[str, object]) -> tuple[FileMetadata, list[str]]:
    """The kept fields of a parsed block as capped text, and notes on what was dropped."""
    metadata = FileMetadata()
    notes: list[str] = []
    if title := _text("title", data.get("title"), notes):
        metadata["title"] = title
    if description := _text("description", data.get("description"), notes):
        metadata["description"] = description
    if tags := _text_list("tags", data.get("tags"), notes, split_commas=True):
        metadata["tags"] = tags
    if version := _text("version", data.get("version"), notes):
        metadata["version"] = version
    aliases = data.get("aliases", data.get("alias"))
    if aliases := _text_list("aliases", aliases, notes, split_commas=False):
        metadata["aliases"] = aliases
    if slug := _text("slug", data.get("slug"), notes):
        metadata["slug"] = slug
    if url := _text("url", data.get("url", data.get("permalink")), notes):
        metadata["url"] = url
    return metadata, notes


def _text(key: str, value: object, notes: list[str]) -> str:
    """A scalar field as capped text; "" when absent, empty or of the wrong shape (noted)."""
    if value is None:
        return ""
    text = _scalar(value)
    if text is None:
        notes.append(f"{key} ignored: {type(value).__name__}, not text")
        return ""
    text = text.strip()
    return _cap(key, text, notes) if text else ""


def _text_list(key: str, value: object, notes: list[str], split_commas: bool) -> list[str]:
    """A list field (``tags``, ``aliases``): a list's scalar items (others dropped with a note)
    or one string (for tags, split on commas); at most :data:`MAX_TAGS` of them, and
    :data:`FIELD_CAPS` characters in all."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        items: Sequence[object] = value
    elif (text := _scalar(value)) is not None:
        items = text.split(",") if split_commas else [text]
    else:
        notes.append(f"{key} ignored: {type(value).__name__}, not text")
        return []
    values = []
    for item in items:
        text = _scalar(item) if item is not None else None
        if text is None:
            if item is not None:
                one = "a tag" if key == "tags" else f"a value of {key}"
                notes.append(f"{one} ignored: {type(item).__name__}, not text")
            continue
        if text.strip():
            values.append(text.strip())
    if len(values) > MAX_TAGS:
        notes.append(f"{key} cut to the first {MAX_TAGS}")
        values = values[:MAX_TAGS]
    kept: list[str] = []
    for item in values:
        if len(", ".join([*kept, item])) > FIELD_CAPS[key]:
            notes.append(f"{key} cut to {FIELD_CAPS[key]} characters")
            break
        kept.append(item)
    return kept


def with_inline_tags(metadata: FileMetadata, inline: Sequence[str]) -> FileMetadata:
    """``metadata`` with the body's inline ``#tags`` after its front-matter tags (a tag
    already there, in any case, is not repeated), within the same caps."""
    tags = list(metadata.get("tags", []))
    seen = {tag.casefold() for tag in tags}
    added = False
    for tag in inline:
        if len(tags) >= MAX_TAGS or len(", ".join([*tags, tag])) > FIELD_CAPS["tags"]:
            break
        if tag.casefold() not in seen:
            seen.add(tag.casefold())
            tags.append(tag)
            added = True
    if not added:
        return metadata
    merged = metadata.copy()
    merged["tags"] = tags
    return merged


def front_matter_end(text: str) -> int:
    """Where the body starts after a well-formed YAML/TOML fence (0 without one).

    For display only (the preview hides the block); the fields are read by
    :func:`read_front_matter`.
    """
    for fence in (_YAML_FENCE, _TOML_FENCE):
        if (match := fence.match(text)) is not None:
            return match.end()
    return 0
