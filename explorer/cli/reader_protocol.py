"""What the resident reader and its client say to each other: typed read requests, typed
replies, and the limits both sides hold to.

A request is one JSON object, sent whole before the client shuts its side of the socket:

- the protocol and the explorer version, and a fingerprint of the code that sent it
  (:func:`code_fingerprint`), so a reader never answers for other code;
- the :class:`~explorer.settings.config.Settings` the client resolved in its own environment,
  working folder and config file (the index directory and root among them);
- one call: :class:`SearchCall`, :class:`RelatedCall`, :class:`LinksCall` or
  :class:`StatusCall`. Nothing else exists: no command line, no environment, no folder.

The reply is :class:`Answer` (what the command prints on stdout and stderr, and its exit
status) or :class:`Refused` (why not; the client then runs the command itself). The refusal's
shape is the same in every protocol, so a client can always tell that the reader is of
another version and is leaving.

The client imports this module on its fast path, so it imports nothing heavy; the reader checks
a request with pydantic (strict types, no unknown field) and the bounds each field declares, in
:func:`parse_request`, after :func:`check_shape` has refused what is too large or too deeply
nested for a JSON parser to be handed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
import sys
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import explorer
from explorer.cli.targets import OutputFormat
from explorer.core.models import SearchMode
from explorer.settings.config import Settings

if TYPE_CHECKING:
    from pydantic import TypeAdapter, ValidationError

PROTOCOL = 3
"""Protocol 1 sent a command line, an environment and a working folder; 2 sends typed calls;
3 answers with stderr and an exit status beside stdout."""
REQUEST_LIMIT = 1 << 20
"""Largest request a reader reads, in bytes."""
NESTING_LIMIT = 8
"""Deepest nesting of arrays and objects in a request (a real one has 3)."""

BOUNDS = "bounds"
"""Field metadata: the :class:`Bounds` of a field's value."""


@dataclass(frozen=True)
class Bounds:
    """What a field of a call accepts beyond its type: a numeric range (inclusive), and the
    longest string or the most items a tuple holds (each item a string no longer than
    ``longest`` too)."""

    low: float | None = None
    high: float | None = None
    longest: int | None = None

    def problem(self, value: object) -> str | None:
        """What is wrong with ``value``, or None when it is within these bounds."""
        if isinstance(value, bool) or value is None:
            return None
        if isinstance(value, int | float):
            if isinstance(value, float) and not math.isfinite(value):
                return "must be a finite number"
            if self.low is not None and value < self.low:
                return f"must be at least {self.low:g}"
            if self.high is not None and value > self.high:
                return f"must be at most {self.high:g}"
        if self.longest is not None and isinstance(value, str | tuple):
            if len(value) > self.longest:
                return f"is longer than {self.longest}"
            if isinstance(value, tuple) and any(len(item) > self.longest for item in value):
                return f"holds an item longer than {self.longest}"
        return None


def bounded(
    low: float | None = None, high: float | None = None, longest: int | None = None
) -> dict[str, Bounds]:
    """Field metadata declaring the field's :class:`Bounds`."""
    return {BOUNDS: Bounds(low, high, longest)}


MAX_QUERY = 10_000
MAX_FILTER = 1_000
MAX_RESULTS = 1_000
MAX_OFFSET = 100_000
MAX_PER_FILE = 100
MAX_TOKENS = 10_000_000
MAX_PATH = 4_096


@dataclass(frozen=True)
class SearchCall:
    """``explorer search``, as its options resolved (see ``explorer search --help``)."""

    query: str = field(metadata=bounded(longest=MAX_QUERY))
    mode: SearchMode
    paths: tuple[str, ...] = field(metadata=bounded(longest=MAX_FILTER))
    exclude: tuple[str, ...] = field(metadata=bounded(longest=MAX_FILTER))
    tags: tuple[str, ...] = field(metadata=bounded(longest=MAX_FILTER))
    versions: tuple[str, ...] = field(metadata=bounded(longest=MAX_FILTER))
    limit: int | None = field(metadata=bounded(1, MAX_RESULTS))
    offset: int = field(metadata=bounded(0, MAX_OFFSET))
    per_file: int = field(metadata=bounded(1, MAX_PER_FILE))
    min_score: float | None = field(metadata=bounded(0.0, 1.0))
    content: bool
    max_tokens: int | None = field(metadata=bounded(1, MAX_TOKENS))
    metadata_only: bool
    explain: bool
    offsets: bool
    output: OutputFormat
    kind: Literal["search"] = "search"


