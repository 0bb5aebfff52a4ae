"""Outgoing webhook deliveries: signing, scheduling retries and recording attempts.

Each delivery is a JSON POST signed with HMAC-SHA256. The ``X-Tern-Signature`` header carries
a timestamp and one ``v1`` signature per active secret (two during a rotation overlap)::

    X-Tern-Signature: t=1710951851,v1=5f2b...,v1=9a0c...

The receiving side is described in ``api/webhooks.md``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import logging
import socket
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from urllib.parse import urlsplit

import httpx

log = logging.getLogger("tern.webhooks")

SIGNATURE_HEADER = "X-Tern-Signature"
EVENT_HEADER = "X-Tern-Event"
DELIVERY_HEADER = "X-Tern-Delivery"
USER_AGENT = "Tern-Webhooks/1.5"

#: Delay before attempt n+1 (attempt 1 is immediate). Eight attempts span about 17 hours.
RETRY_DELAYS = (
    timedelta(seconds=30),
    timedelta(minutes=2),
    timedelta(minutes=10),
    timedelta(minutes=30),
    timedelta(hours=1),
    timedelta(hours=3),
    timedelta(hours=12),
)
RESPONSE_EXCERPT_BYTES = 4096


class TargetNotAllowed(ValueError):
    """The subscription URL resolves to a loopback, link-local or private address."""


@dataclass
class Delivery:
    id: str
    subscription_id: str
    event: str
    payload: dict
    attempt: int = 0
    status: str = "pending"          # pending, delivered, retrying, dead
    next_attempt_at: datetime | None = None
    history: list[dict] = field(default_factory=list)


def sign(secrets: list[str], body: bytes, timestamp: int | None = None) -> str:
    """Build the signature header value for ``body``.

    >>> sign(["whsec_test"], b'{}', timestamp=1700000000)[:13]
    't=1700000000,'
    """
    ts = int(time.time()) if timestamp is None else timestamp
    signed = f"{ts}.".encode() + body
    parts = [f"t={ts}"]
    for secret in secrets:
        digest = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
        parts.append(f"v1={digest}")
    return ",".join(parts)


def verify(secret: str, header: str, body: bytes, tolerance: int = 300,
           now: float | None = None) -> bool:
    """Reference implementation of the receiver-side check, used in tests and docs."""
    pairs = [p.split("=", 1) for p in header.split(",") if "=" in p]
    stamps = [v for k, v in pairs if k == "t"]
    if len(stamps) != 1 or not stamps[0].isdigit():
        return False
    ts = int(stamps[0])
    if abs((time.time() if now is None else now) - ts) > tolerance:
        return False
    expected = hmac.new(secret.encode(), f"{ts}.".encode() + body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, v) for k, v in pairs if k == "v1")


def check_target(url: str, allow_private: bool = False) -> None:
    """Refuse URLs that would let a user make the instance call internal services (SSRF)."""
    parts = urlsplit(url)
    if parts.scheme != "https" and parts.hostname not in ("localhost", "127.0.0.1", "::1"):
        raise TargetNotAllowed("webhook URLs must use https")
    if allow_private:
        return
    for info in socket.getaddrinfo(parts.hostname, parts.port or 443, proto=socket.IPPROTO_TCP):
        address = ipaddress.ip_address(info[4][0])
        if address.is_private or address.is_loopback or address.is_link_local:
            raise TargetNotAllowed(f"{parts.hostname} resolves to non-public address {address}")


def next_attempt(delivery: Delivery, max_attempts: int,
                 now: datetime | None = None) -> datetime | None:
    """When to try again after a failed attempt, or ``None`` when the delivery is dead."""
    if delivery.attempt >= max_attempts:
        return None
    index = min(delivery.attempt - 1, len(RETRY_DELAYS) - 1)
    return (now or datetime.now(timezone.utc)) + RETRY_DELAYS[index]


def deliver(client: httpx.Client, url: str, delivery: Delivery, secrets: list[str],
            timeout: float = 10.0, max_attempts: int = 8) -> Delivery:
    """Make one attempt and update ``delivery`` in place."""
    body = json.dumps(delivery.payload, separators=(",", ":"), sort_keys=True).encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        EVENT_HEADER: delivery.event,
        DELIVERY_HEADER: delivery.id,
        SIGNATURE_HEADER: sign(secrets, body),
    }
    delivery.attempt += 1
    started = time.monotonic()
    record = {"attempt": delivery.attempt, "at": datetime.now(timezone.utc).isoformat()}
    try:
        response = client.post(url, content=body, headers=headers, timeout=timeout)
        record.update(status=response.status_code,
                      response=response.text[:RESPONSE_EXCERPT_BYTES])
        ok = 200 <= response.status_code < 300
    except httpx.HTTPError as exc:
        record.update(status=None, error=f"{type(exc).__name__}: {exc}")
        ok = False
    record["duration_ms"] = round((time.monotonic() - started) * 1000)
    delivery.history.append(record)

    if ok:
        delivery.status = "delivered"
        delivery.next_attempt_at = None
    else:
        delivery.next_attempt_at = next_attempt(delivery, max_attempts)
        delivery.status = "dead" if delivery.next_attempt_at is None else "retrying"
        log.warning("webhook %s attempt %d for %s failed: %s", delivery.id, delivery.attempt,
                    delivery.subscription_id, record.get("error") or record.get("status"))
    return delivery
