"""The embedded graph store: SQLite tables of nodes and edges (with validity times) in one file.

It is the default graph store of an embedded project folder: ``ContextEngine.local(path)`` and
``sagewai graph export --store PATH`` both open ``PATH/graph.sqlite3`` (:data:`GRAPH_FILENAME`).
Calls run in a worker thread (``asyncio.to_thread``) so the event loop never blocks on disk, and
each :class:`~sagewai.graph.GraphWrite` is one SQLite transaction: it lands whole or not at all.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from sagewai.errors import BackendError, BackendUnavailableError
from sagewai.graph.matching import entity_keys
from sagewai.graph.records import Entity, Relation
from sagewai.stores._graph_codec import (
    ENTITY_COLUMNS,
    RELATION_COLUMNS,
    entity_from_row,
    entity_to_row,
    relation_from_row,
    relation_to_row,
)
from sagewai.stores.base.graph import GraphMemory, GraphWrite

__all__ = ["GRAPH_FILENAME", "SqliteGraphStore", "graph_file"]

GRAPH_FILENAME = "graph.sqlite3"
"""The graph file's name inside an embedded store folder (the one place this name is written)."""

_SCHEMA_VERSION = 1
_CHUNK = 500
_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS graph_entities (
    project_id TEXT NOT NULL,
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    label TEXT NOT NULL,
    aliases TEXT NOT NULL,
    session_ids TEXT NOT NULL,
    created_at TEXT NOT NULL,
    metadata TEXT NOT NULL,
    PRIMARY KEY (project_id, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS graph_entity_keys (
    project_id TEXT NOT NULL,
    key TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    PRIMARY KEY (project_id, key, entity_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS graph_entity_keys_entity ON graph_entity_keys (project_id, entity_id);
CREATE TABLE IF NOT EXISTS graph_relations (
    project_id TEXT NOT NULL,
    id TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    predicate TEXT NOT NULL,
    object_id TEXT NOT NULL,
    valid_from TEXT NOT NULL,
    valid_to TEXT,
    confidence REAL NOT NULL,
    sources TEXT NOT NULL,
    created_at TEXT NOT NULL,
    superseded_by TEXT,
    PRIMARY KEY (project_id, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS graph_relations_subject ON graph_relations (project_id, subject_id);
CREATE INDEX IF NOT EXISTS graph_relations_object ON graph_relations (project_id, object_id);
"""


def graph_file(folder: str | Path) -> Path:
    """The graph file of an embedded store folder: ``folder / GRAPH_FILENAME``."""
    return Path(folder) / GRAPH_FILENAME


def _chunks(items: Sequence[_T]) -> Iterator[Sequence[_T]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def _marks(n: int) -> str:
    return ", ".join("?" * n)


class SqliteGraphStore(GraphMemory):
    """A graph store in one SQLite file (or in memory with ``":memory:"``).

    Args:
        path: The database file (a path with a suffix, such as ``graph.sqlite3``), or a folder
            (an existing directory, or a new path without a suffix: ``folder/graph.sqlite3`` is
            used), or ``":memory:"``. Folders are created on first use.
        timeout: Seconds to wait for another process's write lock before failing.

    Example:
        >>> import asyncio, tempfile
        >>> from sagewai.graph import SqliteGraphStore, Entity
        >>> async def demo(folder: str) -> int:
        ...     async with SqliteGraphStore(folder) as store:
        ...         graph = store.for_project("demo")
        ...         await graph.upsert_entity(Entity(project_id="demo", name="Alice"))
        ...         return (await graph.counts()).entities
        >>> asyncio.run(demo(tempfile.mkdtemp()))
        1
    """

    def __init__(self, path: str | Path, *, timeout: float = 30.0) -> None:
        if str(path) == ":memory:":
            self._path: Path | None = None
        else:
            candidate = Path(path)
            is_folder = candidate.is_dir() or (not candidate.exists() and not candidate.suffix)
            self._path = graph_file(candidate) if is_folder else candidate
        self._timeout = timeout
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SqliteGraphStore({str(self._path) if self._path else ':memory:'!r})"

    @property
    def path(self) -> Path | None:
        """The database file (``None`` for an in-memory database)."""
        return self._path

    # ----------------------------------------------------------------- connection

    def _connect(self) -> sqlite3.Connection:
        if self._connection is not None:
            return self._connection
        try:
            if self._path is None:
                connection = sqlite3.connect(":memory:", check_same_thread=False)
            else:
                self._path.parent.mkdir(parents=True, exist_ok=True)
                connection = sqlite3.connect(
                    self._path, timeout=self._timeout, check_same_thread=False
                )
                connection.execute("PRAGMA journal_mode=WAL")
            connection.row_factory = sqlite3.Row
            connection.execute("PRAGMA foreign_keys=ON")
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version > _SCHEMA_VERSION:
                raise BackendError(
                    f"{self._path} holds graph schema {version}; this sagewai knows up to "
                    f"{_SCHEMA_VERSION}: upgrade sagewai"
                )
            with connection:
                connection.executescript(_SCHEMA)
                connection.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
        except sqlite3.Error as exc:
            raise BackendUnavailableError(
                f"cannot open the graph database {self._path}: {exc}"
            ) from exc
        self._connection = connection
        return connection

    async def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        def call() -> _T:
            with self._lock:
                connection = self._connect()
                try:
                    return work(connection)
                except sqlite3.OperationalError as exc:
                    if "locked" in str(exc) or "busy" in str(exc):
                        raise BackendUnavailableError(
                            f"the graph database is locked: {exc}"
                        ) from exc
                    raise BackendError(f"graph database error: {exc}") from exc
                except sqlite3.Error as exc:
                    raise BackendError(f"graph database error: {exc}") from exc

        return await asyncio.to_thread(call)

    async def open(self) -> None:
        await self._run(lambda db: None)

    async def close(self) -> None:
        def shut() -> None:
            with self._lock:
                if self._connection is not None:
                    self._connection.close()
                    self._connection = None

        await asyncio.to_thread(shut)

    # ----------------------------------------------------------------- core

    async def _apply(self, write: GraphWrite) -> None:
        entity_rows = [entity_to_row(e) for e in write.put_entities]
        key_rows = [(e.project_id, k, e.id) for e in write.put_entities for k in entity_keys(e)]
        relation_rows = [relation_to_row(r) for r in write.put_relations]
        project = write.project_id

        def work(db: sqlite3.Connection) -> None:
            with db:
                for ids in _chunks([r.id for r in write.delete_relations]):
                    db.execute(
                        "DELETE FROM graph_relations WHERE project_id = ? "
                        f"AND id IN ({_marks(len(ids))})",
                        (project, *ids),
                    )
                for ids in _chunks(write.delete_entities):
                    marks = _marks(len(ids))
                    db.execute(
                        "DELETE FROM graph_relations WHERE project_id = ? AND "
                        f"(subject_id IN ({marks}) OR object_id IN ({marks}))",
                        (project, *ids, *ids),
                    )
                    db.execute(
                        f"DELETE FROM graph_entities WHERE project_id = ? AND id IN ({marks})",
                        (project, *ids),
                    )
                    db.execute(
                        "DELETE FROM graph_entity_keys WHERE project_id = ? "
                        f"AND entity_id IN ({marks})",
                        (project, *ids),
                    )
                for ids in _chunks([e.id for e in write.put_entities]):
                    db.execute(
                        "DELETE FROM graph_entity_keys WHERE project_id = ? "
                        f"AND entity_id IN ({_marks(len(ids))})",
                        (project, *ids),
                    )
                db.executemany(
                    f"INSERT OR REPLACE INTO graph_entities ({', '.join(ENTITY_COLUMNS)}) "
                    f"VALUES ({', '.join(':' + c for c in ENTITY_COLUMNS)})",
                    entity_rows,
                )
                db.executemany(
                    "INSERT OR IGNORE INTO graph_entity_keys (project_id, key, entity_id) "
                    "VALUES (?, ?, ?)",
                    key_rows,
                )
                db.executemany(
                    f"INSERT OR REPLACE INTO graph_relations ({', '.join(RELATION_COLUMNS)}) "
                    f"VALUES ({', '.join(':' + c for c in RELATION_COLUMNS)})",
                    relation_rows,
                )

        await self._run(work)

    async def _select_entities(self, sql: str, params: Sequence[Any]) -> list[Entity]:
        rows = await self._run(lambda db: db.execute(sql, params).fetchall())
        return [entity_from_row(dict(row)) for row in rows]

    async def _select_relations(self, sql: str, params: Sequence[Any]) -> list[Relation]:
        rows = await self._run(lambda db: db.execute(sql, params).fetchall())
        return [relation_from_row(dict(row)) for row in rows]

    async def _get_entities(self, project_id: str, ids: Sequence[str]) -> list[Entity]:
        out: list[Entity] = []
        for chunk in _chunks(list(ids)):
            out += await self._select_entities(
                "SELECT * FROM graph_entities WHERE project_id = ? "
                f"AND id IN ({_marks(len(chunk))})",
                (project_id, *chunk),
            )
        return out

    async def _entities(self, project_id: str) -> list[Entity]:
        return await self._select_entities(
            "SELECT * FROM graph_entities WHERE project_id = ? ORDER BY created_at, id",
            (project_id,),
        )

    async def _entities_by_keys(self, project_id: str, keys: Collection[str]) -> list[Entity]:
        out: dict[str, Entity] = {}
        for chunk in _chunks(sorted(keys)):
            for entity in await self._select_entities(
                "SELECT * FROM graph_entities WHERE project_id = ? AND id IN ("
                "SELECT entity_id FROM graph_entity_keys WHERE project_id = ? "
                f"AND key IN ({_marks(len(chunk))}))",
                (project_id, project_id, *chunk),
            ):
                out[entity.id] = entity
        return list(out.values())

    async def _relations(self, project_id: str) -> list[Relation]:
        return await self._select_relations(
            "SELECT * FROM graph_relations WHERE project_id = ? ORDER BY created_at, id",
            (project_id,),
        )

    async def _relations_touching(
        self, project_id: str, entity_ids: Sequence[str]
    ) -> list[Relation]:
        out: dict[str, Relation] = {}
        for chunk in _chunks(list(dict.fromkeys(entity_ids))):
            marks = _marks(len(chunk))
            for relation in await self._select_relations(
                f"SELECT * FROM graph_relations WHERE project_id = ? AND subject_id IN ({marks}) "
                "UNION SELECT * FROM graph_relations WHERE project_id = ? "
                f"AND object_id IN ({marks})",
                (project_id, *chunk, project_id, *chunk),
            ):
                out[relation.id] = relation
        return list(out.values())

    async def _delete_project(self, project_id: str) -> tuple[int, int]:
        def work(db: sqlite3.Connection) -> tuple[int, int]:
            with db:
                relations = db.execute(
                    "DELETE FROM graph_relations WHERE project_id = ?", (project_id,)
                ).rowcount
                entities = db.execute(
                    "DELETE FROM graph_entities WHERE project_id = ?", (project_id,)
                ).rowcount
                db.execute("DELETE FROM graph_entity_keys WHERE project_id = ?", (project_id,))
            return (entities, relations)

        return await self._run(work)
