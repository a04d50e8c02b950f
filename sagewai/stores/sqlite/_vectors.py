"""The embedded default vector store: vectors in SQLite, shared by every process on the machine.

Why SQLite: an embedded folder is opened by many processes at once (the agent, one ``sagewai
mcp`` server per MCP client, ``sagewai consolidate`` from cron, the inspector). Qdrant's embedded
engine locks its folder to one process; SQLite in WAL mode lets every process read while one
writes, and makes a write durable when its transaction commits, as the metadata store does.

How a search stays current: every change (an upsert, a payload update, a deletion) gives the
rows it touches the next numbers of one counter (``seq``), in the same transaction, so the
numbers follow the order in which writes committed. Each process keeps a copy of the vectors in
memory (:class:`~sagewai.stores.sqlite._vector_index.VectorIndex`) and, before every search or
count, reads the rows numbered above the last one it saw: one indexed range read, empty when
nothing changed, so another process's write is visible to the next search. A deletion keeps the
point's row with no vector, so other processes learn of it the same way.

Search is exact (a matrix product over the matching rows) below ``cells_from`` vectors; from
there it reads the cells nearest to the query where they were calibrated to find the same results
(:mod:`sagewai.stores.sqlite._vector_cells`); see ``docs/backends.md`` for the figures at 100k and
1M vectors.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

import numpy as np

from sagewai.core._embedder import Vector
from sagewai.core._queries import VectorFilter, VectorHit, VectorPayload, VectorRecord
from sagewai.errors import ConfigurationError, InvalidInputError
from sagewai.stores.base._vector import VectorStore
from sagewai.stores.sqlite._database import MEMORY, SqliteDatabase, write_transaction
from sagewai.stores.sqlite._vector_index import CELLS_FROM, CHANGE_COLUMNS, Change, VectorIndex

__all__ = ["SqliteVectorStore"]

_T = TypeVar("_T")

_READ_BATCH: Final = 4096
"""Rows fetched at a time while catching up (bounds the memory of a first load)."""
_ID_BATCH: Final = 500
"""Ids per ``IN (...)`` list (SQLite allows 32,766 parameters; small lists plan well)."""
_UPSERT = (
    "INSERT INTO vectors (point_id, seq, vector, project_id, scope_key, status, kind,"
    " fact_type, tags, created_at, valid_from, valid_to)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (point_id) DO UPDATE SET seq = excluded.seq, vector = excluded.vector,"
    " project_id = excluded.project_id, scope_key = excluded.scope_key,"
    " status = excluded.status, kind = excluded.kind, fact_type = excluded.fact_type,"
    " tags = excluded.tags, created_at = excluded.created_at,"
    " valid_from = excluded.valid_from, valid_to = excluded.valid_to"
)
_UPDATE_PAYLOAD = (
    "UPDATE vectors SET seq = ?, project_id = ?, scope_key = ?, status = ?, kind = ?,"
    " fact_type = ?, tags = ?, created_at = ?, valid_from = ?, valid_to = ?"
    " WHERE point_id = ? AND vector IS NOT NULL"
)
_DELETE = "UPDATE vectors SET seq = ?, vector = NULL WHERE point_id = ? AND vector IS NOT NULL"


def _payload_row(payload: VectorPayload) -> tuple[object, ...]:
    times = (payload.created_at, payload.valid_from, payload.valid_to)
    if any(math.isnan(t) for t in times):
        raise InvalidInputError("a time in a vector payload is NaN")
    return (
        payload.project_id,
        payload.scope_key,
        payload.status,
        payload.kind,
        payload.fact_type,
        json.dumps(list(payload.tags), ensure_ascii=False),
        *(float(t) for t in times),
    )


def _next_seqs(db: sqlite3.Connection, count: int) -> int:
    """Reserve ``count`` change numbers inside the open write transaction; the first one."""
    (last,) = db.execute("SELECT value FROM vector_state WHERE key = 'seq'").fetchone()
    db.execute("UPDATE vector_state SET value = ? WHERE key = 'seq'", (last + count,))
    return int(last) + 1


def _write_numbered(
    db: sqlite3.Connection, sql: str, rows: Sequence[tuple[object, ...]], *, seq_at: int
) -> None:
    """Run ``sql`` once a row inside the open write transaction, each row given the next change
    number at position ``seq_at`` (every write is numbered, so other processes catch up)."""
    first = _next_seqs(db, len(rows))
    db.executemany(sql, [(*row[:seq_at], first + n, *row[seq_at:]) for n, row in enumerate(rows)])


class SqliteVectorStore(VectorStore):
    """Vectors in one SQLite file that any number of processes share (see the module).

    The embedded folder's default (``vectors.sqlite3``). Each process reads the vectors into
    memory on its first search (a few seconds at a million) and keeps them current from the
    database's change numbers; writes go to the database first and are durable on return.
    Vectors are stored normalised (cosine), so :meth:`get_vectors` returns unit vectors.

    Args:
        path: The database file (created with its folder when missing), or ``":memory:"``.
        dimension: Vector length. A file made for another length is refused with
            :class:`~sagewai.errors.ConfigurationError`.
        busy_timeout: Seconds a write waits for another process's write.
        cells_from: Live vectors from which a search reads only the cells of vectors nearest
            to the query (an approximate index calibrated to find 99.7 % of the exact top 10,
            made when this process's searches first need it; see ``docs/backends.md``);
            ``None``: every search is exact.
        cells_in_background: Make the cells on a thread of their own while searches are
            answered exactly (no search waits for them); ``False``: the first search that needs
            them makes them (seconds at a million vectors) and uses them at once.

    Example:
        >>> import asyncio, tempfile
        >>> import numpy as np
        >>> from sagewai.core import VectorFilter, VectorPayload, VectorRecord
        >>> payload = VectorPayload("p", "project:p:p", "active", "fact", "general")
        >>> one = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
        >>> async def write_then_read(path: str) -> list[str]:
        ...     async with SqliteVectorStore(path, dimension=4) as writer:
        ...         await writer.upsert([VectorRecord("fact-1", one, payload)])
        ...     # another process (here: another store on the same file) sees the write
        ...     async with SqliteVectorStore(path, dimension=4) as reader:
        ...         hits = await reader.search(one, 3, VectorFilter(scope_keys=("project:p:p",)))
        ...     return [hit.id for hit in hits]
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     asyncio.run(write_then_read(f"{folder}/vectors.sqlite3"))
        ['fact-1']
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        dimension: int,
        *,
        busy_timeout: float = 5.0,
        cells_from: int | None = CELLS_FROM,
        cells_in_background: bool = True,
    ) -> None:
        self._path = MEMORY if str(path) == MEMORY else str(Path(path))
        self._dimension = self._checked_dimension(dimension)
        self._database = SqliteDatabase(
            self._path,
            migrations="sqlite_vectors",
            table="vector_migrations",
            busy_timeout=busy_timeout,
            pragmas=("PRAGMA cache_size = -16000",),
            after_open=self._check_dimension,
            thread_name="sagewai-vectors",
        )
        if cells_from is not None and (
            isinstance(cells_from, bool) or not isinstance(cells_from, int)
        ):
            raise InvalidInputError(f"cells_from must be an integer or None, got {cells_from!r}")
        self._cells_from = cells_from
        self._cells_in_background = cells_in_background
        self._index: VectorIndex | None = None
        """The copy in memory, made on the first read; touched on the database's thread only."""

    @property
    def path(self) -> str:
        """The database file, or ``":memory:"``."""
        return self._path

    def __repr__(self) -> str:
        return f"SqliteVectorStore({self._path!r}, dimension={self._dimension})"

    # -- lifecycle -------------------------------------------------------------------------

    async def open(self) -> None:
        """Open the database and create its tables. Safe to call more than once."""
        if not self._database.is_open:
            await self._database.open()

    async def close(self) -> None:
        """Close the database and drop the copy in memory. Safe to call more than once."""
        await self._database.close()
        self._index = None

    def _check_dimension(self, db: sqlite3.Connection) -> None:
        recorded = "SELECT value FROM vector_state WHERE key = 'dimension'"
        found = db.execute(recorded).fetchone()
        if found is None:  # a new file: the first opener records its dimension
            with write_transaction(db):
                db.execute(
                    "INSERT OR IGNORE INTO vector_state (key, value) VALUES ('dimension', ?)",
                    (self._dimension,),
                )
                found = db.execute(recorded).fetchone()
        (found,) = found
        if int(found) != self._dimension:
            raise ConfigurationError(
                f"{self._path} holds {found}-d vectors; this store was made for "
                f"{self._dimension}-d ones. Use the embedder the folder was written with."
            )

    # -- the copy in memory ----------------------------------------------------------------

    def _current(self) -> VectorIndex:
        """The copy, caught up with every change committed so far (on the database's thread)."""
        index = self._index
        db = self._database.connection
        if index is None:
            cells_from = sys.maxsize if self._cells_from is None else self._cells_from
            index = VectorIndex(
                self._dimension, cells_from=cells_from, background=self._cells_in_background
            )
            # One allocation for the first load instead of one per growth step.
            (stored,) = db.execute(
                "SELECT count(*) FROM vectors WHERE vector IS NOT NULL"
            ).fetchone()
            index.reserve(int(stored))
        cursor = db.execute(
            f"SELECT {CHANGE_COLUMNS} FROM vectors WHERE seq > ? ORDER BY seq", (index.seq,)
        )
        while rows := cursor.fetchmany(_READ_BATCH):
            changes: list[Change] = rows
            index.apply(changes)
        self._index = index
        return index

    def _catch_up_if_loaded(self) -> None:
        """After a write: bring a copy that exists up to date (a copy not made yet waits)."""
        if self._index is not None:
            self._current()

    # -- the VectorStore core --------------------------------------------------------------

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        """Insert or replace vectors and payloads by id; durable when this returns."""
        if not records:
            return
        latest = {record.id: record for record in records}
        rows = [
            (
                record.id,
                self._unit_vector(record.vector).astype("<f4").tobytes(),
                *_payload_row(record.payload),
            )
            for record in latest.values()
        ]
        await self._write(_UPSERT, rows, seq_at=1)

    async def search_many(
        self,
        vectors: Sequence[Vector],
        top_k: int,
        where: VectorFilter,
        *,
        ef: int | None = None,
    ) -> list[list[VectorHit]]:
        """Exact: ``ef`` changes nothing (but must be positive when given)."""
        queries = [self._unit_vector(vector) for vector in vectors]
        self._check_ef(ef)
        if top_k <= 0 or not queries:
            return [[] for _ in queries]
        matrix = np.stack(queries).astype(np.float32, copy=False)
        return await self._run(lambda: self._current().search(matrix, top_k, where))

    async def get_vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}

        def read() -> dict[str, Vector]:
            db = self._database.connection
            found: dict[str, Vector] = {}
            for start in range(0, len(wanted), _ID_BATCH):
                batch = wanted[start : start + _ID_BATCH]
                marks = ", ".join("?" * len(batch))
                for point_id, blob in db.execute(
                    f"SELECT point_id, vector FROM vectors"
                    f" WHERE point_id IN ({marks}) AND vector IS NOT NULL",
                    batch,
                ):
                    found[point_id] = np.frombuffer(blob, dtype="<f4").astype(np.float32)
            return found

        return await self._run(read)

    async def update_payloads(self, payloads: Mapping[str, VectorPayload]) -> None:
        """Replace the payloads of stored ids (unknown ids are skipped)."""
        rows = [(*_payload_row(payload), point_id) for point_id, payload in payloads.items()]
        if rows:
            await self._write(_UPDATE_PAYLOAD, rows, seq_at=0)

    async def delete(self, ids: Sequence[str]) -> None:
        """Delete vectors by id (unknown ids are ignored)."""
        doomed = [(point_id,) for point_id in dict.fromkeys(ids)]
        if doomed:
            await self._write(_DELETE, doomed, seq_at=0)

    async def delete_project(self, project_id: str) -> None:
        def delete() -> None:
            db = self._database.connection
            with write_transaction(db):
                doomed = db.execute(
                    "SELECT point_id FROM vectors WHERE project_id = ? AND vector IS NOT NULL",
                    (project_id,),
                ).fetchall()
                if doomed:
                    _write_numbered(db, _DELETE, doomed, seq_at=0)
            self._catch_up_if_loaded()

        await self._run(delete)

    async def count(self, where: VectorFilter) -> int:
        return await self._run(lambda: self._current().count(where))

    async def _write(self, sql: str, rows: Sequence[tuple[object, ...]], *, seq_at: int) -> None:
        """One numbered write transaction (see :func:`_write_numbered`), durable on return."""

        def write() -> None:
            with write_transaction(self._database.connection) as db:
                _write_numbered(db, sql, rows, seq_at=seq_at)
            self._catch_up_if_loaded()

        await self._run(write)

    async def _run(self, function: Callable[..., _T], *args: Any) -> _T:
        await self.open()
        return await self._database.run(function, *args)