@dataclass(frozen=True)
class RelatedCall:
    """``explorer related FILE``; ``path`` is FILE relative to the root, ``/``-separated."""

    path: str = field(metadata=bounded(longest=MAX_PATH))
    limit: int = field(metadata=bounded(1, MAX_RESULTS))
    as_json: bool
    unlinked: bool = False
    """Only the related files FILE does not link to yet."""
    kind: Literal["related"] = "related"


@dataclass(frozen=True)
class LinksCall:
    """``explorer links FILE``; ``path`` is FILE relative to the root, ``/``-separated."""

    path: str = field(metadata=bounded(longest=MAX_PATH))
    as_json: bool
    kind: Literal["links"] = "links"


@dataclass(frozen=True)
class StatusCall:
    """``explorer status`` of the reader's own index."""

    as_json: bool
    kind: Literal["status"] = "status"


Call = SearchCall | RelatedCall | LinksCall | StatusCall
"""Every call a reader answers: reads of its own index, nothing that writes."""
FILE_CALLS = (RelatedCall, LinksCall)


@dataclass(frozen=True)
class ReaderRequest:
    """One request to the resident reader."""

    __pydantic_config__ = {"strict": True, "extra": "forbid", "allow_inf_nan": False}

    explorer_version: str = field(metadata=bounded(longest=100))
    fingerprint: str = field(metadata=bounded(longest=100))
    settings: Settings
    """What shapes the answer, resolved by the client: root and index directory (absolute),
    model, vector store, ranking and the config file's defaults."""
    call: Call
    protocol: int = PROTOCOL


@dataclass(frozen=True)
class Header:
    """What a request of any protocol says about its sender: read before the rest, which
    another protocol may shape differently."""

    __pydantic_config__ = {"strict": True, "extra": "ignore"}

    protocol: int
    explorer_version: str = ""
    fingerprint: str = ""


class Refusal(StrEnum):
    """Why a reader did not answer."""

    BAD_REQUEST = "bad-request"
    """Not a request this reader takes: not JSON, too large or deep, a wrong type or field,
    a value out of bounds, a call it does not serve."""
    VERSION = "version"
    """Sent by another protocol or another build of explorer."""
    ANOTHER_INDEX = "another-index"
    """For an index or root other than the reader's own."""
    BUSY = "busy"
    """As many clients as the reader serves at once are being served."""
    INDEX_CHANGED = "index-changed"
    """A writer changed the index since the reader started."""
    NOT_SERVED = "not-served"
    """The answer needs what a reader never does (a write, a model export) or says what the
    client says better (an error naming the file as typed)."""
    FAILED = "failed"
    """Answering failed: the client's own run gives the error message."""


@dataclass(frozen=True)
class Answer:
    """What the command prints on stdout and on stderr (its notes), and its exit status."""

    stdout: str
    stderr: str = ""
    status: int = 0
    """0, or 1 when a search found nothing (an error is never answered: the client runs the
    command and reports it)."""


@dataclass(frozen=True)
class Refused:
    """The reader's reason not to answer; ``leaving`` when it stops serving (the client may
    start a fresh one)."""

    reason: Refusal
    detail: str
    leaving: bool = False


Reply = Answer | Refused
ANSWER_STATUSES = frozenset({0, 1})
"""The exit statuses an answer may carry: found, or nothing found."""


class RequestRefused(Exception):
    """A request the reader does not answer, and the reply saying why."""

    def __init__(self, reason: Refusal, detail: str, leaving: bool = False) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reply = Refused(reason, detail, leaving)


# -- the client's side ------------------------------------------------------------------------


def encode_request(request: ReaderRequest) -> bytes:
    """``request`` as the JSON bytes a reader reads."""
    return json.dumps(dataclasses.asdict(request), default=_plain).encode("utf-8", "surrogatepass")


