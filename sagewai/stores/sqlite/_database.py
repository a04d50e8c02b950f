"""SQLite plumbing shared by the embedded stores (metadata, graph, episodes), written once.

One :class:`SqliteDatabase` owns one connection on one dedicated worker thread: the event loop
never blocks on disk, and statements never interleave, so a write is simply one
``BEGIN IMMEDIATE`` ... ``COMMIT`` on that thread (:func:`write_transaction`). The database runs
in WAL mode so other processes read while this one writes; a write from another process waits for
the lock up to ``busy_timeout`` seconds. The schema is created and upgraded on open by versioned
migrations shipped as ``.sql`` files (:mod:`sagewai.stores.migrations`), each applied in its own
write transaction together with the row that records it. sqlite3 errors become
:class:`~sagewai.errors.SagewaiError` subclasses at this boundary (:func:`translate`).

Example:
    >>> import asyncio
    >>> async def demo() -> list[str]:
    ...     database = SqliteDatabase(":memory:", migrations="sqlite_graph",
    ...                               table="graph_migrations")
    ...     applied = await database.open()
    ...     await database.close()
    ...     return applied
    >>> asyncio.run(demo())
    ['0001']
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from sagewai.errors import (
    BackendError,
    BackendUnavailableError,
    ConfigurationError,
    IntegrityError,
    SagewaiError,
)
from sagewai.stores.migrations import MigrationSet, load_migrations

__all__ = [
    "MEMORY",
    "SqliteDatabase",
    "from_micros",
    "micros",
    "statements",
    "translate",
    "write_transaction",
]

MEMORY = ":memory:"
"""The path of a private in-memory database (it lives as long as the store is open)."""

_T = TypeVar("_T")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_PRAGMAS = (
    "PRAGMA journal_mode = WAL",
    # NORMAL in WAL mode: a crash never corrupts or half-applies a transaction; only a power loss
    # may drop the last committed ones.
    "PRAGMA synchronous = NORMAL",
    "PRAGMA temp_store = MEMORY",
)


def micros(value: datetime) -> int:
    """A datetime as integer microseconds since the epoch (exact, ordered; naive means UTC)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return (value - _EPOCH) // _MICROSECOND


def from_micros(value: int | None) -> datetime | None:
    """The aware UTC datetime of :func:`micros` output (``None`` stays ``None``)."""
    return None if value is None else _EPOCH + value * _MICROSECOND


def statements(script: str) -> Iterator[str]:
    """The statements of a migration script (``executescript`` would commit our transaction).

    Example:
        >>> list(statements("CREATE TABLE a (x);\\nCREATE TABLE b (y);\\n"))
        ['CREATE TABLE a (x);\\n', 'CREATE TABLE b (y);\\n']
    """
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer
            buffer = ""
    if buffer.strip():
        yield buffer


def translate(exc: sqlite3.Error, where: str) -> SagewaiError:
    """The sagewai error for a sqlite3 error (the caller chains the original).

    Example:
        >>> type(translate(sqlite3.IntegrityError("UNIQUE constraint failed"), "db")).__name__
        'IntegrityError'
    """
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name.startswith("SQLITE_CONSTRAINT") or isinstance(exc, sqlite3.IntegrityError):
        return IntegrityError(f"SQLite rejected a write to {where}: {exc}")
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or (
        not name and isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
    ):
        return BackendUnavailableError(
            f"SQLite database {where} is locked by another writer: {exc}"
        )
    if name.startswith(("SQLITE_CANTOPEN", "SQLITE_IOERR", "SQLITE_READONLY", "SQLITE_FULL")):
        return BackendUnavailableError(f"SQLite database {where} cannot be used: {exc}")
    if name == "SQLITE_NOTADB":
        return ConfigurationError(f"{where} is not a SQLite database: {exc}")
    return BackendError(f"SQLite error on {where}: {exc}")


@contextmanager
def write_transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any exception: a write lands whole."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


