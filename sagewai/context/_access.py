"""StoreAccess: the engine's port, the one object that touches a project's stores.

Why a class of its own: the engine's helpers (search, forgetting, the bridge's reconciling writer,
consolidation, archives, the agent's recall) each need a few reads of the stores and one way to
write. :class:`StoreAccess` is those reads and the one write, :meth:`StoreAccess.commit`, bound to
one project, and it is what :class:`~sagewai.core.MemoryPort` describes: a helper takes the port,
never the whole :class:`~sagewai.ContextEngine`. The engine builds one and gives it as
``ctx.port``; the engine's own methods write through it too, so every change lands the same way.

A commit writes vectors first (an orphan vector is harmless: the metadata store never knows it),
then one atomic metadata batch, then payload updates. A crash between steps leaves the metadata as
it was or fully updated, and every read of a hit re-checks it against the metadata store.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, Unpack

from pydantic import JsonValue

from sagewai.context._access_log import AccessLog
from sagewai.context._commit_queue import CommitQueue
from sagewai.context._facts import build_fact, scope_address
from sagewai.context._indexing import vector_records
from sagewai.context._standing import mark_changed_sources
from sagewai.core._arguments import check_int
from sagewai.core._pieces import piece_ids
from sagewai.core._queries import ChangeQuery, FactQuery, VectorPayload, WriteBatch
from sagewai.errors import ConfigurationError, InvalidInputError
from sagewai.stores.base._vector import ProjectVectorStore

if TYPE_CHECKING:
    from sagewai.core._embedder import Embedder, Vector, Vectors
    from sagewai.core._fact_fields import FactFields
    from sagewai.core._graph_records import Entity, GraphWrite, Relation
    from sagewai.core._queries import VectorFilter, VectorHit
    from sagewai.core._records import Fact, FactChange
    from sagewai.core._scope import ContextScope, ScopeAddress
    from sagewai.stores._project import ProjectStores
    from sagewai.stores.base._episodes import EpisodeStoreBase
    from sagewai.stores.base._graph import ProjectGraph
    from sagewai.stores.base._metadata import MetadataStore

__all__ = ["MAX_PAGE", "Journal", "JournalOwner", "StoreAccess"]

MAX_PAGE = 100_000
"""The largest page :meth:`StoreAccess.iter_facts` reads at once."""


class Journal(Protocol):
    """The part of a bridge's write-ahead journal that ``forget`` uses."""

    @property
    def path(self) -> Path:
        """The journal file."""

    @property
    def is_open(self) -> bool:
        """True while a bridge of this process holds it."""

    def forget(
        self, matches: Callable[[dict[str, JsonValue]], bool], *, dry_run: bool = False
    ) -> int:
        """Remove the entries whose payload ``matches`` picks; return how many."""


class JournalOwner(Protocol):
    """What keeps a write-ahead journal of this project's messages (a bridge's journal keeper).

    ``forget`` rewrites the journals of the owners attached to the port, so a replay cannot
    bring a forgotten message back.
    """

    @property
    def journal(self) -> Journal | None:
        """The journal (open or not), or ``None``."""


