"""Every fact a listing of the engine matches, read page by page (framework adapters need all)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine
    from sagewai.core._records import Fact

__all__ = ["list_all"]

_PAGE = 1_000


async def list_all(engine: ContextEngine, **filters: Any) -> list[Fact]:
    """All facts ``engine.list(**filters)`` matches, oldest first, however many there are.

    Example:
        >>> import asyncio
        >>> from sagewai import ContextEngine
        >>> from sagewai.testing import FakeEmbedder
        >>> async def demo() -> int:
        ...     engine = ContextEngine.in_memory(embedder=FakeEmbedder())
        ...     await engine.add_many([f"note {i}" for i in range(3)])
        ...     return len(await list_all(engine, tags=None))
        >>> asyncio.run(demo())
        3
    """
    found: list[Fact] = []
    after: tuple[datetime, str] | None = None
    while True:
        page = await engine.list(**filters, limit=_PAGE, after=after)
        found.extend(page)
        if len(page) < _PAGE:
            return found
        after = (page[-1].created_at, page[-1].id)
