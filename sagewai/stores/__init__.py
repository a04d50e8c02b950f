"""Every storage backend and the contracts they implement, in one place.

Wire your own engine from these names; each class is imported on first use, so an optional
backend's driver (``asyncpg``, ``qdrant-client``, ``nebula3-python``) is needed only when that
backend is used, and a missing one fails with the exact ``pip install "sagewai[...]"`` to run.

* vector (:class:`VectorStore`): :class:`InMemoryVectorStore`, :class:`QdrantEdgeVectorStore`,
  :class:`QdrantVectorStore`, :class:`PgVectorStore`;
* metadata (:class:`MetadataStore`): :class:`InMemoryMetadataStore`,
  :class:`SqliteMetadataStore`, :class:`PostgresMetadataStore`;
* graph (:class:`GraphMemory`): :class:`InMemoryGraphStore`, :class:`SqliteGraphStore`,
  :class:`NebulaGraphStore`;
* episodes (:class:`EpisodeStoreBase`): :class:`InMemoryEpisodeStore`,
  :class:`SqliteEpisodeStore`, :class:`PostgresEpisodeStore`.

Inside, the package holds backends only, grouped by technology: ``base`` (the four contracts and
their query and record types), ``memory``, ``sqlite`` (one plumbing module for its three stores),
``postgres`` (one pool module for its three stores), ``qdrant`` and ``nebula``. Every backend
passes the conformance suite of its contract (:mod:`sagewai.testing.conformance`).

Example:
    >>> import asyncio
    >>> from sagewai import ContextEngine
    >>> from sagewai.stores import InMemoryMetadataStore, InMemoryVectorStore
    >>> from sagewai.testing import FakeEmbedder
    >>> async def demo() -> int:
    ...     embedder = FakeEmbedder()
    ...     ctx = ContextEngine(metadata_store=InMemoryMetadataStore(),
    ...                         vector_store=InMemoryVectorStore(embedder.dimension),
    ...                         project_id="demo", embedder=embedder)
    ...     async with ctx:
    ...         await ctx.add("Alice prefers green tea")
    ...         return await ctx.count()
    >>> asyncio.run(demo())
    1
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.stores._project import ProjectStores
    from sagewai.stores._resolve import resolve_stores
    from sagewai.stores.base import EpisodeStoreBase, GraphMemory, MetadataStore, VectorStore
    from sagewai.stores.memory import (
        InMemoryEpisodeStore,
        InMemoryGraphStore,
        InMemoryMetadataStore,
        InMemoryVectorStore,
    )
    from sagewai.stores.nebula import NebulaGraphStore
    from sagewai.stores.postgres import PgVectorStore, PostgresEpisodeStore, PostgresMetadataStore
    from sagewai.stores.qdrant import QdrantEdgeVectorStore, QdrantVectorStore
    from sagewai.stores.sqlite import SqliteEpisodeStore, SqliteGraphStore, SqliteMetadataStore

__all__ = [
    "EpisodeStoreBase",
    "GraphMemory",
    "InMemoryEpisodeStore",
    "InMemoryGraphStore",
    "InMemoryMetadataStore",
    "InMemoryVectorStore",
    "MetadataStore",
    "NebulaGraphStore",
    "PgVectorStore",
    "PostgresEpisodeStore",
    "PostgresMetadataStore",
    "ProjectStores",
    "QdrantEdgeVectorStore",
    "QdrantVectorStore",
    "SqliteEpisodeStore",
    "SqliteGraphStore",
    "SqliteMetadataStore",
    "VectorStore",
    "resolve_stores",
]

_LAZY = {
    "EpisodeStoreBase": "sagewai.stores.base._episodes",
    "GraphMemory": "sagewai.stores.base._graph",
    "MetadataStore": "sagewai.stores.base._metadata",
    "VectorStore": "sagewai.stores.base._vector",
    "InMemoryEpisodeStore": "sagewai.stores.memory._episodes",
    "InMemoryGraphStore": "sagewai.stores.memory._graph",
    "InMemoryMetadataStore": "sagewai.stores.memory._metadata",
    "InMemoryVectorStore": "sagewai.stores.memory._vector",
    "NebulaGraphStore": "sagewai.stores.nebula._graph",
    "PgVectorStore": "sagewai.stores.postgres._pgvector",
    "PostgresEpisodeStore": "sagewai.stores.postgres._episodes",
    "PostgresMetadataStore": "sagewai.stores.postgres._metadata",
    "ProjectStores": "sagewai.stores._project",
    "resolve_stores": "sagewai.stores._resolve",
    "QdrantEdgeVectorStore": "sagewai.stores.qdrant._edge",
    "QdrantVectorStore": "sagewai.stores.qdrant._server",
    "SqliteEpisodeStore": "sagewai.stores.sqlite._episodes",
    "SqliteGraphStore": "sagewai.stores.sqlite._graph",
    "SqliteMetadataStore": "sagewai.stores.sqlite._metadata",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
