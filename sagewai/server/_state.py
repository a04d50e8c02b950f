"""What the server keeps beside the store: its API keys and its consolidation runs.

Why beside the store: keys and runs belong to the memory they open, and move with it. An
embedded folder gets a small SQLite file, ``<folder>/server.sqlite3``; a PostgreSQL store gets
two tables in its schema, ``api_keys`` and ``consolidation_runs``. Both hold only key hashes,
never a key. The CLI (``sagewai keys``) and a running server share the file or the tables: a key
made or revoked by the CLI is seen by the server within its key cache time.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import JsonValue

from sagewai.core import utcnow
from sagewai.errors import BackendError, BackendUnavailableError, ConfigurationError
from sagewai.server._keys import ApiKey, Role

__all__ = ["STATE_FILENAME", "PostgresServerState", "ServerState", "SqliteServerState"]

STATE_FILENAME = "server.sqlite3"
"""The file of an embedded folder that holds the server's keys and runs."""

_T = TypeVar("_T")
_KEY_COLUMNS = "id, project_id, org_id, user_id, role, name, created_at, revoked_at, secret_hash"


def _key_from_row(row: Any) -> ApiKey:
    def when(value: Any) -> datetime | None:
        if value is None or isinstance(value, datetime):
            return value
        return datetime.fromisoformat(str(value))

    created = when(row[6])
    assert created is not None
    return ApiKey(
        id=str(row[0]),
        project_id=str(row[1]),
        org_id=row[2],
        user_id=row[3],
        role=Role(row[4]),
        name=str(row[5]),
        created_at=created,
        revoked_at=when(row[7]),
        secret_hash=str(row[8]),
    )


class ServerState(ABC):
    """The server's keys and consolidation runs; one implementation per kind of store."""

    @abstractmethod
    async def open(self) -> None:
        """Create the tables when missing (idempotent)."""

    @abstractmethod
    async def close(self) -> None:
        """Release connections."""

    @abstractmethod
    async def add_key(self, key: ApiKey) -> None:
        """Store a new key (its hash).

        Raises:
            ConfigurationError: the key's project is bound to another org by an existing key.
        """

    @abstractmethod
    async def key(self, key_id: str) -> ApiKey | None:
        """The key with this id, revoked or not; ``None`` when unknown."""

    @abstractmethod
    async def keys(self) -> list[ApiKey]:
        """Every key, oldest first, revoked ones included."""

    @abstractmethod
    async def revoke(self, key_id: str) -> ApiKey | None:
        """Revoke a key (idempotent); the key as it is now, ``None`` when unknown."""

    @abstractmethod
    async def save_run(self, run_id: str, project_id: str, record: dict[str, JsonValue]) -> None:
        """Store (or replace) a consolidation run's record."""

    @abstractmethod
    async def runs(self, project_id: str, *, limit: int = 20) -> list[dict[str, JsonValue]]:
        """The project's latest consolidation runs, newest first."""

    async def active_keys(self) -> int:
        """How many keys are not revoked (a server refuses other addresses than loopback at 0)."""
        return sum(1 for key in await self.keys() if key.active)

    async def _check_org(self, key: ApiKey) -> None:
        for other in await self.keys():
            if other.project_id == key.project_id and other.org_id != key.org_id:
                raise ConfigurationError(
                    f"project {key.project_id!r} belongs to org {other.org_id!r} (key "
                    f"{other.id}); a project has one org"
                )


