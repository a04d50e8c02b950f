"""ContextEngine: the one door to a project's stored knowledge.

The engine owns no storage of its own and holds three small collaborators:

* its port (:class:`~sagewai.context._access.StoreAccess`, ``ctx.port``): the reads of the
  stores and :meth:`~sagewai.context._access.StoreAccess.commit`, the one write, bound to the
  project. Every change, whoever makes it, lands through it the same way; every helper of the
  engine (search, forgetting, the bridge, consolidation, archives) reads and writes through it;
* its searcher (:class:`~sagewai.context._search.Searcher`), the hybrid search;
* its episode door (:class:`~sagewai.context._episode_access.EpisodeAccess`, ``ctx.episodes``).

What is left here is the API a user calls: add, search, read, change, undo and forget.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack, overload

from sagewai.context._access import StoreAccess
from sagewai.context._chat_add import chat_of, is_message_list, written_in
from sagewai.context._episode_access import EpisodeAccess
from sagewai.context._forgetting import delete_records
from sagewai.context._ranking import SearchConfig
from sagewai.context._search import (
    MAX_QUERY_CHARS,
    MAX_TOP_K,
    SEARCHABLE,
    Searcher,
    SearchRequest,
)
from sagewai.core import _lifecycle as lifecycle
from sagewai.core._arguments import check_flag, check_int, check_scope, enum_values, string_list
from sagewai.core._chunking import chunk_text
from sagewai.core._conversation import ChatMessage
from sagewai.core._ids import statement_id
from sagewai.core._progress import progress_bar, wants_progress
from sagewai.core._queries import ChangeQuery, FactQuery, WriteBatch
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
from sagewai.core._scope import ContextScope, validate_identifier
from sagewai.core._text import clean_text
from sagewai.errors import FactConflictError, FactNotFoundError, InvalidInputError
from sagewai.stores._project import ProjectStores

if TYPE_CHECKING:
    from sagewai.context._forgetting import ForgetReport
    from sagewai.context._profile import Profile
    from sagewai.core._embedder import Embedder
    from sagewai.core._fact_fields import FactFields
    from sagewai.stores.base._episodes import EpisodeStoreBase
    from sagewai.stores.base._graph import GraphStore, ProjectGraph
    from sagewai.stores.base._metadata import MetadataStore
    from sagewai.stores.base._vector import VectorStore

__all__ = ["MAX_QUERY_CHARS", "MAX_TOP_K", "ContextEngine"]

MAX_LIST_LIMIT = 100_000
_WRITE_BATCH = 256


def _statement(fact: Fact) -> tuple[str, ...]:
    """What makes two added records the same statement (see ``add``)."""
    return (
        fact.scope_key,
        fact.kind.value,
        fact.fact_type.value,
        fact.subject or "",
        fact.predicate or "",
        fact.object or "",
        fact.content,
    )


_BRIDGE_MODULE = "sagewai.context.bridge._bridge"
"""Where :meth:`ContextEngine.add` finds :class:`~sagewai.context.MemoryBridge` for a chat."""


class ContextEngine(Resource):
    """Store, search and forget a project's facts and documents.

    Build it on a :class:`~sagewai.stores.ProjectStores` (``ContextEngine(stores=...,
    project_id=...)``), on stores named one by one (the keyword form below), or with
    :meth:`local` / :meth:`in_memory`. Its parts stay reachable: ``ctx.stores`` (the stores),
    ``ctx.graph_store`` (the project's graph view), ``ctx.episodes`` (saved sessions) and
    ``ctx.port`` (the reads and the commit its helpers use; see :class:`~sagewai.core.MemoryPort`).

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
        graph_store: ProjectGraph | GraphStore | None = None,
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
        graph_store: ProjectGraph | GraphStore | None = None,
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
            graph: GraphStore | None = None
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
        if view is None and stores.graph is not None:
            view = stores.graph.for_project(self.project_id)
        self._access = StoreAccess(
            stores, project_id=self.project_id, org_id=self.org_id, graph=view
        )
        self._episodes = EpisodeAccess(self._access)
        self._searcher = Searcher(self._access, graph=view, config=search_config or SearchConfig())

    # ------------------------------------------------------------------ parts

    @property
    def stores(self) -> ProjectStores:
        """The stores behind this engine (shared: an engine of another project may use them)."""
        return self._access.stores

    @property
    def graph_store(self) -> ProjectGraph | None:
        """This project's view of the knowledge graph, for a graph builder; ``None``: no graph."""
        return self._access.graph

    @property
    def episodes(self) -> EpisodeAccess:
        """This project's saved sessions: ``save``, ``get``, ``list``, ``search``, ``attach``."""
        return self._episodes

    @property
    def search_config(self) -> SearchConfig:
        """The ranking settings of a search that names none."""
        return self._searcher.config

    @property
    def port(self) -> StoreAccess:
        """The reads and the one write (``commit``) the engine's helpers use, bound to this
        project (a :class:`~sagewai.core.MemoryPort`). Give it to a helper of your own instead
        of the engine, or read what the engine's methods do not offer."""
        return self._access

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

        The folder holds ``metadata.sqlite3`` (facts and history), ``vectors/`` (the dense
        index), ``graph.sqlite3`` (the knowledge graph) and ``episodes.sqlite3``
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
        await self._access.open()

    async def close(self) -> None:
        """Write the last searches' read marks and close the stores. Safe to call twice."""
        await self._access.close()

    async def migrate(self) -> builtins.list[str]:
        """Create or upgrade the tables of the metadata and episode stores (idempotent).

        See :meth:`ProjectStores.migrate`; returns the migration steps applied.
        """
        await self.open()
        return await self.stores.migrate()

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
        async with self._access.bulk_load():
            yield

    # ------------------------------------------------------------------ writing

    @overload
    async def add(self, content: str, **fields: Unpack[FactFields]) -> Fact: ...

    @overload
    async def add(
        self, content: Sequence[ChatMessage | Mapping[str, Any]], **fields: Unpack[FactFields]
    ) -> builtins.list[Fact]: ...

    async def add(
        self,
        content: str | Sequence[ChatMessage | Mapping[str, Any]],
        **fields: Unpack[FactFields],
    ) -> Fact | builtins.list[Fact]:
        """Store one fact and return it; or store a chat (a list of messages) and return what
        was written.

        With a list of chat messages (``[{"role": "user", "content": "I moved to Munich"}]``,
        the shape chat APIs use), the messages go through a :class:`~sagewai.context.MemoryBridge`
        as one conversation: each kept verbatim, the facts read from it and reconciled with what
        the memory holds. Only ``user_id``, ``session_id``, ``tags`` and ``metadata`` apply then;
        the records written (messages and facts) are returned, oldest first.

        The fields (:class:`~sagewai.core.FactFields`, all optional and typed): ``fact_type``,
        ``scope``, ``user_id``, ``session_id``, ``subject``/``predicate``/``object``,
        ``confidence``, ``exact_values``, ``tags``, ``metadata``, ``source``/``sources``,
        ``kind``, ``valid_from``, ``created_at``, ``fact_id``. Without ``scope``, a fact with a
        ``user_id`` is stored at USER scope (recalled in the user's later sessions) and any
        other fact at PROJECT scope; pass ``scope="session"`` for session-local facts.

        Adding the same statement again (same text, kind, type, triple and scope) stores nothing
        and returns the stored fact, while it is active; once it was superseded, archived or
        merged, the statement is stored again as new.

        Raises:
            InvalidInputError: a field is empty, too large, unknown or of the wrong type.
            FactConflictError: ``fact_id`` names a fact the store holds already.

        Example:
            >>> import asyncio
            >>> from sagewai.testing import FakeEmbedder
            >>> async def demo() -> list[str]:
            ...     ctx = ContextEngine.in_memory(embedder=FakeEmbedder())
            ...     chat = [{"role": "user", "content": "I work at Initech."}]
            ...     return [record.kind.value for record in await ctx.add(chat, user_id="bob")]
            >>> asyncio.run(demo())
            ['message', 'fact']
        """
        if not isinstance(content, str):
            if is_message_list(content):
                return await self._add_chat(content, fields)
            raise InvalidInputError(
                "add() takes a text or a list of chat messages ({'role': ..., 'content': ...}), "
                f"not {type(content).__name__}; store many texts with add_many()"
            )
        (fact,) = await self.add_many([{"content": content, **fields}])
        return fact

    async def _add_chat(
        self, messages: Sequence[ChatMessage | Mapping[str, Any]], fields: Mapping[str, Any]
    ) -> builtins.list[Fact]:
        """Store a chat through a bridge (see :mod:`sagewai.context._chat_add`)."""
        # The bridge is built on the engine (it imports it), so the engine names it and loads it
        # on first use instead of importing it: no import circle for a reader to follow.
        bridge_class = importlib.import_module(_BRIDGE_MODULE).MemoryBridge
        chat = chat_of(messages, fields)
        # A little before now: the store stamps the bridge's writes with its own clock.
        started = utcnow() - timedelta(seconds=1)
        bridge = bridge_class(context_engine=self, journal=False, save_episodes=False)
        try:
            await bridge.bridge_conversation(chat, tags=fields.get("tags"))
        finally:
            await bridge.aclose()
        query = FactQuery(project_id=self.project_id, user_id=chat.user_id, updated_since=started)
        return written_in(await self._access.find(query), chat.session_id or "")

    async def add_many(
        self,
        items: Iterable[Fact | str | Mapping[str, Any]],
        *,
        actor: str = "engine",
        progress: bool | None = None,
    ) -> builtins.list[Fact]:
        """Store many facts efficiently (batched embedding and writes) and return them.

        Items are :class:`Fact` records of this project, plain strings, or mappings of
        :class:`~sagewai.core.FactFields` (with ``content``). All or nothing: every item is
        validated, and its id checked, before anything is written, and the facts land in one
        atomic batch of the metadata store; an invalid item raises and nothing is stored.

        A bar on standard error counts the embedding of a large batch when standard error is a
        terminal (``progress=True`` or ``False`` decides; ``SAGEWAI_PROGRESS=0`` turns bars off
        for the process).

        Raises:
            InvalidInputError: an item is invalid (nothing is stored).
            FactConflictError: an item reuses a fact id the store already holds (in this project
                or another one sharing the store), or two items share an id. A fact is never
                overwritten silently; change a stored fact with :meth:`supersede`.
        """
        if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
            raise InvalidInputError("add_many takes a list of facts, strings or mappings")
        wants_progress(0, progress)  # a bad value fails before anything is read
        facts: builtins.list[Fact] = []
        derived: set[str] = set()
        """Ids made from the statement (the item named none): a repeat of it is no conflict."""
        for item in items:
            if isinstance(item, Fact):
                if item.project_id != self.project_id:
                    raise InvalidInputError(f"fact {item.id} belongs to another project")
                facts.append(item)
                continue
            if isinstance(item, str):
                fact = self._access.build_fact(item)
            elif isinstance(item, Mapping):
                data = dict(item)
                content = data.pop("content", None)
                if not isinstance(content, str):
                    raise InvalidInputError("a mapping item needs a string 'content'")
                fact = self._access.build_fact(content, **data)
                if data.get("fact_id") is not None:
                    facts.append(fact)
                    continue
            else:
                raise InvalidInputError(
                    f"add_many items are facts, strings or mappings, not {type(item).__name__}"
                )
            fact = fact.model_copy(update={"id": statement_id(self.project_id, _statement(fact))})
            derived.add(fact.id)
            facts.append(fact)
        if not facts:
            return facts
        seen: set[str] = set()
        for fact in facts:
            if fact.id in seen and fact.id not in derived:
                raise FactConflictError(fact.id)
            seen.add(fact.id)
        stored: dict[str, Fact] = {}
        for start in range(0, len(facts), _WRITE_BATCH):
            ids = [fact.id for fact in facts[start : start + _WRITE_BATCH]]
            for taken in await self._access.get_many(ids):
                if taken.id not in derived:
                    raise FactConflictError(taken.id)
                stored[taken.id] = taken
        # A statement added again is the stored fact while it holds; once it no longer does
        # (superseded, merged, archived), it is said anew and stored as a new fact.
        again = {
            i for i, f in stored.items() if f.status in (FactStatus.ACTIVE, FactStatus.FLAGGED)
        }
        returned: builtins.list[Fact] = []
        new: dict[str, Fact] = {}
        for fact in facts:
            if fact.id in again:
                returned.append(stored[fact.id])
            elif fact.id in stored:
                returned.append(new.setdefault(fact.id, fact.model_copy(update={"id": new_id()})))
            else:
                returned.append(new.setdefault(fact.id, fact))
        facts = list(new.values())
        if not facts:
            return returned
        import numpy as np

        embedder = self._access.embedder
        parts = []
        with progress_bar(len(facts), "embedding facts", show=progress) as bar:
            for start in range(0, len(facts), _WRITE_BATCH):
                batch = [fact.content for fact in facts[start : start + _WRITE_BATCH]]
                parts.append(await embedder.embed_documents(batch))
                bar.advance(len(batch))
        vectors = parts[0] if len(parts) == 1 else np.concatenate(parts)
        added = lifecycle.Cause(actor, "engine.add")
        changes = [lifecycle.created(fact, added) for fact in facts]
        # One metadata batch: it lands whole or not at all (the store refuses, inside the
        # transaction, an id that another project sharing the store already holds).
        await self._access.commit(
            WriteBatch(self.project_id, upserts=facts, changes=changes),
            new=facts,
            vectors=vectors,
        )
        return returned

    async def add_document(
        self,
        text: str,
        *,
        document_id: str | None = None,
        max_chars: int = 800,
        overlap_sentences: int = 1,
        **fields: Unpack[FactFields],
    ) -> builtins.list[Fact]:
        """Ingest a plain text document as sentence-aligned chunks; returns the stored chunks.

        Each chunk is a fact of kind DOCUMENT whose provenance names the document and the chunk
        index, so search results can point back into the document.
        """
        if not isinstance(text, str) or not text.strip():
            raise InvalidInputError("a document must be non-empty text")
        document_id = validate_identifier(document_id or new_id(), "document_id")
        chunks = chunk_text(text, max_chars=max_chars, overlap_sentences=overlap_sentences)
        if "kind" in fields or "source" in fields:
            raise InvalidInputError("a document's chunks set their own kind and source")
        items = []
        for index, chunk in enumerate(chunks):
            chunk_fields: FactFields = {
                **fields,
                "kind": FactKind.DOCUMENT,
                "source": Provenance(role="document", document_id=document_id, chunk_index=index),
            }
            items.append(self._access.build_fact(chunk, **chunk_fields))
        return await self.add_many(items)

    # ------------------------------------------------------------------ reading

    def profile(self, *, user_id: str | None = None) -> Profile:
        """The standing profile of a user: instructions, stable preferences, identity facts.

        Without ``user_id``: the project's team rules. The bridge fills a profile from the
        user's own turns only (never from the assistant, a tool, a document or an import);
        :class:`~sagewai.context.Profile` reads it and edits it (``entries``, ``set``,
        ``remove``). ``UniversalAgent`` shows it in every turn. See ``docs/profile.md``.

        Raises:
            InvalidInputError: a bad ``user_id``.
        """
        from sagewai.context._profile import Profile

        return Profile(self._access, user_id=user_id)

    async def get(self, fact_id: str) -> Fact:
        """The fact with this id in this project (or an ORG-scope fact of its organisation).

        Raises:
            FactNotFoundError: no such fact here (including facts of other projects).
        """
        validate_identifier(fact_id, "fact_id")
        found = await self._access.get_many([fact_id])
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
        address = self._access.address(scope, user_id=user_id, session_id=session_id)
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
        return await self._access.find(query)

    async def get_all(
        self,
        *,
        scope: ContextScope | str | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        subject: str | None = None,
        statuses: Sequence[FactStatus | str] | None = SEARCHABLE,
        fact_types: Sequence[FactType | str] | None = None,
        tags: Sequence[str] | None = None,
        kinds: Sequence[FactKind | str] | None = None,
        page_size: int = 1_000,
    ) -> builtins.list[Fact]:
        """Every fact readable at a scope, oldest first, in one call (read ``page_size`` at a
        time): all memories of a user with ``get_all(user_id=...)``.

        The filters are those of :meth:`list`; for a very large scope, page with :meth:`list`
        and ``after`` instead of holding everything at once.

        Example:
            >>> import asyncio
            >>> from sagewai.testing import FakeEmbedder
            >>> async def demo() -> int:
            ...     ctx = ContextEngine.in_memory(embedder=FakeEmbedder())
            ...     await ctx.add_many([{"content": f"note {i}", "user_id": "bob"} for i in "abc"])
            ...     return len(await ctx.get_all(user_id="bob", page_size=2))
            >>> asyncio.run(demo())
            3
        """
        found: builtins.list[Fact] = []
        after: tuple[datetime, str] | None = None
        while True:
            page = await self.list(
                scope=scope,
                user_id=user_id,
                session_id=session_id,
                subject=subject,
                statuses=statuses,
                fact_types=fact_types,
                tags=tags,
                kinds=kinds,
                limit=page_size,
                after=after,
            )
            found.extend(page)
            if len(page) < page_size:
                return found
            after = (page[-1].created_at, page[-1].id)

    async def count(
        self,
        *,
        statuses: Sequence[FactStatus | str] | None = None,
        kinds: Sequence[FactKind | str] | None = None,
    ) -> int:
        """How many records this project holds (of these statuses and kinds; all by default)."""
        return await self._access.count_matching(
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
        request = SearchRequest.of(
            self._access,
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
            config=search_config or self._searcher.config,
        )
        return await self._searcher.search(request)

    async def history(self, fact_id: str) -> builtins.list[FactChange]:
        """Every recorded change of this fact, oldest first (a tombstone after deletion)."""
        validate_identifier(fact_id, "fact_id")
        return await self._access.changes(ChangeQuery(project_id=self.project_id, fact_id=fact_id))

    async def changes(
        self, *, since: datetime | None = None, run_id: str | None = None, limit: int | None = None
    ) -> builtins.list[FactChange]:
        """The project's audit log, oldest first."""
        return await self._access.changes(
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
        await self._access.commit(
            WriteBatch(self.project_id, upserts=[step.fact], changes=[step.change])
        )
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
        **fields: Unpack[FactFields],
    ) -> Fact:
        """Replace a fact by a new one: the old keeps its text and gets its validity closed.

        The old fact stays retrievable with ``search(..., as_of=<a time before now>)``.
        Fields not given (type, subject, scope, tags, ...) are taken from the old fact.
        """
        old = await self.get(old_fact_id)
        at = at or utcnow()
        inherited: FactFields = {
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
        new = self._access.build_fact(new_content, **inherited)
        cause = lifecycle.Cause(actor, rule, reason, at=at)
        closed = lifecycle.supersede(old, cause, successor_id=new.id, ends=at)
        created = lifecycle.created(new, cause, related=(old.id,))
        await self._access.commit(
            WriteBatch(
                self.project_id, upserts=[closed.fact, new], changes=[created, closed.change]
            ),
            new=[new],
        )
        return new

    async def revert(self, change_id: str, *, reason: str = "reverted by user") -> Fact:
        """Undo one recorded change by restoring the fields it changed.

        A change whose fields already hold their old values (it was reverted before) is left
        as it is: nothing is written and no second restore is recorded.

        Raises:
            FactNotFoundError: the change's fact no longer exists (it was deleted).
            InvalidInputError: the change has nothing to undo (a creation or a deletion).
        """
        matching = [c for c in await self.changes() if c.id == change_id]
        if not matching:
            raise InvalidInputError(f"no change with id {change_id!r} in this project")
        change = matching[0]
        if change.before is None:
            raise InvalidInputError(f"change {change_id} ({change.action}) cannot be reverted")
        fact = await self.get(change.fact_id)
        if lifecycle.snapshot(fact, change.before) == dict(change.before):
            return fact  # undone already: reverting it again changes and records nothing
        step = lifecycle.restore(
            fact,
            change.before,
            lifecycle.Cause("engine", "engine.revert", reason),
            related=change.related_fact_ids,
        )
        # A change of the text (a synthesis rewritten) gets its vector back with it.
        await self._access.commit(
            WriteBatch(self.project_id, upserts=[step.fact], changes=[step.change]),
            new=[step.fact] if "content" in change.before else (),
        )
        return step.fact

    async def delete(self, fact_id: str, *, reason: str = "deleted by user") -> None:
        """Delete one fact from every store; its history is replaced by a tombstone.

        Raises:
            FactNotFoundError: no such fact in this project.
        """
        fact = await self.get(fact_id)
        if fact.project_id != self.project_id:
            raise FactNotFoundError(fact_id)
        await self.delete_many([fact.id], reason=reason)

    async def delete_many(self, fact_ids: Sequence[str], *, reason: str = "deleted by user") -> int:
        """Delete records of this project by id, each leaving a content-free tombstone.

        Ids of no record of this project are skipped (unlike :meth:`delete`). The deletes land
        in atomic batches of a few hundred, vectors and long records' pieces with them;
        returns how many records were deleted.

        Raises:
            InvalidInputError: ``reason`` is not text.
        """
        return await delete_records(self._access, fact_ids, reason=reason, rule="engine.delete")

    async def forget(
        self,
        *,
        subject: str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        scope: ContextScope | str | None = None,
        everything: bool = False,
        reason: str = "forget requested",
        dry_run: bool = False,
    ) -> ForgetReport:
        """Forget completely, and return a receipt of what each store lost.

        Name what to forget: a ``subject`` (every record naming it as a word, case-insensitive:
        facts of every status, messages, context records and documents, its graph entities
        and relations, the episode turns and journal entries naming it, and its text in the
        audit rows of what is kept), a ``session_id``, a ``user_id``, facts stored at a
        ``scope``, or ``everything=True`` for the whole project. Criteria combine with AND in
        every store. Deleted records leave content-free tombstones in the audit log: it keeps
        that something was forgotten, when and by whom, never the forgotten text.

        Args:
            dry_run: Change nothing and return the receipt a real run would return.

        Raises:
            InvalidInputError: nothing was named, a flag is not a bool, a bad value.
            ScopeError: an unknown scope.

        Example:
            >>> import asyncio
            >>> from sagewai.testing import FakeEmbedder
            >>> async def demo() -> tuple[int, int]:
            ...     async with ContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
            ...         await ctx.add("The user works at Initech with Bob.")
            ...         await ctx.add("Bobby plays chess.")
            ...         preview = await ctx.forget(subject="bob", dry_run=True)
            ...         done = await ctx.forget(subject="bob")
            ...         assert preview == done
            ...         return done.facts, len(await ctx.search("Bob chess"))
            >>> asyncio.run(demo())
            (1, 1)
        """
        from sagewai.context._forgetting import checked_subject, forget_everything, forget_matching

        everything = check_flag(everything, "everything")
        dry_run = check_flag(dry_run, "dry_run")
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
        if everything:
            return await forget_everything(self._access, dry_run=dry_run)
        return await forget_matching(
            self._access,
            subject=subject,
            session_id=session_id,
            user_id=user_id,
            scope=level,
            reason=reason,
            dry_run=dry_run,
        )
