"""One engine per project, opened on first use and kept; one memory bridge per project.

Why shared stores: a server serves one store (a folder, or PostgreSQL plus vectors) and many
projects in it. The stores take a project id on every call, so every project's engine is built
on the same :class:`~sagewai.stores.ProjectStores`: one SQLite connection set, one vector index,
one PostgreSQL pool, whatever the number of projects.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from sagewai.errors import SagewaiError

if TYPE_CHECKING:
    from sagewai.context import ContextEngine, MemoryBridge
    from sagewai.intelligence import FactExtractor
    from sagewai.stores import ProjectStores

__all__ = ["EngineCache"]


class EngineCache:
    """Engines and bridges by ``(org, project)``, all on one set of stores.

    Args:
        stores: The stores every engine reads and writes.
        fact_extractor: What the bridges extract messages with (default: the offline rules).
    """

    def __init__(self, stores: ProjectStores, *, fact_extractor: FactExtractor | None = None):
        self.stores = stores
        self._extractor = fact_extractor
        self._engines: dict[tuple[str | None, str], ContextEngine] = {}
        self._bridges: dict[tuple[str | None, str], MemoryBridge] = {}
        self._lock = asyncio.Lock()
        self._opened = False

    async def open(self) -> None:
        """Open the stores and bring their tables up to date (the first engine would open
        them; readiness asks before any request)."""
        if not self._opened:
            async with self._lock:
                if not self._opened:
                    await self.stores.open()
                    # Idempotent: creates or upgrades the tables of a PostgreSQL schema (an
                    # embedded folder migrates itself on open).
                    await self.stores.migrate()
                    self._opened = True

    async def engine(self, org_id: str | None, project_id: str) -> ContextEngine:
        """The engine of a project (made and opened on first use)."""
        found = self._engines.get((org_id, project_id))
        if found is not None:
            return found
        from sagewai.context import ContextEngine

        await self.open()
        async with self._lock:
            found = self._engines.get((org_id, project_id))
            if found is None:
                found = ContextEngine(stores=self.stores, project_id=project_id, org_id=org_id)
                await found.open()
                self._engines[(org_id, project_id)] = found
        return found

    async def bridge(self, org_id: str | None, project_id: str) -> MemoryBridge:
        """The memory bridge of a project: every message is extracted at once (by the rules,
        unless the server was given another extractor) and stored before the call returns."""
        found = self._bridges.get((org_id, project_id))
        if found is not None:
            return found
        from sagewai.context import MemoryBridge
        from sagewai.intelligence import RuleBasedFactExtractor

        engine = await self.engine(org_id, project_id)
        async with self._lock:
            found = self._bridges.get((org_id, project_id))
            if found is None:
                found = MemoryBridge(
                    context_engine=engine,
                    extract_every_n_turns=1,
                    fact_extractor=self._extractor or RuleBasedFactExtractor(),
                    save_episodes=False,
                )
                self._bridges[(org_id, project_id)] = found
        return found

    async def close(self) -> None:
        """Drain the bridges, close every engine (each flushes what it holds), then the stores."""
        bridges, self._bridges = list(self._bridges.values()), {}
        for bridge in bridges:
            with contextlib.suppress(SagewaiError):
                await bridge.aclose()
        engines, self._engines = list(self._engines.values()), {}
        for engine in engines:
            # Each engine writes its last read marks on close; the stores are shared, so they
            # are closed once, below, after every engine has flushed.
            with contextlib.suppress(SagewaiError):
                await engine.port.flush_access()
        if self._opened:
            self._opened = False
            await self.stores.close()