class SqliteServerState(ServerState):
    """Keys and runs in ``<folder>/server.sqlite3`` (WAL mode; shared by the CLI and servers).

    Each call opens a short connection in a worker thread: calls are rare (a key is looked up
    once per cache period, not per request), and no connection is shared between threads.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
        except sqlite3.Error as exc:
            raise BackendUnavailableError(f"cannot open {self.path}: {exc}") from exc
        try:
            yield db
        except sqlite3.Error as exc:
            raise BackendError(f"{self.path}: {exc}") from exc
        finally:
            db.close()

    async def _run(self, function: Callable[[sqlite3.Connection], _T]) -> _T:
        def call() -> _T:
            with self._connect() as db:
                return function(db)

        return await asyncio.to_thread(call)

    async def open(self) -> None:
        def create(db: sqlite3.Connection) -> None:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS api_keys (id TEXT PRIMARY KEY, project_id TEXT NOT"
                " NULL, org_id TEXT, user_id TEXT, role TEXT NOT NULL, name TEXT NOT NULL,"
                " created_at TEXT NOT NULL, revoked_at TEXT, secret_hash TEXT NOT NULL)"
            )
            db.execute(
                "CREATE TABLE IF NOT EXISTS consolidation_runs (id TEXT PRIMARY KEY, project_id"
                " TEXT NOT NULL, started_at TEXT NOT NULL, record TEXT NOT NULL)"
            )

        self.path.parent.mkdir(parents=True, exist_ok=True)
        await self._run(create)

    async def close(self) -> None:
        """Nothing to release: every call opens and closes its own connection."""

    async def add_key(self, key: ApiKey) -> None:
        await self._check_org(key)

        def insert(db: sqlite3.Connection) -> None:
            db.execute(
                f"INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key.id,
                    key.project_id,
                    key.org_id,
                    key.user_id,
                    key.role.value,
                    key.name,
                    key.created_at.isoformat(),
                    None,
                    key.secret_hash,
                ),
            )

        await self._run(insert)

    async def key(self, key_id: str) -> ApiKey | None:
        def read(db: sqlite3.Connection) -> ApiKey | None:
            row = db.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = ?", (key_id,)
            ).fetchone()
            return None if row is None else _key_from_row(row)

        return await self._run(read)

    async def keys(self) -> list[ApiKey]:
        def read(db: sqlite3.Connection) -> list[ApiKey]:
            rows = db.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY created_at, id")
            return [_key_from_row(row) for row in rows]

        return await self._run(read)

    async def revoke(self, key_id: str) -> ApiKey | None:
        def revoke(db: sqlite3.Connection) -> None:
            db.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (utcnow().isoformat(), key_id),
            )

        await self._run(revoke)
        return await self.key(key_id)

    async def save_run(self, run_id: str, project_id: str, record: dict[str, JsonValue]) -> None:
        def save(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT INTO consolidation_runs (id, project_id, started_at, record)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET record = excluded.record",
                (run_id, project_id, str(record.get("started_at")), json.dumps(record)),
            )

        await self._run(save)

    async def runs(self, project_id: str, *, limit: int = 20) -> list[dict[str, JsonValue]]:
        def read(db: sqlite3.Connection) -> list[dict[str, JsonValue]]:
            rows = db.execute(
                "SELECT record FROM consolidation_runs WHERE project_id = ?"
                " ORDER BY started_at DESC, id DESC LIMIT ?",
                (project_id, limit),
            )
            return [json.loads(row[0]) for row in rows]

        return await self._run(read)


class PostgresServerState(ServerState):
    """Keys and runs in two tables of a PostgreSQL schema (the metadata store's, by default)."""

    def __init__(self, dsn: str, *, schema: str = "sagewai") -> None:
        self.dsn = dsn
        self.schema = schema
        self._pool: Any = None
        self._lock = asyncio.Lock()

    @property
    def _keys(self) -> str:
        return f'"{self.schema}".api_keys'

    @property
    def _runs(self) -> str:
        return f'"{self.schema}".consolidation_runs'

    async def _connection_pool(self) -> Any:
        if self._pool is not None:
            return self._pool
        from sagewai._optional import require

        asyncpg = require("asyncpg", extra="postgres", feature="the server's keys on PostgreSQL")
        async with self._lock:
            if self._pool is None:
                try:
                    self._pool = await asyncpg.create_pool(
                        self.dsn, min_size=1, max_size=2, timeout=10
                    )
                except (OSError, asyncpg.PostgresError) as exc:
                    raise BackendUnavailableError(f"PostgreSQL is not reachable: {exc}") from exc
        return self._pool

    async def _fetch(self, sql: str, *args: Any) -> list[Any]:
        import asyncpg

        pool = await self._connection_pool()
        try:
            async with pool.acquire() as connection:
                return list(await connection.fetch(sql, *args))
        except asyncpg.PostgresError as exc:
            raise BackendError(f"PostgreSQL failed: {exc}") from exc

    async def open(self) -> None:
        await self._fetch(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
        await self._fetch(
            f"CREATE TABLE IF NOT EXISTS {self._keys} (id TEXT PRIMARY KEY, project_id TEXT NOT"
            " NULL, org_id TEXT, user_id TEXT, role TEXT NOT NULL, name TEXT NOT NULL,"
            " created_at TIMESTAMPTZ NOT NULL, revoked_at TIMESTAMPTZ, secret_hash TEXT NOT NULL)"
        )
        await self._fetch(
            f"CREATE TABLE IF NOT EXISTS {self._runs} (id TEXT PRIMARY KEY, project_id TEXT NOT"
            " NULL, started_at TEXT NOT NULL, record JSONB NOT NULL)"
        )

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def add_key(self, key: ApiKey) -> None:
        await self._check_org(key)
        await self._fetch(
            f"INSERT INTO {self._keys} ({_KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7,"
            " NULL, $8)",
            key.id,
            key.project_id,
            key.org_id,
            key.user_id,
            key.role.value,
            key.name,
            key.created_at,
            key.secret_hash,
        )

    async def key(self, key_id: str) -> ApiKey | None:
        rows = await self._fetch(f"SELECT {_KEY_COLUMNS} FROM {self._keys} WHERE id = $1", key_id)
        return _key_from_row(rows[0]) if rows else None

    async def keys(self) -> list[ApiKey]:
        rows = await self._fetch(f"SELECT {_KEY_COLUMNS} FROM {self._keys} ORDER BY created_at, id")
        return [_key_from_row(row) for row in rows]

    async def revoke(self, key_id: str) -> ApiKey | None:
        await self._fetch(
            f"UPDATE {self._keys} SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL",
            utcnow(),
            key_id,
        )
        return await self.key(key_id)

    async def save_run(self, run_id: str, project_id: str, record: dict[str, JsonValue]) -> None:
        await self._fetch(
            f"INSERT INTO {self._runs} (id, project_id, started_at, record) VALUES ($1, $2, $3,"
            " $4::jsonb) ON CONFLICT (id) DO UPDATE SET record = excluded.record",
            run_id,
            project_id,
            str(record.get("started_at")),
            json.dumps(record),
        )

    async def runs(self, project_id: str, *, limit: int = 20) -> list[dict[str, JsonValue]]:
        rows = await self._fetch(
            f"SELECT record::text FROM {self._runs} WHERE project_id = $1"
            " ORDER BY started_at DESC, id DESC LIMIT $2",
            project_id,
            limit,
        )
        return [json.loads(row[0]) for row in rows]
