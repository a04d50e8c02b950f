"""Every storage backend and the contracts they implement, in one place.

Wire your own engine from these names; each class is imported on first use, so an optional
backend's driver (``asyncpg``, ``qdrant-client``, ``nebula3-python``) is needed only when that
backend is used, and a missing one fails with the exact ``pip install "sagewai[...]"`` to run.

* vector (:class:`VectorStore`): :class:`InMemoryVectorStore`, :class:`QdrantEdgeVectorStore`,
  :class:`QdrantVectorStore`;
* metadata (:class:`MetadataStore`): :class:`InMemoryMetadataStore`,
  :class:`SqliteMetadataStore`, :class:`PostgresMetadataStore`;
* graph (:class:`GraphMemory`): :class:`InMemoryGraphStore`, :class:`SqliteGraphStore`,
  :class:`NebulaGraphStore`;
* episodes (:class:`EpisodeStoreBase`): :class:`InMemoryEpisodeStore`,
  :class:`SqliteEpisodeStore`, :class:`PostgresEpisodeStore`.

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
    from sagewai.context.episodes import (
        EpisodeStoreBase,
        InMemoryEpisodeStore,
        PostgresEpisodeStore,
        SqliteEpisodeStore,
    )
    from sagewai.graph import (
        GraphMemory,
        InMemoryGraphStore,
        NebulaGraphStore,
        SqliteGraphStore,
    )
    from sagewai.stores.memory_metadata import InMemoryMetadataStore
    from sagewai.stores.memory_vector import InMemoryVectorStore
    from sagewai.stores.metadata import MetadataStore
    from sagewai.stores.postgres import PostgresMetadataStore
    from sagewai.stores.qdrant import QdrantVectorStore
    from sagewai.stores.qdrant_edge import QdrantEdgeVectorStore
    from sagewai.stores.sqlite import SqliteMetadataStore
    from sagewai.stores.vector import VectorStore

__all__ = [
    "EpisodeStoreBase",
    "GraphMemory",
    "InMemoryEpisodeStore",
    "InMemoryGraphStore",
    "InMemoryMetadataStore",
    "InMemoryVectorStore",
    "MetadataStore",
    "NebulaGraphStore",
    "PostgresEpisodeStore",
    "PostgresMetadataStore",
    "QdrantEdgeVectorStore",
    "QdrantVectorStore",
    "SqliteEpisodeStore",
    "SqliteGraphStore",
    "SqliteMetadataStore",
    "VectorStore",
]

_LAZY = {
    "EpisodeStoreBase": "sagewai.context.episodes",
    "InMemoryEpisodeStore": "sagewai.context.episodes",
    "PostgresEpisodeStore": "sagewai.context.episodes",
    "SqliteEpisodeStore": "sagewai.context.episodes",
    "GraphMemory": "sagewai.graph",
    "InMemoryGraphStore": "sagewai.graph",
    "NebulaGraphStore": "sagewai.graph",
    "SqliteGraphStore": "sagewai.graph",
    "InMemoryMetadataStore": "sagewai.stores.memory_metadata",
    "InMemoryVectorStore": "sagewai.stores.memory_vector",
    "MetadataStore": "sagewai.stores.metadata",
    "PostgresMetadataStore": "sagewai.stores.postgres",
    "QdrantVectorStore": "sagewai.stores.qdrant",
    "QdrantEdgeVectorStore": "sagewai.stores.qdrant_edge",
    "SqliteMetadataStore": "sagewai.stores.sqlite",
    "VectorStore": "sagewai.stores.vector",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
