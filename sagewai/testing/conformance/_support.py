"""What every conformance suite shares: pytest itself, async fixtures, and opening a store.

The suites are pytest classes, so they need ``pytest`` and ``pytest-asyncio``
(``pip install "sagewai[testing]"``); without them importing a suite fails with that command.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Protocol, TypeVar, cast

from sagewai.errors import MissingDependencyError

try:
    import pytest
    import pytest_asyncio
except ImportError as exc:  # pragma: no cover - exercised without pytest installed
    raise MissingDependencyError(
        exc.name or "pytest", extra="testing", feature="sagewai.testing.conformance"
    ) from exc

__all__ = ["Openable", "async_fixture", "mark_async_tests", "opened"]

_C = TypeVar("_C", bound=type)
_F = TypeVar("_F", bound=Callable[..., Any])


class Openable(Protocol):
    """What the suites need of any store: an idempotent ``open`` and ``close``."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...


_S = TypeVar("_S", bound=Openable)


def async_fixture(function: _F) -> _F:
    """An async fixture in both pytest-asyncio modes (``strict`` and ``auto``)."""
    return cast(_F, pytest_asyncio.fixture(function))


def mark_async_tests(cls: _C) -> _C:
    """Mark every coroutine test of ``cls`` for pytest-asyncio (needed in its strict mode)."""
    for name, value in list(vars(cls).items()):
        if name.startswith("test") and inspect.iscoroutinefunction(value):
            setattr(cls, name, pytest.mark.asyncio(value))
    return cls


@asynccontextmanager
async def opened(
    made: _S | Awaitable[_S], *, prepare: Callable[[_S], Awaitable[object]] | None = None
) -> AsyncIterator[_S]:
    """Open what a factory made (a store, or an awaitable of one), yield it, then close it.

    Args:
        made: The factory's result.
        prepare: Awaited after ``open`` (the metadata suite migrates there).
    """
    store: _S = await made if inspect.isawaitable(made) else made
    await store.open()
    try:
        if prepare is not None:
            await prepare(store)
        yield store
    finally:
        await store.close()
