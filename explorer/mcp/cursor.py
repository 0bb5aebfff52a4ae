"""Opaque paging cursors: where the next page of a search (or a listing) starts, bound to the
request that made it.

A cursor is URL-safe base64 of a small JSON object: the offset of the next page and a
fingerprint of the request's other arguments. Given with different arguments it is refused
(the pages of two different searches do not line up), and text that is no cursor of this
server is refused in words; the agent never needs to read one.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json

from explorer.core.errors import ExplorerError


class BadCursor(ExplorerError):
    """A cursor this server did not give, or gave for another request."""


def fingerprint(request: object) -> str:
    """A short digest of ``request`` (anything JSON can write, keys sorted)."""
    text = json.dumps(request, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def make_cursor(request_fingerprint: str, offset: int) -> str:
    """The cursor of the page that starts at ``offset``."""
    data = json.dumps({"f": request_fingerprint, "o": offset}, separators=(",", ":"))
    return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")


def read_cursor(cursor: str, request_fingerprint: str) -> int:
    """The offset ``cursor`` stands for; :class:`BadCursor` unless this server gave it for a
    request with this fingerprint."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
        offset, made_for = data["o"], data["f"]
    except (binascii.Error, ValueError, KeyError, TypeError):
        raise BadCursor(
            "cursor is not one this server gave: pass an answer's next_cursor as it is"
        ) from None
    if not isinstance(offset, int) or offset < 0 or made_for != request_fingerprint:
        raise BadCursor(
            "cursor belongs to another request: repeat the arguments of the call that gave "
            "it, or leave cursor out to start from the first page"
        )
    return offset