def _plain(value: object) -> object:
    """JSON for what :func:`json.dumps` does not know: paths as strings, sets sorted."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, frozenset | set):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} is not part of a request")


def decode_reply(data: bytes) -> Reply | None:
    """The reader's reply, or None for anything that is not one (an older reader's, a
    truncated one)."""
    try:
        reply = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(reply, dict):
        return None
    stdout, stderr, status = reply.get("stdout"), reply.get("stderr"), reply.get("status")
    if (
        reply.get("outcome") == "answer"
        and isinstance(stdout, str)
        and isinstance(stderr, str)
        and type(status) is int
        and status in ANSWER_STATUSES
    ):
        return Answer(stdout, stderr, status)
    reason, detail, leaving = reply.get("reason"), reply.get("detail"), reply.get("leaving")
    if (
        reply.get("outcome") == "refused"
        and reason in set(Refusal)
        and isinstance(detail, str)
        and isinstance(leaving, bool)
    ):
        return Refused(Refusal(reason), detail, leaving)
    return None


def encode_reply(reply: Reply) -> bytes:
    """``reply`` as the bytes a client reads (lone surrogates of undecodable names kept)."""
    data: dict[str, object]
    if isinstance(reply, Answer):
        data = {
            "protocol": PROTOCOL,
            "outcome": "answer",
            "stdout": reply.stdout,
            "stderr": reply.stderr,
            "status": reply.status,
        }
    else:
        data = {
            "protocol": PROTOCOL,
            "outcome": "refused",
            "reason": str(reply.reason),
            "detail": reply.detail,
            "leaving": reply.leaving,
        }
    return json.dumps(data).encode("ascii")


def code_fingerprint(package: Path | None = None) -> str:
    """What tells this build of explorer from another: its version, the interpreter, where the
    package is, and the name, size and modification time of each of its Python files.

    An upgrade replaces files and an edit of an editable install touches one: either changes
    the fingerprint. It reads no file, only their metadata (about a millisecond)."""
    package = package or Path(explorer.__file__).parent
    digest = hashlib.blake2b(digest_size=16)
    digest.update(f"{explorer.__version__}\0{sys.version}\0{package}\0".encode())
    for folder, folders, files in os.walk(package):
        folders[:] = sorted(name for name in folders if name != "__pycache__")
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            try:
                info = os.stat(path)
            except OSError:
                continue
            relative = os.path.relpath(path, package)
            digest.update(f"{relative}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


# -- the reader's side ------------------------------------------------------------------------

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


def check_shape(data: bytes) -> None:
    """Refuse a request larger than :data:`REQUEST_LIMIT` or nested deeper than
    :data:`NESTING_LIMIT`, before any JSON parser (and its recursion) sees it."""
    if len(data) > REQUEST_LIMIT:
        raise RequestRefused(Refusal.BAD_REQUEST, f"larger than {REQUEST_LIMIT} bytes")
    if data.count(b"[") + data.count(b"{") <= NESTING_LIMIT:
        return
    depth = 0
    for bracket in _BRACKET.finditer(_STRING.sub(b"", data)):
        depth += 1 if bracket.group() in b"[{" else -1
        if depth > NESTING_LIMIT:
            raise RequestRefused(Refusal.BAD_REQUEST, f"nested deeper than {NESTING_LIMIT}")


def version_refusal(header: Header, fingerprint: str) -> RequestRefused:
    """The refusal of a request from another protocol or build of explorer. The reader leaves
    when the sender knows this protocol or a later one (it can replace the reader); an older
    client's request is refused and the reader stays."""
    return RequestRefused(
        Refusal.VERSION,
        f"explorer {header.explorer_version or '?'} (protocol {header.protocol}, build "
        f"{header.fingerprint[:12] or '?'}) asked a reader of explorer "
        f"{explorer.__version__} (protocol {PROTOCOL}, build {fingerprint[:12]})",
        leaving=header.protocol >= PROTOCOL,
    )


