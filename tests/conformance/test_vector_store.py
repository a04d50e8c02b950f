"""The vector store conformance suite, run on every sagewai vector backend.

The suite itself ships as :class:`sagewai.testing.conformance.VectorStoreConformance`; the
classes at the end give it each engine: :class:`InMemoryVectorStore` (the reference),
:class:`QdrantEdgeVectorStore` (a folder), :class:`QdrantVectorStore` in local mode (in memory
and in a folder), the server code path driven through local mode, a real Qdrant server when
``QDRANT_URL`` is set, and :class:`PgVectorStore` (exact, and walking its HNSW index). The tests
here are specific to one engine or to the pure translation helpers, and say so.
"""

from __future__ import annotations

import asyncio
import math
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest

from sagewai.core._embedder import normalize_rows
from sagewai.core._queries import VectorFilter, VectorHit, VectorRecord
from sagewai.errors import BackendUnavailableError, ConfigurationError, InvalidInputError
from sagewai.stores import QdrantVectorStore
from sagewai.stores.base._vector import VectorStore
from sagewai.stores.memory._vector import InMemoryVectorStore
from sagewai.stores.postgres._pgvector import PgVectorStore
from sagewai.stores.qdrant._common import (
    OPEN_END_SENTINEL,
    decode_payload,
    encode_payload,
    merge_hits,
    plan_filter,
    point_uuid,
    split_by_scope,
)
from sagewai.stores.qdrant._edge import QdrantEdgeVectorStore
from sagewai.stores.sqlite._vectors import SqliteVectorStore
from sagewai.testing.conformance import VectorStoreConformance
from sagewai.testing.conformance._vector import (
    DIM,
    INF,
    K_P1,
    K_U1,
    VectorStoreFactory,
    payload,
    unit,
    where,
)


@dataclass
class Backend:
    """How to make stores of one kind; ``make`` called twice reaches the same data when durable."""

    name: str
    make: Callable[[int], VectorStore]
    durable: bool

    async def new_store(self, dimension: int = DIM) -> VectorStore:
        store = self.make(dimension)
        await store.open()
        return store


def _server_backend(request: pytest.FixtureRequest) -> Backend:
    url = os.environ.get("QDRANT_URL")
    if not url:
        pytest.skip("QDRANT_URL is not set: no Qdrant server to run the server engine against")
    api_key = os.environ.get("QDRANT_API_KEY")
    collection = f"sagewai_test_{uuid.uuid4().hex[:12]}"

    def drop() -> None:
        from qdrant_client import QdrantClient

        client = QdrantClient(url=url, api_key=api_key)
        client.delete_collection(collection)
        client.close()

    request.addfinalizer(drop)
    return Backend(
        "qdrant-server",
        lambda dim: QdrantVectorStore(
            url=url, api_key=api_key, collection=collection, dimension=dim
        ),
        durable=True,
    )


def _pgvector_backend(request: pytest.FixtureRequest, *, exact_threshold: int) -> Backend:
    """PgVectorStore in a fresh schema, its tables migrated for the two dimensions tests use.

    ``exact_threshold=0`` makes every search walk the HNSW graph (with the filter in the walk),
    which small test tables would otherwise never do: the store then orders by the index's
    operator, and the database has sequential scans, bitmap scans and sorts turned off, so the
    planner can only produce the order from the HNSW index.
    """
    import asyncpg

    dsn: str = request.getfixturevalue("pgvector_dsn" if exact_threshold else "pgvector_hnsw_dsn")
    schema = f"sagewai_test_{uuid.uuid4().hex[:12]}"

    def make(dimension: int) -> VectorStore:
        return PgVectorStore(
            dsn,
            dimension=dimension,
            schema=schema,
            table=f"vectors_{dimension}",
            exact_threshold=exact_threshold,
            max_size=4,
        )

    async def migrate() -> None:
        for dimension in (DIM, 16):
            async with make(dimension) as store:
                assert isinstance(store, PgVectorStore)
                await store.migrate()

    async def drop() -> None:
        connection = await asyncpg.connect(dsn)
        try:
            await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await connection.close()

    # The fixture is synchronous and may run inside a test's loop: use a loop of its own.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, migrate()).result()

    def finalize() -> None:
        with ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, drop()).result()

    request.addfinalizer(finalize)
    name = "pgvector" if exact_threshold else "pgvector-hnsw"
    return Backend(name, make, durable=True)


