"""Backoff schedule and retries, with an injected sleep so tests do not wait."""

from __future__ import annotations

import pytest

from sagewai.errors import InvalidInputError
from sagewai.llm import (
    ModelRateLimitError,
    ModelRequestError,
    ModelServerError,
    ModelTimeoutError,
    ModelUnreachableError,
    backoff_delay,
    call_with_retries,
    is_model_unreachable,
    is_retryable,
)
from sagewai.llm._retry import MAX_RETRY_AFTER


def test_backoff_grows_exponentially_with_bounded_jitter() -> None:
    assert [backoff_delay(n, jitter=0.0) for n in range(5)] == [0.25, 0.5, 1.0, 2.0, 4.0]
    assert [backoff_delay(n, jitter=1.0) for n in range(5)] == [0.5, 1.0, 2.0, 4.0, 8.0]
    assert backoff_delay(20, jitter=1.0) == 8.0  # capped
    assert 0.25 <= backoff_delay(0, jitter=0.3) <= 0.5
    with pytest.raises(InvalidInputError):
        backoff_delay(-1)


class Recorder:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


class Flaky:
    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


async def test_retries_transient_errors_then_succeeds() -> None:
    sleep = Recorder()
    flaky = Flaky(ModelRateLimitError("429"), ModelServerError("503"), ModelTimeoutError("slow"))
    result = await call_with_retries(flaky, max_retries=3, sleep=sleep, jitter=lambda: 0.0)
    assert result == "ok"
    assert flaky.calls == 4
    assert sleep.waits == [0.25, 0.5, 1.0]


async def test_gives_up_after_max_retries_with_the_last_error() -> None:
    sleep = Recorder()
    flaky = Flaky(*(ModelServerError(f"fail {i}") for i in range(5)))
    with pytest.raises(ModelServerError, match="fail 2"):
        await call_with_retries(flaky, max_retries=2, sleep=sleep, jitter=lambda: 0.0)
    assert flaky.calls == 3
    assert len(sleep.waits) == 2


async def test_does_not_retry_permanent_errors() -> None:
    sleep = Recorder()
    for error in (ModelUnreachableError("refused"), ModelRequestError("bad request")):
        flaky = Flaky(error)
        with pytest.raises(type(error)):
            await call_with_retries(flaky, max_retries=3, sleep=sleep)
        assert flaky.calls == 1
    assert sleep.waits == []


async def test_honours_retry_after_up_to_a_cap() -> None:
    sleep = Recorder()
    flaky = Flaky(
        ModelRateLimitError("429", retry_after=7.0), ModelRateLimitError("429", retry_after=1e6)
    )
    await call_with_retries(flaky, max_retries=2, sleep=sleep, jitter=lambda: 0.0)
    assert sleep.waits == [7.0, MAX_RETRY_AFTER]


def test_error_flags() -> None:
    assert is_model_unreachable(ModelUnreachableError("x"))
    assert not is_model_unreachable(ModelRateLimitError("x"))
    assert is_retryable(ModelTimeoutError("x"))
    assert is_retryable(TimeoutError())
    assert not is_retryable(ModelRequestError("x"))
