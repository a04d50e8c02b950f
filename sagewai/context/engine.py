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
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from pydantic import JsonValue, ValidationError

from sagewai.context.access import AccessLog
from sagewai.context.arguments import (
    aware_time,
    check_flag,
    check_int,
    check_number,
    check_scope,
    enum_values,
    string_list,
)
from sagewai.context.chunking import chunk_text
from sagewai.context.pieces import piece_ids, piece_texts, record_id
from sagewai.context.ranking import SearchConfig, fuse
from sagewai.context.scope import ContextScope, ScopeAddress, validate_identifier
from sagewai.context.text import clean_text
from sagewai.embeddings.base import Embedder, Vector, Vectors
from sagewai.errors import FactConflictError, FactNotFoundError, InvalidInputError
from sagewai.records import (
    ChangeAction,
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
from sagewai.stores.metadata import ChangeQuery, FactQuery, MetadataStore, WriteBatch
from sagewai.stores.vector import (
    ProjectVectorStore,
    VectorFilter,
    VectorHit,
    VectorPayload,
    VectorRecord,
    VectorStore,
)

if TYPE_CHECKING:
    from sagewai.context.forgetting import ForgetReport

__all__ = ["ContextEngine"]

logger = logging.getLogger("sagewai.context")

MAX_QUERY_CHARS = 4_000
MAX_TOP_K = 1_000
MAX_LIST_LIMIT = 100_000
_WRITE_BATCH = 256
_SEARCHABLE = (FactStatus.ACTIVE, FactStatus.FLAGGED)
_AS_OF_STATUSES = (FactStatus.ACTIVE, FactStatus.FLAGGED, FactStatus.SUPERSEDED)


def _provenance(value: Any) -> Provenance:
    if isinstance(value, Provenance):
        return value
    if isinstance(value, Mapping):
        try:
            return Provenance.model_validate(dict(value))
        except ValidationError as exc:
            raise InvalidInputError(f"invalid source: {exc}") from exc
    raise InvalidInputError(f"a source must be a Provenance, got {type(value).__name__}")


def _sequence(value: Any, what: str) -> Sequence[Any]:
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise InvalidInputError(f"{what} must be a list, got {type(value).__name__}")
    return value


def _snapshot(fact: Fact, fields: Iterable[str]) -> dict[str, JsonValue]:
    data = fact.model_dump(mode="json")
    return {name: data[name] for name in fields}


def _record_hits(hits: Sequence[VectorHit], piece_weight: float) -> builtins.list[VectorHit]:
    """Vector hits (records and pieces of long records) as one hit per record, best first.

    A record scores ``own + piece_weight * (best piece - own)`` when a piece of it beats its own
    vector; a record found only through a piece gets the lowest returned score as its own (its
    own vector ranked below every hit).
    """
    own: dict[str, float] = {}
    piece: dict[str, float] = {}
    for hit in hits:
        owner = record_id(hit.id)
        scores = own if owner == hit.id else piece
        scores.setdefault(owner, hit.score)
    floor = min((hit.score for hit in hits), default=0.0)
    merged: builtins.list[VectorHit] = []
    for owner in dict.fromkeys([record_id(hit.id) for hit in hits]):
        base = own.get(owner, floor)
        best = piece.get(owner, base)
        merged.append(VectorHit(owner, base + piece_weight * max(0.0, best - base)))
    merged.sort(key=lambda hit: -hit.score)
    return merged


class ContextEngine:
    """Store, search and forget a project's facts and documents.

    Args:
        metadata_store: The source of truth (in-memory, SQLite or PostgreSQL).
        vector_store: The dense index (in-memory, Qdrant embedded engine or Qdrant).
        project_id: Every read and write of this engine stays inside this project.
        embedder: Turns text into vectors; its dimension must match the vector store's.
        graph_store: Optional knowledge graph view of this project (``ContextEngine.local`` makes
            one); ``forget`` reaches it and graph-aware search reads it.
        org_id: Optional organisation; ORG-scope facts are shared by the org's projects.
        episode_store: Optional episode store; ``forget`` reaches it.
        search_config: Hybrid search tuning.

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

    def __init__(
        self,
        *,
        metadata_store: MetadataStore,
        vector_store: VectorStore,
        project_id: str,
        embedder: Embedder | None = None,
        graph_store: Any | None = None,
        org_id: str | None = None,
        episode_store: Any | None = None,
        search_config: SearchConfig | None = None,
    ) -> None:
        self.project_id = validate_identifier(project_id, "project_id")
        self.org_id = None if org_id is None else validate_identifier(org_id, "org_id")
        if embedder is None:
            from sagewai.embeddings.minilm import MiniLMEmbedder

            embedder = MiniLMEmbedder()
        if embedder.dimension != vector_store.dimension:
            raise InvalidInputError(
                f"the embedder makes {embedder.dimension}-d vectors but the vector store holds "
                f"{vector_store.dimension}-d vectors"
            )
        self.metadata_store = metadata_store
        # Point ids carry the project, so engines sharing one vector store never meet.
        self.vector_store: VectorStore = ProjectVectorStore.of(vector_store, self.project_id)
        self.embedder = embedder
        self.graph_store = graph_store
        self.episode_store = episode_store
        self.search_config = search_config or SearchConfig()
        self._access = AccessLog(metadata_store, self.project_id)
        """The reads of searches, written off the search path (see sagewai.context.access)."""
        self._opened = False
        self._open_lock = asyncio.Lock()
        self.before_open: builtins.list[Callable[[], None]] = []
        """Checks run (in a thread) before the stores open, e.g. the embedded folder's manifest."""
        self.after_open: builtins.list[Callable[[], Awaitable[None]]] = []
        """Steps run once the stores are open and before any operation, e.g. a folder upgrade."""
        self.folder: Path | None = None
        """The folder of an embedded engine (``ContextEngine.local``), where a
        :class:`~sagewai.context.MemoryBridge` keeps its write-ahead journal; ``None`` otherwise."""

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
        """An engine on in-memory stores: nothing persists; for tests, notebooks and demos."""
        from sagewai.graph.memory import InMemoryGraphStore
        from sagewai.stores.memory_metadata import InMemoryMetadataStore
        from sagewai.stores.memory_vector import InMemoryVectorStore

        if embedder is None:
            from sagewai.embeddings.minilm import MiniLMEmbedder

            embedder = MiniLMEmbedder()
        return cls(
            metadata_store=InMemoryMetadataStore(),
            vector_store=InMemoryVectorStore(embedder.dimension),
            project_id=project_id,
            embedder=embedder,
            graph_store=InMemoryGraphStore().for_project(project_id),
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
        embedded engine) and ``graph.sqlite3`` (the knowledge graph). It is created on first
        open; reopening it later finds everything again. The call itself touches no file.
        A :class:`~sagewai.context.MemoryBridge` on this engine journals what it accepts in the
        same folder (``bridge-<project>.journal``), so nothing accepted is lost without a close.
        """
        from sagewai.stores.local import LocalLayout

        engine = LocalLayout(Path(path)).engine(
            cls,
            project_id=project_id,
            embedder=embedder,
            org_id=org_id,
            search_config=search_config,
        )
        engine.folder = Path(path)
        return engine

    async def open(self) -> None:
        """Open the stores. Called for you by the first operation or by ``async with``."""
        if self._opened:
            return
        async with self._open_lock:
            if not self.is_open:
                await self._open_stores()

    @property
    def is_open(self) -> bool:
        """True once the stores are open."""
        return self._opened

    async def _open_stores(self) -> None:
        for check in self.before_open:
            await asyncio.to_thread(check)
        await self.metadata_store.open()
        await self.vector_store.open()
        if self.graph_store is not None and hasattr(self.graph_store, "open"):
            await self.graph_store.open()
        for step in self.after_open:
            await step()
        self._opened = True

    async def close(self) -> None:
        """Close the stores. Safe to call more than once."""
        if not self._opened:
            return
        await self._access.flush()  # the reads of the last searches
        self._opened = False
        if self.graph_store is not None and hasattr(self.graph_store, "close"):
            await self.graph_store.close()
        if self.episode_store is not None and hasattr(self.episode_store, "close"):
            await self.episode_store.close()
        await self.vector_store.close()
        await self.metadata_store.close()

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
        all_sources = tuple(_provenance(s) for s in _sequence(sources, "sources")) + (
            (_provenance(source),) if source is not None else ()
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
        changes = [
            FactChange(
                fact_id=fact.id,
                project_id=self.project_id,
                action=ChangeAction.CREATED,
                at=fact.created_at,
                actor=actor,
                rule="engine.add",
            )
            for fact in facts
        ]
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
            await self.vector_store.upsert(await self._vector_records(new, vectors))
        deleted_pieces: builtins.list[str] = []
        if batch.deletes:
            # A long record's piece vectors go with it; their ids follow from its content.
            for fact in await self.metadata_store.get(self.project_id, batch.deletes):
                deleted_pieces.extend(piece_ids(fact.id, fact.content))
        await self.metadata_store.apply(batch)
        before = previous or {}
        refreshed: dict[str, VectorPayload] = {}
        for fact in batch.upserts:
            if fact.id in new_ids:
                continue
            payload = VectorPayload.of(fact)
            old = before.get(fact.id)
            if old is None or VectorPayload.of(old) != payload:
                refreshed[fact.id] = payload
                refreshed.update(dict.fromkeys(piece_ids(fact.id, fact.content), payload))
        if refreshed:
            await self.vector_store.update_payloads(refreshed)
        if batch.deletes:
            await self.vector_store.delete([*batch.deletes, *deleted_pieces])

    async def _vector_records(
        self, new: Sequence[Fact], vectors: Vectors | None
    ) -> builtins.list[VectorRecord]:
        """The index entries of new records: one vector each, plus one per piece of a long one.

        A long record's own vector is the mean of its pieces' (unless the caller embedded it).
        """
        import numpy as np

        pieces = [piece_texts(fact.content) for fact in new]
        flat = [text for texts in pieces for text in texts]
        piece_vectors = await self.embedder.embed_documents(flat) if flat else None
        if vectors is None:
            short = [row for row, texts in enumerate(pieces) if not texts]
            embedded = await self.embedder.embed_documents([new[row].content for row in short])
            own: dict[int, Vector] = dict(zip(short, embedded, strict=True))
        records: builtins.list[VectorRecord] = []
        offset = 0
        for row, fact in enumerate(new):
            payload = VectorPayload.of(fact)
            mine: Vectors = (
                np.zeros((0, self.embedder.dimension), dtype=np.float32)
                if piece_vectors is None
                else piece_vectors[offset : offset + len(pieces[row])]
            )
            offset += len(pieces[row])
            if vectors is not None:
                vector: Vector = vectors[row]
            elif len(mine):
                mean = mine.mean(axis=0)
                vector = mean / max(float(np.linalg.norm(mean)), 1e-12)
            else:
                vector = own[row]
            records.append(VectorRecord(fact.id, vector, payload))
            records.extend(
                VectorRecord(piece_id, mine[n], payload)
                for n, piece_id in enumerate(piece_ids(fact.id, fact.content))
            )
        return records

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
        statuses: Sequence[FactStatus | str] | None = _SEARCHABLE,
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
        import dataclasses

        import numpy as np

        from sagewai.context.query import analyse_query
        from sagewai.context.ranking import (
            RankedCandidate,
            SourceGroup,
            group_by_source,
            limit_per_message,
            neighbour_key,
            neighbour_wanted,
        )

        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("the search query must be non-empty text")
        query = clean_text(query)
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidInputError(f"the search query is longer than {MAX_QUERY_CHARS} characters")
        check_int(top_k, "top_k", low=1, high=MAX_TOP_K)
        check_int(graph_hops, "graph_hops", low=0, high=2)
        if min_score is not None:
            check_number(min_score, "min_score")
        as_of = aware_time(as_of, "as_of")
        fact_types = enum_values(fact_types, FactType, "fact_types")
        kinds = enum_values(kinds, FactKind, "kinds")
        statuses = enum_values(statuses, FactStatus, "statuses")
        tags = string_list(tags, "tags")
        config = search_config or self.search_config
        await self.open()
        address = self.address(scope, user_id=user_id, session_id=session_id)
        if statuses is None:
            statuses = _AS_OF_STATUSES if as_of is not None else _SEARCHABLE
        fact_query = FactQuery(
            project_id=self.project_id,
            scope_keys=address.readable_keys(),
            statuses=tuple(FactStatus(s) for s in statuses),
            kinds=None if kinds is None else tuple(FactKind(k) for k in kinds),
            fact_types=None if fact_types is None else tuple(FactType(t) for t in fact_types),
            tags_any=None if tags is None else tuple(tags),
            valid_at=as_of,
        )
        vector_filter = VectorFilter.for_types(
            fact_query.scope_keys or (),
            statuses=fact_query.statuses,
            kinds=fact_query.kinds,
            fact_types=fact_query.fact_types,
            tags_any=fact_query.tags_any,
            valid_at=as_of,
        )
        analysis = analyse_query(query, strip_stopwords=config.strip_stopwords)
        # Grouping by source folds several records into one result: fetch enough for top_k.
        pool = max(config.candidates, 2 * top_k if config.group_by_source else top_k)

        async def dense_search() -> tuple[Vector, builtins.list[VectorHit]]:
            vector = await self.embedder.embed_query(query)
            # A long record's pieces are hits of their own: ask for more, score each record
            # by its best vector (its own or a piece's), keep ``pool`` records.
            hits = await self.vector_store.search(vector, 2 * pool, vector_filter)
            return vector, _record_hits(hits, config.piece_weight)[:pool]

        # The dense path (embed, then search) and the keyword index run side by side.
        (query_vector, dense), keyword = await asyncio.gather(
            dense_search(),
            self.metadata_store.keyword_search(fact_query, analysis.keyword_text, pool),
        )
        bonus: dict[str, float] = {}
        if graph_hops and self.graph_store is not None:
            from sagewai.context.graph_expansion import graph_bonus

            bonus = await graph_bonus(self, query, fact_query, graph_hops, pool)
        ids = list(dict.fromkeys([h.id for h in dense] + [i for i, _ in keyword] + list(bonus)))
        hydrated = await self.metadata_store.get(self.project_id, ids)
        # Defence in depth: every hit is re-checked against the truth, whatever the index said.
        facts = {fact.id: fact for fact in hydrated if fact_query.matches(fact)}
        dense_hits = [(h.id, h.score) for h in dense]
        now = utcnow()

        def rank(extra_dense: Mapping[str, float] | None = None) -> builtins.list[RankedCandidate]:
            return fuse(
                facts,
                dense_hits,
                keyword,
                config=config,
                now=now,
                bonus=bonus,
                query=analysis,
                extra_dense=extra_dense,
            )

        ranked = rank()
        if config.neighbour_weight > 0 and ranked:
            # Neighbouring turns of the best candidates may be outside both candidate pools:
            # fetch them (one indexed query per session), score them on the dense scale, re-rank.
            # The per-session query filters on the project only (cheap in every backend); the
            # few facts at the wanted positions are then checked against the full scope filter.
            seeds = sorted(ranked, key=lambda c: (-c.relevance, c.fact.id))[
                : config.neighbour_seeds
            ]
            wanted = neighbour_wanted((c.fact for c in seeds), config.neighbour_window)
            found: builtins.list[Fact] = []
            for neighbour_session in sorted(wanted):
                session_facts = await self.metadata_store.query(
                    dataclasses.replace(fact_query, scope_keys=None, session_id=neighbour_session)
                )
                found.extend(
                    fact
                    for fact in session_facts
                    if fact.id not in facts
                    and (key := neighbour_key(fact)) is not None
                    and key[0] == neighbour_session
                    and key[1] in wanted[neighbour_session]
                    and fact_query.matches(fact)
                )
            if found:
                vectors = await self.vector_store.get_vectors([fact.id for fact in found])
                query_array = np.asarray(query_vector, dtype=np.float32)
                extra = {
                    fact_id: float(np.asarray(vector, dtype=np.float32) @ query_array)
                    for fact_id, vector in vectors.items()
                }
                facts.update((fact.id, fact) for fact in found if fact.id in extra)
                ranked = rank(extra)
        if config.group_by_source:
            groups = group_by_source(ranked, config.related_weight)
        else:
            groups = [
                SourceGroup(c.score, c, ())
                for c in limit_per_message(ranked, config.max_per_message)
            ]
        results = [
            SearchResult(
                fact=group.best.fact,
                score=group.score,
                parts=group.best.parts,
                related=tuple(other.fact for other in group.others),
            )
            for group in groups[:top_k]
            if min_score is None or group.score >= min_score
        ]
        if results and config.track_access and as_of is None:
            own = [
                fact.id
                for r in results
                for fact in (r.fact, *r.related)
                if fact.project_id == self.project_id
            ]
            self._access.record(own, now)
        return results

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
        status = FactStatus(status)
        action = {
            FactStatus.ARCHIVED: ChangeAction.ARCHIVED,
            FactStatus.FLAGGED: ChangeAction.FLAGGED,
            FactStatus.ACTIVE: ChangeAction.RESTORED,
            FactStatus.SUPERSEDED: ChangeAction.SUPERSEDED,
            FactStatus.MERGED: ChangeAction.MERGED,
        }[status]
        updated = fact.evolve(status=status)
        change = FactChange(
            fact_id=fact.id,
            project_id=self.project_id,
            action=action,
            actor=actor,
            rule=rule,
            reason=reason,
            before=_snapshot(fact, ["status"]),
            after=_snapshot(updated, ["status"]),
        )
        await self.commit(WriteBatch(self.project_id, upserts=[updated], changes=[change]))
        return updated

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
        closed = old.evolve(
            status=FactStatus.SUPERSEDED, valid_to=max(at, old.effective_from), superseded_by=new.id
        )
        changes = [
            FactChange(
                fact_id=new.id,
                project_id=self.project_id,
                action=ChangeAction.CREATED,
                at=at,
                actor=actor,
                rule=rule,
                reason=reason,
                related_fact_ids=(old.id,),
            ),
            FactChange(
                fact_id=old.id,
                project_id=self.project_id,
                action=ChangeAction.SUPERSEDED,
                at=at,
                actor=actor,
                rule=rule,
                reason=reason,
                related_fact_ids=(new.id,),
                before=_snapshot(old, ["status", "valid_to", "superseded_by"]),
                after=_snapshot(closed, ["status", "valid_to", "superseded_by"]),
            ),
        ]
        await self.commit(
            WriteBatch(self.project_id, upserts=[closed, new], changes=changes), new=[new]
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
        restored = fact.evolve(**change.before)
        undo = FactChange(
            fact_id=fact.id,
            project_id=self.project_id,
            action=ChangeAction.RESTORED,
            actor="engine",
            rule="engine.revert",
            reason=reason,
            related_fact_ids=change.related_fact_ids,
            before=_snapshot(fact, change.before.keys()),
            after=dict(change.before),
        )
        await self.commit(WriteBatch(self.project_id, upserts=[restored], changes=[undo]))
        return restored

    async def delete(self, fact_id: str, *, reason: str = "deleted by user") -> None:
        """Delete one fact from every store; its history is replaced by a tombstone.

        Raises:
            FactNotFoundError: no such fact in this project.
        """
        fact = await self.get(fact_id)
        if fact.project_id != self.project_id:
            raise FactNotFoundError(fact_id)
        await self.commit(
            WriteBatch(
                self.project_id,
                deletes=[fact.id],
                changes=[self._tombstone(fact.id, reason, "engine.delete")],
            )
        )

    def _tombstone(self, fact_id: str, reason: str, rule: str) -> FactChange:
        return FactChange(
            fact_id=fact_id,
            project_id=self.project_id,
            action=ChangeAction.DELETED,
            actor="engine",
            rule=rule,
            reason=reason,
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
        from sagewai.context.forgetting import forget

        everything = check_flag(everything, "everything")
        level = check_scope(scope)
        if not isinstance(reason, str):
            raise InvalidInputError("reason must be text")
        await self.open()
        return await forget(
            self,
            subject=subject,
            session_id=session_id,
            user_id=user_id,
            scope=level,
            everything=everything,
            reason=reason,
        )
