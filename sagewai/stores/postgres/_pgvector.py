"""The vector role on PostgreSQL: pgvector through asyncpg, beside the metadata in one database.

A deployment that already runs PostgreSQL for facts (:class:`~sagewai.stores.postgres.
PostgresMetadataStore`) and episodes can keep its vectors there too, with no vector server to
run. Vectors live in one table with the payload as plain columns, so every filter of a
:class:`~sagewai.core._queries.VectorFilter` becomes a ``WHERE`` clause that PostgreSQL plans with
its indexes; nearest neighbours come from an HNSW index (cosine).

Transfer: on the connections of a pool the store creates, vectors travel in pgvector's binary
form (a codec registered on each connection as it opens). A ``float4[]`` of Python floats is
encoded by the driver element by element: a search of 384-d vectors took 1.3 ms of the client's
CPU and now takes 0.9, an upsert of 2,048 vectors 0.55 s and now 0.07. A given pool's
connections are not the store's to change: through them vectors travel as ``float4[]``.

Exactness: HNSW is approximate, and a filter applied while walking the graph can leave fewer than
``top_k`` hits. A table under ``exact_threshold`` rows (about what one exact scan reads in a few
milliseconds) is therefore searched exactly, and above it the graph is walked with pgvector's
iterative scan, which keeps walking until ``top_k`` rows pass the filter.
"""

from __future__ import annotations

import json
import math
import re
import struct
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from sagewai.core._embedder import Vector
from sagewai.core._queries import VectorFilter, VectorHit, VectorPayload, VectorRecord
from sagewai.errors import (
    BackendUnavailableError,
    ConfigurationError,
    InvalidInputError,
)
from sagewai.stores.base._vector import VectorStore
from sagewai.stores.postgres._pool import (
    PostgresPool,
    describe_dsn,
    lock_key,
)

__all__ = ["PgVectorStore"]

_IDENTIFIER: Final = re.compile(r"^[a-z_][a-z0-9_]{0,47}$")
_BATCH: Final = 1000
"""Rows per insert statement: one round trip each, bounded memory."""
_QUERY_BATCH: Final = 64
"""Queries answered by one statement in :meth:`PgVectorStore.search_many`."""
_MAX_EF: Final = 1000
"""pgvector's largest ``hnsw.ef_search``."""
_SIZE_TTL: Final = 30.0
"""Seconds the table size estimate (exact or approximate search) is trusted."""


def _key(point_id: str) -> bytes:
    return point_id.encode("utf-8", "surrogatepass")


def _id(key: bytes) -> str:
    return bytes(key).decode("utf-8", "surrogatepass")


def _time(value: float, what: str) -> float:
    if math.isnan(value):
        raise InvalidInputError(f"{what} in a vector payload or filter is NaN")
    return float(value)


_EXTENSION_SCHEMA: Final = (
    "SELECT n.nspname FROM pg_extension AS e JOIN pg_namespace AS n ON n.oid = e.extnamespace"
    " WHERE e.extname = 'vector'"
)


def vector_bytes(vectors: Sequence[Vector]) -> list[bytes]:
    """Each vector in pgvector's binary form: its dimension and a zero (big-endian int16 each),
    then the coordinates (big-endian float4); what the ``vector`` type's receive function reads.

    >>> vector_bytes([np.array([1.0, 0.5], dtype=np.float32)])
    [b'\\x00\\x02\\x00\\x00?\\x80\\x00\\x00?\\x00\\x00\\x00']
    """
    rows = np.asarray(vectors, dtype=">f4")
    count, dimension = rows.shape
    packed = np.empty((count, 4 + 4 * dimension), dtype=np.uint8)
    packed[:, :4] = np.frombuffer(struct.pack(">HH", dimension, 0), dtype=np.uint8)
    packed[:, 4:] = rows.view(np.uint8).reshape(count, 4 * dimension)
    return [row.tobytes() for row in packed]