@pytest.fixture(scope="session")
def pgvector_hnsw_dsn(pgvector_dsn: str) -> str:
    """A database of the pgvector server where the planner must take the order from an index."""
    import asyncpg

    async def create() -> None:
        connection = await asyncpg.connect(pgvector_dsn)
        try:
            await connection.execute("CREATE DATABASE hnsw_only")
            await connection.execute(
                "ALTER DATABASE hnsw_only SET enable_seqscan = off;"
                " ALTER DATABASE hnsw_only SET enable_bitmapscan = off;"
                " ALTER DATABASE hnsw_only SET enable_sort = off"
            )
        finally:
            await connection.close()

    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, create()).result()
    return urlsplit(pgvector_dsn)._replace(path="/hnsw_only").geturl()


@pytest.fixture(scope="session")
def empty_edge_shard(tmp_path_factory: pytest.TempPathFactory) -> Callable[[int], Path]:
    """A freshly created, empty edge folder per dimension, made once per session.

    Creating a shard writes and syncs its nine payload indexes (about a second); copying a
    finished empty one is instant. The creation path itself is covered by the edge tests below.
    """
    made: dict[int, Path] = {}

    def get(dimension: int) -> Path:
        if dimension not in made:
            folder = tmp_path_factory.mktemp(f"edge-template-{dimension}") / "shard"

            async def create() -> None:
                async with QdrantEdgeVectorStore(folder, dimension):
                    pass

            # Called from inside a running test loop: build it on a loop of its own.
            with ThreadPoolExecutor(1) as pool:
                pool.submit(asyncio.run, create()).result()
            made[dimension] = folder
        return made[dimension]

    return get


# The "server code on local" backend sends what a server gets (index creation, search
# parameters, one query per scope) to local mode, which warns that it ignores the first two.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Payload indexes have no effect in the local Qdrant:UserWarning",
    "ignore:Local mode performs exact:UserWarning",
)


@pytest.fixture(
    params=[
        "memory",
        "qdrant-edge",
        "qdrant-local-memory",
        "qdrant-local-path",
        "qdrant-server-code-on-local",
        pytest.param("pgvector", marks=pytest.mark.postgres),
        pytest.param("pgvector-hnsw", marks=pytest.mark.postgres),
        "qdrant-server",
    ]
)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    name = request.param
    if name == "memory":
        return Backend(name, InMemoryVectorStore, durable=False)
    if name == "qdrant-edge":
        template: Callable[[int], Path] = request.getfixturevalue("empty_edge_shard")
        folder = tmp_path / "edge"

        def make_edge(dimension: int) -> VectorStore:
            if not folder.exists():
                shutil.copytree(template(dimension), folder)
            return QdrantEdgeVectorStore(folder, dimension)

        return Backend(name, make_edge, durable=True)
    if name == "qdrant-local-memory":
        return Backend(
            name, lambda dim: QdrantVectorStore(location=":memory:", dimension=dim), durable=False
        )
    if name == "qdrant-local-path":
        local = str(tmp_path / "local")
        return Backend(name, lambda dim: QdrantVectorStore(path=local, dimension=dim), durable=True)
    if name == "qdrant-server-code-on-local":
        # No server can run here; this drives the server code path through local mode.
        monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")
        monkeypatch.setattr(QdrantVectorStore, "is_local", property(lambda self: False))
        return Backend(
            name, lambda dim: QdrantVectorStore(location=":memory:", dimension=dim), durable=False
        )
    if name == "pgvector":
        return _pgvector_backend(request, exact_threshold=10_000)
    if name == "pgvector-hnsw":
        return _pgvector_backend(request, exact_threshold=0)
    return _server_backend(request)


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[VectorStore]:
    opened = await backend.new_store()
    try:
        yield opened
    finally:
        await opened.close()


# -- pure translation (no engine) -----------------------------------------------------------------


def test_payload_encoding_round_trips_and_keeps_json_finite() -> None:
    original = payload(tags=("a", "b"), created_at=1.5, valid_from=2.5, valid_to=INF)
    encoded = encode_payload("id-1", original)
    assert encoded["valid_to"] == OPEN_END_SENTINEL
    assert all(not isinstance(v, float) or math.isfinite(v) for v in encoded.values())
    assert decode_payload(encoded) == ("id-1", original)
    closed = replace(original, valid_to=1_700_000_000.25)
    assert decode_payload(encode_payload("id-2", closed)) == ("id-2", closed)
    with pytest.raises(InvalidInputError):
        encode_payload("id-3", replace(original, created_at=math.nan))


