"""Token-bucket rate limiting for the HTTP API.

Each client key (an API token id, or the client address for anonymous requests) owns a bucket
holding at most ``requests_per_minute + burst`` tokens that refills at ``requests_per_minute``
per minute. Buckets live in memory in ``tern-web`` and are persisted to the ``ratelimit_buckets``
table every 30 seconds so that a restart does not reset everyone's budget.

Client-visible behaviour (headers, the 429 body) is documented in ``api/rate-limits.md``.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Callable

__all__ = ["Bucket", "Decision", "RateLimiter", "COST"]

#: Tokens consumed per request, by endpoint class.
COST = {"default": 1, "search": 2, "bulk": 5}

ERROR_CODE = "TERN-E1029"


@dataclass
class Bucket:
    tokens: float
    updated: float


@dataclass(frozen=True)
class Decision:
    """The outcome for one request, with everything needed for the response headers."""

    allowed: bool
    limit: int
    remaining: int
    reset_after: float
    """Seconds until the bucket is full again (``X-RateLimit-Reset``)."""
    retry_after: float
    """Seconds until this request would be allowed; 0 when allowed (``Retry-After``)."""

    def headers(self) -> dict[str, str]:
        headers = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(math.ceil(self.reset_after)),
        }
        if not self.allowed:
            headers["Retry-After"] = str(max(1, math.ceil(self.retry_after)))
        return headers

    def error_body(self, request_id: str) -> dict:
        seconds = max(1, math.ceil(self.retry_after))
        return {
            "error": {
                "code": ERROR_CODE,
                "message": f"rate limit exceeded; retry after {seconds} seconds",
                "details": {"retry_after": seconds, "limit": self.limit, "scope": "token"},
                "request_id": request_id,
            }
        }


class RateLimiter:
    """Thread-safe collection of token buckets.

    >>> rl = RateLimiter(requests_per_minute=60, burst=0, clock=lambda: 0.0)
    >>> [rl.check("tok_1").allowed for _ in range(61)].count(False)
    1
    """

    def __init__(self, requests_per_minute: int = 120, burst: int = 40,
                 clock: Callable[[], float] = time.monotonic, max_buckets: int = 100_000):
        if requests_per_minute <= 0:
            raise ValueError("requests_per_minute must be positive")
        self.rate = requests_per_minute / 60.0          # tokens per second
        self.capacity = float(requests_per_minute + burst)
        self.limit = requests_per_minute
        self._clock = clock
        self._buckets: dict[str, Bucket] = {}
        self._lock = threading.Lock()
        self._max_buckets = max_buckets

    def _refill(self, bucket: Bucket, now: float) -> None:
        elapsed = max(0.0, now - bucket.updated)
        bucket.tokens = min(self.capacity, bucket.tokens + elapsed * self.rate)
        bucket.updated = now

    def check(self, key: str, cost: int = COST["default"]) -> Decision:
        """Take ``cost`` tokens from ``key``'s bucket if possible and report the decision."""
        now = self._clock()
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                if len(self._buckets) >= self._max_buckets:
                    self._evict_full(now)
                bucket = self._buckets[key] = Bucket(tokens=self.capacity, updated=now)
            self._refill(bucket, now)
            allowed = bucket.tokens >= cost
            if allowed:
                bucket.tokens -= cost
                retry_after = 0.0
            else:
                retry_after = (cost - bucket.tokens) / self.rate
            reset_after = (self.capacity - bucket.tokens) / self.rate
            return Decision(
                allowed=allowed,
                limit=self.limit,
                remaining=int(bucket.tokens),
                reset_after=reset_after,
                retry_after=retry_after,
            )

    def reset(self, key: str) -> bool:
        """Forget a bucket (``tern ratelimit reset``). Returns whether it existed."""
        with self._lock:
            return self._buckets.pop(key, None) is not None

    def _evict_full(self, now: float) -> None:
        """Drop buckets that have refilled completely; they carry no information."""
        for key in [k for k, b in self._buckets.items()
                    if b.tokens + (now - b.updated) * self.rate >= self.capacity]:
            del self._buckets[key]

    def snapshot(self) -> list[tuple[str, float, float]]:
        """Rows for persisting to ``ratelimit_buckets``: (key, tokens, updated)."""
        with self._lock:
            return [(k, b.tokens, b.updated) for k, b in self._buckets.items()]


def client_key(token_id: str | None, remote_addr: str) -> str:
    """Bucket key: the token when authenticated, otherwise the client address.

    ``remote_addr`` must already be the real client address, i.e. taken from
    ``X-Forwarded-For`` only when the peer is in ``server.trusted_proxies``.
    """
    return f"tok:{token_id}" if token_id else f"ip:{remote_addr}"