def vector_from_bytes(data: bytes) -> Vector:
    """The vector of pgvector's binary form (see :func:`vector_bytes`).

    >>> vector_from_bytes(vector_bytes([np.array([1.0, 0.5], dtype=np.float32)])[0])
    array([1. , 0.5], dtype=float32)
    """
    (dimension,) = struct.unpack_from(">H", data)
    if len(data) != 4 + 4 * dimension:
        raise ValueError(f"a {dimension}-d vector takes {4 + 4 * dimension} bytes, not {len(data)}")
    vector: Vector = np.frombuffer(data, dtype=">f4", offset=4).astype(np.float32)
    return vector


def _same_bytes(data: bytes) -> bytes:
    """The codec's encoder: the store passes vectors already packed (:func:`vector_bytes`)."""
    if not isinstance(data, bytes):
        raise TypeError(f"a vector is sent as bytes from vector_bytes(), not {type(data).__name__}")
    return data


@dataclass
class _Params:
    """Positional parameters of one statement, numbered as they are bound."""

    values: list[Any] = field(default_factory=list)

    def bind(self, value: Any, cast: str) -> str:
        self.values.append(value)
        return f"${len(self.values)}::{cast}"


def vector_conditions(where: VectorFilter, params: _Params) -> list[str]:
    """The SQL conditions (``AND``-ed) that select exactly what ``where.matches`` accepts.

    An empty tuple in any field matches nothing, as ``= ANY('{}')`` and ``&& '{}'`` are false.
    Pure, so it is tested without a database.
    """
    conditions = [f"scope_key = ANY({params.bind(list(where.scope_keys), 'text[]')})"]
    for column, values in (
        ("status", where.statuses),
        ("kind", where.kinds),
        ("fact_type", where.fact_types),
    ):
        if values is not None:
            conditions.append(f"{column} = ANY({params.bind(list(values), 'text[]')})")
    if where.tags_any is not None:
        conditions.append(f"tags && {params.bind(list(where.tags_any), 'text[]')}")
    if where.ids is not None:
        conditions.append(f"id = ANY({params.bind([_key(i) for i in where.ids], 'bytea[]')})")
    if where.valid_at is not None:
        at = params.bind(_time(where.valid_at, "valid_at"), "float8")
        conditions.append(f"created_at <= {at} AND valid_from <= {at} AND valid_to > {at}")
    return conditions


async def _create_extension(connection: Any) -> None:
    """Create the ``vector`` extension when it is missing (that needs a role allowed to)."""
    has_extension = await connection.fetchval(
        "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')"
    )
    if not has_extension:
        await connection.execute("CREATE EXTENSION IF NOT EXISTS vector")


