"""Stores named by a string: where a command line's ``--store`` and ``--vectors`` become stores.

Why one function: every command that opens a user's memory (``sagewai consolidate``, ``facts``,
``search``, ``mcp``, ``export``, ``import``, ``migrate``) takes the same two options, and each must
read them the same way. STYLE rule 4: a short string is accepted only through one explicit resolver
with lazy imports, so a PostgreSQL driver is loaded only when a ``postgresql://`` store is named.

* ``--store`` is an embedded folder (``ContextEngine.local``'s) or a ``postgresql://`` URL;
* with PostgreSQL, ``--vectors`` is an ``http(s)://`` Qdrant URL, ``pgvector`` (pgvector in the
  ``--store`` database) or ``pgvector:postgresql://...``, a ``.sqlite3`` file
  (:class:`~sagewai.stores.sqlite._vectors.SqliteVectorStore`, which several processes share),
  or a Qdrant edge folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sagewai.errors import ConfigurationError

if TYPE_CHECKING:
    from sagewai.core._embedder import Embedder
    from sagewai.stores._project import ProjectStores
    from sagewai.stores.base._vector import VectorStore

__all__ = ["DEFAULT_VECTORS", "resolve_stores"]

DEFAULT_VECTORS = "./sagewai-vectors"
"""The Qdrant edge folder a PostgreSQL store's vectors go to when no ``vectors`` is named."""


def resolve_stores(
    store: str,
    *,
    vectors: str | None = None,
    embedder: Embedder | None = None,
    must_exist: bool = True,
    schema: str = "sagewai",
) -> ProjectStores:
    """The stores a ``--store`` (and, with PostgreSQL, ``--vectors``) string names.

    Args:
        store: An embedded folder path, or a ``postgresql://`` URL for the metadata store.
        vectors: With PostgreSQL: where the vectors are (see the module); ``None`` is
            :data:`DEFAULT_VECTORS`. Ignored for a folder (the folder holds its vectors).
        embedder: The embedder (MiniLM by default).
        must_exist: Refuse a folder that does not exist yet (every command but ``import``
            and ``serve`` reads a store an engine wrote).
        schema: With PostgreSQL: the schema of the metadata (and pgvector) tables, so one
            database can hold several separate memories.

    Raises:
        ConfigurationError: ``store`` is a file, a missing folder (with ``must_exist``), or a
            URL of another kind than PostgreSQL.

    Example:
        >>> import tempfile
        >>> from sagewai.testing import FakeEmbedder
        >>> stores = resolve_stores(tempfile.mkdtemp(), embedder=FakeEmbedder())
        >>> type(stores.metadata).__name__
        'SqliteMetadataStore'
    """
    from sagewai.stores._project import ProjectStores

    if "://" not in store:
        path = Path(store)
        if path.exists() and not path.is_dir():
            raise ConfigurationError(f"--store {store} is a file; give the store's folder")
        if must_exist and not path.exists():
            raise ConfigurationError(
                f"no embedded store at {store}; give --store the folder an engine wrote"
            )
        return ProjectStores.local(path, embedder=embedder)
    if not store.startswith(("postgresql://", "postgres://")):
        raise ConfigurationError(
            f"unsupported --store {store.split('://', 1)[0]}://...; use a folder or postgresql://"
        )
    from sagewai.embeddings._minilm import MiniLMEmbedder
    from sagewai.stores.postgres._metadata import PostgresMetadataStore

    embedder = embedder or MiniLMEmbedder()
    return ProjectStores(
        metadata=PostgresMetadataStore(store, schema=schema),
        vectors=_vector_store(vectors or DEFAULT_VECTORS, store, embedder.dimension, schema),
        embedder=embedder,
    )


def _vector_store(target: str, database: str, dimension: int, schema: str) -> VectorStore:
    if target.startswith(("http://", "https://")):
        from sagewai.stores.qdrant._server import QdrantVectorStore

        return QdrantVectorStore(url=target, dimension=dimension)
    if target == "pgvector" or target.startswith("pgvector:"):
        from sagewai.stores.postgres._pgvector import PgVectorStore

        # "pgvector" alone: the vectors live in the same PostgreSQL database as the facts.
        return PgVectorStore(
            target.partition(":")[2] or database, dimension=dimension, schema=schema
        )
    if target.endswith(".sqlite3"):
        from sagewai.stores.sqlite._vectors import SqliteVectorStore

        return SqliteVectorStore(target, dimension=dimension)
    from sagewai.stores.qdrant._edge import QdrantEdgeVectorStore

    return QdrantEdgeVectorStore(target, dimension=dimension)
