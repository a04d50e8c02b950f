"""From a store location on a command line to the stores behind it.

The one resolver of ``--store`` / ``--vectors`` strings (STYLE rule 4): an embedded folder, or a
PostgreSQL URL plus a vector store. ``sagewai serve``, ``sagewai keys``, ``sagewai projects`` and
the other commands (through ``open_engine``) all read a location here, so a location means the
same store everywhere.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagewai.errors import ConfigurationError
from sagewai.server._state import (
    STATE_FILENAME,
    PostgresServerState,
    ServerState,
    SqliteServerState,
)

if TYPE_CHECKING:
    from sagewai.context import ProjectStores
    from sagewai.core import Embedder

__all__ = ["DEFAULT_SCHEMA", "is_postgres", "open_state", "open_stores"]

DEFAULT_SCHEMA = "sagewai"
"""The PostgreSQL schema the stores use unless told otherwise."""


def is_postgres(location: str) -> bool:
    """Whether ``location`` names a PostgreSQL database (else it is an embedded folder).

    Raises:
        ConfigurationError: a URL of another kind (``mysql://...``).

    Example:
        >>> is_postgres("postgresql://db/memory"), is_postgres("./sagewai-data")
        (True, False)
    """
    if "://" not in location:
        return False
    if location.startswith(("postgresql://", "postgres://")):
        return True
    raise ConfigurationError(
        f"unsupported --store {location.split('://', 1)[0]}://...; use a folder or postgresql://"
    )


def _folder(location: str, *, create: bool) -> Path:
    path = Path(location)
    if path.exists() and not path.is_dir():
        raise ConfigurationError(f"--store {location} is a file; give the store's folder")
    if not path.exists():
        if not create:
            raise ConfigurationError(
                f"no embedded store at {location}; give --store the folder an engine wrote"
            )
        path.mkdir(parents=True)
    return path


def open_stores(
    location: str,
    *,
    vectors: str | None = None,
    schema: str = DEFAULT_SCHEMA,
    embedder: Embedder | None = None,
    create: bool = False,
) -> ProjectStores:
    """The stores at ``location``: an embedded folder, or PostgreSQL plus a vector store.

    Nothing is opened. With PostgreSQL, ``vectors`` is an ``http(s)://`` Qdrant URL,
    ``pgvector`` (pgvector in the same database) or ``pgvector:postgresql://...``, or a Qdrant
    edge folder (default: ``$SAGEWAI_VECTORS``, else ``./sagewai-vectors``).

    Args:
        location: A folder, or ``postgresql://...``.
        vectors: With PostgreSQL: where the vectors live.
        schema: With PostgreSQL: the schema of the metadata (and pgvector) tables.
        embedder: The embedder (default: MiniLM, offline).
        create: Make the folder when it does not exist (else that is an error).

    Raises:
        ConfigurationError: not a folder nor a PostgreSQL URL, a file, or a missing folder.
    """
    from sagewai.context import ProjectStores

    if not is_postgres(location):
        return ProjectStores.local(_folder(location, create=create), embedder=embedder)
    from sagewai.embeddings import MiniLMEmbedder
    from sagewai.stores import (
        PgVectorStore,
        PostgresMetadataStore,
        QdrantEdgeVectorStore,
        QdrantVectorStore,
    )

    embedder = embedder or MiniLMEmbedder()
    target = vectors or os.environ.get("SAGEWAI_VECTORS") or "./sagewai-vectors"
    vector_store: Any
    if target.startswith(("http://", "https://")):
        vector_store = QdrantVectorStore(url=target, dimension=embedder.dimension)
    elif target == "pgvector" or target.startswith("pgvector:"):
        # "pgvector" alone: the vectors live in the same PostgreSQL database as the facts.
        vector_store = PgVectorStore(
            target.partition(":")[2] or location, dimension=embedder.dimension, schema=schema
        )
    else:
        vector_store = QdrantEdgeVectorStore(target, dimension=embedder.dimension)
    return ProjectStores(
        metadata=PostgresMetadataStore(location, schema=schema),
        vectors=vector_store,
        embedder=embedder,
    )


def open_state(location: str, *, schema: str = DEFAULT_SCHEMA, create: bool = False) -> ServerState:
    """Where the server's keys and runs live for the store at ``location`` (not yet opened).

    Raises:
        ConfigurationError: as :func:`open_stores`.
    """
    if is_postgres(location):
        return PostgresServerState(location, schema=schema)
    return SqliteServerState(_folder(location, create=create) / STATE_FILENAME)
