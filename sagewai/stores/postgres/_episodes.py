"""Episodes on PostgreSQL through asyncpg: the store for a deployment that outgrew one folder.

Full-text search uses a ``tsvector`` column (``simple`` configuration, GIN index) ranked with
``ts_rank``. PostgreSQL runs here without pgvector, so summary vectors are kept as ``real[]``
(float4) and cosine is computed in Python, with numpy, over the candidate set the base class
asks for (full-text hits plus the most recent episodes): one scorer for every backend keeps the
rankings congruent, and the candidate set is bounded, so only a few hundred vectors cross the wire.

The schema is created by an explicit :meth:`PersistentEpisodeStore.migrate` call (a deployment
step, like any database migration) from the SQL files in ``migrations/postgres_episodes``,
recorded in ``<schema>.episode_migrations``; the pool, error translation and migration runner
are the ones every PostgreSQL store shares (:mod:`sagewai.stores.postgres._pool`); operations on a
store that was never migrated fail with a :class:`~sagewai.errors.ConfigurationError` that says so.
Every value is a bound parameter; the schema name is validated and quoted before it is used.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import numpy as np

from sagewai.core._embedder import Embedder, Vector
from sagewai.core._episode_records import Episode, EpisodeFilter, episode_text
from sagewai.errors import ConfigurationError
from sagewai.stores.base._episodes import EpisodeStoreBase
from sagewai.stores.base._sql import equal_conditions
from sagewai.stores.base._summary import EpisodeSummarizer
from sagewai.stores.postgres._pool import PostgresPool, lock_key

__all__ = ["PersistentEpisodeStore", "PostgresEpisodeStore"]

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_COLUMNS = (
    "e.id, e.project_id, e.user_id, e.session_id, e.created_at, e.summary, e.messages, e.metadata"
)


def _conditions(where: EpisodeFilter, params: list[Any]) -> str:
    columns = ("project_id", "session_id", "user_id")
    return equal_conditions("e", [(c, getattr(where, c)) for c in columns], params, "$")


class PostgresEpisodeStore(EpisodeStoreBase):
    """Episodes in PostgreSQL (``pip install "sagewai[postgres]"``).

    Args:
        connection_string: ``postgresql://user@host:port/database``.
        schema: The schema holding the tables (created by :meth:`migrate`).
        embedder: Embeds summaries and queries (the offline MiniLM model when omitted).
        summarizer: Writes summaries (extractive when omitted).
        candidates: How many full-text hits and recent episodes a search scores.
        pool_size: Most connections the pool opens.

    Example:
        >>> async def demo(dsn: str) -> None:
        ...     store = PersistentEpisodeStore(connection_string=dsn, schema="sagewai")
        ...     await store.migrate()  # once, as a deployment step
        ...     episode_id = await store.save_episode("s1", ["We chose Lisbon"], project_id="p")
        ...     print(await store.search_episodes("Lisbon", project_id="p", limit=1))
        ...     await store.close()
    """

    def __init__(
        self,
        connection_string: str,
        schema: str = "sagewai",
        *,
        embedder: Embedder | None = None,
        summarizer: EpisodeSummarizer | None = None,
        candidates: int = 200,
        pool_size: int = 5,
    ) -> None:
        super().__init__(embedder=embedder, summarizer=summarizer, candidates=candidates)
        if not _SCHEMA_NAME.match(schema):
            raise ConfigurationError(
                f"schema {schema!r} must be a lower-case SQL identifier (letters, digits, _)"
            )
        if pool_size < 1:
            raise ConfigurationError("pool_size must be at least 1")
        self.schema = schema
        self._quoted = f'"{schema}"'
        self._migrations = f"{self._quoted}.episode_migrations"
        self._postgres = PostgresPool(
            connection_string,
            min_size=1,
            max_size=pool_size,
            feature="PersistentEpisodeStore",
            unmigrated=f"the episode tables of schema {schema!r}",
        )
        self._ready = False
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"PersistentEpisodeStore(schema={self.schema!r})"

    @property
    def is_open(self) -> bool:
        """True once connected to a migrated schema."""
        return self._ready

    # ------------------------------------------------------------------ connections & errors

    def _translated(self) -> AbstractAsyncContextManager[None]:
        return self._postgres.errors()

    async def _connect(self) -> Any:
        return await self._postgres.open()

    async def open(self) -> None:
        """Connect and check that the schema was migrated. Safe to call more than once.

        Raises:
            ConfigurationError: :meth:`migrate` was never run on this schema.
            BackendUnavailableError: PostgreSQL cannot be reached.
        """
        if self._ready:
            return
        async with self._lock:
            if self.is_open:  # checked by a concurrent caller while this one waited
                return
            await self._connect()
            missing = await self._postgres.missing_versions(self._migrations, "postgres_episodes")
            if missing:
                raise ConfigurationError(
                    f"schema {self.schema!r} lacks the episode migrations {', '.join(missing)}:"
                    " run `await store.migrate()` once before using the store"
                )
            self._ready = True

    async def close(self) -> None:
        """Close the connection pool. Safe to call more than once."""
        self._ready = False
        await self._postgres.close()

    async def migrate(self) -> list[str]:
        """Create or upgrade the schema; return the versions applied by this call.

        Pending migrations run in one transaction with the rows that record them, under an
        advisory lock, so concurrent callers apply each once.
        """
        applied = await self._postgres.migrate(
            lock=lock_key("sagewai.episodes.migrate", self.schema),
            schema=self._quoted,
            table=self._migrations,
            folder="postgres_episodes",
            render=lambda sql: sql.replace("__SCHEMA__", self._quoted),
        )
        self._ready = False
        await self.open()
        return applied

    async def _fetch(self, sql: str, *params: Any) -> list[Any]:
        pool = await self._connect()
        async with self._translated():
            return list(await pool.fetch(sql, *params))

    # ------------------------------------------------------------------ the core

    async def _put(self, episode: Episode, vector: Vector) -> None:
        pool = await self._connect()
        messages = json.dumps([m.model_dump(mode="json") for m in episode.messages])
        async with self._translated():
            await pool.execute(
                f"INSERT INTO {self._quoted}.episodes (id, project_id, user_id, session_id,"
                " created_at, summary, messages, metadata, vector, search)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, to_tsvector('simple', $10))"
                " ON CONFLICT (id) DO UPDATE SET project_id = excluded.project_id,"
                " user_id = excluded.user_id, session_id = excluded.session_id,"
                " summary = excluded.summary, messages = excluded.messages,"
                " metadata = excluded.metadata, vector = excluded.vector,"
                " search = excluded.search",
                episode.id,
                episode.project_id,
                episode.user_id,
                episode.session_id,
                episode.created_at,
                episode.summary,
                messages,
                json.dumps(episode.metadata, allow_nan=False),
                np.asarray(vector, dtype=np.float32).tolist(),
                episode_text(episode),
            )

    async def _load(self, ids: Sequence[str], where: EpisodeFilter) -> list[Episode]:
        if not ids:
            return []
        params: list[Any] = [list(ids)]
        condition = _conditions(where, params)
        rows = await self._fetch(
            f"SELECT {_COLUMNS} FROM {self._quoted}.episodes AS e"
            f" WHERE e.id = ANY($1::text[]) AND {condition}",
            *params,
        )
        return [
            Episode.model_validate(
                {
                    "id": row[0],
                    "project_id": row[1],
                    "user_id": row[2],
                    "session_id": row[3],
                    "created_at": row[4],
                    "summary": row[5],
                    "messages": json.loads(row[6]),
                    "metadata": json.loads(row[7]),
                }
            )
            for row in rows
        ]

    async def _keyword(
        self, terms: Sequence[str], where: EpisodeFilter, limit: int | None, require_all: bool
    ) -> list[tuple[str, float]]:
        if not terms:
            return []
        # The tsquery is assembled in SQL from the bound terms, each quote_literal()-ed, so no
        # term can be read as tsquery syntax.
        params: list[Any] = [list(terms), " & " if require_all else " | "]
        condition = _conditions(where, params)
        sql = (
            "WITH q AS (SELECT to_tsquery('simple', string_agg(quote_literal(t), $2)) AS query"
            " FROM unnest($1::text[]) AS t)"
            f" SELECT e.id, ts_rank(e.search, q.query) AS rank FROM {self._quoted}.episodes AS e,"
            f" q WHERE e.search @@ q.query AND {condition} ORDER BY rank DESC, e.id"
        )
        if limit is not None:
            params.append(limit)
            sql += f" LIMIT ${len(params)}"
        rows = await self._fetch(sql, *params)
        return [(row[0], float(row[1])) for row in rows]

    async def _recent(self, where: EpisodeFilter, limit: int) -> list[str]:
        params: list[Any] = []
        condition = _conditions(where, params)
        params.append(limit)
        rows = await self._fetch(
            f"SELECT e.id FROM {self._quoted}.episodes AS e WHERE {condition}"
            f" ORDER BY e.created_at DESC, e.id DESC LIMIT ${len(params)}",
            *params,
        )
        return [row[0] for row in rows]

    async def _vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        if not ids:
            return {}
        rows = await self._fetch(
            f"SELECT id, vector FROM {self._quoted}.episodes WHERE id = ANY($1::text[])",
            list(ids),
        )
        return {row[0]: np.asarray(row[1], dtype=np.float32) for row in rows}

    async def _delete(self, where: EpisodeFilter, ids: Sequence[str] | None = None) -> int:
        params: list[Any] = []
        condition = _conditions(where, params)
        if ids is not None:
            params.append(list(ids))
            condition += f" AND e.id = ANY(${len(params)}::text[])"
        pool = await self._connect()
        async with self._translated():
            status = await pool.execute(
                f"DELETE FROM {self._quoted}.episodes AS e WHERE {condition}", *params
            )
        return int(status.split()[-1])


PersistentEpisodeStore = PostgresEpisodeStore
"""The seed's name of :class:`PostgresEpisodeStore` (DESIGN: ``PersistentEpisodeStore(...)``)."""
