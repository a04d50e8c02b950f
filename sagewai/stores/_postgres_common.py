"""PostgreSQL plumbing shared by every asyncpg-backed store, written once.

DSN handling for messages (never the password), advisory lock keys, and the driver's exceptions
sorted into "not reachable" and the rest: the stores translate errors at their boundary with
these, so a metadata store and a vector store on one server report a failure the same way.

Example:
    >>> describe_dsn("postgresql://app:secret@db:6543/memory")
    'db:6543/memory'
    >>> redact("auth failed for postgresql://app:secret@db/memory", "postgresql://app:secret@db/memory")
    'auth failed for postgresql://app:***@db/memory'
    >>> lock_key("a", "b") == lock_key("a", "b")
    True
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from types import ModuleType
from typing import Any, Literal
from urllib.parse import urlsplit

__all__ = [
    "apply_migrations",
    "describe_dsn",
    "driver_errors",
    "is_unreachable",
    "keep_session",
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
    folder: Literal["postgres", "pgvector"],
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
    from sagewai.stores.migrations import load_migrations

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


async def keep_session(connection: Any) -> None:
    """The pool's ``reset``: nothing to undo, so releasing a connection costs no round trip.

    asyncpg's default reset sends ``pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL``
    on every release, one more round trip for every statement run through the pool. The stores
    leave no session state behind: settings are ``SET LOCAL`` or statement-local, cursors live
    in transactions (an open transaction is still rolled back by asyncpg), and ``lock()`` unlocks
    its advisory lock or ends the session.
    """
    del connection
