"""The vector store conformance suite: subclass it, give it a factory, run the whole suite.

Every sagewai vector backend (:class:`~sagewai.stores.InMemoryVectorStore`, the reference;
:class:`~sagewai.stores.QdrantEdgeVectorStore`; :class:`~sagewai.stores.QdrantVectorStore` local
and server; :class:`~sagewai.stores.PgVectorStore`) runs these tests, and the congruence tests
compare each answer with the in-memory reference's. A backend of your own passes them the same
way (``docs/backends.md``)::

    class TestMyVectorStore(VectorStoreConformance):
        durable = True  # a second store on the same location sees the data

        @pytest.fixture
        def make_store(self, tmp_path):
            return lambda dimension: MyVectorStore(tmp_path / "vectors", dimension)

``make_store`` returns a function of the vector length that makes a store (not yet opened); the
stores it makes share one location, so a durable backend reopens the same data.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import numpy as np
import pytest

from sagewai.core._embedder import Vector, normalize_rows
from sagewai.core._queries import VectorFilter, VectorHit, VectorPayload, VectorRecord
from sagewai.core._records import FactType
from sagewai.errors import InvalidInputError
from sagewai.stores.base._vector import VectorStore
from sagewai.stores.memory._vector import InMemoryVectorStore
from sagewai.stores.qdrant._common import (
    point_uuid,
)
from sagewai.testing.conformance._support import async_fixture, mark_async_tests, opened

__all__ = ["VectorStoreConformance"]

VectorStoreFactory = Callable[[int], VectorStore]
"""Makes a store for vectors of the given length (not yet opened) on the test's location."""

DIM = 8
INF = math.inf
K_P1 = "project:p1:p1"
K_U1 = "user:p1:u1"
K_U2 = "user:p1:u2"
K_P2 = "project:p2:p2"


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


# -- congruence with the reference ----------------------------------------------------------------

SCOPES = (K_P1, K_U1, K_U2, K_P2, "session:p1:s1")
STATUSES = ("active", "active", "active", "flagged", "superseded", "archived", "merged")
KINDS = ("fact", "fact", "document")
TYPES = tuple(fact_type.value for fact_type in FactType)
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


async def _new_store(make_store: VectorStoreFactory, dimension: int = DIM) -> VectorStore:
    """An open store from the factory (closed by the caller)."""
    store = make_store(dimension)
    await store.open()
    return store