def test_filter_plan_maps_every_field() -> None:
    plan = plan_filter(
        VectorFilter(
            scope_keys=(K_P1, K_P1, K_U1),
            statuses=("active",),
            kinds=("fact",),
            fact_types=("event",),
            tags_any=("t",),
            valid_at=INF,
            ids=("x",),
        )
    )
    assert dict(plan.any_of) == {
        "scope_key": (K_P1, K_U1),
        "status": ("active",),
        "kind": ("fact",),
        "fact_type": ("event",),
        "tags": ("t",),
    }
    assert plan.at_most == (("created_at", OPEN_END_SENTINEL), ("valid_from", OPEN_END_SENTINEL))
    assert plan.above == (("valid_to", OPEN_END_SENTINEL),)
    assert plan.point_ids == (point_uuid("x"),)
    assert not plan.matches_nothing
    assert plan_filter(VectorFilter(scope_keys=(K_P1,), kinds=())).matches_nothing
    assert point_uuid("x") != point_uuid("x ")
    assert point_uuid("x") == point_uuid("x")


def test_split_by_scope_and_merge_give_the_union_top_k() -> None:
    plan = plan_filter(VectorFilter(scope_keys=(K_P1, K_U1), tags_any=("t",), valid_at=5.0))
    parts = split_by_scope(plan)
    assert [dict(part.any_of)["scope_key"] for part in parts] == [(K_P1,), (K_U1,)]
    assert all(dict(part.any_of)["tags"] == ("t",) for part in parts)
    assert all((part.at_most, part.above) == (plan.at_most, plan.above) for part in parts)
    assert split_by_scope(plan_filter(VectorFilter(scope_keys=(K_P1,)))) == [
        plan_filter(VectorFilter(scope_keys=(K_P1,)))
    ]
    merged = merge_hits(
        [[VectorHit("a", 0.9), VectorHit("b", 0.2)], [VectorHit("c", 0.5), VectorHit("d", 0.4)]],
        3,
    )
    assert merged == [VectorHit("a", 0.9), VectorHit("c", 0.5), VectorHit("d", 0.4)]


# -- engine-specific behaviour --------------------------------------------------------------------


async def test_store_refuses_calls_before_open(tmp_path: Path) -> None:
    for store in (
        QdrantEdgeVectorStore(tmp_path / "edge", DIM),
        QdrantVectorStore(location=":memory:", dimension=DIM),
    ):
        with pytest.raises(BackendUnavailableError, match="not open"):
            await store.count(where())


async def test_edge_reopen_with_another_dimension_is_a_configuration_error(tmp_path: Path) -> None:
    async with QdrantEdgeVectorStore(tmp_path, DIM) as store:
        await store.upsert([VectorRecord("a", unit(1.0), payload())])
    with pytest.raises(ConfigurationError, match="vector size"):
        await QdrantEdgeVectorStore(tmp_path, DIM * 2).open()
    async with QdrantEdgeVectorStore(tmp_path, DIM) as store:
        assert await store.count(where()) == 1


async def test_edge_folder_used_by_another_store_is_unavailable(tmp_path: Path) -> None:
    async with QdrantEdgeVectorStore(tmp_path, DIM):
        with pytest.raises(BackendUnavailableError):
            await QdrantEdgeVectorStore(tmp_path, DIM).open()


async def test_edge_path_that_is_a_file_is_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(ConfigurationError):
        await QdrantEdgeVectorStore(tmp_path / "file", DIM).open()


async def test_edge_stores_finite_payloads_with_indexes(tmp_path: Path) -> None:
    import qdrant_edge

    original = payload(K_U1, tags=("a",), created_at=10.0, valid_from=20.0, valid_to=INF)
    async with QdrantEdgeVectorStore(tmp_path, DIM) as store:
        await store.upsert([VectorRecord("it's", unit(1.0), original)])
    shard = qdrant_edge.EdgeShard.load(str(tmp_path))
    try:
        [record] = shard.retrieve([point_uuid("it's")], with_payload=True, with_vector=False)
        assert record.payload is not None
        assert decode_payload(dict(record.payload)) == ("it's", original)
        schema = shard.info().payload_schema
        keyword = {"scope_key", "status", "kind", "fact_type", "tags", "project_id"}
        assert {
            name
            for name in keyword
            if schema[name].data_type == qdrant_edge.PayloadSchemaType.Keyword
        } == keyword
        times = {"created_at", "valid_from", "valid_to"}
        assert {
            name for name in times if schema[name].data_type == qdrant_edge.PayloadSchemaType.Float
        } == times
    finally:
        shard.close()


