"""Objects used as ``async with x:``: opened on entry, closed on exit.

Stores and the engine all hold connections, files or threads that open lazily and close once;
this is their one ``__aenter__`` / ``__aexit__``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Self

__all__ = ["Resource"]


class Resource(ABC):
    """``async with resource:`` opens it and closes it, whatever happens inside.

    Example:
        >>> import asyncio
        >>> class File(Resource):
        ...     async def open(self) -> None:
        ...         print("open")
        ...     async def close(self) -> None:
        ...         print("close")
        >>> async def use() -> None:
        ...     async with File():
        ...         print("work")
        >>> asyncio.run(use())
        open
        work
        close
    """

    @abstractmethod
    async def open(self) -> None:
        """Acquire what the object needs (a no-op when open)."""

    @abstractmethod
    async def close(self) -> None:
        """Release it (safe to call twice)."""

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
