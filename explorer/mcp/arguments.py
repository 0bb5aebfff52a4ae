"""The arguments of each MCP tool, as pydantic models: their JSON schemas are the tools' input
schemas (bounds, enums, no other arguments), and their validation errors are put in words an
agent can act on (:func:`describe_invalid`), never pydantic's raw text.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import ErrorDetails

from explorer.api.requests import MAX_LIMIT, MAX_PER_FILE, MAX_QUERY_CHARS
from explorer.core.models import SearchMode
from explorer.core.settings import Bounds, knobs
from explorer.settings.config import Settings

MAX_PATTERNS = 20
"""The most path, exclude, tag or version values one search takes."""
MAX_PATTERN_CHARS = 500
"""The longest path, glob, tag or version value."""
MAX_TOKENS = 200_000
"""The largest token budget."""
MAX_READ_MANY_FILES = 200
MAX_READ_MANY_BYTES = 1_000_000
DEFAULT_READ_MANY_BYTES = 60_000
MAX_LINE = 100_000_000
"""Far past any line a file explorer indexes has (the size cap is 2 MB by default)."""

Pattern = Annotated[str, Field(min_length=1, max_length=MAX_PATTERN_CHARS)]
FilePath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_PATTERN_CHARS,
        description="A file path relative to the indexed folder, e.g. docs/setup.md.",
    ),
]


class ToolArguments(BaseModel):
    """Base of every tool's arguments: unknown arguments are refused, and a list given as a
    JSON string (some clients send ``'["a", "b"]'``) is read as the list."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _lists_sent_as_json(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        fixed = dict(data)
        for key, value in data.items():
            if isinstance(value, str) and value.lstrip().startswith("["):
                field = cls.model_fields.get(key)
                if field is not None and "list" in str(field.annotation):
                    try:
                        fixed[key] = json.loads(value)
                    except ValueError:
                        pass  # left as is: validation says what is wrong
        return fixed


def _declared(key: str) -> Bounds:
    """The bounds the setting ``key`` declares (:func:`~explorer.core.settings.knob`)."""
    bounds = knobs(Settings)[key].bounds
    assert bounds is not None, key
    return bounds


_LIMIT, _MIN_SCORE = _declared("limit"), _declared("min_score")


class SearchArguments(ToolArguments):
    """The arguments of ``search``."""

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    """What to look for, in your own words. May hold filter words: path:GLOB, tag:TAG,
    version:V."""
    mode: SearchMode = SearchMode.HYBRID
    """hybrid (meaning and keywords), semantic (meaning only) or keyword (BM25 only)."""
    paths: list[Pattern] = Field(default_factory=list, max_length=MAX_PATTERNS)
    """Only files under these prefixes or matching these globs (docs/, docs/**/*.md)."""
    exclude: list[Pattern] = Field(default_factory=list, max_length=MAX_PATTERNS)
    """Leave out files under these prefixes or matching these globs (drafts/, **/*.log)."""
    tags: list[Pattern] = Field(default_factory=list, max_length=MAX_PATTERNS)
    """Only files whose front matter has any of these tags."""
    versions: list[Pattern] = Field(default_factory=list, max_length=MAX_PATTERNS)
    """Only files whose front matter version is one of these."""
    limit: int | None = Field(default=None, ge=int(_LIMIT.low), le=MAX_LIMIT)
    """Files to return (default 10, or the config file's)."""
    per_file: int = Field(default=3, ge=1, le=MAX_PER_FILE)
    """Passages per file."""
    min_score: float | None = Field(default=None, ge=_MIN_SCORE.low, le=_MIN_SCORE.high)
    """Hide passages scoring below this (0-1)."""
    content: bool = False
    """Each passage's whole text (``text``) instead of a snippet."""
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS)
    """Keep the best passages that fit this many model tokens; ``budget`` says what was cut."""
    metadata_only: bool = False
    """Paths, titles, descriptions, tags and scores only: no passages."""
    offsets: bool = False
    """Add each passage's chunk_id, start_char/end_char and the snippet's highlight spans."""
    explain: bool = False
    """Add each leg's rank and score to every passage, and the fusion rule."""
    cursor: str | None = Field(default=None, max_length=200)
    """The next_cursor of an earlier answer, with the same other arguments: the next files."""


class RelatedArguments(ToolArguments):
    """The arguments of ``related``."""

    path: FilePath
    limit: int = Field(default=10, ge=1, le=MAX_LIMIT)
    """Files to return."""
    unlinked: bool = False
    """Only the related files the file does not link to yet, each with the pair of passages
    a link would join: the links the file is missing."""


class ReadArguments(ToolArguments):
    """The arguments of ``read``."""

    path: FilePath
    start_line: int | None = Field(default=None, ge=1, le=MAX_LINE)
    """First line (1-based; default 1)."""
    end_line: int | None = Field(default=None, ge=1, le=MAX_LINE)
    """Last line (inclusive; default the last)."""
    start_char: int = Field(default=0, ge=0, le=MAX_LINE)
    """Where in start_line to begin (0-based characters): the next_start_char of an answer
    that stopped inside a long line."""