class StoreAccess:
    """One project's reads and commits on a set of stores (the engine's port; see the module).

    Args:
        stores: The stores (shared: other projects may use the same ones).
        project_id: Every read and write stays inside this project.
        org_id: The project's organisation, if any.
        graph: This project's view of the graph (``None``: no graph).
    """

    def __init__(
        self,
        stores: ProjectStores,
        *,
        project_id: str,
        org_id: str | None,
        graph: ProjectGraph | None,
    ) -> None:
        self._stores = stores
        self._project_id = project_id
        self._org_id = org_id
        # Point ids carry the project, so engines sharing one vector store never meet.
        self._vectors = ProjectVectorStore.of(stores.vectors, project_id)
        self._graph = graph
        self._access = AccessLog(stores.metadata, project_id)
        """The reads of searches, written off the search path (see the access log module)."""
        self._opened = False
        self._open_lock = asyncio.Lock()
        self._journal_owners: weakref.WeakSet[JournalOwner] = weakref.WeakSet()
        self._journal_paths: dict[Path, None] = {}

    # ------------------------------------------------------------------ the stores

    @property
    def project_id(self) -> str:
        """The project every read and write stays in."""
        return self._project_id

    @property
    def org_id(self) -> str | None:
        """The project's organisation (ORG-scope facts are shared by its projects)."""
        return self._org_id

    @property
    def stores(self) -> ProjectStores:
        """The stores behind this port."""
        return self._stores

    @property
    def embedder(self) -> Embedder:
        """The embedder of the project's dense index."""
        return self._stores.embedder

    @property
    def metadata(self) -> MetadataStore:
        """The source of truth."""
        return self._stores.metadata

    @property
    def vectors(self) -> ProjectVectorStore:
        """This project's view of the dense index."""
        return self._vectors

    @property
    def graph(self) -> ProjectGraph | None:
        """This project's view of the knowledge graph, or ``None``."""
        return self._graph

    @property
    def episode_store(self) -> EpisodeStoreBase | None:
        """The episode store ``forget`` reaches, or ``None``."""
        return self._stores.episodes

    def attach_episodes(self, store: EpisodeStoreBase) -> None:
        """Give the stores their episode store (once; the same store again does nothing).

        Raises:
            ConfigurationError: another episode store is attached already.
        """
        current = self._stores.episodes
        if current is store:
            return
        if current is not None:
            raise ConfigurationError(
                "the engine already has an episode store (ContextEngine.local keeps one in its "
                "folder): use ctx.episodes.store; a second store would be missed by forget"
            )
        self._stores = dataclasses.replace(self._stores, episodes=store)

    def attach_journal(self, owner: JournalOwner) -> None:
        """Tell the port of a journal of this project's messages, so that ``forget`` reaches
        it: through the owner while it lives (held weakly), by its file once it is gone."""
        self._journal_owners.add(owner)
        if owner.journal is not None:
            self._journal_paths[owner.journal.path] = None

    @property
    def journals(self) -> list[Journal]:
        """The journals of the attached owners that are alive (open or not)."""
        found = (owner.journal for owner in list(self._journal_owners))
        live = [journal for journal in found if journal is not None]
        for journal in live:
            self._journal_paths[journal.path] = None
        return live

    @property
    def journal_paths(self) -> list[Path]:
        """Every journal file an attached owner has used, alive or gone."""
        return list(self._journal_paths)

    # ------------------------------------------------------------------ lifecycle

    async def open(self) -> None:
        """Open the stores (once; every read and write calls it first)."""
        if self._opened:
            return
        async with self._open_lock:
            if not self._opened:
                await self._stores.open()
                self._opened = True

    @property
    def is_open(self) -> bool:
        """True once the stores are open."""
        return self._opened

    async def close(self) -> None:
        """Write the pending read marks and close the stores. Safe to call more than once."""
        if not self._opened:
            return
        await self._access.flush()
        self._opened = False
        await self._stores.close()

    # ------------------------------------------------------------------ building records

    def address(
        self,
        scope: ContextScope | str | None = None,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
    ) -> ScopeAddress:
        """The scope address of this project (see :func:`~sagewai.context._facts.scope_address`)."""
        return scope_address(
            self._project_id, self._org_id, scope, user_id=user_id, session_id=session_id
        )

    def build_fact(self, content: str, **fields: Unpack[FactFields]) -> Fact:
        """Validate fields into a fact of this project without storing it.

        Raises:
            InvalidInputError: a field is empty, too large, unknown or of the wrong type.
        """
        return build_fact(self._project_id, self._org_id, content, **fields)

    # ------------------------------------------------------------------ reading

    def _own(self, query: FactQuery) -> FactQuery:
        if not isinstance(query, FactQuery):
            raise InvalidInputError(f"a FactQuery is needed, got {type(query).__name__}")
        if query.project_id != self._project_id:
            raise InvalidInputError(
                f"this engine reads project {self._project_id!r}, not {query.project_id!r}"
            )
        return query

    async def get_many(self, fact_ids: Sequence[str]) -> list[Fact]:
        """The stored records of this project with these ids, any status; unknown ids skipped.

        A missing id is not an error: this is the read of ids that came from an index, a
        journal or another record, any of which may be gone by now.
        """
        await self.open()
        return await self._stores.metadata.get(self._project_id, fact_ids)

    def overlay(self, fact: Fact) -> Fact:
        """``fact`` with this process's read marks not yet written (what ``get`` shows)."""
        return self._access.overlay(fact)

    async def find(self, query: FactQuery) -> list[Fact]:
        """One page of the records a :class:`FactQuery` of this project selects, oldest first.

        Page on with ``dataclasses.replace(query, after=(last.created_at, last.id))``, or use
        :meth:`iter_facts`.

        Raises:
            InvalidInputError: the query is for another project.
        """
        query = self._own(query)
        await self.open()
        return await self._stores.metadata.query(query)

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
        return await self._stores.metadata.count(query)

    async def changes(self, query: ChangeQuery) -> list[FactChange]:
        """The audit rows a :class:`ChangeQuery` of this project selects, oldest first.

        Raises:
            InvalidInputError: the query is for another project.
        """
        if not isinstance(query, ChangeQuery) or query.project_id != self._project_id:
            raise InvalidInputError("a ChangeQuery of this engine's project is needed")
        await self.open()
        return await self._stores.metadata.changes(query)

    async def keyword_hits(
        self, query: FactQuery, text: str, limit: int
    ) -> list[tuple[str, float]]:
        """``(fact id, score)`` of the keyword index's best matches of ``text``, best first.

        The raw index read behind search: no fusion and no re-check of the hits.
        """
        query = self._own(query)
        await self.open()
        return await self._stores.metadata.keyword_search(query, text, limit)

    async def keyword_facts(
        self, query: FactQuery, text: str, limit: int
    ) -> list[tuple[Fact, float]]:
        """:meth:`keyword_hits` with the hits' records, best first (read while ranking where
        the store can); a hit whose record is gone by then is left out. Not re-checked."""
        query = self._own(query)
        await self.open()
        return await self._stores.metadata.keyword_facts(query, text, limit)

    async def nearest(self, vector: Vector, top_k: int, where: VectorFilter) -> list[VectorHit]:
        """The ``top_k`` index entries of this project nearest ``vector`` under ``where``.

        Hits are fact ids or piece ids of long records (see :mod:`sagewai.core._pieces`);
        the index may lag the truth, so read the facts back before trusting a hit.
        """
        await self.open()
        return await self._vectors.search(vector, top_k, where)

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
        return await self._vectors.search_many(vectors, top_k, where, ef=ef)

    async def get_vectors(self, fact_ids: Sequence[str]) -> dict[str, Vector]:
        """The indexed vectors of these facts (of this project); ids without one are left out."""
        await self.open()
        return await self._vectors.get_vectors(fact_ids)

    # ------------------------------------------------------------------ writing

    async def commit(
        self,
        batch: WriteBatch,
        *,
        new: Sequence[Fact] = (),
        vectors: Vectors | None = None,
        previous: Mapping[str, Fact] | None = None,
    ) -> None:
        """Apply one atomic batch to the metadata store and keep the vector index in step.

        ``new`` lists the facts of ``batch.upserts`` whose content is not indexed yet (new facts,
        or facts whose content changed); they are embedded and indexed before the metadata lands.
        The other upserts only get their vector payload refreshed (status, validity, tags).
        ``vectors`` (one row per fact of ``new``, from this engine's embedder) saves embedding
        again what the caller already embedded. ``previous`` (the stored versions of some
        upserts, as the caller read them) saves the index writes of upserts whose payload did
        not change: a new strength or a reinforcement is metadata only. A batch that supersedes
        facts also marks the message records they were read from
        (:mod:`sagewai.context._standing`).

        Raises:
            InvalidInputError: a batch of another project, a malformed batch, or a number of
                vectors that is not the number of new facts.
        """
        await self.open()
        if batch.project_id != self._project_id:
            raise InvalidInputError("a batch for another project cannot go through this engine")
        batch.validate()
        # A superseded claim marks the messages it was read from (they are shown as changed).
        batch = await mark_changed_sources(self, batch)
        new_ids = {fact.id for fact in new}
        if vectors is not None and len(vectors) != len(new):
            raise InvalidInputError(f"{len(vectors)} vectors given for {len(new)} new facts")
        if new:
            await self._vectors.upsert(await vector_records(self.embedder, new, vectors))
        deleted_pieces: list[str] = []
        if batch.deletes:
            # A long record's piece vectors go with it; their ids follow from its content.
            for fact in await self._stores.metadata.get(self._project_id, batch.deletes):
                deleted_pieces.extend(piece_ids(fact.id, fact.content))
        await self._stores.metadata.apply(batch)
        await self._refresh(batch.upserts, previous or {}, skip=new_ids)
        if batch.deletes:
            await self._vectors.delete([*batch.deletes, *deleted_pieces])

    async def refresh_index(
        self, facts: Iterable[Fact], *, previous: Mapping[str, Fact] | None = None
    ) -> int:
        """Rewrite the index payloads (status, validity, tags) of stored facts from the truth.

        The facts must be the versions just written to (or read from) the metadata store. With
        ``previous`` (the versions before), a fact whose payload did not change is skipped. The
        repair of an index left behind by a crash between a metadata commit and its payload
        update, and the second half of a batch written in the background. Long records' pieces
        are refreshed with them. Returns how many facts were considered.

        Raises:
            InvalidInputError: a fact of another project.
        """
        listed = list(facts)
        for fact in listed:
            if fact.project_id != self._project_id:
                raise InvalidInputError(f"fact {fact.id} belongs to another project")
        if listed:
            await self.open()
            await self._refresh(listed, previous, skip=frozenset())
        return len(listed)

    async def _refresh(
        self,
        upserts: Sequence[Fact],
        before: Mapping[str, Fact] | None,
        *,
        skip: AbstractSet[str],
    ) -> None:
        """Rewrite the index payloads of ``upserts`` (but ``skip``) that differ from ``before``'s
        (all of them when ``before`` is ``None``), with their long records' pieces."""
        refreshed: dict[str, VectorPayload] = {}
        for fact in upserts:
            if fact.id in skip:
                continue
            payload = VectorPayload.of(fact)
            old = None if before is None else before.get(fact.id)
            if before is None or old is None or VectorPayload.of(old) != payload:
                refreshed[fact.id] = payload
                refreshed.update(dict.fromkeys(piece_ids(fact.id, fact.content), payload))
        if refreshed:
            await self._vectors.update_payloads(refreshed)

    @contextlib.asynccontextmanager
    async def commit_queue(self) -> AsyncIterator[CommitQueue]:
        """A :class:`~sagewai.context._commit_queue.CommitQueue` for a long job's batches.

        When the metadata store has a background writer (the embedded SQLite file), its batches
        are written by it while the caller goes on; otherwise ``queue.background`` is false and
        the caller commits as usual. Leaving the block waits for the batches in flight.
        """
        await self.open()
        async with self._stores.metadata.background_writer() as writer:
            yield CommitQueue(self, writer)

    @contextlib.asynccontextmanager
    async def bulk_load(self) -> AsyncIterator[None]:
        """The stores' ``bulk_load()`` blocks, entered together (``ContextEngine.bulk_load``)."""
        await self.open()
        # Left in reverse order: the vector index is built before the words are saved.
        async with self._stores.metadata.bulk_load(), self._vectors.bulk_load():
            yield

    # ------------------------------------------------------------------ lock and saved state

    @contextlib.asynccontextmanager
    async def lock(self, name: str) -> AsyncIterator[None]:
        """Hold this project's lock ``name`` (one holder at a time, across processes).

        Raises:
            LockedError: another holder has it.
        """
        await self.open()
        async with self._stores.metadata.lock(self._project_id, name):
            yield

    async def get_state(self, key: str) -> JsonValue | None:
        """A value a subsystem saved for this project under ``key`` (``None``: never saved)."""
        await self.open()
        return await self._stores.metadata.get_state(self._project_id, key)

    async def set_state(self, key: str, value: JsonValue) -> None:
        """Save a subsystem's value for this project (a consolidation checkpoint, say).

        State is bookkeeping beside the facts, not a fact: it is not audited, and it goes
        with the project when everything is forgotten.
        """
        await self.open()
        await self._stores.metadata.set_state(self._project_id, key, value)

    # ------------------------------------------------------------------ read marks

    def record_access(self, fact_ids: Sequence[str], at: datetime) -> None:
        """Stamp these facts as read at ``at`` (what ranks recent use higher).

        Access time is bookkeeping, not content: it is not audited and changes no vector. The
        marks are written in the background, off the caller's path
        (:class:`~sagewai.context._access_log.AccessLog`); ``get`` shows them at once.
        """
        if fact_ids:
            self._access.record(fact_ids, at)

    async def flush_access(self) -> None:
        """Write the pending read marks now (else within half a second); a consolidation run
        calls it before deciding decay."""
        await self._access.flush()

    # ------------------------------------------------------------------ the graph

    def _graph_view(self) -> ProjectGraph:
        if self._graph is None:
            raise ConfigurationError("this engine has no graph store")
        return self._graph

    async def graph_entities(self, ids: Sequence[str] | None = None) -> list[Entity]:
        """This project's graph entities (those of ``ids``, or all); ``[]`` with no graph."""
        if self._graph is None:
            return []
        await self.open()
        return await (self._graph.entities() if ids is None else self._graph.get_entities(ids))

    async def graph_relations(self) -> list[Relation]:
        """This project's graph relations; ``[]`` with no graph."""
        if self._graph is None:
            return []
        await self.open()
        return await self._graph.relations()

    async def apply_graph(self, write: GraphWrite) -> None:
        """Write entities and relations into this project's graph, all or nothing.

        Raises:
            ConfigurationError: no graph store.
            InvalidInputError: a record fails validation (nothing is written).
        """
        graph = self._graph_view()
        await self.open()
        await graph.apply(write)

    def __repr__(self) -> str:
        return f"StoreAccess(project_id={self._project_id!r})"
