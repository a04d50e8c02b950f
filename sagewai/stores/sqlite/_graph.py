"""The embedded graph store: SQLite tables of nodes and edges (with validity times) in one file.

It is the default graph store of an embedded project folder: ``ContextEngine.local(path)`` and
``sagewai graph export --store PATH`` both open ``PATH/graph.sqlite3`` (:data:`GRAPH_FILENAME`).
Calls run on the shared SQLite worker thread (:mod:`sagewai.stores.sqlite._database`) so the
event loop never blocks on disk, and each :class:`~sagewai.graph.GraphWrite` is one SQLite
transaction: it lands whole or not at all. The schema comes from versioned SQL migrations
(recorded in ``graph_migrations``); files written before that table existed open unchanged.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from sagewai.core._graph_matching import entity_keys
from sagewai.core._graph_records import Entity, Relation
from sagewai.stores.base._graph import GraphStore, GraphWrite
from sagewai.stores.base._graph_codec import (
    ENTITY_COLUMNS,
    RELATION_COLUMNS,
    entity_from_row,
    entity_to_row,
    relation_from_row,
    relation_to_row,
)
from sagewai.stores.sqlite._database import MEMORY, SqliteDatabase, write_transaction

__all__ = ["GRAPH_FILENAME", "SqliteGraphStore", "graph_file"]

GRAPH_FILENAME = "graph.sqlite3"
"""The graph file's name inside an embedded store folder (the one place this name is written)."""

_SCHEMA_VERSION = 1
"""The ``user_version`` the file is marked with (files before the migrations table have it)."""
_CHUNK = 500
_T = TypeVar("_T")


def graph_file(folder: str | Path) -> Path:
    """The graph file of an embedded store folder: ``folder / GRAPH_FILENAME``."""
    return Path(folder) / GRAPH_FILENAME


def _chunks(items: Sequence[_T]) -> Iterator[Sequence[_T]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def _marks(n: int) -> str:
    return ", ".join("?" * n)


class SqliteGraphStore(GraphStore):
    """A graph store in one SQLite file (or in memory with ``":memory:"``).

    Args:
        path: The database file (a path with a suffix, such as ``graph.sqlite3``), or a folder
            (an existing directory, or a new path without a suffix: ``folder/graph.sqlite3`` is
            used), or ``":memory:"``. Folders are created on first use.
        timeout: Seconds to wait for another process's write lock before failing.

    Example:
        >>> import asyncio, tempfile
        >>> from sagewai.stores import SqliteGraphStore
        >>> from sagewai.graph import Entity
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
        self._database = SqliteDatabase(
            MEMORY if self._path is None else str(self._path),
            migrations="sqlite_graph",
            table="graph_migrations",
            busy_timeout=timeout,
            pragmas=("PRAGMA foreign_keys = ON",),
            row_factory=sqlite3.Row,
            user_version=_SCHEMA_VERSION,
            thread_name="sagewai-graph",
        )

    def __repr__(self) -> str:
        return f"SqliteGraphStore({str(self._path) if self._path else ':memory:'!r})"

    @property
    def path(self) -> Path | None:
        """The database file (``None`` for an in-memory database)."""
        return self._path

    # ----------------------------------------------------------------- connection

    async def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        return await self._database.run(lambda: work(self._database.connection))

    async def open(self) -> None:
        await self._database.open()

    async def close(self) -> None:
        await self._database.close()

    # ----------------------------------------------------------------- core

    async def _apply(self, write: GraphWrite) -> None:
        entity_rows = [entity_to_row(e) for e in write.put_entities]
        key_rows = [(e.project_id, k, e.id) for e in write.put_entities for k in entity_keys(e)]
        relation_rows = [relation_to_row(r) for r in write.put_relations]
        project = write.project_id

        def work(db: sqlite3.Connection) -> None:
            with write_transaction(db):
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
            with write_transaction(db):
                relations = db.execute(
                    "DELETE FROM graph_relations WHERE project_id = ?", (project_id,)
                ).rowcount
                entities = db.execute(
                    "DELETE FROM graph_entities WHERE project_id = ?", (project_id,)
                ).rowcount
                db.execute("DELETE FROM graph_entity_keys WHERE project_id = ?", (project_id,))
            return (entities, relations)

        return await self._run(work)
