"""ProjectStores: the typed set of stores a project's knowledge lives in.

Why one object: an engine, a second engine on the same stores (another project in the same
folder, the MCP server serving several projects) and a CLI command that migrates them all need
the same five things, and each of them used to be wired by hand. A :class:`ProjectStores` names
them once, with the contract each one implements, and builds the two usual sets: everything in
memory, or everything in one folder.

Stores are shared, not owned per project: the metadata, graph and episode stores take a project
id on every call, and :class:`~sagewai.context._engine.ContextEngine` reads the vector store
through a project view. One ``ProjectStores`` may back engines of several projects.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sagewai.errors import InvalidInputError

if TYPE_CHECKING:
    from sagewai.core._embedder import Embedder
    from sagewai.stores.base._episodes import EpisodeStoreBase
    from sagewai.stores.base._graph import GraphStore
    from sagewai.stores.base._metadata import MetadataStore
    from sagewai.stores.base._vector import VectorStore

__all__ = ["ProjectStores"]


def _default_embedder(embedder: Embedder | None) -> Embedder:
    if embedder is not None:
        return embedder
    from sagewai.embeddings._minilm import MiniLMEmbedder

    return MiniLMEmbedder()


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectStores:
    """The stores behind an engine: metadata (the truth), vectors (the index), graph, episodes.

    Build one with :meth:`in_memory` or :meth:`local`, or name your own backends (any class of
    :mod:`sagewai.stores`), and hand it to ``ContextEngine(stores=..., project_id=...)``.

    Args:
        metadata: The source of truth: facts and their audit log.
        vectors: The dense index; its dimension must be the embedder's.
        graph: The knowledge graph (``None``: no graph; ``forget`` and graph search skip it).
        episodes: Whole saved sessions (``None``: no episodes).
        embedder: Turns text into the vectors the index holds.
        folder: The folder of an embedded set (:meth:`local`): its manifest is checked on open,
            an older folder is upgraded once, and a :class:`~sagewai.context.MemoryBridge`
            keeps its write-ahead journal there. ``None`` for any other set.

    Raises:
        InvalidInputError: the embedder's dimension is not the vector store's.

    Example:
        >>> import asyncio
        >>> from sagewai import ContextEngine
        >>> from sagewai.stores import ProjectStores
        >>> from sagewai.testing import FakeEmbedder
        >>> stores = ProjectStores.in_memory(embedder=FakeEmbedder())
        >>> async def demo() -> list[int]:
        ...     alpha = ContextEngine(stores=stores, project_id="alpha")
        ...     beta = ContextEngine(stores=stores, project_id="beta")
        ...     await alpha.add("Alice prefers green tea")
        ...     return [await alpha.count(), await beta.count()]
        >>> asyncio.run(demo())
        [1, 0]
    """

    metadata: MetadataStore
    vectors: VectorStore
    graph: GraphStore | None = None
    episodes: EpisodeStoreBase | None = None
    embedder: Embedder
    folder: Path | None = None

    def __post_init__(self) -> None:
        if self.embedder.dimension != self.vectors.dimension:
            raise InvalidInputError(
                f"the embedder makes {self.embedder.dimension}-d vectors but the vector store "
                f"holds {self.vectors.dimension}-d vectors"
            )

    @property
    def persistent(self) -> bool:
        """Whether the facts outlive the process (the metadata store is not in memory): what
        tells a bridge that a recorded message is durable without a journal."""
        return self.metadata.persistent

    @classmethod
    def in_memory(cls, *, embedder: Embedder | None = None) -> ProjectStores:
        """Metadata, vectors and a graph in memory: nothing persists; for tests and demos.

        No episode store: pass one to ``UniversalAgent(episode_store=...)`` or
        ``ContextEngine(episode_store=...)`` when sessions should be kept.
        """
        from sagewai.stores.memory._graph import InMemoryGraphStore
        from sagewai.stores.memory._metadata import InMemoryMetadataStore
        from sagewai.stores.memory._vector import InMemoryVectorStore

        embedder = _default_embedder(embedder)
        return cls(
            metadata=InMemoryMetadataStore(),
            vectors=InMemoryVectorStore(embedder.dimension),
            graph=InMemoryGraphStore(),
            embedder=embedder,
        )

    @classmethod
    def local(cls, path: str | Path, *, embedder: Embedder | None = None) -> ProjectStores:
        """The embedded default: every store in one folder, no server, no API key.

        The folder holds ``metadata.sqlite3`` (facts and history), ``vectors.sqlite3`` (the
        dense index), ``graph.sqlite3`` (the knowledge graph) and ``episodes.sqlite3`` (whole
        sessions); see :mod:`sagewai.stores._local`. Every process on the machine may open the
        folder at once. A folder made before ``vectors.sqlite3`` keeps its vectors in Qdrant's
        embedded engine (``vectors/``, one process at a time) until migrated. Nothing is opened
        or created by this call: the folder is made on first open, and reopening it finds
        everything again.
        """
        from sagewai.stores._local import LocalLayout
        from sagewai.stores.sqlite._episodes import SqliteEpisodeStore
        from sagewai.stores.sqlite._graph import SqliteGraphStore
        from sagewai.stores.sqlite._metadata import SqliteMetadataStore

        layout = LocalLayout(Path(path))
        embedder = _default_embedder(embedder)
        vectors: VectorStore
        if layout.vector_backend() == "qdrant-edge":
            from sagewai.stores.qdrant._edge import QdrantEdgeVectorStore

            vectors = QdrantEdgeVectorStore(layout.vector_path, dimension=embedder.dimension)
        else:
            from sagewai.stores.sqlite._vectors import SqliteVectorStore

            vectors = SqliteVectorStore(layout.vector_file, dimension=embedder.dimension)
        return cls(
            metadata=SqliteMetadataStore(layout.metadata_path),
            vectors=vectors,
            graph=SqliteGraphStore(layout.graph_path),
            episodes=SqliteEpisodeStore(layout.episodes_path, embedder=embedder),
            embedder=embedder,
            folder=layout.root,
        )

    async def open(self) -> None:
        """Open the metadata, vector and graph stores (episode stores open on first use).

        A folder's manifest is checked first (a folder written with another embedder is
        refused before anything opens) and an older folder is upgraded once they are open.

        Raises:
            ConfigurationError: the folder was written with another embedder or dimension.
        """
        from sagewai.stores._local import LocalLayout

        layout = None if self.folder is None else LocalLayout(self.folder)
        if layout is not None:
            await asyncio.to_thread(layout.check_manifest, self.embedder)
        await self.metadata.open()
        await self.vectors.open()
        if self.graph is not None:
            await self.graph.open()
        if layout is not None:
            await layout.upgrade(self.metadata, self.vectors)

    async def close(self) -> None:
        """Close every store, the episode store included. Safe to call more than once."""
        if self.graph is not None:
            await self.graph.close()
        if self.episodes is not None:
            await self.episodes.close()
        await self.vectors.close()
        await self.metadata.close()

    async def migrate(self) -> list[str]:
        """Create or upgrade the tables of the metadata and episode stores; the steps applied.

        Idempotent: a store already up to date applies nothing and keeps its data. Embedded
        stores migrate on open by themselves; PostgreSQL stores need this once per database.
        """
        applied = await self.metadata.migrate()
        if self.episodes is not None:
            applied += await self.episodes.migrate()
        return applied

    async def project_ids(self) -> list[str]:
        """Every project holding at least one record in these stores, sorted (the metadata
        store is the truth); what a server serving these stores lists. Open the stores first.

        Example:
            >>> import asyncio
            >>> from sagewai import ContextEngine
            >>> from sagewai.testing import FakeEmbedder
            >>> stores = ProjectStores.in_memory(embedder=FakeEmbedder())
            >>> async def demo() -> list[str]:
            ...     for project in ("beta", "alpha"):
            ...         await ContextEngine(stores=stores, project_id=project).add("a note")
            ...     return await stores.project_ids()
            >>> asyncio.run(demo())
            ['alpha', 'beta']
        """
        return await self.metadata.project_ids()
