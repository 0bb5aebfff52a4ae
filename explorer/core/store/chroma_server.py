"""Where a Chroma server is, and whether it answers — without importing chromadb.

``chromadb`` takes most of a second to import, so the first check of a server (is it up at
start?) is a plain HTTP request to its heartbeat endpoint.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlsplit

from explorer.core.errors import ExplorerError, literal

CHROMA_URL_ENV = "EXPLORER_CHROMA_URL"
HEARTBEAT_PATH = "/api/v2/heartbeat"


Unreachable = TypeVar("Unreachable", bound=ExplorerError)


class ServerUrlError(ExplorerError, ValueError):
    """A Chroma URL that cannot be used; the message says what is wrong."""


class ServerUnreachable(ExplorerError):
    """The Chroma server did not answer; the message names the URL and what to do."""


@dataclass(frozen=True)
class ServerAddress:
    """A Chroma server's scheme, host and port, parsed from ``http(s)://host:port``."""

    host: str
    port: int
    ssl: bool

    @property
    def url(self) -> str:
        return f"{'https' if self.ssl else 'http'}://{self.host}:{self.port}"


def parse_server_url(url: str) -> ServerAddress:
    """Parse ``http://host:port`` (port defaults to 8000, Chroma's own default)."""
    text = url.strip()
    if "://" not in text:
        text = f"http://{text}"
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https"):
        raise ServerUrlError(f"Chroma URL {url!r} must start with http:// or https://")
    if not parts.hostname:
        raise ServerUrlError(f"Chroma URL {url!r} has no host; use e.g. http://127.0.0.1:8000")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ServerUrlError(f"Chroma URL {url!r} must be just scheme, host and port")
    try:
        port = parts.port or 8000
    except ValueError:
        raise ServerUrlError(f"Chroma URL {url!r} has a bad port") from None
    return ServerAddress(parts.hostname, port, parts.scheme == "https")


def unreachable(error_type: type[Unreachable], address: ServerAddress, reason: str) -> Unreachable:
    """An ``error_type`` whose one line says which server, why, and what to do about it."""
    return error_type(
        literal(
            f"cannot reach the Chroma server at {address.url} ({reason}); start it "
            f"(e.g. `chroma run --path DIR --port {address.port}`) or drop "
        )
        + "{0}"
        + literal(f" / ${CHROMA_URL_ENV} to use the local store"),
        fields=("chroma_url",),
    )


def check_server(address: ServerAddress, timeout: float = 3.0) -> None:
    """Raise :class:`ServerUnreachable` unless the server answers its heartbeat."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(address.url + HEARTBEAT_PATH, timeout=timeout) as response:
            json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        answer = f"HTTP {error.code} from its heartbeat; is it Chroma?"
        raise unreachable(ServerUnreachable, address, answer) from None
    except (OSError, ValueError) as error:
        reason = getattr(error, "reason", None) or error
        text = getattr(reason, "strerror", None) or str(reason)
        raise unreachable(ServerUnreachable, address, text.lower()) from None
