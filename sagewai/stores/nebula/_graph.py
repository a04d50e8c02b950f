"""The distributed graph store: NebulaGraph through ``nebula3-python``.

One space holds every project: a tag ``sagewai_entity`` for entities and an edge type
``sagewai_relation`` for relations, both indexed on a hashed project key. Vertex ids are hashes of
``(project_id, entity_id)``, so two projects never share a vertex, and every read also checks the
``project_id`` it gets back. The schema is created only by an explicit
:meth:`NebulaGraphStore.setup` call. Statements run on a session pool in a worker thread,
transient failures are retried with backoff, and every value is escaped (see
:mod:`sagewai.stores.nebula._ngql`).

NebulaGraph has no multi-statement transactions: a :class:`~sagewai.graph.GraphWrite` is sent as
deletes, then vertex inserts, then edge inserts. Inserts overwrite, so re-running an interrupted
write is safe.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from sagewai._optional import require
from sagewai.core._graph_records import Entity, Relation
from sagewai.errors import BackendError, BackendUnavailableError, InvalidInputError
from sagewai.stores.base._graph import GraphStore, GraphWrite
from sagewai.stores.base._graph_codec import (
    entity_from_row,
    entity_to_row,
    relation_from_row,
    relation_to_row,
)
from sagewai.stores.nebula import _ngql as ngql

__all__ = ["NebulaExecutor", "NebulaGraphStore"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

# ErrorCode values (nebula3.common.ttypes.ErrorCode) worth a retry: the connection, the session
# or a storage leader changed under us; the same statement can succeed a moment later.
_RETRYABLE_CODES = frozenset({-1, -2, -3, -4, -1002, -1003, -1010})
_PROBE_VID = "0" * ngql.VID_LENGTH


class NebulaExecutor(Protocol):
    """What the store needs from a NebulaGraph session: ``execute(statement) -> ResultSet``.

    ``nebula3.gclient.net.SessionPool`` satisfies it; so does
    :class:`sagewai.testing._nebula.FakeNebulaSession`.
    """

    def execute(self, stmt: str) -> Any:
        """Run one nGQL statement and return a ``nebula3.data.ResultSet.ResultSet``."""
        ...


def _address(value: str | tuple[str, int]) -> tuple[str, int]:
    if isinstance(value, tuple):
        return (value[0], int(value[1]))
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit():
        raise InvalidInputError(f"a NebulaGraph address is 'host:port', got {value!r}")
    return (host, int(port))


def _chunks(items: Sequence[_T], size: int) -> list[Sequence[_T]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _rows(result: Any) -> list[dict[str, Any]]:
    keys = list(result.keys())
    out = []
    for index in range(result.row_size()):
        row: dict[str, Any] = {}
        for key, value in zip(keys, result.row_values(index), strict=True):
            if value.is_string():
                row[key] = value.as_string()
            elif value.is_double():
                row[key] = value.as_double()
            elif value.is_int():
                row[key] = value.as_int()
            else:
                row[key] = None
        out.append(row)
    return out


def _entity_props(entity: Entity) -> dict[str, Any]:
    row = entity_to_row(entity)
    row["entity_id"] = row.pop("id")
    row["project_key"] = ngql.project_key(entity.project_id)
    return row


def _relation_props(relation: Relation) -> dict[str, Any]:
    row = relation_to_row(relation)
    row["relation_id"] = row.pop("id")
    row["project_key"] = ngql.project_key(relation.project_id)
    return row


def _entity_of(row: dict[str, Any]) -> Entity:
    return entity_from_row({**row, "id": row.get("entity_id")})


def _relation_of(row: dict[str, Any]) -> Relation:
    return relation_from_row({**row, "id": row.get("relation_id")})


def _edge_key(relation: Relation) -> tuple[str, str, int]:
    return (
        ngql.vertex_id(relation.project_id, relation.subject_id),
        ngql.vertex_id(relation.project_id, relation.object_id),
        ngql.edge_rank(relation.id),
    )


class NebulaGraphStore(GraphStore):
    """A graph store in a NebulaGraph space shared by many projects.

    Args:
        addresses: graphd addresses, ``"host:port"`` or ``(host, port)``.
        username: NebulaGraph user.
        password: Its password.
        space: The space to use (letters, digits, underscore); created by :meth:`setup`.
        session: An executor to use instead of a session pool: a ``SessionPool`` you built, or
            :class:`~sagewai.testing._nebula.FakeNebulaSession` in tests. With it no connection is
            opened by the store itself.
        pool_size: Most sessions the pool opens.
        max_retries: Retries of a statement after a transient failure.
        retry_delay: First backoff in seconds (doubled at each retry).
        batch_size: Rows per ``INSERT`` / ``DELETE`` / ``FETCH`` statement.

    Example:
        >>> from sagewai.stores import NebulaGraphStore
        >>> store = NebulaGraphStore(addresses=["127.0.0.1:9669"], space="sagewai")
        >>> # await store.setup()  # once, creates the space, tag, edge type and indexes
        >>> graph = store.for_project("demo")
    """

    def __init__(
        self,
        *,
        addresses: Sequence[str | tuple[str, int]] = ("127.0.0.1:9669",),
        username: str = "root",
        password: str = "nebula",
        space: str = "sagewai",
        session: NebulaExecutor | None = None,
        pool_size: int = 10,
        max_retries: int = 3,
        retry_delay: float = 0.2,
        batch_size: int = 100,
    ) -> None:
        self._addresses = [_address(a) for a in addresses]
        if not self._addresses and session is None:
            raise InvalidInputError("give at least one NebulaGraph address or a session")
        self._username = username
        self._password = password
        self._space = ngql.check_name(space)
        if pool_size < 1 or max_retries < 0 or retry_delay < 0 or batch_size < 1:
            raise InvalidInputError(
                "pool_size and batch_size must be positive, max_retries and retry_delay >= 0"
            )
        self._pool_size = pool_size
        self._max_retries = max_retries
        self._retry_delay = retry_delay
        self._batch_size = batch_size
        self._session: NebulaExecutor | None = session
        self._owns_session = session is None
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"NebulaGraphStore(space={self._space!r})"

    @property
    def space(self) -> str:
        """The NebulaGraph space this store uses."""
        return self._space

    # ----------------------------------------------------------------- sessions

    def _open_pool(self) -> NebulaExecutor:
        require("nebula3", extra="nebula", feature="NebulaGraphStore", package="nebula3-python")
        from nebula3.Config import SessionPoolConfig
        from nebula3.gclient.net.SessionPool import SessionPool

        config = SessionPoolConfig()
        config.min_size = 1
        config.max_size = self._pool_size
        pool = SessionPool(self._username, self._password, self._space, self._addresses)
        try:
            if not pool.init(config):
                raise BackendUnavailableError("the NebulaGraph session pool rejected its config")
        except BackendUnavailableError:
            raise
        except Exception as exc:  # the driver raises bare RuntimeError/ValueError and its own
            raise BackendUnavailableError(
                f"cannot open NebulaGraph sessions on space {self._space!r} at "
                f"{self._addresses}: {exc}. Run `await store.setup()` once to create the space."
            ) from exc
        return pool  # type: ignore[no-any-return]

    async def _executor(self) -> NebulaExecutor:
        if self._session is None:
            async with self._lock:
                if self._session is None:
                    self._session = await asyncio.to_thread(self._open_pool)
        return self._session

    def _run_sync(self, executor: NebulaExecutor, stmt: str) -> Any:
        delay = self._retry_delay
        for attempt in range(self._max_retries + 1):
            last = attempt == self._max_retries
            try:
                result = executor.execute(stmt)
            except Exception as exc:  # driver I/O errors: translated here, where they enter
                if last:
                    raise BackendUnavailableError(f"NebulaGraph is unreachable: {exc}") from exc
                logger.warning("NebulaGraph call failed (%s); retrying", exc)
            else:
                if result.is_succeeded():
                    return result
                code = int(result.error_code())
                message = result.error_msg()
                if code not in _RETRYABLE_CODES:
                    raise BackendError(f"NebulaGraph rejected a statement (code {code}): {message}")
                if last:
                    raise BackendUnavailableError(
                        f"NebulaGraph kept failing (code {code}): {message}"
                    )
                logger.warning("NebulaGraph transient error %s (%s); retrying", code, message)
            time.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")  # pragma: no cover

    async def _execute(self, stmt: str) -> Any:
        executor = await self._executor()
        return await asyncio.to_thread(self._run_sync, executor, stmt)

    async def open(self) -> None:
        await self._executor()

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None and self._owns_session:
            closer = getattr(session, "close", None)
            if closer is not None:
                await asyncio.to_thread(closer)

    # ----------------------------------------------------------------- schema

    async def setup(
        self, *, partition_num: int = 10, replica_factor: int = 1, wait_seconds: float = 60.0
    ) -> None:
        """Create the space, tag, edge type and indexes if missing, and wait until they work.

        Call it once per cluster (it is idempotent). NebulaGraph applies schema changes after a
        heartbeat, so this polls with a probe write for up to ``wait_seconds``.
        """
        statements = ngql.setup_statements(
            self._space, partition_num=partition_num, replica_factor=replica_factor
        )
        if self._session is not None:
            for stmt in statements:
                await self._execute(stmt)
        else:
            await asyncio.to_thread(self._setup_with_connection, statements, wait_seconds)
        await self._wait_for_schema(wait_seconds)

    def _setup_with_connection(self, statements: list[str], wait_seconds: float) -> None:
        require("nebula3", extra="nebula", feature="NebulaGraphStore", package="nebula3-python")
        from nebula3.Config import Config
        from nebula3.gclient.net import ConnectionPool

        pool = ConnectionPool()
        try:
            if not pool.init(self._addresses, Config()):
                raise BackendUnavailableError(f"cannot reach NebulaGraph at {self._addresses}")
            session = pool.get_session(self._username, self._password)
            try:
                self._run_sync(session, statements[0])
                use = f"USE `{self._space}`"
                deadline = time.monotonic() + wait_seconds
                while not session.execute(use).is_succeeded():
                    if time.monotonic() > deadline:
                        raise BackendUnavailableError(f"space {self._space!r} did not come up")
                    time.sleep(1.0)
                for stmt in statements[1:]:
                    self._run_sync(session, f"{use}; {stmt}")
            finally:
                session.release()
        except BackendError:
            raise
        except Exception as exc:
            raise BackendUnavailableError(f"NebulaGraph setup failed: {exc}") from exc
        finally:
            pool.close()

    async def _wait_for_schema(self, wait_seconds: float) -> None:
        probe = ngql.insert_vertices(
            [
                (
                    _PROBE_VID,
                    {name: (0.0 if kind == "double" else "") for name, kind in ngql.ENTITY_PROPS},
                )
            ]
        )
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                await self._execute(probe)
                break
            except BackendError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(2.0)
        await self._execute(ngql.delete_vertices([_PROBE_VID]))

    async def drop_space(self) -> None:
        """Drop the whole space, every project in it. For test clusters; there is no undo."""
        await self._execute(f"DROP SPACE IF EXISTS `{self._space}`")

    # ----------------------------------------------------------------- core

    async def _apply(self, write: GraphWrite) -> None:
        project = write.project_id
        size = self._batch_size
        for keys in _chunks([_edge_key(r) for r in write.delete_relations], size):
            await self._execute(ngql.delete_edges(keys))
        for vids in _chunks([ngql.vertex_id(project, i) for i in write.delete_entities], size):
            await self._execute(ngql.delete_vertices(vids))
        vertices = [(ngql.vertex_id(project, e.id), _entity_props(e)) for e in write.put_entities]
        for vertex_rows in _chunks(vertices, size):
            await self._execute(ngql.insert_vertices(vertex_rows))
        edges = [(*_edge_key(r), _relation_props(r)) for r in write.put_relations]
        for edge_rows in _chunks(edges, size):
            await self._execute(ngql.insert_edges(edge_rows))

    async def _get_entities(self, project_id: str, ids: Sequence[str]) -> list[Entity]:
        out: list[Entity] = []
        for chunk in _chunks([ngql.vertex_id(project_id, i) for i in ids], self._batch_size):
            result = await self._execute(ngql.fetch_entities(chunk))
            out += [_entity_of(row) for row in _rows(result)]
        return [e for e in out if e.project_id == project_id]

    async def _entities(self, project_id: str) -> list[Entity]:
        result = await self._execute(ngql.lookup_entities(project_id))
        return [e for e in map(_entity_of, _rows(result)) if e.project_id == project_id]

    async def _relations(self, project_id: str) -> list[Relation]:
        result = await self._execute(ngql.lookup_relations(project_id))
        return [r for r in map(_relation_of, _rows(result)) if r.project_id == project_id]

    async def _relations_touching(
        self, project_id: str, entity_ids: Sequence[str]
    ) -> list[Relation]:
        found: dict[str, Relation] = {}
        vids = [ngql.vertex_id(project_id, i) for i in dict.fromkeys(entity_ids)]
        for chunk in _chunks(vids, self._batch_size):
            result = await self._execute(ngql.go_relations(project_id, chunk))
            for relation in map(_relation_of, _rows(result)):
                if relation.project_id == project_id:
                    found[relation.id] = relation
        return list(found.values())

    async def _delete_project(self, project_id: str) -> tuple[int, int]:
        relations = await self._relations(project_id)
        entities = await self._entities(project_id)
        await self._apply(
            GraphWrite(
                project_id, delete_relations=relations, delete_entities=[e.id for e in entities]
            )
        )
        return (len(entities), len(relations))
