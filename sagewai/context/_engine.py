"""ContextEngine: the one door to a project's stored knowledge.

The engine owns no storage of its own. It validates, scopes, embeds and audits, and keeps a vector
store (the index) in step with a metadata store (the truth). Every write goes through
:meth:`ContextEngine.commit`, so every change, whoever makes it, lands the same way: vectors first
(an orphan vector is harmless, the metadata store never knows it), then one atomic metadata batch,
then payload updates. A crash between steps leaves the metadata as it was or fully updated, and
reads re-check every hit against the metadata store.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from pydantic import JsonValue, ValidationError

from sagewai.context._access import StoreReads
from sagewai.context._access_log import AccessLog
from sagewai.context._commit_queue import CommitQueue
from sagewai.context._indexing import vector_records
from sagewai.context._ranking import SearchConfig
from sagewai.context._saved import SavedRecords
from sagewai.context._search import MAX_QUERY_CHARS, MAX_TOP_K, SEARCHABLE
from sagewai.core import _lifecycle as lifecycle
from sagewai.core._arguments import (
    check_flag,
    check_int,
    check_list,
    check_scope,
    check_source,
    enum_values,
    string_list,
)
from sagewai.core._chunking import chunk_text
from sagewai.core._embedder import Embedder, Vectors
from sagewai.core._pieces import piece_ids
from sagewai.core._queries import ChangeQuery, FactQuery, VectorPayload, WriteBatch
from sagewai.core._records import (
    Fact,
    FactChange,
    FactKind,
    FactStatus,
    FactType,
    Provenance,
    SearchResult,
    new_id,
    utcnow,
)
from sagewai.core._resource import Resource
from sagewai.core._scope import ContextScope, ScopeAddress, validate_identifier
from sagewai.core._text import clean_text
from sagewai.errors import (
    ConfigurationError,
    FactConflictError,
    FactNotFoundError,
    InvalidInputError,
)
from sagewai.stores._project import ProjectStores
from sagewai.stores.base._metadata import MetadataStore
from sagewai.stores.base._vector import ProjectVectorStore, VectorStore
from sagewai.stores.sqlite._database import MEMORY
from sagewai.stores.sqlite._metadata import SqliteMetadataStore
from sagewai.stores.sqlite._writer import SqliteWriter

if TYPE_CHECKING:
    from sagewai.context._forgetting import ForgetReport, ForgottenFacts
    from sagewai.context.episodes import EpisodeStoreBase
    from sagewai.stores.base._graph import GraphMemory, ProjectGraph

__all__ = ["MAX_QUERY_CHARS", "MAX_TOP_K", "ContextEngine"]

logger = logging.getLogger("sagewai.context")

MAX_LIST_LIMIT = 100_000
_WRITE_BATCH = 256
_FORGET_BATCH = 500


class ContextEngine(Resource, StoreReads, SavedRecords):
    """Store, search and forget a project's facts and documents.

    Build it on a :class:`~sagewai.context.ProjectStores` (``ContextEngine(stores=...,
    project_id=...)``), on stores named one by one (the keyword form below), or with
    :meth:`local` / :meth:`in_memory`. The stores stay readable (``ctx.metadata_store``,
    ``ctx.graph_store``, ...), but everything the engine's users need has a method here: the
    reads they make, and every write through :meth:`commit`.

    Args:
        stores: Every store at once; give either this or the stores one by one.
        metadata_store: The source of truth (in-memory, SQLite or PostgreSQL).
        vector_store: The dense index (in-memory, Qdrant embedded engine or Qdrant).
        project_id: Every read and write of this engine stays inside this project.
        embedder: Turns text into vectors; its dimension must match the vector store's.
        graph_store: Optional knowledge graph of this project (``ContextEngine.local`` makes
            one): a project view, or a shared graph store to view for this project; ``forget``
            reaches it and graph-aware search reads it.
        org_id: Optional organisation; ORG-scope facts are shared by the org's projects.
        episode_store: Optional episode store; ``forget`` reaches it.
        search_config: Hybrid search tuning.

    Raises:
        InvalidInputError: no stores, both forms at once, a graph view of another project, or
            an embedder whose dimension is not the vector store's.

    Example:
        >>> import asyncio
        >>> from sagewai.testing import FakeEmbedder
        >>> async def demo() -> str:
        ...     async with ContextEngine.in_memory(project_id="demo",
        ...                                         embedder=FakeEmbedder()) as ctx:
        ...         await ctx.add("Alice prefers green tea", subject="Alice")
        ...         results = await ctx.search("what tea does Alice like?")
        ...         return results[0].fact.content
        >>> asyncio.run(demo())
        'Alice prefers green tea'
    """

    @overload
    def __init__(
        self,
        *,
        stores: ProjectStores,
        project_id: str,
        org_id: str | None = None,
        search_config: SearchConfig | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self,
        *,
        metadata_store: MetadataStore,
        vector_store: VectorStore,
        project_id: str,
        embedder: Embedder | None = None,
        graph_store: ProjectGraph | GraphMemory | None = None,
        org_id: str | None = None,
        episode_store: EpisodeStoreBase | None = None,
        search_config: SearchConfig | None = None,
    ) -> None: ...

    def __init__(
        self,
        *,
        project_id: str,
        stores: ProjectStores | None = None,
        metadata_store: MetadataStore | None = None,
        vector_store: VectorStore | None = None,
        embedder: Embedder | None = None,
        graph_store: ProjectGraph | GraphMemory | None = None,
        org_id: str | None = None,
        episode_store: EpisodeStoreBase | None = None,
        search_config: SearchConfig | None = None,
    ) -> None:
        self.project_id = validate_identifier(project_id, "project_id")
        self.org_id = None if org_id is None else validate_identifier(org_id, "org_id")
        from sagewai.stores.base._graph import ProjectGraph

        view: ProjectGraph | None = None
        if stores is None:
            if metadata_store is None or vector_store is None:
                raise InvalidInputError(
                    "a ContextEngine needs stores= or both metadata_store= and vector_store="
                )
            graph: GraphMemory | None = None
            if isinstance(graph_store, ProjectGraph):
                if graph_store.project_id != self.project_id:
                    raise InvalidInputError(
                        f"the graph view is bound to project {graph_store.project_id!r}, not "
                        f"{self.project_id!r}"
                    )
                graph, view = graph_store.store, graph_store
            elif graph_store is not None:
                graph = graph_store
            if embedder is None:
                from sagewai.embeddings._minilm import MiniLMEmbedder

                embedder = MiniLMEmbedder()
            stores = ProjectStores(
                metadata=metadata_store,
                vectors=vector_store,
                graph=graph,
                episodes=episode_store,
                embedder=embedder,
            )
        elif not isinstance(stores, ProjectStores):
            raise InvalidInputError(f"stores must be a ProjectStores, got {type(stores).__name__}")
        elif any(
            part is not None
            for part in (metadata_store, vector_store, embedder, graph_store, episode_store)
        ):
            raise InvalidInputError("give the stores either as stores= or one by one, not both")
        self._stores = stores
        # Point ids carry the project, so engines sharing one vector store never meet.
        self._vectors = ProjectVectorStore.of(stores.vectors, self.project_id)
        if view is None and stores.graph is not None:
            view = stores.graph.for_project(self.project_id)
        self._graph = view
        self.search_config = search_config or SearchConfig()
        self._access = AccessLog(stores.metadata, self.project_id)
        """The reads of searches, written off the search path (see sagewai.context._access_log)."""
        self._dense_pieces_seen = False
        """Whether a search has met a long record's piece among its dense hits: from then on
        every search asks the dense index for twice its pool (see sagewai.context._search)."""
        self._opened = False
        self._open_lock = asyncio.Lock()

    # ------------------------------------------------------------------ the stores

    @property
    def stores(self) -> ProjectStores:
        """The stores behind this engine (shared: an engine of another project may use them)."""
        return self._stores

    @property
    def metadata_store(self) -> MetadataStore:
        """The source of truth. Read through the engine's methods; write through :meth:`commit`."""
        return self._stores.metadata

    @property
    def vector_store(self) -> ProjectVectorStore:
        """This project's view of the dense index (point ids carry the project)."""
        return self._vectors

    @property
    def graph_store(self) -> ProjectGraph | None:
        """This project's view of the knowledge graph, for a graph builder; ``None``: no graph."""
        return self._graph

    @property
    def episode_store(self) -> EpisodeStoreBase | None:
        """The episode store ``forget`` reaches; ``None`` until one is given or attached."""
        return self._stores.episodes

    @episode_store.setter
    def episode_store(self, store: EpisodeStoreBase) -> None:
        self.attach_episodes(store)

    def attach_episodes(self, store: EpisodeStoreBase) -> None:
        """Give this engine its episode store, so ``forget`` reaches the saved sessions.

        Attaching the store the engine already has does nothing.

        Raises:
            InvalidInputError: ``store`` is not an episode store.
            ConfigurationError: the engine has another episode store already (a second one
                would be missed by ``forget``).
        """
        from sagewai.context.episodes import EpisodeStoreBase

        if not isinstance(store, EpisodeStoreBase):
            raise InvalidInputError(f"not an episode store: {type(store).__name__}")
        current = self._stores.episodes
        if current is store:
            return
        if current is not None:
            raise ConfigurationError(
                "the engine already has an episode store (ContextEngine.local keeps one in its "
                "folder): use context.episode_store; a second store would be missed by forget"
            )
        self._stores = dataclasses.replace(self._stores, episodes=store)

    @property
    def embedder(self) -> Embedder:
        """Turns text into the vectors of this engine's index."""
        return self._stores.embedder

    @property
    def persistent(self) -> bool:
        """Whether this engine's records outlive the process (its metadata store is not the
        in-memory one): what tells a bridge that a recorded message is durable."""
        from sagewai.stores.memory._metadata import InMemoryMetadataStore

        return not isinstance(self._stores.metadata, InMemoryMetadataStore)

    @property
    def folder(self) -> Path | None:
        """The folder of an embedded engine (``ContextEngine.local``), where a
        :class:`~sagewai.context.MemoryBridge` keeps its write-ahead journal; ``None`` otherwise."""
        return self._stores.folder

    # ------------------------------------------------------------------ construction & lifecycle

    @classmethod
    def in_memory(
        cls,
        *,
        project_id: str = "default",
        embedder: Embedder | None = None,
        org_id: str | None = None,
        search_config: SearchConfig | None = None,
    ) -> ContextEngine:
        """An engine on in-memory stores (:meth:`ProjectStores.in_memory`): nothing persists."""
        return cls(
            stores=ProjectStores.in_memory(embedder=embedder),
            project_id=project_id,
            org_id=org_id,
            search_config=search_config,
        )

    @classmethod
    def local(
        cls,
        path: str | Path,
        *,
        project_id: str = "default",
        embedder: Embedder | None = None,
        org_id: str | None = None,
        search_config: SearchConfig | None = None,
    ) -> ContextEngine:
        """The embedded default: everything in one folder, no server, no API key.

        The folder holds ``metadata.sqlite3`` (facts and history), ``vectors/`` (Qdrant's
        embedded engine), ``graph.sqlite3`` (the knowledge graph) and ``episodes.sqlite3``
        (:meth:`ProjectStores.local`). It is created on first open; reopening it later finds
        everything again. The call itself touches no file.
        A :class:`~sagewai.context.MemoryBridge` on this engine journals what it accepts in the
        same folder (``bridge-<project>.journal``), so nothing accepted is lost without a close.
        """
        return cls(
            stores=ProjectStores.local(path, embedder=embedder),
            project_id=project_id,
            org_id=org_id,
            search_config=search_config,
        )

    async def open(self) -> None:
        """Open the stores. Called for you by the first operation or by ``async with``."""
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
        """Close the stores. Safe to call more than once."""
        if not self._opened:
            return
        await self._access.flush()  # the reads of the last searches
        self._opened = False
        await self._stores.close()

    # ------------------------------------------------------------------ scoping

    def address(
        self,
        scope: ContextScope | str | None = None,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
    ) -> ScopeAddress:
        """The scope address of this project for the given scope and identifiers.

        Without ``scope`` the narrowest scope the identifiers name is used: SESSION when a
        ``session_id`` is given, USER when a ``user_id`` is, PROJECT otherwise.
        """
        if scope is None:
            scope = (
                ContextScope.SESSION
                if session_id is not None
                else ContextScope.USER
                if user_id is not None
                else ContextScope.PROJECT
            )
        scope = check_scope(scope)
        assert scope is not None
        return ScopeAddress(
            scope,
            project_id=self.project_id,
            org_id=self.org_id,
            user_id=user_id,
            session_id=session_id,
        )

    # ------------------------------------------------------------------ writing

    def build_fact(
        self,
        content: str,
        *,
        fact_type: FactType | str = FactType.GENERAL,
        scope: ContextScope | str | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        confidence: float = 1.0,
        exact_values: Sequence[str] = (),
        tags: Sequence[str] = (),
        metadata: Mapping[str, JsonValue] | None = None,
        source: Provenance | None = None,
        sources: Sequence[Provenance] = (),
        kind: FactKind | str = FactKind.FACT,
        valid_from: datetime | None = None,
        created_at: datetime | None = None,
        fact_id: str | None = None,
    ) -> Fact:
        """Validate fields into a :class:`Fact` of this project without storing it.

        Without ``scope``, a fact with a ``user_id`` is stored at USER scope (so it is recalled in
        the user's later sessions) and any other fact at PROJECT scope; ``session_id`` alone only
        records where the fact came from. Pass ``scope="session"`` for session-local facts.

        Raises:
            InvalidInputError: a field is empty, too large, or of the wrong type.
        """
        if not isinstance(content, str):
            raise InvalidInputError(f"content must be text, got {type(content).__name__}")
        if scope is None:
            scope = ContextScope.USER if user_id is not None else ContextScope.PROJECT
        self.address(scope, user_id=user_id, session_id=session_id)  # ScopeError if incomplete
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidInputError(f"metadata must be a mapping, got {type(metadata).__name__}")
        tags = string_list(tags, "tags") or ()
        exact_values = string_list(exact_values, "exact_values") or ()
        all_sources = tuple(check_source(s) for s in check_list(sources, "sources")) + (
            (check_source(source),) if source is not None else ()
        )
        if session_id is None:
            session_id = next((s.session_id for s in all_sources if s.session_id), None)
        fields: dict[str, Any] = {
            "project_id": self.project_id,
            "org_id": self.org_id,
            "scope": scope,
            "user_id": user_id,
            "session_id": session_id,
            "kind": kind,
            "content": content,
            "fact_type": fact_type,
            "confidence": confidence,
            "subject": subject,
            "predicate": predicate,
            "object": object,
            "exact_values": tuple(exact_values),
            "tags": tuple(tags),
            "metadata": dict(metadata or {}),
            "sources": all_sources,
            "valid_from": valid_from,
        }
        if created_at is not None:
            fields["created_at"] = created_at
        if fact_id is not None:
            fields["id"] = validate_identifier(fact_id, "fact_id")
        try:
            return Fact.model_validate(fields)
        except ValidationError as exc:
            raise InvalidInputError(f"invalid fact: {exc}") from exc

    async def add(self, content: str, **fields: Any) -> Fact:
        """Store one fact and return it.

        Keyword arguments are those of :meth:`build_fact` (``fact_type``, ``scope``, ``user_id``,
        ``session_id``, ``subject``/``predicate``/``object``, ``confidence``, ``tags``,
        ``metadata``, ``source``, ``exact_values``, ``valid_from``, ...).
        """
        (fact,) = await self.add_many([self.build_fact(content, **fields)])
        return fact

    async def add_many(
        self, items: Iterable[Fact | str | Mapping[str, Any]], *, actor: str = "engine"
    ) -> builtins.list[Fact]:
        """Store many facts efficiently (batched embedding and writes) and return them.

        Items are :class:`Fact` records of this project, plain strings, or mappings of
        :meth:`build_fact` arguments (with ``content``). All or nothing: every item is validated,
        and its id checked, before anything is written, and the facts land in one atomic batch
        of the metadata store; an invalid item raises and nothing is stored.

        Raises:
            InvalidInputError: an item is invalid (nothing is stored).
            FactConflictError: an item reuses a fact id the store already holds (in this project
                or another one sharing the store), or two items share an id. A fact is never
                overwritten silently; change a stored fact with :meth:`supersede`.
        """
        if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
            raise InvalidInputError("add_many takes a list of facts, strings or mappings")
        facts: builtins.list[Fact] = []
        for item in items:
            if isinstance(item, Fact):
                if item.project_id != self.project_id:
                    raise InvalidInputError(f"fact {item.id} belongs to another project")
                facts.append(item)
            elif isinstance(item, str):
                facts.append(self.build_fact(item))
            elif isinstance(item, Mapping):
                data = dict(item)
                content = data.pop("content", None)
                if not isinstance(content, str):
                    raise InvalidInputError("a mapping item needs a string 'content'")
                try:
                    facts.append(self.build_fact(content, **data))
                except TypeError as exc:  # an unknown field name
                    raise InvalidInputError(f"invalid fact item: {exc}") from exc
            else:
                raise InvalidInputError(
                    f"add_many items are facts, strings or mappings, not {type(item).__name__}"
                )
        if not facts:
            return facts
        await self.open()
        seen: set[str] = set()
        for fact in facts:
            if fact.id in seen:
                raise FactConflictError(fact.id)
            seen.add(fact.id)
        for start in range(0, len(facts), _WRITE_BATCH):
            ids = [fact.id for fact in facts[start : start + _WRITE_BATCH]]
            taken = await self.metadata_store.get(self.project_id, ids)
            if taken:
                raise FactConflictError(taken[0].id)
        import numpy as np

        parts = [
            await self.embedder.embed_documents(
                [fact.content for fact in facts[start : start + _WRITE_BATCH]]
            )
            for start in range(0, len(facts), _WRITE_BATCH)
        ]
        vectors = parts[0] if len(parts) == 1 else np.concatenate(parts)
        added = lifecycle.Cause(actor, "engine.add")
        changes = [lifecycle.created(fact, added) for fact in facts]
        # One metadata batch: it lands whole or not at all (the store refuses, inside the
        # transaction, an id that another project sharing the store already holds).
        await self.commit(
            WriteBatch(self.project_id, upserts=facts, changes=changes),
            new=facts,
            vectors=vectors,
        )
        return facts

    async def add_document(
        self,
        text: str,
        *,
        document_id: str | None = None,
        max_chars: int = 800,
        overlap_sentences: int = 1,
        **fields: Any,
    ) -> builtins.list[Fact]:
        """Ingest a plain text document as sentence-aligned chunks; returns the stored chunks.

        Each chunk is a fact of kind DOCUMENT whose provenance names the document and the chunk
        index, so search results can point back into the document.
        """
        if not isinstance(text, str) or not text.strip():
            raise InvalidInputError("a document must be non-empty text")
        document_id = validate_identifier(document_id or new_id(), "document_id")
        chunks = chunk_text(text, max_chars=max_chars, overlap_sentences=overlap_sentences)
        items = [
            self.build_fact(
                chunk,
                kind=FactKind.DOCUMENT,
                source=Provenance(document_id=document_id, chunk_index=index),
                **fields,
            )
            for index, chunk in enumerate(chunks)
        ]
        return await self.add_many(items)

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
        not change: a new strength or a reinforcement is metadata only.
        """
        await self.open()
        if batch.project_id != self.project_id:
            raise InvalidInputError("a batch for another project cannot go through this engine")
        batch.validate()
        new_ids = {fact.id for fact in new}
        if vectors is not None and len(vectors) != len(new):
            raise InvalidInputError(f"{len(vectors)} vectors given for {len(new)} new facts")
        if new:
            await self.vector_store.upsert(await vector_records(self.embedder, new, vectors))
        deleted_pieces: builtins.list[str] = []
        if batch.deletes:
            # A long record's piece vectors go with it; their ids follow from its content.
            for fact in await self.metadata_store.get(self.project_id, batch.deletes):
                deleted_pieces.extend(piece_ids(fact.id, fact.content))
        await self.metadata_store.apply(batch)
        await self._refresh_payloads(batch.upserts, previous or {}, skip=new_ids)
        if batch.deletes:
            await self.vector_store.delete([*batch.deletes, *deleted_pieces])

    @contextlib.asynccontextmanager
    async def commit_queue(self) -> AsyncIterator[CommitQueue]:
        """A :class:`~sagewai.context._commit_queue.CommitQueue` for a long job's batches.

        With an embedded SQLite file as the metadata store, its batches are written by a writer
        process while the caller goes on; otherwise (or when that process cannot start)
        ``queue.background`` is false and the caller commits as usual. Leaving the block waits
        for the batches in flight and stops the process.
        """
        await self.open()
        store = self.metadata_store
        if not (isinstance(store, SqliteMetadataStore) and store.path != MEMORY):
            yield CommitQueue(self, None)
            return
        async with SqliteWriter(store) as writer:
            yield CommitQueue(self, writer if writer.running else None)

    @contextlib.asynccontextmanager
    async def bulk_load(self) -> AsyncIterator[None]:
        """A block for loading many facts: the stores' own ``bulk_load()`` blocks, entered together.

        A store that builds an index or statistics for search does it once, when the block
        ends, instead of at every batch: ``QdrantEdgeVectorStore`` optimizes its shard,
        ``PgVectorStore`` builds its HNSW index, and ``SqliteMetadataStore`` and
        ``PostgresMetadataStore`` analyse the facts table and save its frequent words for the
        next process (the vector index first, then the words). Stores without such a step
        (in-memory) load as usual. Searches stay correct inside the block, only slower. See
        ``docs/backends.md``.

        Example:
            >>> async def load(ctx: ContextEngine, texts: list[str]) -> None:
            ...     async with ctx.bulk_load():
            ...         for start in range(0, len(texts), 2048):
            ...             await ctx.add_many(texts[start : start + 2048])
        """
        await self.open()
        async with contextlib.AsyncExitStack() as stack:
            # Left in reverse order: the vector index is built before the words are saved.
            for store in (self.metadata_store, self.vector_store.store):
                loading = getattr(store, "bulk_load", None)
                if loading is not None:
                    await stack.enter_async_context(loading())
            yield

    async def _refresh_payloads(
        self, upserts: Sequence[Fact], before: Mapping[str, Fact], *, skip: AbstractSet[str]
    ) -> None:
        """Rewrite the index payloads of ``upserts`` (but ``skip``) that differ from
        ``before``'s, with their long records' pieces."""
        refreshed: dict[str, VectorPayload] = {}
        for fact in upserts:
            if fact.id in skip:
                continue
            payload = VectorPayload.of(fact)
            old = before.get(fact.id)
            if old is None or VectorPayload.of(old) != payload:
                refreshed[fact.id] = payload
                refreshed.update(dict.fromkeys(piece_ids(fact.id, fact.content), payload))
        if refreshed:
            await self.vector_store.update_payloads(refreshed)

    async def refresh_index(self, facts: Iterable[Fact]) -> int:
        """Rewrite the index payloads (status, validity, tags) of stored facts from the truth.

        The repair of an index left behind by a crash between a metadata commit and its
        payload update: the facts must be the versions just read from the metadata store.
        Long records' pieces are refreshed with them. Returns how many facts were.

        Raises:
            InvalidInputError: a fact of another project.
        """
        payloads: dict[str, VectorPayload] = {}
        count = 0
        for fact in facts:
            if fact.project_id != self.project_id:
                raise InvalidInputError(f"fact {fact.id} belongs to another project")
            payload = VectorPayload.of(fact)
            payloads[fact.id] = payload
            payloads.update(dict.fromkeys(piece_ids(fact.id, fact.content), payload))
            count += 1
        if payloads:
            await self.open()
            await self.vector_store.update_payloads(payloads)
        return count

    async def flush_access(self) -> None:
        """Write the read marks of this engine's searches now (they are otherwise written in the
        background within half a second); a consolidation run calls it before deciding decay."""
        await self._access.flush()

    async def record_access(self, fact_ids: Sequence[str], at: datetime) -> None:
        """Stamp these facts of this project as read at ``at`` (what ranks recent use higher).

        Access time is bookkeeping, not content: it is not audited and changes no vector. The
        marks are written in the background, off the caller's path
        (:class:`~sagewai.context._access_log.AccessLog`); :meth:`get` shows them at once.
        """
        if fact_ids:
            self._access.record(fact_ids, at)

    # ------------------------------------------------------------------ reading

    async def get(self, fact_id: str) -> Fact:
        """The fact with this id in this project.

        Raises:
            FactNotFoundError: no such fact here (including facts of other projects).
        """
        validate_identifier(fact_id, "fact_id")
        await self.open()
        found = await self.metadata_store.get(self.project_id, [fact_id])
        if not found or not self._readable(found[0]):
            raise FactNotFoundError(fact_id)
        return self._access.overlay(found[0])  # with the read marks not yet written

    def _readable(self, fact: Fact) -> bool:
        if fact.project_id == self.project_id:
            return True
        return (
            fact.scope is ContextScope.ORG
            and self.org_id is not None
            and (fact.org_id == self.org_id)
        )

    async def list(
        self,
        *,
        scope: ContextScope | str | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        subject: str | None = None,
        statuses: Sequence[FactStatus | str] | None = SEARCHABLE,
        fact_types: Sequence[FactType | str] | None = None,
        tags: Sequence[str] | None = None,
        limit: int = 100,
        after: tuple[datetime, str] | None = None,
        kinds: Sequence[FactKind | str] | None = None,
    ) -> builtins.list[Fact]:
        """Facts readable at a scope, oldest first, ``limit`` at a time (then pass ``after``).

        ``kinds`` keeps only some kinds of record (``["fact"]``: no verbatim messages or
        document chunks); all kinds by default.
        """
        await self.open()
        address = self.address(scope, user_id=user_id, session_id=session_id)
        if subject is not None:
            # Stored subjects are repaired text: a filter is repaired the same way.
            if not isinstance(subject, str):
                raise InvalidInputError(f"subject must be text, got {type(subject).__name__}")
            subject = clean_text(subject)
        query = FactQuery(
            project_id=self.project_id,
            scope_keys=address.readable_keys(),
            subject=subject,
            statuses=enum_values(statuses, FactStatus, "statuses"),
            fact_types=enum_values(fact_types, FactType, "fact_types"),
            tags_any=string_list(tags, "tags"),
            kinds=enum_values(kinds, FactKind, "kinds"),
            after=after,
            limit=check_int(limit, "limit", low=1, high=MAX_LIST_LIMIT),
        )
        return await self.metadata_store.query(query)

    async def count(
        self,
        *,
        statuses: Sequence[FactStatus | str] | None = None,
        kinds: Sequence[FactKind | str] | None = None,
    ) -> int:
        """How many records this project holds (of these statuses and kinds; all by default)."""
        await self.open()
        return await self.metadata_store.count(
            FactQuery(
                project_id=self.project_id,
                statuses=enum_values(statuses, FactStatus, "statuses"),
                kinds=enum_values(kinds, FactKind, "kinds"),
            )
        )

    async def migrate(self) -> builtins.list[str]:
        """Create or upgrade the tables of the metadata and episode stores (idempotent).

        See :meth:`ProjectStores.migrate`; returns the migration steps applied.
        """
        await self.open()
        return await self._stores.migrate()

    async def search(
        self,
        query: str,
        top_k: int = 5,
        *,
        scope: ContextScope | str | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        fact_types: Sequence[FactType | str] | None = None,
        kinds: Sequence[FactKind | str] | None = None,
        tags: Sequence[str] | None = None,
        statuses: Sequence[FactStatus | str] | None = None,
        as_of: datetime | None = None,
        graph_hops: int = 0,
        min_score: float | None = None,
        search_config: SearchConfig | None = None,
    ) -> builtins.list[SearchResult]:
        """Hybrid search: dense and keyword candidates, fused, with recency and strength.

        Reads the named scope and the scopes above it (never a sibling). By default only ACTIVE
        and FLAGGED facts are searched; with ``as_of`` the search sees what was believed at that
        time (superseded facts included while they were valid).

        How a query is answered (each step tunable through :class:`SearchConfig`): the query is
        analysed once (content words for the keyword index, the names it mentions, whether it
        asks "when"); the dense and keyword indexes each return ``candidates`` hits; the hits are
        re-read from the metadata store and re-checked against the filters; their scores are
        fused (a convex blend of normalised scores by default) with speaker, time and graph
        bonuses; the turns next to the best candidates in the same session are fetched and lent
        a share of their neighbour's relevance; recency and strength are blended in last.
        The measured effect of each step on LoCoMo is in ``docs/benchmarks-locomo.md``.

        Args:
            query: Free text.
            top_k: How many results.
            scope: The scope to read; inferred from ``user_id``/``session_id`` when omitted.
            user_id: The user whose facts may be read.
            session_id: The session whose facts may be read.
            fact_types: Keep only these types.
            kinds: Keep only facts or only document chunks.
            tags: Keep facts carrying any of these tags.
            statuses: Override the statuses searched.
            as_of: Search the memory as it stood at this time.
            graph_hops: 1 or 2 to add facts linked to entities named in the query (needs a
                graph store).
            min_score: Drop results scoring below this (scores lie in [0, 1]).
            search_config: Ranking settings for this call instead of the engine's.

        Raises:
            InvalidInputError: empty or oversized query, bad ``top_k``.
            ScopeError: a scope named without its identifier.
        """
        from sagewai.context._search import search

        return await search(
            self,
            query,
            top_k,
            scope=scope,
            user_id=user_id,
            session_id=session_id,
            fact_types=fact_types,
            kinds=kinds,
            tags=tags,
            statuses=statuses,
            as_of=as_of,
            graph_hops=graph_hops,
            min_score=min_score,
            search_config=search_config,
        )

    async def history(self, fact_id: str) -> builtins.list[FactChange]:
        """Every recorded change of this fact, oldest first (a tombstone after deletion)."""
        await self.open()
        validate_identifier(fact_id, "fact_id")
        return await self.metadata_store.changes(
            ChangeQuery(project_id=self.project_id, fact_id=fact_id)
        )

    async def changes(
        self, *, since: datetime | None = None, run_id: str | None = None, limit: int | None = None
    ) -> builtins.list[FactChange]:
        """The project's audit log, oldest first."""
        await self.open()
        return await self.metadata_store.changes(
            ChangeQuery(project_id=self.project_id, since=since, run_id=run_id, limit=limit)
        )

    # ------------------------------------------------------------------ changing and undoing

    async def set_status(
        self,
        fact_id: str,
        status: FactStatus | str,
        *,
        reason: str,
        actor: str = "engine",
        rule: str = "engine.set_status",
    ) -> Fact:
        """Change a fact's status (archive, flag, restore) with an audited change."""
        fact = await self.get(fact_id)
        step = lifecycle.set_status(fact, FactStatus(status), lifecycle.Cause(actor, rule, reason))
        await self.commit(WriteBatch(self.project_id, upserts=[step.fact], changes=[step.change]))
        return step.fact

    async def supersede(
        self,
        old_fact_id: str,
        new_content: str,
        *,
        reason: str,
        actor: str = "engine",
        rule: str = "engine.supersede",
        at: datetime | None = None,
        **fields: Any,
    ) -> Fact:
        """Replace a fact by a new one: the old keeps its text and gets its validity closed.

        The old fact stays retrievable with ``search(..., as_of=<a time before now>)``.
        Fields not given (type, subject, scope, tags, ...) are taken from the old fact.
        """
        old = await self.get(old_fact_id)
        at = at or utcnow()
        inherited: dict[str, Any] = {
            "fact_type": old.fact_type,
            "scope": old.scope,
            "user_id": old.user_id,
            "session_id": old.session_id,
            "subject": old.subject,
            "predicate": old.predicate,
            "tags": old.tags,
        }
        inherited.update(fields)
        inherited.setdefault("created_at", at)
        inherited.setdefault("valid_from", at)
        new = self.build_fact(new_content, **inherited)
        cause = lifecycle.Cause(actor, rule, reason, at=at)
        closed = lifecycle.supersede(old, cause, successor_id=new.id, ends=at)
        created = lifecycle.created(new, cause, related=(old.id,))
        await self.commit(
            WriteBatch(
                self.project_id, upserts=[closed.fact, new], changes=[created, closed.change]
            ),
            new=[new],
        )
        return new

    async def revert(self, change_id: str, *, reason: str = "reverted by user") -> Fact:
        """Undo one recorded change by restoring the fields it changed.

        Raises:
            FactNotFoundError: the change's fact no longer exists (it was deleted).
            InvalidInputError: the change has nothing to undo (a creation or a deletion).
        """
        await self.open()
        matching = [c for c in await self.changes() if c.id == change_id]
        if not matching:
            raise InvalidInputError(f"no change with id {change_id!r} in this project")
        change = matching[0]
        if change.before is None:
            raise InvalidInputError(f"change {change_id} ({change.action}) cannot be reverted")
        fact = await self.get(change.fact_id)
        step = lifecycle.restore(
            fact,
            change.before,
            lifecycle.Cause("engine", "engine.revert", reason),
            related=change.related_fact_ids,
        )
        await self.commit(WriteBatch(self.project_id, upserts=[step.fact], changes=[step.change]))
        return step.fact

    async def delete(self, fact_id: str, *, reason: str = "deleted by user") -> None:
        """Delete one fact from every store; its history is replaced by a tombstone.

        Raises:
            FactNotFoundError: no such fact in this project.
        """
        fact = await self.get(fact_id)
        if fact.project_id != self.project_id:
            raise FactNotFoundError(fact_id)
        await self.delete_many([fact.id], reason=reason, rule="engine.delete")

    async def delete_many(
        self, fact_ids: Sequence[str], *, reason: str, rule: str = "engine.delete"
    ) -> int:
        """Delete records of this project by id, each leaving a content-free tombstone.

        Ids of no record of this project are skipped. The deletes land in atomic batches of a
        few hundred (vectors and pieces with them); returns how many records were deleted.

        Raises:
            InvalidInputError: ``reason`` or ``rule`` is not text.
        """
        if not isinstance(reason, str) or not isinstance(rule, str):
            raise InvalidInputError("reason and rule must be text")
        wanted = list(dict.fromkeys(fact_ids))
        deleted = 0
        for start in range(0, len(wanted), _FORGET_BATCH):
            ids = [
                fact.id
                for fact in await self.get_many(wanted[start : start + _FORGET_BATCH])
                if fact.project_id == self.project_id
            ]
            if not ids:
                continue
            tombstones = [self._tombstone(fact_id, reason, rule) for fact_id in ids]
            await self.commit(WriteBatch(self.project_id, deletes=ids, changes=tombstones))
            deleted += len(ids)
        return deleted

    def _tombstone(self, fact_id: str, reason: str, rule: str) -> FactChange:
        return lifecycle.tombstone(
            fact_id, self.project_id, lifecycle.Cause("engine", rule, reason)
        )

    async def forget(
        self,
        *,
        subject: str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        scope: ContextScope | str | None = None,
        everything: bool = False,
        reason: str = "forget requested",
    ) -> ForgetReport:
        """Forget completely: facts, vectors, graph entries and episodes.

        Name what to forget: a ``subject`` (facts about it, matched case-insensitively on the
        subject or object of the fact, and its graph entity), a ``session_id``, a ``user_id``,
        facts stored at a ``scope``, or ``everything=True`` for the whole project. Criteria
        combine with AND in every store (a subject within one session: the facts about it from
        that session, and what that session said about its graph entity). Deleted facts leave
        content-free tombstones in the audit log.

        Raises:
            InvalidInputError: nothing was named, ``everything`` is not a bool, a bad value.
            ScopeError: an unknown scope.
        """
        from sagewai.context._forgetting import ForgetReport, checked_subject, forget_matching

        everything = check_flag(everything, "everything")
        level = check_scope(scope)
        if not isinstance(reason, str):
            raise InvalidInputError("reason must be text")
        subject = checked_subject(
            subject=subject,
            session_id=session_id,
            user_id=user_id,
            scope=level,
            everything=everything,
        )
        await self.open()
        if not everything:
            return await forget_matching(
                self,
                subject=subject,
                session_id=session_id,
                user_id=user_id,
                scope=level,
                reason=reason,
            )
        # The whole project: its audit log goes with it, nothing is left to hold a reason.
        deleted = await self.metadata_store.delete_project(self.project_id)
        await self.vector_store.delete_project(self.project_id)
        graph_deleted = 0 if self._graph is None else (await self._graph.delete_all()).total
        episodes = self._stores.episodes
        episodes_deleted = 0 if episodes is None else await episodes.delete_project(self.project_id)
        return ForgetReport(deleted, graph_deleted, episodes_deleted)

    async def forget_facts(self, fact_ids: Sequence[str], *, user_id: str | None) -> ForgottenFacts:
        """Forget facts by id for one user, and every record that could show them again.

        The facts go with the older values they replaced and the repeats merged into them;
        the verbatim messages they came from (and the user's messages naming their values)
        go too, the user's saved episodes are redacted and the graph relations read from those
        messages deleted. Only the user's own facts and messages are touched (``refused`` lists
        the other ids). See :func:`sagewai.context._forgetting.forget_facts`.
        """
        from sagewai.context._forgetting import forget_facts

        return await forget_facts(self, fact_ids, user_id=user_id, graph=self._graph)
