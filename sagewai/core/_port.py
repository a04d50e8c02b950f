"""MemoryPort: what the engine's helpers may do to one project's memory, and nothing more.

Why a port: search, forgetting, the bridge's reconciling writer, consolidation, archives and the
agent's recall each need a few reads of the stores and one way to write. They used to take the
whole :class:`~sagewai.ContextEngine` (61 public members, and private ones reached past it), so a
reader could not tell what a helper touches, and the engine's modules imported each other in a
circle. A helper now takes a :class:`MemoryPort`: every read it may make, each bound to the
project and opening the stores first, and :meth:`MemoryPort.commit`, the one write. The engine
gives its port as ``ctx.port``; a test can hand a helper any object of this shape.

The port lives in the core so that ``context`` (the engine, search, the bridge) and
``intelligence`` (consolidation) both depend on it, and neither on the other.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, Unpack

from pydantic import JsonValue

if TYPE_CHECKING:
    from sagewai.core._embedder import Embedder, Vector, Vectors
    from sagewai.core._fact_fields import FactFields
    from sagewai.core._graph_records import Entity, GraphWrite, Relation
    from sagewai.core._queries import ChangeQuery, FactQuery, VectorFilter, VectorHit, WriteBatch
    from sagewai.core._records import Fact, FactChange
    from sagewai.core._scope import ContextScope, ScopeAddress

__all__ = ["BatchQueue", "MemoryPort"]


class BatchQueue(Protocol):
    """Batches written behind their caller, in order (:meth:`MemoryPort.commit_queue`).

    ``background`` is false when the store has no background writer: commit as usual then.
    """

    @property
    def background(self) -> bool:
        """True when :meth:`submit` writes in the background."""
        ...

    def submit(
        self,
        batch: WriteBatch,
        *,
        previous: Mapping[str, Fact] | None = None,
        state: tuple[str, JsonValue] | None = None,
    ) -> asyncio.Task[None]:
        """Write ``batch`` (then the state row ``state``) behind the caller."""
        ...


class MemoryPort(Protocol):
    """The reads and the one write a helper of the engine may use (see the module).

    Every method stays inside :attr:`project_id` (a query for another project is refused) and
    opens the stores first. Grouped as: identity, building records, reading facts and the index,
    writing, the project's lock and saved state, read marks, and the graph.
    """

    # ------------------------------------------------------------------ identity

    @property
    def project_id(self) -> str:
        """The project every read and write stays in."""
        ...

    @property
    def org_id(self) -> str | None:
        """The organisation of the project (ORG-scope facts are shared by its projects)."""
        ...

    @property
    def embedder(self) -> Embedder:
        """The embedder of the project's dense index."""
        ...

    # ------------------------------------------------------------------ building records

    def address(
        self,
        scope: ContextScope | str | None = None,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
    ) -> ScopeAddress:
        """The scope address of this project for a scope and its identifiers."""
        ...

    def build_fact(self, content: str, **fields: Unpack[FactFields]) -> Fact:
        """Validate fields into a fact of this project without storing it."""
        ...

    # ------------------------------------------------------------------ reading

    async def get_many(self, fact_ids: Sequence[str]) -> list[Fact]:
        """The stored records with these ids (any status); unknown ids are skipped."""
        ...

    async def find(self, query: FactQuery) -> list[Fact]:
        """One page of the records a query selects, oldest first."""
        ...

    def iter_facts(self, query: FactQuery, *, page_size: int = 500) -> AsyncIterator[Fact]:
        """Every record a query selects, oldest first, read a page at a time."""
        ...

    async def count_matching(self, query: FactQuery) -> int:
        """How many records a query selects (its limit ignored)."""
        ...

    async def changes(self, query: ChangeQuery) -> list[FactChange]:
        """Audit rows of this project, oldest first."""
        ...

    async def keyword_hits(
        self, query: FactQuery, text: str, limit: int
    ) -> list[tuple[str, float]]:
        """``(fact id, score)`` of the keyword index's best matches, best first."""
        ...

    async def keyword_facts(
        self, query: FactQuery, text: str, limit: int
    ) -> list[tuple[Fact, float]]:
        """The keyword hits with their records, best first."""
        ...

    async def nearest(self, vector: Vector, top_k: int, where: VectorFilter) -> list[VectorHit]:
        """The index entries nearest a vector (fact ids or piece ids of long records)."""
        ...

    async def nearest_many(
        self,
        vectors: Sequence[Vector],
        top_k: int,
        where: VectorFilter,
        *,
        ef: int | None = None,
    ) -> list[list[VectorHit]]:
        """:meth:`nearest` for each vector at once (``ef`` widens an approximate search)."""
        ...

    async def get_vectors(self, fact_ids: Sequence[str]) -> dict[str, Vector]:
        """The indexed vectors of these facts; ids without one are left out."""
        ...

    # ------------------------------------------------------------------ writing

    async def commit(
        self,
        batch: WriteBatch,
        *,
        new: Sequence[Fact] = (),
        vectors: Vectors | None = None,
        previous: Mapping[str, Fact] | None = None,
    ) -> None:
        """Apply one atomic batch to the truth and keep the index in step."""
        ...

    async def refresh_index(
        self, facts: Iterable[Fact], *, previous: Mapping[str, Fact] | None = None
    ) -> int:
        """Rewrite the index payloads of stored facts (those changed since ``previous``)."""
        ...

    def commit_queue(self) -> AbstractAsyncContextManager[BatchQueue]:
        """A queue that writes a long job's batches behind it where the store can."""
        ...

    # ------------------------------------------------------------------ lock and saved state

    def lock(self, name: str) -> AbstractAsyncContextManager[None]:
        """Hold this project's lock ``name`` (one holder at a time, across processes)."""
        ...

    async def get_state(self, key: str) -> JsonValue | None:
        """A value a helper saved for this project under ``key``."""
        ...

    async def set_state(self, key: str, value: JsonValue) -> None:
        """Save a helper's value for this project (bookkeeping, not audited)."""
        ...

    # ------------------------------------------------------------------ read marks

    def record_access(self, fact_ids: Sequence[str], at: datetime) -> None:
        """Stamp facts as read at ``at`` (written off the caller's path)."""
        ...

    async def flush_access(self) -> None:
        """Write the pending read marks now."""
        ...

    # ------------------------------------------------------------------ the graph

    async def graph_entities(self, ids: Sequence[str] | None = None) -> list[Entity]:
        """This project's graph entities (those of ``ids``, or all); ``[]`` with no graph."""
        ...

    async def graph_relations(self) -> list[Relation]:
        """This project's graph relations; ``[]`` with no graph."""
        ...

    async def apply_graph(self, write: GraphWrite) -> None:
        """Write entities and relations into this project's graph, all or nothing."""
        ...
