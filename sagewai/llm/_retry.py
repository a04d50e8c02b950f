"""Retries with exponential backoff and jitter, for transient model failures.

The delay schedule is a pure function (:func:`backoff_delay`) and the sleep is injected, so
tests check the schedule without waiting for it.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sagewai.errors import InvalidInputError
from sagewai.llm._errors import is_retryable

__all__ = ["MAX_RETRY_AFTER", "Sleep", "backoff_delay", "call_with_retries"]

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]
"""An awaitable sleep, ``asyncio.sleep`` by default; tests pass a recorder."""

MAX_RETRY_AFTER = 60.0
"""A provider's ``Retry-After`` is honoured up to this many seconds."""

_log = logging.getLogger("sagewai.llm")


def backoff_delay(
    attempt: int, *, base: float = 0.5, cap: float = 8.0, jitter: float = 0.5
) -> float:
    """Seconds to wait before retry number ``attempt`` (0 for the first retry).

    Exponential growth capped at ``cap``, with "equal jitter": half of the step is fixed, the
    other half scaled by ``jitter`` in ``[0, 1]``, so concurrent clients spread out while the
    delay still grows.

    Example:
        >>> backoff_delay(0, jitter=0.0), backoff_delay(2, jitter=1.0)
        (0.25, 2.0)
        >>> backoff_delay(10, jitter=1.0)
        8.0
    """
    if attempt < 0:
        raise InvalidInputError("attempt must be >= 0")
    step = min(cap, base * (2.0**attempt))
    return step / 2.0 + min(max(jitter, 0.0), 1.0) * step / 2.0


async def call_with_retries(
    operation: Callable[[], Awaitable[T]],
    *,
    max_retries: int,
    retryable: Callable[[BaseException], bool] = is_retryable,
    sleep: Sleep = asyncio.sleep,
    jitter: Callable[[], float] = random.random,
    base: float = 0.5,
    cap: float = 8.0,
) -> T:
    """Run ``operation``; on a retryable error wait and try again, up to ``max_retries`` times.

    A ``retry_after`` attribute on the error (rate limits) raises the wait to that many
    seconds, up to :data:`MAX_RETRY_AFTER`. The last error propagates unchanged.

    Args:
        operation: A zero-argument coroutine factory, called once per attempt.
        max_retries: Retries after the first attempt (0 = no retry).
        retryable: Decides from the error whether another attempt may succeed.
        sleep: The awaitable sleep (injected in tests).
        jitter: Returns a number in ``[0, 1]`` for :func:`backoff_delay`.
        base: First backoff step in seconds.
        cap: Largest backoff step in seconds.

    Example:
        >>> import asyncio
        >>> async def answer() -> int:
        ...     return 42
        >>> asyncio.run(call_with_retries(answer, max_retries=2))
        42
    """
    if max_retries < 0:
        raise InvalidInputError("max_retries must be >= 0")
    attempt = 0
    while True:
        try:
            return await operation()
        except Exception as exc:
            if attempt >= max_retries or not retryable(exc):
                raise
            delay = backoff_delay(attempt, base=base, cap=cap, jitter=jitter())
            retry_after = getattr(exc, "retry_after", None)
            if isinstance(retry_after, int | float) and retry_after > delay:
                delay = min(float(retry_after), MAX_RETRY_AFTER)
            _log.debug(
                "retrying after %s (attempt %d, waiting %.2fs)",
                type(exc).__name__,
                attempt + 1,
                delay,
            )
            attempt += 1
            await sleep(delay)