class SqliteDatabase:
    """One SQLite file (or ``":memory:"``) behind one worker thread, migrated on open.

    The stores call :meth:`run` with a function of the connection; it runs on the worker thread
    and its sqlite3 errors come back translated. :meth:`open` is idempotent and safe to await from
    many tasks at once (they share one opening); :meth:`close` may be followed by a reopen.

    Args:
        path: The database file (its folder is created on open), or ``":memory:"``.
        migrations: The migrations folder under ``sagewai/stores/migrations``.
        table: The table recording applied migrations (``schema_migrations``...).
        busy_timeout: Seconds a write waits for another process's write lock.
        pragmas: Statements run on the new connection after the shared WAL pragmas.
        row_factory: The connection's row factory (``sqlite3.Row`` for rows read by name).
        user_version: When set, a file whose ``PRAGMA user_version`` is higher is refused as
            written by a newer sagewai, and the pragma is set to it after migrating (the graph
            store's schema marker before it had a migrations table).
        after_open: Called on the worker thread with the connection once it is migrated.
        thread_name: The worker thread's name prefix.
    """

    def __init__(
        self,
        path: str,
        *,
        migrations: MigrationSet,
        table: str,
        busy_timeout: float = 5.0,
        pragmas: Sequence[str] = (),
        row_factory: type[sqlite3.Row] | None = None,
        user_version: int | None = None,
        after_open: Callable[[sqlite3.Connection], None] | None = None,
        thread_name: str = "sagewai-sqlite",
    ) -> None:
        if busy_timeout < 0:
            raise ConfigurationError("busy_timeout must not be negative")
        self.path = path
        self._migrations = migrations
        self._table = table
        self._busy_timeout = busy_timeout
        self._pragmas = (*_PRAGMAS, *pragmas)
        self._row_factory = row_factory
        self._user_version = user_version
        self._after_open = after_open
        self._thread_name = thread_name
        self._worker: ThreadPoolExecutor | None = None
        self._opening: Future[list[str]] | None = None
        self._connection: sqlite3.Connection | None = None
        self._aside: ThreadPoolExecutor | None = None
        self._aside_connection: sqlite3.Connection | None = None

    @property
    def is_open(self) -> bool:
        """True once :meth:`open` has succeeded (and :meth:`close` was not called since)."""
        opening = self._opening
        return opening is not None and opening.done() and opening.exception() is None

    @property
    def connection(self) -> sqlite3.Connection:
        """The open connection; use it only inside a function given to :meth:`run`.

        Raises:
            BackendUnavailableError: when the database is closed.
        """
        if self._connection is None:
            raise BackendUnavailableError(f"SQLite database {self.path} is closed")
        return self._connection

    async def open(self) -> list[str]:
        """Open the database and apply pending migrations; return the versions applied.

        Safe to call more than once and from many tasks at once: later calls wait for the first
        opening and return the same versions.
        """
        if self._worker is None:
            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix=self._thread_name)
            self._opening = self._worker.submit(self._open_sync)
        assert self._opening is not None
        opening = self._opening
        if opening.done() and not opening.cancelled() and opening.exception() is None:
            return list(opening.result())  # open already: no await, nothing to cancel
        try:
            # Shielded: a caller cancelled while it waits (a scheduled job stopped mid-run)
            # leaves the opening, and the database, to every other caller.
            applied: list[str] = await asyncio.shield(asyncio.wrap_future(opening))
            return list(applied)
        except asyncio.CancelledError:
            if opening.cancelled() and self._opening is opening:
                self._abandon_worker()
            raise
        except BaseException as exc:
            if self._opening is opening:
                self._abandon_worker()
            if isinstance(exc, sqlite3.Error):
                raise translate(exc, self.path) from exc
            raise

    async def close(self) -> None:
        """Close the database. Safe to call more than once; a later call reopens it."""
        worker, self._worker, self._opening = self._worker, None, None
        aside, self._aside = self._aside, None
        if aside is not None:
            try:
                await asyncio.wrap_future(aside.submit(self._close_aside_sync))
            finally:
                aside.shutdown(wait=False)
        if worker is None:
            return
        try:
            await asyncio.wrap_future(worker.submit(self._close_sync))
        finally:
            worker.shutdown(wait=False)

    async def run(self, function: Callable[..., _T], *args: Any) -> _T:
        """Run ``function(*args)`` on the worker thread (opening first), translating errors."""
        await self.open()
        assert self._worker is not None
        try:
            return await asyncio.wrap_future(self._worker.submit(function, *args))
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc

    async def run_aside(self, function: Callable[..., _T], *args: Any) -> _T:
        """Run ``function(connection, *args)`` on a second connection and thread.

        For small writes that must not wait behind, or delay, the reads queued on the worker
        thread (the access marks of searches): a commit there, and the WAL checkpoint it may
        run, happen beside them. WAL lets the worker's reads go on meanwhile; the two
        connections' writes take SQLite's write lock in turn (``busy_timeout``). A private
        in-memory database has one connection only, so there this is :meth:`run`.
        """
        await self.open()
        if self.path == MEMORY:
            return await self.run(function, self.connection, *args)
        if self._aside is None:
            self._aside = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix=f"{self._thread_name}-aside"
            )
        try:
            return await asyncio.wrap_future(self._aside.submit(self._aside_sync, function, *args))
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from exc

    def _aside_sync(self, function: Callable[..., _T], *args: Any) -> _T:
        if self._aside_connection is None:
            self._aside_connection = self._connect()
        return function(self._aside_connection, *args)

    def _close_aside_sync(self) -> None:
        connection, self._aside_connection = self._aside_connection, None
        if connection is not None:
            connection.close()

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(
            self.path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=True
        )
        try:
            if self._row_factory is not None:
                connection.row_factory = self._row_factory
            connection.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
            for pragma in self._pragmas:
                connection.execute(pragma)
        except BaseException:
            connection.close()
            raise
        return connection

    def _abandon_worker(self) -> None:
        worker, self._worker, self._opening = self._worker, None, None
        if worker is not None:
            worker.submit(self._close_sync)
            worker.shutdown(wait=False)

    def _open_sync(self) -> list[str]:
        if self.path != MEMORY:
            try:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise BackendUnavailableError(f"cannot create the folder of {self.path}") from exc
        connection = self._connect()
        try:
            self._connection = connection
            applied = self.migrate_sync()
            if self._after_open is not None:
                self._after_open(connection)
            return applied
        except BaseException:
            self._connection = None
            connection.close()
            raise

    def _close_sync(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    def migrate_sync(self) -> list[str]:
        """Apply the pending migrations (on the worker thread); return the versions applied.

        Each step runs in its own write transaction, recorded in the same transaction, so a
        concurrent opener waits for it and then finds it recorded.

        Raises:
            ConfigurationError: the file records migrations this sagewai does not know.
            BackendError: the file's ``user_version`` is newer than this sagewai knows.
        """
        db = self.connection
        if self._user_version is not None:
            found = int(db.execute("PRAGMA user_version").fetchone()[0])
            if found > self._user_version:
                raise BackendError(
                    f"{self.path} holds schema {found}; this sagewai knows up to "
                    f"{self._user_version}: upgrade sagewai"
                )
        migrations = load_migrations(self._migrations)
        db.execute(
            f"CREATE TABLE IF NOT EXISTS {self._table} ("
            " version TEXT PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)"
        )
        applied: list[str] = []
        for migration in migrations:
            with write_transaction(db):
                done = db.execute(
                    f"SELECT 1 FROM {self._table} WHERE version = ?", (migration.version,)
                ).fetchone()
                if done is None:
                    for statement in statements(migration.sql):
                        db.execute(statement)
                    db.execute(
                        f"INSERT INTO {self._table} (version, name, applied_at) VALUES (?, ?, ?)",
                        (migration.version, migration.name, micros(datetime.now(UTC))),
                    )
                    applied.append(migration.version)
        known = {migration.version for migration in migrations}
        recorded = {row[0] for row in db.execute(f"SELECT version FROM {self._table}")}
        if recorded - known:
            raise ConfigurationError(
                f"{self.path} was migrated by a newer sagewai (versions "
                f"{sorted(recorded - known)}); upgrade sagewai to open it"
            )
        if self._user_version is not None:
            db.execute(f"PRAGMA user_version = {int(self._user_version)}")
        return applied
