"""The embedded episode store: one SQLite file (``episodes.sqlite3`` in the engine's folder).

Like the embedded metadata store it runs every statement on one connection owned by a worker
thread (the event loop never waits on disk), keeps the database in WAL mode, and migrates its
schema on open (recorded in ``episode_migrations``). Keywords are searched with FTS5 and
``bm25()``; the match expression is built only from :func:`keyword_terms` output, each term
quoted, so no text a user types reaches FTS5's query syntax. Summary vectors are float32 blobs.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from sagewai.core._embedder import Embedder, Vector
from sagewai.core._episode_records import Episode, EpisodeFilter, episode_text
from sagewai.stores.base._episodes import EpisodeStoreBase
from sagewai.stores.base._sql import equal_conditions, fts5_match
from sagewai.stores.base._summary import EpisodeSummarizer
from sagewai.stores.sqlite._database import (
    MEMORY,
    SqliteDatabase,
    from_micros,
    micros,
    write_transaction,
)

__all__ = ["SqliteEpisodeStore"]

_T = TypeVar("_T")

_COLUMNS = "e.id, e.project_id, e.user_id, e.session_id, e.created_at, e.summary, e.messages"
_COLUMNS += ", e.metadata"


def _conditions(where: EpisodeFilter, params: list[Any]) -> str:
    columns = ("project_id", "session_id", "user_id")
    return equal_conditions("e", [(c, getattr(where, c)) for c in columns], params, "?")


def _episode(row: Sequence[Any]) -> Episode:
    return Episode.model_validate(
        {
            "id": row[0],
            "project_id": row[1],
            "user_id": row[2],
            "session_id": row[3],
            "created_at": from_micros(row[4]),
            "summary": row[5],
            "messages": json.loads(row[6]),
            "metadata": json.loads(row[7]),
        }
    )


class SqliteEpisodeStore(EpisodeStoreBase):
    """Episodes in one SQLite file: the embedded default (no server).

    Args:
        path: The database file (its folder is created), or ``":memory:"``.
        embedder: Embeds summaries and queries (the offline MiniLM model when omitted).
        summarizer: Writes summaries (extractive when omitted).
        candidates: How many keyword hits and recent episodes a search scores.
        busy_timeout: Seconds a write waits for another process's write lock.

    Example:
        >>> import asyncio, tempfile
        >>> from sagewai.testing import FakeEmbedder
        >>> async def demo(folder: str) -> str:
        ...     async with SqliteEpisodeStore(f"{folder}/episodes.sqlite3",
        ...                                   embedder=FakeEmbedder()) as store:
        ...         episode_id = await store.save_episode("s1", ["Ship 2.1 on Friday"])
        ...         episode = await store.get_episode(episode_id)
        ...         return episode.summary if episode else ""
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     asyncio.run(demo(folder))
        'user: Ship 2.1 on Friday'
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        embedder: Embedder | None = None,
        summarizer: EpisodeSummarizer | None = None,
        candidates: int = 200,
        busy_timeout: float = 5.0,
    ) -> None:
        super().__init__(embedder=embedder, summarizer=summarizer, candidates=candidates)
        self._path = MEMORY if str(path) == MEMORY else str(Path(path))
        self._database = SqliteDatabase(
            self._path,
            migrations="sqlite_episodes",
            table="episode_migrations",
            busy_timeout=busy_timeout,
            thread_name="sagewai-episodes",
        )

    @property
    def path(self) -> str:
        """The database file, or ``":memory:"``."""
        return self._path

    def __repr__(self) -> str:
        return f"SqliteEpisodeStore({self._path!r})"

    @property
    def is_open(self) -> bool:
        """True once the database is open."""
        return self._database.is_open

    # ------------------------------------------------------------------ lifecycle

    async def open(self) -> None:
        """Open the database and apply pending migrations. Safe to call more than once."""
        await self._database.open()

    async def close(self) -> None:
        """Close the database. Safe to call more than once; a later call reopens it."""
        await self._database.close()

    async def migrate(self) -> list[str]:
        """Apply pending migrations (``open`` already does); return the versions applied."""
        await self.open()
        return await self._run(self._database.migrate_sync)

    async def _run(self, function: Callable[..., _T], *args: Any) -> _T:
        return await self._database.run(function, *args)

    def _db(self) -> sqlite3.Connection:
        return self._database.connection

    def _rows(self, sql: str, params: Sequence[Any]) -> list[Any]:
        return self._db().execute(sql, params).fetchall()

    def _write(self, sql: str, params: Sequence[Any]) -> int:
        db = self._db()
        with write_transaction(db):
            return db.execute(sql, params).rowcount

    # ------------------------------------------------------------------ the core

    async def _put(self, episode: Episode, vector: Vector) -> None:
        params = (
            episode.id,
            episode.project_id,
            episode.user_id,
            episode.session_id,
            micros(episode.created_at),
            episode.summary,
            json.dumps([m.model_dump(mode="json") for m in episode.messages], ensure_ascii=False),
            json.dumps(episode.metadata, ensure_ascii=False, allow_nan=False),
            np.asarray(vector, dtype=np.float32).tobytes(),
            episode_text(episode),
        )
        await self._run(
            self._write,
            "INSERT INTO episodes (id, project_id, user_id, session_id, created_at, summary,"
            " messages, metadata, vector, search) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
            " ON CONFLICT (id) DO UPDATE SET project_id = excluded.project_id,"
            " user_id = excluded.user_id, session_id = excluded.session_id,"
            " summary = excluded.summary, messages = excluded.messages,"
            " metadata = excluded.metadata, vector = excluded.vector, search = excluded.search",
            params,
        )

    async def _load(self, ids: Sequence[str], where: EpisodeFilter) -> list[Episode]:
        if not ids:
            return []
        params: list[Any] = [json.dumps(list(ids))]
        condition = _conditions(where, params)
        rows = await self._run(
            self._rows,
            f"SELECT {_COLUMNS} FROM episodes AS e"
            f" WHERE e.id IN (SELECT value FROM json_each(?1)) AND {condition}",
            params,
        )
        return [_episode(row) for row in rows]

    async def _keyword(
        self, terms: Sequence[str], where: EpisodeFilter, limit: int | None, require_all: bool
    ) -> list[tuple[str, float]]:
        if not terms:
            return []
        params: list[Any] = [fts5_match(terms, all_terms=require_all)]
        condition = _conditions(where, params)
        sql = (
            "SELECT e.id, bm25(episodes_fts) AS rank FROM episodes_fts"
            " JOIN episodes AS e ON e.seq = episodes_fts.rowid"
            f" WHERE episodes_fts MATCH ?1 AND {condition} ORDER BY rank, e.id"
        )
        if limit is not None:
            params.append(limit)
            sql += f" LIMIT ?{len(params)}"
        rows = await self._run(self._rows, sql, params)
        return [(row[0], -float(row[1])) for row in rows]

    async def _recent(self, where: EpisodeFilter, limit: int) -> list[str]:
        params: list[Any] = []
        condition = _conditions(where, params)
        params.append(limit)
        rows = await self._run(
            self._rows,
            f"SELECT e.id FROM episodes AS e WHERE {condition}"
            f" ORDER BY e.created_at DESC, e.seq DESC LIMIT ?{len(params)}",
            params,
        )
        return [row[0] for row in rows]

    async def _vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        if not ids:
            return {}
        rows = await self._run(
            self._rows,
            "SELECT id, vector FROM episodes WHERE id IN (SELECT value FROM json_each(?1))",
            (json.dumps(list(ids)),),
        )
        return {row[0]: np.frombuffer(row[1], dtype=np.float32) for row in rows}

    async def _delete(self, where: EpisodeFilter, ids: Sequence[str] | None = None) -> int:
        params: list[Any] = []
        condition = _conditions(where, params)
        if ids is not None:
            params.append(json.dumps(list(ids)))
            condition += f" AND e.id IN (SELECT value FROM json_each(?{len(params)}))"
        return await self._run(
            self._write,
            "DELETE FROM episodes WHERE seq IN"
            f" (SELECT e.seq FROM episodes AS e WHERE {condition})",
            params,
        )
