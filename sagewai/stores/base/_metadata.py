"""The metadata store contract: the source of truth for facts and their audit history.

Backends implement a narrow async core (``apply`` one atomic batch, ``get``, ``query``, ``count``,
``keyword_search``, ``changes``, ``touch``, ``delete_project``, ``project_ids``, ``lock``). Every
convenience, every validation and every scoping rule lives once above them, in the engine.
"""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Protocol

from pydantic import JsonValue

from sagewai.core._queries import ChangeQuery, FactQuery, WriteBatch
from sagewai.core._records import Fact, FactChange
from sagewai.core._resource import Resource

__all__ = ["BatchWriter", "MetadataStore"]


class BatchWriter(Protocol):
    """A store's background writer (:meth:`MetadataStore.background_writer`)."""

    def submit(
        self, batch: WriteBatch, state: tuple[str, str, JsonValue] | None = None
    ) -> asyncio.Task[None]:
        """Land ``batch`` (then the state row ``(project, key, value)``) after the batches
        submitted before it; the task resolves once it landed, or raises the store's error."""
        ...


class MetadataStore(Resource):
    """Base class of metadata store backends (the source of truth for facts)."""

    def __init__(self) -> None:
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._state: dict[tuple[str, str], JsonValue] = {}

    async def open(self) -> None:
        """Open connections or files. Safe to call more than once."""

    async def close(self) -> None:
        """Release connections or files. Safe to call more than once."""

    async def migrate(self) -> list[str]:
        """Apply pending schema migrations; return the versions applied (none by default)."""
        return []

    # ------------------------------------------------------------------ capabilities
    # What a backend can do beyond the core, declared here so that callers ask the store
    # instead of testing its class. The defaults describe a plain store.

    @property
    def persistent(self) -> bool:
        """Whether what this store holds outlives the process (``False`` for a store in memory):
        what tells a bridge that a recorded message is durable without a journal."""
        return True

    @asynccontextmanager
    async def bulk_load(self) -> AsyncIterator[None]:
        """A block for loading many facts: a store that keeps statistics for search (word
        counts, planner statistics) refreshes them once, when the block ends. The default
        does nothing."""
        yield

    @asynccontextmanager
    async def background_writer(self) -> AsyncIterator[BatchWriter | None]:
        """A writer that lands batches in order while the caller goes on (a long job's commits),
        or ``None`` when this store has none: the caller then commits as usual.

        Only the embedded SQLite store has one (a writer process on the same file); see
        :class:`~sagewai.stores.sqlite._writer.SqliteWriter`.
        """
        yield None

    @abstractmethod
    async def apply(self, batch: WriteBatch) -> None:
        """Apply ``batch`` atomically. Ids of other projects in ``deletes`` are ignored."""

    @abstractmethod
    async def get(self, project_id: str, ids: Sequence[str]) -> list[Fact]:
        """Facts of ``project_id`` with these ids (order not guaranteed; unknown ids left out).

        ORG-scope facts written by another project of the same org are returned too when their id
        is asked for and ``project_id``'s engine may read them; the engine checks scope keys.
        """

    @abstractmethod
    async def query(self, query: FactQuery) -> list[Fact]:
        """Facts matching ``query`` ordered by ``(created_at, id)``."""

    @abstractmethod
    async def count(self, query: FactQuery) -> int:
        """How many facts match ``query`` (``after`` and ``limit`` ignored)."""

    @abstractmethod
    async def keyword_search(
        self, query: FactQuery, text: str, top_k: int
    ) -> list[tuple[str, float]]:
        """Ids and keyword scores (higher is better) of facts matching ``query`` and ``text``."""

    async def keyword_facts(
        self, query: FactQuery, text: str, top_k: int
    ) -> list[tuple[Fact, float]]:
        """:meth:`keyword_search`'s hits with their records, best first: what a search reads.

        A search re-reads every candidate anyway; reading the keyword hits' records while it
        waits for the dense index takes them off the path after it. This default reads the hits,
        then their records (a hit whose record is gone by then is left out); a store that has the
        rows at hand while it ranks overrides it and reads them in the same step.
        """
        hits = await self.keyword_search(query, text, top_k)
        if not hits:
            return []
        found = {fact.id: fact for fact in await self.get(query.project_id, [i for i, _ in hits])}
        return [(found[fact_id], score) for fact_id, score in hits if fact_id in found]

    @abstractmethod
    async def changes(self, query: ChangeQuery) -> list[FactChange]:
        """Audit rows matching ``query``, oldest first."""

    @abstractmethod
    async def redact_changes(self, project_id: str, changes: Sequence[FactChange]) -> int:
        """Rewrite the text of audit rows in place: their ``reason``, ``before`` and ``after``.

        Rows are matched by id within ``project_id`` (other fields, their time and their order
        stay as they were; unknown ids are skipped). ``forget`` calls it so the audit keeps that
        a change happened, when and by whom, and not the forgotten text. Returns how many rows
        were rewritten.
        """

    @abstractmethod
    async def touch(self, project_id: str, ids: Sequence[str], at: datetime) -> None:
        """Set ``last_accessed_at`` of these facts (reads count as use for decay)."""

    @abstractmethod
    async def delete_project(self, project_id: str) -> int:
        """Delete every fact and audit row of ``project_id``; return the number of facts."""

    @abstractmethod
    async def project_ids(self) -> list[str]:
        """Every project holding at least one fact in this store, sorted.

        What a server serving one store lists (``GET /v1/projects``, ``sagewai projects``) and
        what an embedded folder's upgrade walks. A project whose last fact was deleted is gone.
        """

    async def get_state(self, project_id: str, key: str) -> JsonValue | None:
        """A small JSON value kept per project (e.g. the last consolidation run).

        The default keeps it in memory; persistent backends override both methods.
        """
        return self._state.get((project_id, key))

    async def set_state(self, project_id: str, key: str, value: JsonValue) -> None:
        """Store a small JSON value per project, replacing the previous one."""
        self._state[(project_id, key)] = value

    @asynccontextmanager
    async def lock(self, project_id: str, name: str) -> AsyncIterator[None]:
        """Hold an exclusive lock named ``name`` on ``project_id``.

        The default is an in-process lock; backends shared between processes override it
        (a file lock for SQLite, an advisory lock for PostgreSQL). Raises
        :class:`~sagewai.errors.LockedError` when the lock is held elsewhere.
        """
        from sagewai.errors import LockedError

        lock = self._locks.setdefault((project_id, name), asyncio.Lock())
        if lock.locked():
            raise LockedError(f"{name} is already running on project {project_id!r}")
        async with lock:
            yield
