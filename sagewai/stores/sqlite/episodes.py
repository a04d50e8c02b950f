"""The embedded episode store: one SQLite file (``episodes.sqlite3`` in the engine's folder).

Like the embedded metadata store it runs every statement on one connection owned by a worker
thread (the event loop never waits on disk), keeps the database in WAL mode, and migrates its
schema on open (recorded in ``episode_migrations``). Keywords are searched with FTS5 and
``bm25()``; the match expression is built only from :func:`keyword_terms` output, each term
quoted, so no text a user types reaches FTS5's query syntax. Summary vectors are float32 blobs.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from sagewai.context.episodes.records import Episode, EpisodeFilter, episode_text
from sagewai.context.episodes.summary import EpisodeSummarizer
from sagewai.embeddings.base import Embedder, Vector
from sagewai.errors import (
    BackendError,
    BackendUnavailableError,
    ConfigurationError,
    IntegrityError,
    SagewaiError,
)
from sagewai.records import utcnow
from sagewai.stores.base.episodes import EpisodeStoreBase

__all__ = ["SqliteEpisodeStore"]

_T = TypeVar("_T")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
MEMORY = ":memory:"

_MIGRATIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "0001",
        "episodes",
        (
            """CREATE TABLE episodes (
                seq        INTEGER PRIMARY KEY,
                id         TEXT    NOT NULL UNIQUE,
                project_id TEXT,
                user_id    TEXT,
                session_id TEXT    NOT NULL,
                created_at INTEGER NOT NULL,
                summary    TEXT    NOT NULL,
                messages   TEXT    NOT NULL,
                metadata   TEXT    NOT NULL,
                vector     BLOB    NOT NULL,
                search     TEXT    NOT NULL
            )""",
            "CREATE INDEX episodes_project_created ON episodes (project_id, created_at)",
            "CREATE INDEX episodes_project_session ON episodes (project_id, session_id)",
            "CREATE INDEX episodes_project_user ON episodes (project_id, user_id)",
            """CREATE VIRTUAL TABLE episodes_fts USING fts5(
                search, content = 'episodes', content_rowid = 'seq',
                tokenize = 'unicode61 remove_diacritics 0'
            )""",
            """CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN
                INSERT INTO episodes_fts (rowid, search) VALUES (new.seq, new.search);
            END""",
            """CREATE TRIGGER episodes_fts_update AFTER UPDATE OF search ON episodes BEGIN
                INSERT INTO episodes_fts (episodes_fts, rowid, search)
                    VALUES ('delete', old.seq, old.search);
                INSERT INTO episodes_fts (rowid, search) VALUES (new.seq, new.search);
            END""",
            """CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
                INSERT INTO episodes_fts (episodes_fts, rowid, search)
                    VALUES ('delete', old.seq, old.search);
            END""",
        ),
    ),
)

_COLUMNS = "e.id, e.project_id, e.user_id, e.session_id, e.created_at, e.summary, e.messages"
_COLUMNS += ", e.metadata"


def _micros(value: datetime) -> int:
    return (value - _EPOCH) // _MICROSECOND


def _translate(exc: sqlite3.Error, where: str) -> SagewaiError:
    name = getattr(exc, "sqlite_errorname", "") or ""
    if isinstance(exc, sqlite3.IntegrityError):
        return IntegrityError(f"SQLite rejected a write to {where}: {exc}")
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_CANTOPEN", "SQLITE_IOERR")):
        return BackendUnavailableError(f"SQLite database {where} cannot be used: {exc}")
    if name.startswith(("SQLITE_READONLY", "SQLITE_FULL")):
        return BackendUnavailableError(f"SQLite database {where} cannot be written: {exc}")
    if name == "SQLITE_NOTADB":
        return ConfigurationError(f"{where} is not a SQLite database: {exc}")
    return BackendError(f"SQLite error on {where}: {exc}")


def _conditions(where: EpisodeFilter, params: list[Any]) -> str:
    out = ["1 = 1"]
    for column in ("project_id", "session_id", "user_id"):
        value = getattr(where, column)
        if value is not None:
            params.append(value)
            out.append(f"e.{column} = ?{len(params)}")
    return " AND ".join(out)


def _match(terms: Sequence[str], require_all: bool) -> str:
    joiner = " AND " if require_all else " OR "
    return joiner.join('"' + term.replace('"', '""') + '"' for term in terms)


def _episode(row: Sequence[Any]) -> Episode:
    return Episode.model_validate(
        {
            "id": row[0],
            "project_id": row[1],
            "user_id": row[2],
            "session_id": row[3],
            "created_at": _EPOCH + row[4] * _MICROSECOND,
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
        self._busy_timeout = busy_timeout
        self._worker: ThreadPoolExecutor | None = None
        self._connection: sqlite3.Connection | None = None
        self._open_lock = asyncio.Lock()

    @property
    def path(self) -> str:
        """The database file, or ``":memory:"``."""
        return self._path

    def __repr__(self) -> str:
        return f"SqliteEpisodeStore({self._path!r})"

    @property
    def is_open(self) -> bool:
        """True once the database is open."""
        return self._worker is not None

    # ------------------------------------------------------------------ lifecycle

    async def open(self) -> None:
        """Open the database and apply pending migrations. Safe to call more than once."""
        if self._worker is not None:
            return
        async with self._open_lock:
            if self.is_open:  # opened by a concurrent caller while this one waited
                return
            worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sagewai-episodes")
            try:
                await asyncio.wrap_future(worker.submit(self._open_sync))
            except sqlite3.Error as exc:
                worker.shutdown(wait=False)
                raise _translate(exc, self._path) from exc
            except BaseException:
                worker.shutdown(wait=False)
                raise
            self._worker = worker

    async def close(self) -> None:
        """Close the database. Safe to call more than once; a later call reopens it."""
        worker, self._worker = self._worker, None
        if worker is None:
            return
        try:
            await asyncio.wrap_future(worker.submit(self._close_sync))
        finally:
            worker.shutdown(wait=False)

    async def migrate(self) -> list[str]:
        """Apply pending migrations (``open`` already does); return the versions applied."""
        await self.open()
        return await self._run(self._migrate_sync)

    def _open_sync(self) -> None:
        if self._path != MEMORY:
            try:
                Path(self._path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise BackendUnavailableError(f"cannot create the folder of {self._path}") from exc
        connection = sqlite3.connect(self._path, timeout=self._busy_timeout, isolation_level=None)
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            self._connection = connection
            self._migrate_sync()
        except BaseException:
            self._connection = None
            connection.close()
            raise

    def _close_sync(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def _db(self) -> sqlite3.Connection:
        if self._connection is None:
            raise BackendUnavailableError(f"SQLite database {self._path} is closed")
        return self._connection

    def _migrate_sync(self) -> list[str]:
        db = self._db()
        db.execute(
            "CREATE TABLE IF NOT EXISTS episode_migrations ("
            " version TEXT PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)"
        )
        applied: list[str] = []
        for version, name, statements in _MIGRATIONS:
            db.execute("BEGIN IMMEDIATE")
            try:
                done = db.execute(
                    "SELECT 1 FROM episode_migrations WHERE version = ?1", (version,)
                ).fetchone()
                if done is None:
                    for statement in statements:
                        db.execute(statement)
                    db.execute(
                        "INSERT INTO episode_migrations (version, name, applied_at)"
                        " VALUES (?1, ?2, ?3)",
                        (version, name, _micros(utcnow())),
                    )
                    applied.append(version)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        known = {version for version, _, _ in _MIGRATIONS}
        recorded = {row[0] for row in db.execute("SELECT version FROM episode_migrations")}
        if recorded - known:
            raise ConfigurationError(
                f"{self._path} was migrated by a newer sagewai; upgrade sagewai to open it"
            )
        return applied

    async def _run(self, function: Callable[..., _T], *args: Any) -> _T:
        await self.open()
        assert self._worker is not None
        try:
            return await asyncio.wrap_future(self._worker.submit(function, *args))
        except sqlite3.Error as exc:
            raise _translate(exc, self._path) from exc

    def _rows(self, sql: str, params: Sequence[Any]) -> list[Any]:
        return self._db().execute(sql, params).fetchall()

    def _write(self, sql: str, params: Sequence[Any]) -> int:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            count = db.execute(sql, params).rowcount
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return count

    # ------------------------------------------------------------------ the core

    async def _put(self, episode: Episode, vector: Vector) -> None:
        params = (
            episode.id,
            episode.project_id,
            episode.user_id,
            episode.session_id,
            _micros(episode.created_at),
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
        params: list[Any] = [_match(terms, require_all)]
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