async def _random_records(
    seed: int, count: int
) -> tuple[np.ndarray[Any, Any], list[VectorRecord], InMemoryVectorStore]:
    """``count`` random unit vectors, their records and the exact reference holding them."""
    rng = np.random.default_rng(seed)
    vectors = normalize_rows(rng.standard_normal((count, DIM)))
    records = [VectorRecord(f"f{n}", v, payload()) for n, v in enumerate(vectors)]
    reference = InMemoryVectorStore(DIM)
    await reference.upsert(records)
    return vectors, records, reference


async def _assert_exact(
    store: VectorStore, reference: VectorStore, queries: Any, top_k: int = 5
) -> None:
    """``store`` answers every query with the reference's hits, in the same order."""
    for query in queries:
        expected = [hit.id for hit in await reference.search(query, top_k, where())]
        assert [hit.id for hit in await store.search(query, top_k, where())] == expected


async def test_edge_optimizer_keeps_results_exact(tmp_path: Path) -> None:
    vectors, records, reference = await _random_records(3, 300)
    # A tiny threshold makes writes run the optimizer; a manual call runs it again.
    async with QdrantEdgeVectorStore(tmp_path, DIM, optimize_threshold=100) as store:
        await store.upsert(records[:150])
        await store.delete(["f0", "f1"])
        await store.upsert(records[:2] + records[150:])
        assert isinstance(await store.optimize(), bool)
        await _assert_exact(store, reference, vectors[:20])


async def test_edge_search_threads_leave_the_results_unchanged(tmp_path: Path) -> None:
    # One search thread (the default), Qdrant's own choice of threads, or two: the same hits as
    # the exact reference, in the same order, on a store written and optimized part way.
    vectors, records, reference = await _random_records(5, 400)
    async with QdrantEdgeVectorStore(tmp_path, DIM, optimize_threshold=100) as store:
        for start in range(0, 400, 50):
            await store.upsert(records[start : start + 50])
    for threads in (1, None, 2):
        async with QdrantEdgeVectorStore(tmp_path, DIM, search_threads=threads) as store:
            await _assert_exact(store, reference, vectors[:20], top_k=8)
    for bad in (0, -1):
        with pytest.raises(InvalidInputError, match="search_threads"):
            QdrantEdgeVectorStore(tmp_path, DIM, search_threads=bad)


async def test_edge_search_runs_in_the_callers_thread_unless_the_shard_is_busy(
    tmp_path: Path,
) -> None:
    # A search's few requests run in the event loop's thread (no thread hand-over); a batch of
    # many queries, or a search while a write holds the shard, goes to a worker thread, and the
    # event loop keeps running meanwhile. Every way gives the exact hits.
    import threading

    vectors, records, reference = await _random_records(6, 200)
    async with QdrantEdgeVectorStore(tmp_path, DIM) as store:
        await store.upsert(records)
        threads: list[int] = []
        work = store._work  # observed, not replaced

        def observed(action: str, job: Callable[[Any, Any], Any]) -> Any:
            threads.append(threading.get_ident())
            return work(action, job)

        store._work = observed  # type: ignore[method-assign]
        await _assert_exact(store, reference, vectors[:3])
        assert threads == [threading.get_ident()] * 3
        threads.clear()
        batch = await store.search_many(list(vectors[:9]), 5, where())
        assert threads
        assert threading.get_ident() not in threads
        for query, hits in zip(vectors[:9], batch, strict=True):
            expected = await reference.search(query, 5, where())
            assert [hit.id for hit in hits] == [hit.id for hit in expected]
        threads.clear()
        store._lock.acquire()  # a write in progress
        try:
            search = asyncio.ensure_future(store.search(vectors[0], 5, where()))
            for _ in range(20):  # the event loop is not held up by the waiting search
                await asyncio.sleep(0.005)
            assert not search.done()
        finally:
            store._lock.release()
        hits = await search
        assert threads
        assert threading.get_ident() not in threads
        expected = await reference.search(vectors[0], 5, where())
        assert [hit.id for hit in hits] == [hit.id for hit in expected]


