"""The PostgreSQL backends through asyncpg: metadata, episodes and pgvector vectors in one database.

All three share one pool module (:mod:`sagewai.stores.postgres._pool`): pool creation, driver
error translation (never a password in a message) and versioned migrations from SQL files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.stores.postgres._episodes import PersistentEpisodeStore, PostgresEpisodeStore
    from sagewai.stores.postgres._metadata import PostgresMetadataStore
    from sagewai.stores.postgres._pgvector import PgVectorStore

__all__ = [
    "PersistentEpisodeStore",
    "PgVectorStore",
    "PostgresEpisodeStore",
    "PostgresMetadataStore",
]

_LAZY = {
    "PostgresMetadataStore": "sagewai.stores.postgres._metadata",
    "PostgresEpisodeStore": "sagewai.stores.postgres._episodes",
    "PersistentEpisodeStore": "sagewai.stores.postgres._episodes",
    "PgVectorStore": "sagewai.stores.postgres._pgvector",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
