"""Every storage backend and the contracts they implement, in one place.

Wire your own engine from these names; each class is imported on first use, so an optional
backend's driver (``asyncpg``, ``qdrant-client``, ``nebula3-python``) is needed only when that
backend is used, and a missing one fails with the exact ``pip install "sagewai[...]"`` to run.

* vector (:class:`VectorStore`): :class:`InMemoryVectorStore`, :class:`SqliteVectorStore` (the
  embedded folder's, shared by every process), :class:`QdrantEdgeVectorStore`,
  :class:`QdrantVectorStore`, :class:`PgVectorStore`;
* metadata (:class:`MetadataStore`): :class:`InMemoryMetadataStore`,
  :class:`SqliteMetadataStore`, :class:`PostgresMetadataStore`;
* graph (:class:`GraphStore`, the seed's ``GraphMemory``): :class:`InMemoryGraphStore`,
  :class:`SqliteGraphStore`, :class:`NebulaGraphStore`;
* episodes (:class:`EpisodeStoreBase`; ``EpisodeStore`` is the seed's name of the in-memory one,
  in :mod:`sagewai.context.episodes`): :class:`InMemoryEpisodeStore`, :class:`SqliteEpisodeStore`,
  :class:`PostgresEpisodeStore`;
* the set an engine runs on (:class:`ProjectStores`: everything in memory, or in one folder) and
  :func:`resolve_stores`, the one reader of a ``--store`` string.

Inside, the package holds backends only, grouped by technology: ``base`` (the four contracts),
``memory``, ``sqlite``, ``postgres``, ``qdrant`` and ``nebula``; import them from here. Every
backend passes the conformance suite of its contract (:mod:`sagewai.testing.conformance`).

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
    from sagewai.core._graph_records import GraphWrite
    from sagewai.stores._project import ProjectStores
    from sagewai.stores._resolve import resolve_stores
    from sagewai.stores.base._episodes import EpisodeStoreBase
    from sagewai.stores.base._graph import GraphMemory, GraphStore, ProjectGraph
    from sagewai.stores.base._metadata import BatchWriter, MetadataStore
    from sagewai.stores.base._vector import ProjectVectorStore, VectorStore
    from sagewai.stores.memory._episodes import InMemoryEpisodeStore
    from sagewai.stores.memory._graph import InMemoryGraphStore
    from sagewai.stores.memory._metadata import InMemoryMetadataStore
    from sagewai.stores.memory._vector import InMemoryVectorStore
    from sagewai.stores.nebula._graph import NebulaGraphStore
    from sagewai.stores.postgres._episodes import PostgresEpisodeStore
    from sagewai.stores.postgres._metadata import PostgresMetadataStore
    from sagewai.stores.postgres._pgvector import PgVectorStore
    from sagewai.stores.qdrant._edge import QdrantEdgeVectorStore
    from sagewai.stores.qdrant._server import QdrantVectorStore
    from sagewai.stores.sqlite._episodes import SqliteEpisodeStore
    from sagewai.stores.sqlite._graph import SqliteGraphStore
    from sagewai.stores.sqlite._metadata import SqliteMetadataStore
    from sagewai.stores.sqlite._vectors import SqliteVectorStore

__all__ = [
    "BatchWriter",
    "EpisodeStoreBase",
    "GraphMemory",
    "GraphStore",
    "GraphWrite",
    "InMemoryEpisodeStore",
    "InMemoryGraphStore",
    "InMemoryMetadataStore",
    "InMemoryVectorStore",
    "MetadataStore",
    "NebulaGraphStore",
    "PgVectorStore",
    "PostgresEpisodeStore",
    "PostgresMetadataStore",
    "ProjectGraph",
    "ProjectStores",
    "ProjectVectorStore",
    "QdrantEdgeVectorStore",
    "QdrantVectorStore",
    "SqliteEpisodeStore",
    "SqliteGraphStore",
    "SqliteMetadataStore",
    "SqliteVectorStore",
    "VectorStore",
    "resolve_stores",
]

_LAZY = {
    "BatchWriter": "sagewai.stores.base._metadata",
    "EpisodeStoreBase": "sagewai.stores.base._episodes",
    "GraphMemory": "sagewai.stores.base._graph",
    "GraphStore": "sagewai.stores.base._graph",
    "GraphWrite": "sagewai.core._graph_records",
    "InMemoryEpisodeStore": "sagewai.stores.memory._episodes",
    "InMemoryGraphStore": "sagewai.stores.memory._graph",
    "InMemoryMetadataStore": "sagewai.stores.memory._metadata",
    "InMemoryVectorStore": "sagewai.stores.memory._vector",
    "MetadataStore": "sagewai.stores.base._metadata",
    "NebulaGraphStore": "sagewai.stores.nebula._graph",
    "PgVectorStore": "sagewai.stores.postgres._pgvector",
    "PostgresEpisodeStore": "sagewai.stores.postgres._episodes",
    "PostgresMetadataStore": "sagewai.stores.postgres._metadata",
    "ProjectGraph": "sagewai.stores.base._graph",
    "ProjectStores": "sagewai.stores._project",
    "ProjectVectorStore": "sagewai.stores.base._vector",
    "QdrantEdgeVectorStore": "sagewai.stores.qdrant._edge",
    "QdrantVectorStore": "sagewai.stores.qdrant._server",
    "SqliteEpisodeStore": "sagewai.stores.sqlite._episodes",
    "SqliteGraphStore": "sagewai.stores.sqlite._graph",
    "SqliteMetadataStore": "sagewai.stores.sqlite._metadata",
    "SqliteVectorStore": "sagewai.stores.sqlite._vectors",
    "VectorStore": "sagewai.stores.base._vector",
    "resolve_stores": "sagewai.stores._resolve",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