@mark_async_tests
class VectorStoreConformance:
    """The vector store conformance suite; override the ``make_store`` fixture.

    Attributes:
        durable: Whether a store made again on the same location sees what the first wrote
            (the reopen test runs only then).
        exact_when_small: Whether a small store answers exactly whatever beam (``ef``) a search
            asks for; an index walked even when small (pgvector with ``exact_threshold=0``)
            sets it to ``False``.
    """

    durable: bool = False
    exact_when_small: bool = True

    @pytest.fixture
    def make_store(self) -> VectorStoreFactory:
        """A factory of stores on one location: override this fixture in your subclass."""
        raise NotImplementedError("override the make_store fixture to return a store factory")

    @async_fixture
    async def store(self, make_store: VectorStoreFactory) -> AsyncIterator[VectorStore]:
        """An open store of ``DIM``-long vectors from :meth:`make_store`, closed afterwards."""
        async with opened(make_store(DIM)) as store:
            yield store

    # -- basics ------------------------------------------------------------------------------------

    async def test_empty_store_finds_nothing(self, store: VectorStore) -> None:
        assert await store.search(unit(1.0), 5, where()) == []
        assert await store.count(where()) == 0
        assert await store.count(where(statuses=None)) == 0
        assert await store.get_vectors(["missing"]) == {}
        await store.delete(["missing"])
        await store.delete_project("p1")
        await store.update_payloads({"missing": payload()})
        assert await store.count(where(statuses=None)) == 0

    async def test_search_orders_by_cosine_highest_first(self, store: VectorStore) -> None:
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

    async def test_scores_are_cosine_even_for_vectors_that_are_not_unit_length(
        self,
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

    async def test_top_k_larger_than_store_returns_every_match(self, store: VectorStore) -> None:
        await store.upsert([VectorRecord(f"f{i}", unit(1.0, i), payload()) for i in range(3)])
        assert {hit.id for hit in await store.search(unit(1.0), 50, where())} == {"f0", "f1", "f2"}
        assert await store.search(unit(1.0), 0, where()) == []

    async def test_upsert_replaces_vector_and_payload(self, store: VectorStore) -> None:
        await store.upsert([VectorRecord("a", unit(1.0), payload(tags=("old",)))])
        await store.upsert([VectorRecord("a", unit(0.0, 1.0), payload(K_U1, tags=("new",)))])
        assert await store.count(where(K_P1, K_U1)) == 1
        assert await store.count(where(K_P1)) == 0
        assert await store.count(where(K_U1, tags_any=("new",))) == 1
        assert await store.count(where(K_U1, tags_any=("old",))) == 0
        [hit] = await store.search(unit(0.0, 1.0), 5, where(K_U1))
        assert hit.id == "a"
        assert hit.score == pytest.approx(1.0, abs=1e-5)

    async def test_upsert_of_the_same_id_twice_in_one_batch_keeps_the_last(
        self, store: VectorStore
    ) -> None:
        await store.upsert(
            [
                VectorRecord("a", unit(1.0), payload()),
                VectorRecord("a", unit(0.0, 1.0), payload(K_U2)),
            ]
        )
        assert await store.count(where(K_P1, K_U2)) == 1
        assert (await store.search(unit(0.0, 1.0), 1, where(K_U2)))[0].id == "a"

    async def test_get_vectors_returns_stored_vectors_and_skips_unknown_ids(
        self, store: VectorStore
    ) -> None:
        first, second = unit(1.0, 2.0, 3.0), unit(-1.0, 0.5)
        await store.upsert(
            [VectorRecord("a", first, payload()), VectorRecord("b", second, payload())]
        )
        found = await store.get_vectors(["b", "missing", "a", "a"])
        assert set(found) == {"a", "b"}
        np.testing.assert_allclose(found["a"], first, atol=1e-6)
        np.testing.assert_allclose(found["b"], second, atol=1e-6)
        assert found["a"].dtype == np.float32
        assert await store.get_vectors([]) == {}

    async def test_count_follows_the_filter(self, store: VectorStore) -> None:
        await store.upsert(
            [
                VectorRecord(f"f{i}", unit(1.0, i), payload(K_U1 if i % 2 else K_P1))
                for i in range(7)
            ]
        )
        assert await store.count(where(K_P1)) == 4
        assert await store.count(where(K_U1)) == 3
        assert await store.count(where(K_P1, K_U1)) == 7
        assert await store.count(where(K_U2)) == 0

    @async_fixture
    async def filter_store(self, store: VectorStore) -> VectorStore:
        await store.upsert([VectorRecord(i, v, p) for i, v, p in FILTER_DATA])
        return store

    @pytest.mark.parametrize("case", list(FILTER_CASES))
    async def test_every_filter_field(self, filter_store: VectorStore, case: str) -> None:
        filter_, expected = FILTER_CASES[case]
        reference = {i for i, _, p in FILTER_DATA if filter_.matches(p, i)}
        assert reference == expected, "the test table disagrees with VectorFilter.matches"
        assert await all_ids(filter_store, filter_) == expected
        assert await filter_store.count(filter_) == len(expected)
        hits = await filter_store.search(unit(1.0), 2, filter_)
        ranked = [i for i, _, _ in FILTER_DATA if i in expected][:2]  # the data is sorted by score
        assert [hit.id for hit in hits] == ranked

    # -- writes ------------------------------------------------------------------------------------

    async def test_update_payloads_changes_what_filters_see(
        self, filter_store: VectorStore
    ) -> None:
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

    async def test_delete_removes_ids_and_ignores_unknown_ones(
        self, filter_store: VectorStore
    ) -> None:
        await filter_store.delete(["base", "user1", "missing", "base"])
        await filter_store.delete(["base"])
        remaining = await all_ids(filter_store, where(*ALL_P1, K_P2, statuses=None))
        assert remaining == {i for i, _, _ in FILTER_DATA} - {"base", "user1"}
        assert await filter_store.get_vectors(["base", "user1"]) == {}
        await filter_store.delete([])
        assert await filter_store.count(where(*ALL_P1, K_P2, statuses=None)) == len(FILTER_DATA) - 2

    async def test_delete_project_leaves_other_projects_untouched(
        self, filter_store: VectorStore
    ) -> None:
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

    async def test_wrong_dimension_is_rejected_without_a_partial_write(
        self, store: VectorStore
    ) -> None:
        good = VectorRecord("good", unit(1.0), payload())
        bad = VectorRecord("bad", np.ones(DIM + 1, dtype=np.float32), payload())
        with pytest.raises(InvalidInputError):
            await store.upsert([good, bad])
        assert await store.count(where()) == 0
        with pytest.raises(InvalidInputError):
            await store.search(np.ones(DIM - 1, dtype=np.float32), 3, where())
        with pytest.raises(InvalidInputError):
            await store.search(np.ones((2, DIM), dtype=np.float32), 3, where())

    async def test_hostile_ids_round_trip(self, store: VectorStore) -> None:
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

    async def test_concurrent_writes_and_reads(self, store: VectorStore) -> None:
        async def write(start: int) -> None:
            await store.upsert(
                [
                    VectorRecord(f"f{i}", unit(1.0, i / 10), payload())
                    for i in range(start, start + 20)
                ]
            )

        await asyncio.gather(*(write(start) for start in range(0, 100, 20)))
        results = await asyncio.gather(*(store.search(unit(1.0), 5, where()) for _ in range(10)))
        nearest = ["f0", "f1", "f2", "f3", "f4"]
        if self.exact_when_small:
            assert all([hit.id for hit in hits] == nearest for hits in results)
        else:  # a graph built by concurrent inserts and walked even when small is approximate
            assert all(len({hit.id for hit in hits} & set(nearest)) >= 4 for hits in results)
        assert await store.count(where()) == 100

    # -- lifecycle ---------------------------------------------------------------------------------

    async def test_open_and_close_are_idempotent(self, make_store: VectorStoreFactory) -> None:
        store = make_store(DIM)
        await store.open()
        await store.open()
        await store.upsert([VectorRecord("a", unit(1.0), payload())])
        await store.close()
        await store.close()
        async with store:
            await store.upsert([VectorRecord("b", unit(0.0, 1.0), payload())])
            assert await store.count(where()) >= 1
        await store.close()

    async def test_data_survives_close_and_reopen(self, make_store: VectorStoreFactory) -> None:
        if not self.durable:
            pytest.skip(f"{type(self).__name__} keeps its data in memory")
        store = await _new_store(make_store)
        await store.upsert([VectorRecord(i, v, p) for i, v, p in FILTER_DATA])
        await store.update_payloads({"base": payload(status="archived")})
        await store.delete(["user1"])
        await store.close()

        reopened = await _new_store(make_store)
        try:
            everything = where(*ALL_P1, K_P2, statuses=None)
            assert await reopened.count(everything) == len(FILTER_DATA) - 1
            assert await all_ids(reopened, where(K_P1, statuses=("archived",))) == {
                "base",
                "archived",
            }
            [hit] = await reopened.search(unit(0.8, 0.2), 1, where(K_U2))
            assert hit.id == "user2"
            np.testing.assert_allclose(
                (await reopened.get_vectors(["doc"]))["doc"], FILTER_DATA[7][1], atol=1e-6
            )
            await reopened.upsert([VectorRecord("after", unit(1.0), payload())])
            assert await reopened.count(everything) == len(FILTER_DATA)
        finally:
            await reopened.close()

    @pytest.mark.parametrize("seed", [1, 2, 3])
    async def test_congruent_with_the_reference(
        self, make_store: VectorStoreFactory, seed: int
    ) -> None:
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
        store = await _new_store(make_store, dimension)
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
                VectorRecord(
                    i, normalize_rows(numbers.standard_normal((1, dimension)))[0], payloads[0]
                )
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
    async def test_search_many_answers_like_one_search_per_vector(
        self, make_store: VectorStoreFactory, seed: int
    ) -> None:
        dimension = 16
        rng = random.Random(seed)
        numbers = np.random.default_rng(seed)
        ids = [f"many-{seed}-{n}" for n in range(200)]
        vectors = normalize_rows(numbers.standard_normal((len(ids), dimension)))
        vectors[3] = vectors[4] = vectors[5]  # real ties
        payloads = [random_payload(rng) for _ in ids]
        reference = InMemoryVectorStore(dimension)
        store = await _new_store(make_store, dimension)
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
                await store.search_many(
                    [queries[0], np.ones(dimension + 1, dtype=np.float32)], 5, everything
                )
            with pytest.raises(InvalidInputError):
                await store.search_many(queries[:1], 5, everything, ef=0)
            # A narrower or wider beam is a hint: an exact answer stays exact on small stores (the
            # "pgvector-hnsw" variant walks its graph even when small, so a beam of 8 may miss).
            narrow = await store.search_many(queries[:20], 5, everything, ef=8)
            if self.exact_when_small:
                assert [[h.id for h in hits] for hits in narrow] == [
                    [h.id for h in hits]
                    for hits in await store.search_many(queries[:20], 5, everything)
                ]
        finally:
            await store.close()
