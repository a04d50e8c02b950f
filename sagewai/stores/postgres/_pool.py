"""PostgreSQL plumbing shared by every asyncpg-backed store, written once.

:class:`PostgresPool` is the one pool owner of the metadata, episode and pgvector stores: it
creates the pool on first use (or adopts a given one and never closes it), closes it within a
timeout, translates every driver exception into a :class:`~sagewai.errors.SagewaiError` at the
boundary (:meth:`PostgresPool.errors`; never the password in a message), and runs the versioned
migrations shipped as SQL files under one advisory lock (:meth:`PostgresPool.migrate`). So the
stores on one server report a failure, and upgrade a schema, the same way.

Example:
    >>> describe_dsn("postgresql://app:secret@db:6543/memory")
    'db:6543/memory'
    >>> redact("auth failed for postgresql://app:secret@db/memory", "postgresql://app:secret@db/memory")
    'auth failed for postgresql://app:***@db/memory'
    >>> lock_key("a", "b") == lock_key("a", "b")
    True
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from sagewai._optional import require
from sagewai.errors import (
    BackendError,
    BackendUnavailableError,
    ConfigurationError,
    IntegrityError,
    InvalidInputError,
    SagewaiError,
)
from sagewai.stores.migrations import MigrationSet, load_migrations

__all__ = [
    "PostgresPool",
    "apply_migrations",
    "describe_dsn",
    "driver_errors",
    "is_unreachable",
    "lock_key",
    "redact",
]


def describe_dsn(dsn: str | None) -> str:
    """``host:port/database`` of ``dsn`` for messages: never the user's password."""
    if dsn is None:
        return "the given connection pool"
    try:
        parts = urlsplit(dsn)
        host = parts.hostname or "localhost"
        port = parts.port or 5432
    except ValueError:
        return "an unparsable DSN"
    database = parts.path.lstrip("/") or "(default database)"
    return f"{host}:{port}/{database}"


def redact(message: str, dsn: str | None) -> str:
    """``message`` without the password of ``dsn`` (driver errors may quote the DSN)."""
    try:
        password = None if dsn is None else urlsplit(dsn).password
    except ValueError:
        password = None
    return message.replace(password, "***") if password else message


