"""The resident reader's protocol: what a reader takes from a client and what it refuses, read
before anything is answered, and the fingerprint that tells one build of explorer from another."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from explorer.cli.reader_protocol import (
    NESTING_LIMIT,
    PROTOCOL,
    REQUEST_LIMIT,
    Answer,
    LinksCall,
    ReaderRequest,
    Refusal,
    Refused,
    RelatedCall,
    RequestRefused,
    SearchCall,
    StatusCall,
    code_fingerprint,
    decode_reply,
    encode_reply,
    encode_request,
    parse_request,
)
from explorer.cli.targets import OutputFormat
from explorer.core.models import SearchMode
from explorer.settings.config import Settings

FINGERPRINT = "f" * 32


def a_search(**changes: object) -> SearchCall:
    fields: dict[str, object] = {
        "query": "telescope [mirrors] {lenses}",
        "mode": SearchMode.HYBRID,
        "paths": ("guides/",),
        "exclude": ("drafts/",),
        "tags": (),
        "versions": ("1.5",),
        "limit": None,
        "offset": 0,
        "per_file": 3,
        "min_score": None,
        "content": False,
        "max_tokens": None,
        "metadata_only": False,
        "explain": True,
        "offsets": False,
        "output": OutputFormat.TEXT,
    }
    return SearchCall(**{**fields, **changes})  # type: ignore[arg-type]


def request_for(tmp_path: Path, call: object | None = None, **settings: object) -> ReaderRequest:
    return ReaderRequest(
        explorer_version="0.1.0",
        fingerprint=FINGERPRINT,
        settings=Settings.for_root(tmp_path, tmp_path / "index", **settings),
        call=call or a_search(),  # type: ignore[arg-type]
    )


def edited(data: bytes, change) -> bytes:
    request = json.loads(data)
    change(request)
    return json.dumps(request).encode()


def refused(data: bytes) -> str:
    with pytest.raises(RequestRefused) as raised:
        parse_request(data, FINGERPRINT)
    assert raised.value.reply.reason is Refusal.BAD_REQUEST
    return raised.value.reply.detail


@pytest.mark.parametrize(
    "call",
    [
        a_search(),
        RelatedCall("notes/stars.md", 10, True),
        LinksCall("a b/c.md", False),
        StatusCall(as_json=True),
    ],
)
def test_a_request_arrives_as_it_was_sent(tmp_path, call):
    request = request_for(tmp_path, call, semantic_weight=0.7, exclude=("drafts/",))
    assert parse_request(encode_request(request), FINGERPRINT) == request


@pytest.mark.parametrize(
    "body",
    [b"null", b"5", b'"x"', b"[]", b"{}", b"", b"\xff\xfe", b"[" * 100_000, b"{" * 100_000],
)
def test_what_is_not_a_request_is_refused(body):
    refused(body)


def test_nesting_is_refused_before_json_is_parsed(tmp_path):
    deep = b'{"protocol": 2, "call": ' + b"[" * (NESTING_LIMIT + 1) + b"]" * (NESTING_LIMIT + 1)
    assert "nested deeper" in refused(deep + b"}")
    # Brackets inside strings are text, not nesting.
    request = request_for(tmp_path, a_search(query="[" * 500 + '"{' * 500))
    assert parse_request(encode_request(request), FINGERPRINT).call.query.startswith("[[[")


def test_a_request_over_the_size_limit_is_refused(tmp_path):
    data = encode_request(request_for(tmp_path))
    assert "larger than" in refused(data + b" " * REQUEST_LIMIT)


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r["call"].update(kind="index"),  # a write command is no kind of call
        lambda r: r["call"].update(kind="check-refs"),
        lambda r: r.update(argv=[]),  # an unknown field
        lambda r: r["call"].update(extra=1),
        lambda r: r["settings"].update(unknown=1),
        lambda r: r["call"].update(per_file="3"),  # a wrong type, not converted
        lambda r: r["call"].update(explain=1),
        lambda r: r["call"].update(limit=2.0),
        lambda r: r["call"].update(per_file=10**9),  # out of bounds
        lambda r: r["call"].update(limit=0),
        lambda r: r["call"].update(offset=-1),
        lambda r: r["call"].update(min_score=1.5),
        lambda r: r["call"].update(query="x" * 100_000),
        lambda r: r["call"].update(paths=["p" * 5_000]),
        lambda r: r["settings"].update(semantic_weight=7.0),  # the config file's bounds
        lambda r: r["settings"].update(rrf_k=0),
        lambda r: r["settings"].update(candidates=10**7),  # no client sets it
        lambda r: r["settings"].update(root="relative/root"),
        lambda r: r.pop("settings"),
    ],
)
def test_wrong_fields_types_and_bounds_are_refused(tmp_path, change):
    refused(edited(encode_request(request_for(tmp_path)), change))


@pytest.mark.parametrize("path", ["../secret.md", "/etc/passwd", "a//b.md", "./a.md", "a/..", ""])
def test_a_file_outside_the_root_is_refused(tmp_path, path):
    assert "relative" in refused(encode_request(request_for(tmp_path, RelatedCall(path, 5, True))))


@pytest.mark.parametrize(
    ("change", "leaving"),
    [
        (lambda r: r.update(fingerprint="0" * 32), True),  # another build of this protocol
        (lambda r: r.update(protocol=PROTOCOL + 1, call={"kind": "future"}), True),
        (lambda r: r.update(protocol=1), False),  # an older client: it cannot replace a reader
    ],
)
def test_a_request_from_other_code_is_told_apart(tmp_path, change, leaving):
    with pytest.raises(RequestRefused) as raised:
        parse_request(edited(encode_request(request_for(tmp_path)), change), FINGERPRINT)
    assert raised.value.reply.reason is Refusal.VERSION
    assert raised.value.reply.leaving is leaving


def test_an_old_style_request_is_one_from_other_code():
    old = {"protocol": 1, "index_dir": "/x", "argv": [], "env": {}, "cwd": "/"}
    with pytest.raises(RequestRefused) as raised:
        parse_request(json.dumps(old).encode(), FINGERPRINT)
    assert not raised.value.reply.leaving


@pytest.mark.parametrize(
    "reply",
    [
        Answer("1. a.md  0.91\n      caf\u00e9 \udcff\n"),
        Answer("", "note: no indexed file matches nowhere/\n", 1),  # nothing found
        Refused(Refusal.VERSION, "other code", leaving=True),
        Refused(Refusal.BUSY, "8 clients"),
    ],
)
def test_replies_arrive_as_sent(reply):
    assert decode_reply(encode_reply(reply)) == reply


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"null",
        b'{"error": "another index or protocol"}',  # a protocol-1 reader's refusal
        b'{"stdout": "", "stderr": "", "exit": 0}',  # a protocol-1 reader's answer
        b'{"outcome": "refused", "reason": "nonsense", "detail": "", "leaving": false}',
        b'{"outcome": "answer", "stdout": 5}',
        b'{"protocol": 2, "outcome": "answer", "stdout": "1. a.md"}',  # no stderr, no status
        b'{"outcome": "answer", "stdout": "", "stderr": "", "status": 2}',  # an error's status
        b'{"outcome": "answer", "stdout": "", "stderr": "", "status": true}',
        b"[" * 100_000,
    ],
)
def test_anything_but_a_reply_is_none(data):
    assert decode_reply(data) is None


def make_package(base: Path) -> Path:
    package = base / "explorer"
    (package / "core").mkdir(parents=True)
    (package / "__init__.py").write_text("x = 1\n")
    (package / "core" / "search.py").write_text("def search(): ...\n")
    return package


def test_the_fingerprint_follows_the_code_on_disk(tmp_path):
    package = make_package(tmp_path)
    first = code_fingerprint(package)
    assert code_fingerprint(package) == first
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    (package / "notes.txt").write_text("not code")
    assert code_fingerprint(package) == first  # caches and other files are not the code
    source = package / "core" / "search.py"
    info = source.stat()
    os.utime(source, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000))  # an edit in place
    edited_once = code_fingerprint(package)
    assert edited_once != first
    (package / "core" / "new.py").write_text("")  # an upgrade that adds a module
    assert code_fingerprint(package) not in (first, edited_once)


def test_the_same_code_elsewhere_is_another_build(tmp_path):
    """A worktree on PYTHONPATH and the installed package: their readers must not mix."""
    packages = [make_package(tmp_path / "a"), make_package(tmp_path / "b")]
    for package in packages:
        for path in package.rglob("*.py"):
            os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    assert code_fingerprint(packages[0]) != code_fingerprint(packages[1])