class ReadManyArguments(ToolArguments):
    """The arguments of ``read_many``."""

    paths: list[FilePath] = Field(default_factory=list, max_length=MAX_READ_MANY_FILES)
    """Files to read, in this order."""
    glob: Pattern | None = None
    """Indexed files matching this prefix or glob (docs/, notes/**/*.md), by path, after any
    ``paths``."""
    max_bytes: int = Field(default=DEFAULT_READ_MANY_BYTES, ge=1, le=MAX_READ_MANY_BYTES)
    """The budget: the files' total size in UTF-8 bytes."""
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS)
    """A budget in model tokens instead of bytes."""
    max_files: int = Field(default=50, ge=1, le=MAX_READ_MANY_FILES)
    """The most files to return."""


class PathArguments(ToolArguments):
    """The arguments of ``links``."""

    path: FilePath


class IndexStatusArguments(ToolArguments):
    """The arguments of ``index_status``."""

    path: str = Field(default=".", min_length=1, max_length=MAX_PATTERN_CHARS)
    """A file, a folder (docs/) or a glob (**/*.md); "." for the whole folder."""
    limit: int = Field(default=50, ge=1, le=500)
    """The most files to list (not-fresh ones first)."""


class NoArguments(ToolArguments):
    """A tool that takes no arguments."""


# -- the same tools over several folders (collections) ----------------------------------------
CollectionName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_PATTERN_CHARS,
        description="A collection's name, as the collections tool lists it.",
    ),
]

ScopeName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_PATTERN_CHARS,
        description="A named scope, as the collections tool lists it.",
    ),
]


class InCollection(ToolArguments):
    """A path's collection, for a server of several folders."""

    collection: CollectionName | None = None
    """The collection the path is in (see the collections tool); may be left out when only
    one collection holds the path."""


class CollectionSearchArguments(SearchArguments):
    """The arguments of ``search`` over several folders (or with named scopes)."""

    collections: list[CollectionName] = Field(default_factory=list, max_length=MAX_PATTERNS)
    """Only these collections (any of them); also collection:NAME in the query."""
    scopes: list[ScopeName] = Field(default_factory=list, max_length=MAX_PATTERNS)
    """Only the files of these named scopes (any of them; see the collections tool); also
    scope:NAME in the query."""


class CollectionRelatedArguments(RelatedArguments, InCollection):
    """The arguments of ``related`` over several folders (neighbours come from all)."""


class CollectionReadArguments(ReadArguments, InCollection):
    """The arguments of ``read`` over several folders."""


class CollectionReadManyArguments(ReadManyArguments, InCollection):
    """The arguments of ``read_many`` over several folders: ``collection`` applies to every
    path and to the glob (left out: each path from the one collection holding it, the glob
    over every collection)."""


class CollectionPathArguments(PathArguments, InCollection):
    """The arguments of ``links`` over several folders (links stay within a collection)."""


class CollectionIndexStatusArguments(IndexStatusArguments, InCollection):
    """The arguments of ``index_status`` over several folders (left out: every collection)."""


class CollectionStatusArguments(ToolArguments):
    """The arguments of ``status`` over several folders."""

    collection: CollectionName | None = None
    """The collection to report on; left out: every collection, each on its own."""


# -- errors in words ------------------------------------------------------------------------------
def describe_invalid(error: ValidationError, model: type[ToolArguments]) -> str:
    """Every problem of ``error`` in one line, naming each argument as the schema does and
    saying what would be accepted; the rejected values are never repeated."""
    problems = [_problem(detail, model) for detail in error.errors(include_url=False)]
    return "; ".join(dict.fromkeys(problems))


def _problem(detail: ErrorDetails, model: type[ToolArguments]) -> str:
    location = detail["loc"]
    name = _argument_name(location)
    kind = detail["type"]
    context = detail.get("ctx", {})
    if kind == "extra_forbidden":
        known = ", ".join(model.model_fields) or "none"
        return f"unknown argument {name!r}; the arguments are: {known}"
    if kind == "missing":
        return f"{name} is required"
    if kind in ("greater_than_equal", "greater_than"):
        return f"{name} must be at least {context.get('ge', context.get('gt'))}"
    if kind in ("less_than_equal", "less_than"):
        return f"{name} must be at most {context.get('le', context.get('lt'))}"
    if kind == "string_too_short":
        return f"{name} must not be empty"
    if kind == "string_too_long":
        value = detail.get("input")
        length = f" (it has {len(value)})" if isinstance(value, str) else ""
        return f"{name} is too long{length}: at most {context.get('max_length')} characters"
    if kind == "too_long":
        return f"{name} takes at most {context.get('max_length')} values"
    if kind in ("enum", "literal_error"):
        return f"{name} must be one of {context.get('expected', '')}".replace("'", "")
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"{name} must be a whole number"
    if kind in ("float_type", "float_parsing"):
        return f"{name} must be a number"
    if kind in ("bool_type", "bool_parsing"):
        return f"{name} must be true or false"
    if kind in ("string_type",):
        return f"{name} must be a string"
    if kind == "list_type":
        return f"{name} must be a list of strings"
    return f"{name}: {detail['msg']}"


def _argument_name(location: tuple[int | str, ...]) -> str:
    """``paths[2]`` for the third value of ``paths``; ``arguments`` for the whole object."""
    name = ""
    for part in location:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name or "arguments"