def lock_key(*parts: str) -> int:
    """A stable signed 64-bit advisory lock key (Python's ``hash`` differs per process)."""
    digest = hashlib.blake2b("\x1f".join(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def driver_errors(asyncpg: ModuleType) -> tuple[type[BaseException], ...]:
    """Every exception the driver raises that a store translates into a ``SagewaiError``."""
    return (
        asyncpg.PostgresError,
        asyncpg.InterfaceError,
        asyncpg.InternalClientError,  # e.g. a connection that died mid-call
        OSError,
        TimeoutError,
    )


def is_unreachable(asyncpg: ModuleType, exc: BaseException) -> bool:
    """True when ``exc`` means the server cannot be reached or refused the connection."""
    client = asyncpg.exceptions._base  # client-side errors live there
    unreachable = (
        OSError,
        TimeoutError,
        asyncpg.PostgresConnectionError,
        asyncpg.CannotConnectNowError,
        asyncpg.TooManyConnectionsError,
        asyncpg.InvalidAuthorizationSpecificationError,
        asyncpg.InvalidCatalogNameError,
        client.ClientConfigurationError,
    )
    return isinstance(exc, unreachable)


async def apply_migrations(
    connection: Any,
    *,
    table: str,
    folder: MigrationSet,
    render: Callable[[str], str],
) -> list[str]:
    """Apply the pending versioned migrations of ``folder`` on ``connection``; return them.

    The caller holds the transaction and the advisory lock, and has created the schema:
    ``table`` (quoted, schema-qualified) records what ran, so each version applies once.

    Args:
        connection: An asyncpg connection inside a transaction.
        table: The migrations table, e.g. ``"sagewai"."schema_migrations"``.
        folder: The migrations folder under ``sagewai/stores/migrations`` (``"postgres"``...).
        render: Fills the placeholders of one migration's SQL (schema, table names).
    """
    await connection.execute(
        f"CREATE TABLE IF NOT EXISTS {table} ("
        " version text PRIMARY KEY, name text NOT NULL,"
        " applied_at timestamptz NOT NULL DEFAULT now())"
    )
    recorded = {row[0] for row in await connection.fetch(f"SELECT version FROM {table}")}
    applied: list[str] = []
    for migration in load_migrations(folder):
        if migration.version in recorded:
            continue
        await connection.execute(render(migration.sql))
        await connection.execute(
            f"INSERT INTO {table} (version, name) VALUES ($1, $2)",
            migration.version,
            migration.name,
        )
        applied.append(migration.version)
    return applied


async def recorded_versions(connection: Any, table: str) -> set[str]:
    """The migration versions ``table`` records (none when the table does not exist)."""
    if not await connection.fetchval("SELECT to_regclass($1) IS NOT NULL", table):
        return set()
    return {row[0] for row in await connection.fetch(f"SELECT version FROM {table}")}


class PostgresPool:
    """The asyncpg pool of one store, with driver errors translated where they enter.

    Args:
        dsn: ``postgresql://user:password@host:port/database``; ``None`` with ``pool``.
        pool: An asyncpg pool to use instead of creating one (it is never closed here).
        min_size: Connections the pool keeps open.
        max_size: Connections the pool may open.
        connect_timeout: Seconds to wait for a connection.
        close_timeout: Seconds :meth:`close` waits for connections in use before terminating.
        server_settings: Session settings of every connection (pgvector's search knobs).
        init: Called with each new connection of a pool created here (never for a given
            pool's connections), before its first use.
        extra: The ``sagewai[...]`` extra that installs asyncpg for this store.
        feature: The store's name, for the missing-driver message.
        unmigrated: What is not migrated when a table is missing (``'schema "sagewai"'``).

    Example:
        >>> pool = PostgresPool("postgresql://app:secret@db/memory", feature="demo",
        ...                     unmigrated='schema "demo"')
        >>> pool.where
        'PostgreSQL at db:5432/memory'
    """

    def __init__(
        self,
        dsn: str | None,
        *,
        pool: Any = None,
        min_size: int = 1,
        max_size: int = 10,
        connect_timeout: float = 10.0,
        close_timeout: float = 10.0,
        server_settings: Mapping[str, str] | None = None,
        init: Callable[[Any], Awaitable[None]] | None = None,
        extra: str = "postgres",
        feature: str,
        unmigrated: str,
    ) -> None:
        if dsn is None and pool is None:
            raise ConfigurationError(f"{feature} needs a dsn or a pool")
        if not 0 <= min_size <= max_size or max_size < 1:
            raise ConfigurationError("pool sizes need 0 <= min_size <= max_size and max_size >= 1")
        self.dsn = dsn
        self.pool: Any = pool
        self._owns_pool = pool is None
        self._min_size = min_size
        self._max_size = max_size
        self._connect_timeout = connect_timeout
        self._close_timeout = close_timeout
        self._server_settings = dict(server_settings or {})
        self._init = init
        self._extra = extra
        self._feature = feature
        self._unmigrated = unmigrated

    @property
    def where(self) -> str:
        """``PostgreSQL at host:port/database``, for messages (never the password)."""
        return f"PostgreSQL at {describe_dsn(self.dsn)}"

    def asyncpg(self) -> ModuleType:
        """The asyncpg module, or the exact ``pip install`` to run when it is missing."""
        return require("asyncpg", extra=self._extra, feature=self._feature)

    def translate(self, exc: BaseException, action: str | None = None) -> SagewaiError:
        """The sagewai error for a driver exception raised while doing ``action``."""
        asyncpg = self.asyncpg()
        where = self.where
        message = redact(f"{type(exc).__name__}: {exc}", self.dsn)
        doing = f"cannot {action}: " if action else ""
        if isinstance(exc, asyncpg.UndefinedTableError | asyncpg.InvalidSchemaNameError):
            return ConfigurationError(
                f"{self._unmigrated} on {where} is not migrated ({message}):"
                " call `await store.migrate()` first"
            )
        if isinstance(exc, asyncpg.UndefinedObjectError | asyncpg.UndefinedFunctionError):
            return ConfigurationError(
                f"{doing}an extension or type is missing on {where} ({message}):"
                " call `await store.migrate()` (pgvector: CREATE EXTENSION vector)"
            )
        if isinstance(exc, asyncpg.InsufficientPrivilegeError):
            return ConfigurationError(f"{doing}{where} refused the privilege: {message}")
        if isinstance(exc, asyncpg.IntegrityConstraintViolationError):
            return IntegrityError(f"{doing}{where} rejected a write: {message}")
        client = asyncpg.exceptions._base  # client-side errors live there
        if isinstance(exc, asyncpg.DataError | client.DataError):
            return InvalidInputError(f"{doing}{where} rejected a value: {message}")
        if is_unreachable(asyncpg, exc):
            return BackendUnavailableError(f"{doing}{where} is not reachable: {message}")
        return BackendError(f"{doing}{where} failed: {message}")

    @asynccontextmanager
    async def errors(self, action: str | None = None) -> AsyncIterator[None]:
        """Translate driver exceptions raised inside the block into sagewai errors."""
        asyncpg = self.asyncpg()
        try:
            yield
        except SagewaiError:
            raise
        except driver_errors(asyncpg) as exc:
            raise self.translate(exc, action) from exc

    async def open(self) -> Any:
        """Create the pool (once; concurrent callers keep the first) and return it.

        Raises:
            BackendUnavailableError: the server cannot be reached, or refused the login.
            ConfigurationError: the server answered that the database does not exist.
        """
        if self.pool is not None:
            return self.pool
        asyncpg = self.asyncpg()
        options: dict[str, Any] = {}
        if self._server_settings:
            options["server_settings"] = self._server_settings
        if self._init is not None:
            options["init"] = self._init
        try:
            pool = await asyncpg.create_pool(
                self.dsn,
                min_size=self._min_size,
                max_size=self._max_size,
                timeout=self._connect_timeout,
                reset=keep_session,
                **options,
            )
        except asyncpg.InvalidCatalogNameError as exc:
            # The server answered: the database is missing, which no retry will change.
            raise ConfigurationError(
                f"{self.where}: the database does not exist (create it, or fix the URL): "
                + redact(f"{type(exc).__name__}: {exc}", self.dsn)
            ) from exc
        except driver_errors(asyncpg) as exc:
            # A refused connection, a bad DSN or a refused login: the message names host,
            # port and database, never the password.
            raise BackendUnavailableError(
                f"{self.where} is not reachable: "
                + redact(f"{type(exc).__name__}: {exc}", self.dsn)
            ) from exc
        if not self._adopt(pool):  # another task opened a pool meanwhile
            await pool.close()
        return self.pool

    @property
    def owns_pool(self) -> bool:
        """Whether the pool is created here (so ``init`` runs on its connections)."""
        return self._owns_pool

    def _adopt(self, pool: Any) -> bool:
        if self.pool is not None:
            return False
        self.pool = pool
        return True

    async def close(self) -> None:
        """Close the pool (unless it was given). Safe to call more than once.

        Connections still in use get ``close_timeout`` seconds to come back before the pool is
        terminated (which also releases any advisory lock they hold).
        """
        pool = self.pool
        if pool is None or not self._owns_pool:
            return
        self.pool = None
        try:
            async with self.errors("close the pool"):
                await asyncio.wait_for(pool.close(), self._close_timeout)
        except BackendUnavailableError:
            pool.terminate()

    async def missing_versions(self, table: str, folder: MigrationSet) -> list[str]:
        """The shipped migrations of ``folder`` that ``table`` does not record, oldest first."""
        async with self.errors("check the schema"):
            recorded = await recorded_versions(await self.open(), table)
        shipped = load_migrations(folder)
        unknown = recorded - {m.version for m in shipped}
        if unknown:
            raise ConfigurationError(
                f"{table} on {self.where} was migrated by a newer sagewai (versions"
                f" {sorted(unknown)}): upgrade sagewai to use it"
            )
        return [m.version for m in shipped if m.version not in recorded]

    async def migrate(
        self,
        *,
        lock: int,
        schema: str,
        table: str,
        folder: MigrationSet,
        render: Callable[[str], str],
        prepare: Callable[[Any], Awaitable[None]] | None = None,
        check: Callable[[Any], Awaitable[None]] | None = None,
    ) -> list[str]:
        """Apply the pending migrations of ``folder`` in one transaction; return the versions.

        Concurrent callers (several replicas starting at once) wait on the advisory ``lock`` and
        then find the versions recorded, so each applies once.

        Args:
            lock: The advisory lock key (:func:`lock_key`).
            schema: The quoted schema, created when missing.
            table: The quoted, schema-qualified migrations table.
            folder: The migrations folder.
            render: Fills one migration's placeholders (schema, table names).
            prepare: Runs first in the transaction (pgvector creates its extension there).
            check: Runs last in the transaction (pgvector checks the vector length there).
        """
        pool = await self.open()
        async with self.errors("migrate"), pool.acquire() as connection, connection.transaction():
            await connection.execute("SELECT pg_advisory_xact_lock($1)", lock)
            if prepare is not None:
                await prepare(connection)
            await connection.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
            applied = await apply_migrations(connection, table=table, folder=folder, render=render)
            if check is not None:
                await check(connection)
        return applied


async def keep_session(connection: Any) -> None:
    """The pool's ``reset``: nothing to undo, so releasing a connection costs no round trip.

    asyncpg's default reset sends ``pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL``
    on every release, one more round trip for every statement run through the pool. The stores
    leave no session state behind: settings are ``SET LOCAL`` or statement-local, cursors live
    in transactions (an open transaction is still rolled back by asyncpg), and ``lock()`` unlocks
    its advisory lock or ends the session.
    """
    del connection