class PgVectorStore(VectorStore):
    """Vectors in a PostgreSQL table with pgvector: HNSW (cosine) search, filters in SQL.

    Call :meth:`migrate` once per schema and table (a deploy step; concurrent calls are safe): it
    creates the ``vector`` extension when it is missing (that needs a role allowed to), the table
    for ``dimension``-long vectors and its indexes, recorded in the table's own migrations table.
    Any other operation on an unmigrated table raises :class:`~sagewai.errors.ConfigurationError`.

    Searches at or under ``exact_threshold`` rows score every matching row (exact, like the
    in-memory reference); above it they walk the HNSW graph with ``ef_search`` candidates (raised
    to ``top_k``) and pgvector's iterative scan, so a filter still gets ``top_k`` hits.

    Args:
        dsn: ``postgresql://user:password@host:port/database``. Optional when ``pool`` is given.
        dimension: Vector length; the table is created for it, and a table made for another
            length is a :class:`~sagewai.errors.ConfigurationError`.
        schema: The schema holding the table (may be the metadata store's schema).
        table: The table name (lower-case letters, digits and ``_``).
        hnsw_m: Edges per node of the HNSW graph (read by :meth:`migrate` only).
        ef_construct: Candidates kept while building the graph (read by :meth:`migrate` only).
        ef_search: Candidates kept while searching the graph. The default covers the 120
            nearest that a default :meth:`ContextEngine.search
            <sagewai.context._engine.ContextEngine.search>` asks for (twice its 60 candidates),
            so such a search is one statement; a larger ``top_k`` raises the beam inside a
            transaction (``SET LOCAL``: four round trips).
        exact_threshold: Up to this many rows in the table a search is exact.
        min_size: Connections the pool keeps open.
        max_size: Connections the pool may open.
        pool: An asyncpg pool to use instead of creating one (the store will not close it).
        connect_timeout: Seconds to wait for a connection.

    Example:
        >>> import asyncio
        >>> import numpy as np
        >>> from sagewai.core import VectorFilter, VectorPayload, VectorRecord
        >>> async def demo(dsn: str) -> list[str]:
        ...     payload = VectorPayload("p", "project:p:p", "active", "fact", "general")
        ...     vector = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
        ...     async with PgVectorStore(dsn, dimension=4) as store:
        ...         await store.migrate()
        ...         await store.upsert([VectorRecord("fact-1", vector, payload)])
        ...         hits = await store.search(vector, 3, VectorFilter(scope_keys=("project:p:p",)))
        ...     return [hit.id for hit in hits]
        >>> asyncio.run(demo("postgresql://postgres@127.0.0.1/test"))  # doctest: +SKIP
        ['fact-1']
    """

    def __init__(
        self,
        dsn: str | None = None,
        *,
        dimension: int,
        schema: str = "sagewai",
        table: str = "fact_vectors",
        hnsw_m: int = 16,
        ef_construct: int = 100,
        ef_search: int = 128,
        exact_threshold: int = 2_000,
        min_size: int = 1,
        max_size: int = 10,
        pool: Any = None,
        connect_timeout: float = 10.0,
    ) -> None:
        if dimension <= 0 or dimension > 16_000:
            raise InvalidInputError(f"dimension must be in 1..16000, got {dimension}")
        for name, identifier in (("schema", schema), ("table", table)):
            if not _IDENTIFIER.match(identifier):
                raise ConfigurationError(
                    f"{name} {identifier!r} is not a plain identifier (lower-case letters, digits"
                    " and _, at most 48 characters, not starting with a digit)"
                )
        for name, value in (
            ("hnsw_m", hnsw_m),
            ("ef_construct", ef_construct),
            ("ef_search", ef_search),
        ):
            if value <= 0:
                raise InvalidInputError(f"{name} must be positive, got {value}")
        if exact_threshold < 0:
            raise InvalidInputError("exact_threshold must be zero or positive")
        self._dsn = dsn
        self._dimension = dimension
        self._schema = schema
        self._table_name = table
        self._table = f'"{schema}"."{table}"'
        self._migrations = f'"{schema}"."{table}_migrations"'
        self._index_name = f'"{schema}"."{table}_embedding"'
        self._hnsw_m = hnsw_m
        self._ef_construct = ef_construct
        self._ef_search = min(ef_search, _MAX_EF)
        self._exact_threshold = exact_threshold
        self._postgres = PostgresPool(
            dsn,
            pool=pool,
            min_size=min_size,
            max_size=max_size,
            connect_timeout=connect_timeout,
            server_settings={
                "hnsw.ef_search": str(self._ef_search),
                "hnsw.iterative_scan": "relaxed_order",
            },
            init=self._register_codec,
            extra="pgvector",
            feature="PgVectorStore",
            unmigrated=f"the vector table {self._table}",
        )
        self._checked = False
        self._size: tuple[float, float] | None = None
        """(when, rows) of the last table size estimate."""
        self._binary: bool | None = None
        """Whether vectors travel in binary form (decided on first use, see :meth:`_ready`)."""
        self._uncoded: set[int] = set()
        """Connections of this store's pool opened (or opening) without the codec."""

    @property
    def table(self) -> str:
        """The quoted, schema-qualified table holding the vectors."""
        return self._table

    def __repr__(self) -> str:
        return (
            f"PgVectorStore({describe_dsn(self._dsn)!r}, schema={self._schema!r},"
            f" table={self._table_name!r}, dimension={self._dimension})"
        )

    # -- connections and errors ----------------------------------------------------------------

    @property
    def _pool(self) -> Any:
        return self._postgres.pool

    def _errors(self, action: str) -> AbstractAsyncContextManager[None]:
        """Translate driver exceptions raised inside the block into sagewai errors."""
        return self._postgres.errors(action)

    async def open(self) -> None:
        """Create the connection pool. Safe to call more than once."""
        await self._postgres.open()

    async def close(self) -> None:
        """Close the pool (unless it was given). Safe to call more than once."""
        self._checked = False
        self._binary = None
        self._uncoded.clear()
        await self._postgres.close()

    def _require_pool(self) -> Any:
        if self._pool is None:
            raise BackendUnavailableError(
                f"the vector store {self._table} is not open:"
                " call `await store.open()` or use `async with store:`"
            )
        return self._pool

    async def _ready(self) -> Any:
        """The pool, once the table is known to be migrated for this dimension."""
        pool = self._require_pool()
        if not self._checked:
            missing = await self._postgres.missing_versions(self._migrations, "pgvector")
            if missing:
                raise ConfigurationError(
                    f"the vector table {self._table} on PostgreSQL at"
                    f" {describe_dsn(self._dsn)} is not migrated (missing versions"
                    f" {', '.join(missing)}): call `await store.migrate()` first"
                )
            async with self._errors("check the vector table"):
                await self._check_dimension(pool)
            self._checked = True
        if self._binary is None:
            self._binary = self._postgres.owns_pool
            if self._binary and self._uncoded:
                # Opened before the extension existed (``migrate`` creates it): the pool
                # replaces them, and every connection opened from now on finds the type.
                self._uncoded.clear()
                await pool.expire_connections()
        return pool

    async def _register_codec(self, connection: Any) -> None:
        """The pool's ``init``: vectors in binary form on this connection, once the extension
        exists (a connection opened before is replaced on first use, see :meth:`_ready`)."""
        token = id(connection)
        self._uncoded.add(token)
        schema = await connection.fetchval(_EXTENSION_SCHEMA)
        if schema is None:
            return
        await connection.set_type_codec(
            "vector",
            schema=schema,
            encoder=_same_bytes,
            decoder=vector_from_bytes,
            format="binary",
        )
        self._uncoded.discard(token)

    async def _check_dimension(self, connection: Any) -> None:
        stored = await connection.fetchval(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = to_regclass($1)"
            " AND attname = 'embedding'",
            self._table,
        )
        if stored is not None and stored != self._dimension:
            raise ConfigurationError(
                f"the vector table {self._table} holds {stored}-d vectors,"
                f" this store was made for {self._dimension}-d ones"
            )

    async def migrate(self) -> list[str]:
        """Create or upgrade the vector table; return the versions applied by this call.

        Pending migrations run in one transaction under an advisory lock, so concurrent calls
        apply each version once. Creates the ``vector`` extension first when it is missing.
        """
        self._require_pool()
        applied = await self._postgres.migrate(
            lock=lock_key("sagewai.pgvector.migrate", self._schema, self._table_name),
            schema=f'"{self._schema}"',
            table=self._migrations,
            folder="pgvector",
            render=self._render,
            prepare=_create_extension,
            check=self._check_dimension,
        )
        self._checked = True
        return applied

    def _render(self, sql: str) -> str:
        return (
            sql.replace("__SCHEMA__", f'"{self._schema}"')
            .replace("__TABLE__", self._table_name)
            .replace("__DIMENSION__", str(self._dimension))
            .replace("__HNSW_M__", str(self._hnsw_m))
            .replace("__EF_CONSTRUCT__", str(self._ef_construct))
        )

    async def _exact(self, pool: Any) -> bool:
        """Whether the table is small enough to score every matching row."""
        now = time.monotonic()
        if self._size is None or now - self._size[0] > _SIZE_TTL:
            estimate = await pool.fetchval(
                "SELECT reltuples FROM pg_class WHERE oid = to_regclass($1)", self._table
            )
            if estimate is None or estimate < 0:  # never analysed: count it
                estimate = await pool.fetchval(f"SELECT count(*) FROM {self._table}")
            self._size = (now, float(estimate))
        return self._size[1] <= self._exact_threshold

    def _grew(self, rows: int) -> None:
        if self._size is not None:
            self._size = (self._size[0], self._size[1] + rows)

    # -- the VectorStore core -------------------------------------------------------------------

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        """Insert or replace vectors by id (the last of a repeated id wins), in one transaction."""
        if not records:
            return
        latest = {record.id: record for record in records}
        rows = [
            (
                _key(record.id),
                self._unit_vector(record.vector),
                record.payload.project_id,
                record.payload.scope_key,
                record.payload.status,
                record.payload.kind,
                record.payload.fact_type,
                list(record.payload.tags),
                _time(record.payload.created_at, "created_at"),
                _time(record.payload.valid_from, "valid_from"),
                _time(record.payload.valid_to, "valid_to"),
            )
            for record in latest.values()
        ]
        pool = await self._ready()
        binary = self._binary
        if binary:  # one vector[] in pgvector's binary form (the codec of _register_codec)
            vector, array, name = "u.v", " $2::vector[],", " v,"
        else:  # one flat real[] of every vector: row n is its n-th slice
            d = self._dimension
            vector, array, name = f"($2::float4[])[(u.n - 1) * {d} + 1 : u.n * {d}]::vector", "", ""
        sql = (
            f"INSERT INTO {self._table} AS t (id, embedding, project_id, scope_key, status, kind,"
            " fact_type, tags, created_at, valid_from, valid_to)"
            f" SELECT u.id, {vector}, u.project_id, u.scope_key, u.status, u.kind, u.fact_type,"
            " ARRAY(SELECT json_array_elements_text(u.tags)), u.created_at, u.valid_from,"
            f" u.valid_to FROM unnest($1::bytea[],{array} $3::text[], $4::text[],"
            " $5::text[], $6::text[], $7::text[], $8::json[], $9::float8[], $10::float8[],"
            f" $11::float8[]) WITH ORDINALITY AS u(id,{name} project_id, scope_key, status, kind,"
            " fact_type, tags, created_at, valid_from, valid_to, n)"
            " ON CONFLICT (id) DO UPDATE SET embedding = EXCLUDED.embedding,"
            " project_id = EXCLUDED.project_id, scope_key = EXCLUDED.scope_key,"
            " status = EXCLUDED.status, kind = EXCLUDED.kind, fact_type = EXCLUDED.fact_type,"
            " tags = EXCLUDED.tags, created_at = EXCLUDED.created_at,"
            " valid_from = EXCLUDED.valid_from, valid_to = EXCLUDED.valid_to"
        )
        async with (
            self._errors("upsert vectors"),
            pool.acquire() as connection,
            connection.transaction(),
        ):
            for start in range(0, len(rows), _BATCH):
                columns = [
                    list(column) for column in zip(*rows[start : start + _BATCH], strict=True)
                ]
                columns[1] = (
                    vector_bytes(columns[1]) if binary else np.concatenate(columns[1]).tolist()
                )
                columns[7] = [json.dumps(tags) for tags in columns[7]]
                await connection.execute(sql, *columns)
        self._grew(len(rows))

    async def search_many(
        self,
        vectors: Sequence[Vector],
        top_k: int,
        where: VectorFilter,
        *,
        ef: int | None = None,
    ) -> list[list[VectorHit]]:
        """Answer a batch of queries in a few statements (each a lateral join over the queries).

        ``ef`` replaces ``ef_search`` for these queries (raised to ``top_k``, at most 1000).
        """
        queries = [self._unit_vector(vector) for vector in vectors]
        self._check_ef(ef)
        if top_k <= 0 or not queries:
            return [[] for _ in queries]
        pool = await self._ready()
        binary = self._binary
        params = _Params()
        # The queries, filled per batch: in binary form, or one flat real[] and their count.
        batch_param = params.bind(None, "vector[]" if binary else "float4[]")
        count_param = None if binary else params.bind(None, "int")
        conditions = " AND ".join(vector_conditions(where, params))
        limit = params.bind(top_k, "int")
        out: list[list[VectorHit]] = []
        async with self._errors("search vectors"):
            exact = await self._exact(pool)
            # The HNSW index (cosine ops) serves ORDER BY <=>; ordering by the inner product,
            # which equals the cosine on the stored unit vectors, makes PostgreSQL score every
            # matching row instead. The score is the inner product in both cases.
            order = "t.embedding <#> q.v" if exact else "t.embedding <=> q.v"
            d = self._dimension
            queried = (
                f"SELECT n, v FROM unnest({batch_param}) WITH ORDINALITY AS u(v, n)"
                if binary
                else f"SELECT n, ({batch_param})[(n - 1) * {d} + 1 : n * {d}]::vector AS v"
                f" FROM generate_series(1, {count_param}) AS n"
            )
            sql = (
                # MATERIALIZED: each query vector is built once, not once per scanned row.
                f"WITH q AS MATERIALIZED ({queried})"
                " SELECT q.n, h.id, h.score FROM q"
                " CROSS JOIN LATERAL (SELECT t.id, -(t.embedding <#> q.v) AS score,"
                f" {order} AS distance FROM {self._table} AS t WHERE {conditions}"
                f" ORDER BY distance LIMIT {limit}) AS h ORDER BY q.n, h.distance, h.score DESC"
            )
            beam = None if ef is None else min(max(ef, top_k), _MAX_EF)
            if beam is None and top_k > self._ef_search:
                beam = min(top_k, _MAX_EF)
            fixed = params.values[1:] if binary else params.values[2:]
            async with pool.acquire() as connection:
                for start in range(0, len(queries), _QUERY_BATCH):
                    batch = queries[start : start + _QUERY_BATCH]
                    values = (
                        [vector_bytes(batch), *fixed]
                        if binary
                        else [np.concatenate(batch).tolist(), len(batch), *fixed]
                    )
                    if beam is None or exact:
                        rows = await connection.fetch(sql, *values)
                    else:
                        async with connection.transaction():
                            await connection.execute(f"SET LOCAL hnsw.ef_search = {int(beam)}")
                            rows = await connection.fetch(sql, *values)
                    found: list[list[VectorHit]] = [[] for _ in batch]
                    for row in rows:
                        found[row[0] - 1].append(VectorHit(_id(row[1]), float(row[2])))
                    out.extend(found)
        return out

    async def get_vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        keys = [_key(i) for i in dict.fromkeys(ids)]
        if not keys:
            return {}
        pool = await self._ready()
        column = "embedding" if self._binary else "embedding::float4[]"
        async with self._errors("read vectors"):
            rows = await pool.fetch(
                f"SELECT id, {column} FROM {self._table} WHERE id = ANY($1::bytea[])", keys
            )
        return {_id(row[0]): np.asarray(row[1], dtype=np.float32) for row in rows}

    async def update_payloads(self, payloads: Mapping[str, VectorPayload]) -> None:
        if not payloads:
            return
        columns: list[list[Any]] = [[] for _ in range(10)]
        for point_id, payload in payloads.items():
            row = (
                _key(point_id),
                payload.project_id,
                payload.scope_key,
                payload.status,
                payload.kind,
                payload.fact_type,
                json.dumps(list(payload.tags)),
                _time(payload.created_at, "created_at"),
                _time(payload.valid_from, "valid_from"),
                _time(payload.valid_to, "valid_to"),
            )
            for column, value in zip(columns, row, strict=True):
                column.append(value)
        pool = await self._ready()
        async with self._errors("update vector payloads"):
            await pool.execute(
                f"UPDATE {self._table} AS t SET project_id = u.project_id,"
                " scope_key = u.scope_key, status = u.status, kind = u.kind,"
                " fact_type = u.fact_type, tags = ARRAY(SELECT json_array_elements_text(u.tags)),"
                " created_at = u.created_at, valid_from = u.valid_from, valid_to = u.valid_to"
                " FROM unnest($1::bytea[], $2::text[], $3::text[], $4::text[], $5::text[],"
                " $6::text[], $7::json[], $8::float8[], $9::float8[], $10::float8[])"
                " AS u(id, project_id, scope_key, status, kind, fact_type, tags, created_at,"
                " valid_from, valid_to) WHERE t.id = u.id",
                *columns,
            )

    async def delete(self, ids: Sequence[str]) -> None:
        keys = [_key(i) for i in dict.fromkeys(ids)]
        if not keys:
            return
        pool = await self._ready()
        async with self._errors("delete vectors"):
            await pool.execute(f"DELETE FROM {self._table} WHERE id = ANY($1::bytea[])", keys)

    async def delete_project(self, project_id: str) -> None:
        pool = await self._ready()
        async with self._errors(f"delete the vectors of project {project_id!r}"):
            await pool.execute(f"DELETE FROM {self._table} WHERE project_id = $1", project_id)

    async def build_index(self, *, maintenance_work_mem: str = "1GB") -> bool:
        """Build the HNSW index if it is missing; return whether it was built.

        :meth:`bulk_load` drops the index and calls this at the end; call it yourself after a
        bulk load that was interrupted (searches are exact scans, correct but slow, while the
        index is missing). The build holds a lock that makes writers wait until it is done.
        ``maintenance_work_mem`` is PostgreSQL's memory for the build (a graph that does not fit
        is built much more slowly: a million 384-d vectors need about 2 GB).
        """
        if not re.fullmatch(r"[0-9]{1,9}\s*(kB|MB|GB)", maintenance_work_mem):
            raise InvalidInputError(
                "maintenance_work_mem must look like '512MB' or '2GB',"
                f" got {maintenance_work_mem!r}"
            )
        pool = await self._ready()
        async with (
            self._errors("build the vector index"),
            pool.acquire() as connection,
            connection.transaction(),
        ):
            exists = await connection.fetchval(
                "SELECT to_regclass($1) IS NOT NULL", self._index_name
            )
            if exists:
                return False
            await connection.execute(f"SET LOCAL maintenance_work_mem = '{maintenance_work_mem}'")
            await connection.execute(
                f'CREATE INDEX IF NOT EXISTS "{self._table_name}_embedding" ON {self._table}'
                " USING hnsw (embedding vector_cosine_ops)"
                f" WITH (m = {self._hnsw_m}, ef_construction = {self._ef_construct})"
            )
        return True

    @asynccontextmanager
    async def bulk_load(self, *, maintenance_work_mem: str = "1GB") -> AsyncIterator[None]:
        """Load many vectors inside the block, then build the HNSW index once.

        Keeping the graph up to date row by row is most of an upsert's cost (a few hundred
        vectors a second on a small machine); building it once over the loaded table is several
        times faster. The index is dropped on entry and built again on exit, whether the block
        succeeds or fails (see :meth:`build_index`). Meanwhile searches stay correct (exact
        scans), and other writers may keep writing: their rows are indexed by the build.

        Example:
            >>> async def load(ctx, store: PgVectorStore, texts: list[str]) -> None:
            ...     async with store.bulk_load():
            ...         for start in range(0, len(texts), 2048):
            ...             await ctx.add_many(texts[start : start + 2048])
        """
        pool = await self._ready()
        async with self._errors("drop the vector index"):
            await pool.execute(f"DROP INDEX IF EXISTS {self._index_name}")
        try:
            yield
        finally:
            await self.build_index(maintenance_work_mem=maintenance_work_mem)

    async def count(self, where: VectorFilter) -> int:
        params = _Params()
        conditions = " AND ".join(vector_conditions(where, params))
        pool = await self._ready()
        async with self._errors("count vectors"):
            value = await pool.fetchval(
                f"SELECT count(*) FROM {self._table} WHERE {conditions}", *params.values
            )
        return int(value)