def parse_request(data: bytes, fingerprint: str) -> ReaderRequest:
    """The request in ``data``, checked: raises :class:`RequestRefused` for anything this
    reader does not answer (reason ``VERSION``: a request from other code)."""
    from pydantic import ValidationError

    check_shape(data)
    try:
        header = _header_schema().validate_json(data)
    except ValidationError as error:
        raise RequestRefused(Refusal.BAD_REQUEST, _first_error(error)) from None
    if header.protocol != PROTOCOL or header.fingerprint != fingerprint:
        raise version_refusal(header, fingerprint)
    try:
        request = _request_schema().validate_json(data)
    except ValidationError as error:
        raise RequestRefused(Refusal.BAD_REQUEST, _first_error(error)) from None
    problems = [*_bounds_problems(request), *_bounds_problems(request.call)]
    if isinstance(request.call, FILE_CALLS) and not is_relative_path(request.call.path):
        problems.append("path must be relative to the root")
    if settings_problem := _settings_problem(request.settings):
        problems.append(settings_problem)
    if problems:
        raise RequestRefused(Refusal.BAD_REQUEST, problems[0])
    return request


@cache
def _header_schema() -> TypeAdapter[Header]:
    from pydantic import TypeAdapter

    return TypeAdapter(Header)


@cache
def _request_schema() -> TypeAdapter[ReaderRequest]:
    from pydantic import TypeAdapter

    return TypeAdapter(ReaderRequest)


def warm_schema() -> None:
    """Build the validators now, so the first request is checked as fast as the next."""
    _header_schema()
    _request_schema()
    _config_bounds()
    _configurable()


def _first_error(error: ValidationError) -> str:
    """One line for a pydantic ValidationError: where, and what."""
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or "request"
    return f"{where}: {first['msg']} ({error.error_count()} problem(s))"


def _bounds_problems(value: object) -> list[str]:
    """What breaks the :class:`Bounds` the fields of the dataclass ``value`` declare."""
    problems = []
    for declared in dataclasses.fields(value):  # type: ignore[arg-type]
        bounds = declared.metadata.get(BOUNDS)
        if bounds is not None and (problem := bounds.problem(getattr(value, declared.name))):
            problems.append(f"{declared.name} {problem}")
    return problems


def is_relative_path(path: str) -> bool:
    """True for a clean ``/``-separated path below a root: no ``..``, ``.``, empty or absolute
    part, no NUL."""
    if not path or "\0" in path or path.startswith("/"):
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


def _settings_problem(settings: Settings) -> str | None:
    """What is wrong with settings a client sent, or None: root and index directory must be
    absolute; each setting the config file can set must be within the bounds it declares there;
    every other one must have its default (no client can set it)."""
    if not settings.root.is_absolute() or not settings.index_dir.is_absolute():
        return "root and index_dir must be absolute"
    bounds = _config_bounds()
    for name, limits in bounds.items():
        if (problem := limits.problem(getattr(settings, name))) is not None:
            return f"settings.{name} {problem}"
    defaults = Settings(root=settings.root, index_dir=settings.index_dir)
    for declared in dataclasses.fields(Settings):
        name = declared.name
        if name not in _configurable() and getattr(settings, name) != getattr(defaults, name):
            return f"settings.{name} is not one a client sets"
    if len(settings.model) > MAX_PATH or len(settings.chroma_url or "") > MAX_PATH:
        return "settings.model or settings.chroma_url is too long"
    return None


@cache
def _configurable() -> frozenset[str]:
    """The settings a client may send other than their defaults: where the index is, and what
    flags, the environment and the config file set."""
    from explorer.core.settings import knobs

    shaped = {"model", "chroma_url", "exclude", "extensions", "allow_outside_links", "link_base"}
    declared = {knob.name for knob in knobs(Settings).values()}
    return frozenset({"root", "index_dir", *shaped, *declared})


@cache
def _config_bounds() -> dict[str, Bounds]:
    """The range of each numeric setting, as its declaration gives it
    (:func:`~explorer.core.settings.knob`)."""
    from explorer.core.settings import knobs

    return {
        knob.name: Bounds(knob.bounds.low, knob.bounds.high)
        for knob in knobs(Settings).values()
        if knob.bounds is not None
    }
