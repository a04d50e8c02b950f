"""What the engine's subsystems read from the stores, asked by name, and their bookkeeping.

Why a module of its own: the bridge, reconciliation, consolidation, the agent, archives, MCP,
LangGraph and the CLI all read facts, index hits and vectors, and consolidation keeps a lock and
a checkpoint. They used to reach through ``engine.metadata_store`` and ``engine.vector_store``
(two of them writing the index past ``commit``); these methods are the reads they need, each
inside the engine's project (a query for another project is refused) and opening the stores
first. :class:`~sagewai.context._engine.ContextEngine` inherits them; writes stay on the engine,
through ``commit``.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from pydantic import JsonValue

from sagewai.core._arguments import check_int
from sagewai.core._embedder import Vector
from sagewai.core._queries import FactQuery, VectorFilter, VectorHit
from sagewai.core._records import Fact
from sagewai.errors import InvalidInputError
from sagewai.stores.base._metadata import MetadataStore
from sagewai.stores.base._vector import VectorStore

__all__ = ["MAX_PAGE", "StoreReads"]

MAX_PAGE = 100_000
"""The largest page :meth:`StoreReads.iter_facts` reads at once."""


class StoreReads(ABC):
    """The read methods of :class:`~sagewai.context._engine.ContextEngine` for its subsystems."""

    project_id: str

    @property
    @abstractmethod
    def metadata_store(self) -> MetadataStore:
        """The source of truth."""

    @property
    @abstractmethod
    def vector_store(self) -> VectorStore:
        """This project's view of the dense index."""

    @abstractmethod
    async def open(self) -> None:
        """Open the stores (a no-op once open)."""

    def _own(self, query: FactQuery) -> FactQuery:
        if not isinstance(query, FactQuery):
            raise InvalidInputError(f"a FactQuery is needed, got {type(query).__name__}")
        if query.project_id != self.project_id:
            raise InvalidInputError(
                f"this engine reads project {self.project_id!r}, not {query.project_id!r}"
            )
        return query

    async def get_many(self, fact_ids: Sequence[str]) -> list[Fact]:
        """The stored records of this project with these ids, any status; unknown ids skipped.

        Unlike :meth:`get`, a missing id is not an error: this is the read of ids that came
        from an index, a journal or another record, any of which may be gone by now.
        """
        await self.open()
        return await self.metadata_store.get(self.project_id, fact_ids)

    async def find(self, query: FactQuery) -> list[Fact]:
        """One page of the records a :class:`FactQuery` of this project selects, oldest first.

        Page on with ``dataclasses.replace(query, after=(last.created_at, last.id))``, or use
        :meth:`iter_facts`.

        Raises:
            InvalidInputError: the query is for another project.
        """
        query = self._own(query)
        await self.open()
        return await self.metadata_store.query(query)

    async def iter_facts(self, query: FactQuery, *, page_size: int = 500) -> AsyncIterator[Fact]:
        """Every record ``query`` selects, oldest first, read ``page_size`` at a time.

        The query's own ``limit`` and ``after`` are replaced by the paging.

        Raises:
            InvalidInputError: the query is for another project, or a bad ``page_size``.
        """
        check_int(page_size, "page_size", low=1, high=MAX_PAGE)
        page_query = dataclasses.replace(self._own(query), limit=page_size, after=None)
        while True:
            page = await self.find(page_query)
            for fact in page:
                yield fact
            if len(page) < page_size:
                return
            page_query = dataclasses.replace(page_query, after=(page[-1].created_at, page[-1].id))

    async def count_matching(self, query: FactQuery) -> int:
        """How many records a :class:`FactQuery` of this project selects (its limit ignored)."""
        query = self._own(query)
        await self.open()
        return await self.metadata_store.count(query)

    async def keyword_hits(
        self, query: FactQuery, text: str, limit: int
    ) -> list[tuple[str, float]]:
        """``(fact id, score)`` of the keyword index's best matches of ``text``, best first.

        The raw index read behind :meth:`search`: no fusion and no re-check of the hits.
        """
        query = self._own(query)
        await self.open()
        return await self.metadata_store.keyword_search(query, text, limit)

    async def keyword_facts(
        self, query: FactQuery, text: str, limit: int
    ) -> list[tuple[Fact, float]]:
        """:meth:`keyword_hits` with the hits' records, best first (read while ranking where
        the store can); a hit whose record is gone by then is left out. Not re-checked."""
        query = self._own(query)
        await self.open()
        return await self.metadata_store.keyword_facts(query, text, limit)

    async def nearest(self, vector: Vector, top_k: int, where: VectorFilter) -> list[VectorHit]:
        """The ``top_k`` index entries of this project nearest ``vector`` under ``where``.

        Hits are fact ids or piece ids of long records (see :mod:`sagewai.core._pieces`);
        the index may lag the truth, so read the facts back before trusting a hit.
        """
        await self.open()
        return await self.vector_store.search(vector, top_k, where)

    async def nearest_many(
        self,
        vectors: Sequence[Vector],
        top_k: int,
        where: VectorFilter,
        *,
        ef: int | None = None,
    ) -> list[list[VectorHit]]:
        """:meth:`nearest` for each vector at once (one batch query where the backend can).

        ``ef`` widens an approximate index's search beam (ignored by exact backends).
        """
        await self.open()
        return await self.vector_store.search_many(vectors, top_k, where, ef=ef)

    async def get_vectors(self, fact_ids: Sequence[str]) -> dict[str, Vector]:
        """The indexed vectors of these facts (of this project); ids without one are left out."""
        await self.open()
        return await self.vector_store.get_vectors(fact_ids)

    @asynccontextmanager
    async def lock(self, name: str) -> AsyncIterator[None]:
        """Hold this project's lock ``name`` (one holder at a time, across processes).

        Raises:
            LockedError: another holder has it.
        """
        await self.open()
        async with self.metadata_store.lock(self.project_id, name):
            yield

    async def get_state(self, key: str) -> JsonValue | None:
        """A value a subsystem saved for this project under ``key`` (``None``: never saved)."""
        await self.open()
        return await self.metadata_store.get_state(self.project_id, key)

    async def set_state(self, key: str, value: JsonValue) -> None:
        """Save a subsystem's value for this project (a consolidation checkpoint, say).

        State is bookkeeping beside the facts, not a fact: it is not audited, and it goes
        with the project when everything is forgotten.
        """
        await self.open()
        await self.metadata_store.set_state(self.project_id, key, value)
