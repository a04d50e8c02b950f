"""Per-key rate limits: a token bucket for each API key, in the server's memory.

Why a token bucket: it allows a burst (a dashboard loading its first page sends a handful of
requests at once) and holds a steady rate after it, and its state is two numbers per key. The
decision is a pure function of the bucket and the time, so it is tested without a clock.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sagewai.errors import RateLimitedError

__all__ = ["RateLimiter", "TokenBucket"]


@dataclass(slots=True)
class TokenBucket:
    """``capacity`` tokens, refilled at ``rate`` per second; a request takes one.

    Example:
        >>> bucket = TokenBucket(rate=1.0, capacity=2, tokens=2.0, updated=0.0)
        >>> bucket.take(0.0), bucket.take(0.0), bucket.take(0.0)
        (0.0, 0.0, 1.0)
        >>> bucket.take(1.0)
        0.0
    """

    rate: float
    capacity: int
    tokens: float
    updated: float

    def take(self, now: float) -> float:
        """Take a token: 0 when one was there, else the seconds until one will be."""
        elapsed = max(now - self.updated, 0.0)
        self.tokens = min(float(self.capacity), self.tokens + elapsed * self.rate)
        self.updated = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate


class RateLimiter:
    """One :class:`TokenBucket` per key id; ``rate`` 0 switches limiting off.

    Args:
        rate: Requests per second each key may sustain.
        burst: Requests a key may send at once after a quiet time.
    """

    def __init__(self, *, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = max(burst, 1)
        self._buckets: dict[str, TokenBucket] = {}

    def check(self, key_id: str, *, now: float | None = None) -> None:
        """Count one request of ``key_id``.

        Raises:
            RateLimitedError: the key has no token left; ``retry_after`` says when it will.
        """
        if self.rate <= 0:
            return
        now = time.monotonic() if now is None else now
        bucket = self._buckets.get(key_id)
        if bucket is None:
            bucket = self._buckets[key_id] = TokenBucket(
                rate=self.rate, capacity=self.burst, tokens=float(self.burst), updated=now
            )
        wait = bucket.take(now)
        if wait > 0:
            raise RateLimitedError(wait)