async def test_edge_bulk_load_optimizes_once_at_the_end(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    vectors = normalize_rows(rng.standard_normal((300, DIM)))
    records = [VectorRecord(f"f{n}", v, payload()) for n, v in enumerate(vectors)]
    reference = InMemoryVectorStore(DIM)
    await reference.upsert(records)
    async with QdrantEdgeVectorStore(tmp_path, DIM, optimize_threshold=50) as store:
        runs: list[int] = []
        optimize = store._optimize_locked  # counted, not replaced

        def counted(shard: Any) -> bool:
            runs.append(1)
            return optimize(shard)

        store._optimize_locked = counted  # type: ignore[method-assign]
        async with store.bulk_load():
            for start in range(0, 300, 60):
                await store.upsert(records[start : start + 60])
            assert runs == []  # past the threshold five times, never optimized in the block
            await _assert_exact(store, reference, vectors[7:8])
        assert runs == [1]
        with pytest.raises(RuntimeError, match="stop"):
            async with store.bulk_load():
                raise RuntimeError("stop")
        assert runs == [1, 1]  # a failed block still leaves the index built
        extra = normalize_rows(rng.standard_normal((60, DIM)))
        more = [VectorRecord(f"g{n}", v, payload()) for n, v in enumerate(extra)]
        await reference.upsert(more)
        await store.upsert(more)
        assert runs == [1, 1, 1]  # outside a block the threshold applies again
        await _assert_exact(store, reference, vectors[:20])


async def test_qdrant_client_path_with_another_dimension_is_a_configuration_error(
    tmp_path: Path,
) -> None:
    folder = str(tmp_path / "local")
    async with QdrantVectorStore(path=folder, dimension=DIM) as store:
        await store.upsert([VectorRecord("a", unit(1.0), payload())])
    with pytest.raises(ConfigurationError, match=f"{DIM}-d"):
        await QdrantVectorStore(path=folder, dimension=DIM + 1).open()
    async with QdrantVectorStore(path=folder, dimension=DIM, collection="other") as other:
        assert await other.count(where()) == 0


async def test_qdrant_client_folder_used_by_another_store_is_unavailable(tmp_path: Path) -> None:
    folder = str(tmp_path / "local")
    async with QdrantVectorStore(path=folder, dimension=DIM):
        with pytest.raises(BackendUnavailableError):
            await QdrantVectorStore(path=folder, dimension=DIM).open()


def test_qdrant_client_needs_exactly_one_location() -> None:
    with pytest.raises(ConfigurationError, match="exactly one"):
        QdrantVectorStore(dimension=DIM)
    with pytest.raises(ConfigurationError, match="exactly one"):
        QdrantVectorStore(location=":memory:", url="http://localhost:6333", dimension=DIM)


async def test_unreachable_qdrant_server_is_unavailable() -> None:
    store = QdrantVectorStore(url="http://127.0.0.1:9", dimension=DIM, timeout=2)
    with pytest.raises(BackendUnavailableError):
        await store.open()
    await store.close()


@pytest.mark.postgres
async def test_pgvector_hnsw_variant_really_walks_the_index(pgvector_hnsw_dsn: str) -> None:
    """The "pgvector-hnsw" backend above tests the graph walk only if the planner takes it."""
    import asyncpg

    schema = f"sagewai_test_{uuid.uuid4().hex[:12]}"
    store = PgVectorStore(pgvector_hnsw_dsn, dimension=DIM, schema=schema, exact_threshold=0)
    vectors = normalize_rows(np.random.default_rng(5).standard_normal((50, DIM)))
    async with store:
        await store.migrate()
        await store.upsert([VectorRecord(f"f{n}", v, payload()) for n, v in enumerate(vectors)])
        for query in vectors[:5]:
            await store.search(query, 3, where(K_P1, K_U1, tags_any=None))
    connection = await asyncpg.connect(pgvector_hnsw_dsn)
    try:
        scans = 0
        for _ in range(50):  # statistics reach the view shortly after the backends exit
            scans = await connection.fetchval(
                "SELECT idx_scan FROM pg_stat_user_indexes WHERE schemaname = $1"
                " AND indexrelname = 'fact_vectors_embedding'",
                schema,
            )
            if scans:
                break
            await asyncio.sleep(0.1)
        assert scans >= 5
        await connection.execute(f'DROP SCHEMA "{schema}" CASCADE')
    finally:
        await connection.close()


@pytest.mark.postgres
async def test_pgvector_table_of_another_dimension_is_a_configuration_error(
    pgvector_dsn: str,
) -> None:
    schema = f"sagewai_test_{uuid.uuid4().hex[:12]}"
    async with PgVectorStore(pgvector_dsn, dimension=DIM, schema=schema) as store:
        assert await store.migrate() == ["0001"]
        assert await store.migrate() == []
    wider = PgVectorStore(pgvector_dsn, dimension=DIM * 2, schema=schema)
    async with wider:
        with pytest.raises(ConfigurationError, match=f"holds {DIM}-d vectors"):
            await wider.count(where())
    unmigrated = PgVectorStore(pgvector_dsn, dimension=DIM, schema=schema, table="missing")
    async with unmigrated:
        with pytest.raises(ConfigurationError, match="not migrated"):
            await unmigrated.count(where())
    with pytest.raises(BackendUnavailableError, match="not open"):
        await PgVectorStore(pgvector_dsn, dimension=DIM, schema=schema).count(where())
    with pytest.raises(ConfigurationError, match="plain identifier"):
        PgVectorStore(pgvector_dsn, dimension=DIM, table="bad-name")
    async with PgVectorStore(pgvector_dsn, dimension=DIM, schema=schema) as cleanup:
        pool: Any = cleanup._pool  # the test's own teardown, through the store's connection
        await pool.execute(f'DROP SCHEMA "{schema}" CASCADE')


async def test_unreachable_pgvector_is_unavailable() -> None:
    store = PgVectorStore("postgresql://nobody:secret@127.0.0.1:9/none", dimension=DIM)
    with pytest.raises(BackendUnavailableError) as caught:
        await store.open()
    assert "secret" not in str(caught.value)
    await store.close()


class TestInMemoryVectorStore(VectorStoreConformance):
    @pytest.fixture
    def make_store(self) -> VectorStoreFactory:
        return InMemoryVectorStore


class TestQdrantEdgeVectorStore(VectorStoreConformance):
    durable = True

    @pytest.fixture
    def make_store(
        self, tmp_path: Path, empty_edge_shard: Callable[[int], Path]
    ) -> VectorStoreFactory:
        folder = tmp_path / "edge"

        def make_edge(dimension: int) -> VectorStore:
            if not folder.exists():
                shutil.copytree(empty_edge_shard(dimension), folder)
            return QdrantEdgeVectorStore(folder, dimension)

        return make_edge


class TestQdrantLocalInMemory(VectorStoreConformance):
    @pytest.fixture
    def make_store(self) -> VectorStoreFactory:
        return lambda dim: QdrantVectorStore(location=":memory:", dimension=dim)


class TestQdrantLocalInAFolder(VectorStoreConformance):
    durable = True

    @pytest.fixture
    def make_store(self, tmp_path: Path) -> VectorStoreFactory:
        local = str(tmp_path / "local")
        return lambda dim: QdrantVectorStore(path=local, dimension=dim)


class TestQdrantServerCodeOnLocal(VectorStoreConformance):
    """No server can run here; this drives the server code path through local mode."""

    @pytest.fixture
    def make_store(self, monkeypatch: pytest.MonkeyPatch) -> VectorStoreFactory:
        monkeypatch.setattr(QdrantVectorStore, "is_local", property(lambda self: False))
        return lambda dim: QdrantVectorStore(location=":memory:", dimension=dim)


@pytest.mark.postgres
class TestPgVectorStore(VectorStoreConformance):
    durable = True

    @pytest.fixture
    def make_store(self, request: pytest.FixtureRequest) -> VectorStoreFactory:
        return _pgvector_backend(request, exact_threshold=10_000).make


@pytest.mark.postgres
class TestPgVectorStoreWalkingItsIndex(VectorStoreConformance):
    durable = True
    exact_when_small = False

    @pytest.fixture
    def make_store(self, request: pytest.FixtureRequest) -> VectorStoreFactory:
        return _pgvector_backend(request, exact_threshold=0).make


class TestQdrantServer(VectorStoreConformance):
    durable = True

    @pytest.fixture
    def make_store(self, request: pytest.FixtureRequest) -> VectorStoreFactory:
        return _server_backend(request).make


class TestSqliteVectorStore(VectorStoreConformance):
    durable = True

    @pytest.fixture
    def make_store(self, tmp_path: Path) -> VectorStoreFactory:
        return lambda dim: SqliteVectorStore(tmp_path / "vectors.sqlite3", dim)


class TestSqliteVectorStoreInMemory(VectorStoreConformance):
    @pytest.fixture
    def make_store(self) -> VectorStoreFactory:
        return lambda dim: SqliteVectorStore(":memory:", dim)
