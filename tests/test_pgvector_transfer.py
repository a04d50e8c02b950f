"""How PgVectorStore sends vectors: pgvector's binary form on its own pool, float4[] on a given one.

Both paths must store and find exactly the same thing; a connection opened before the
``vector`` extension existed must never be asked for the binary form.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import numpy as np
import pytest

import sagewai.stores.postgres._pgvector as pgvector_module
from sagewai.core._queries import VectorFilter, VectorPayload, VectorRecord
from sagewai.stores.postgres._pgvector import PgVectorStore, vector_bytes, vector_from_bytes

DIM = 16
SCOPE = "project\x1fp\x1fp"

pytestmark = pytest.mark.postgres


def _records(count: int, seed: int) -> list[VectorRecord]:
    rng = np.random.default_rng(seed)
    return [
        VectorRecord(
            f"fact-{seed}-{n}",
            rng.standard_normal(DIM).astype(np.float32),
            VectorPayload(
                project_id="p",
                scope_key=SCOPE,
                status="active",
                kind="fact",
                fact_type="preference",
                tags=("t",) if n % 2 else (),
                created_at=float(n),
            ),
        )
        for n in range(count)
    ]


@pytest.fixture
async def schema(pgvector_dsn: str) -> AsyncIterator[str]:
    name = f"sagewai_test_{uuid.uuid4().hex[:12]}"
    async with PgVectorStore(pgvector_dsn, dimension=DIM, schema=name) as store:
        await store.migrate()
    yield name
    async with PgVectorStore(pgvector_dsn, dimension=DIM, schema=name) as cleanup:
        await cleanup._require_pool().execute(f'DROP SCHEMA "{name}" CASCADE')


def test_binary_form_round_trips_and_refuses_a_wrong_length() -> None:
    vectors = np.random.default_rng(1).standard_normal((3, DIM)).astype(np.float32)
    packed = vector_bytes(list(vectors))
    assert [len(data) for data in packed] == [4 + 4 * DIM] * 3
    for data, vector in zip(packed, vectors, strict=True):
        assert np.array_equal(vector_from_bytes(data), vector)
    with pytest.raises(ValueError, match="bytes"):
        vector_from_bytes(packed[0][:-4])


async def test_own_pool_and_given_pool_store_and_find_the_same(
    pgvector_dsn: str, schema: str
) -> None:
    import asyncpg

    everything = VectorFilter(scope_keys=(SCOPE,))
    queries = [r.vector for r in _records(5, seed=9)]
    pool = await asyncpg.create_pool(pgvector_dsn, min_size=1, max_size=2)
    try:
        async with (
            PgVectorStore(pgvector_dsn, dimension=DIM, schema=schema) as own,
            PgVectorStore(dimension=DIM, schema=schema, pool=pool) as given,
        ):
            await own.upsert(_records(40, seed=1))  # binary
            await given.upsert(_records(40, seed=2))  # float4[]
            assert (own._binary, given._binary) == (True, False)
            ids = [f"fact-{seed}-{n}" for seed in (1, 2) for n in range(40)]
            read_own, read_given = await own.get_vectors(ids), await given.get_vectors(ids)
            assert sorted(read_own) == sorted(read_given) == sorted(ids)
            for i in ids:
                assert read_own[i].dtype == np.float32
                assert np.array_equal(read_own[i], read_given[i])
            stored = {r.id: r.vector / np.linalg.norm(r.vector) for r in _records(40, seed=1)}
            for i, vector in stored.items():
                assert np.allclose(read_own[i], vector, atol=1e-6)
            hits_own = await own.search_many(queries, 7, everything)
            hits_given = await given.search_many(queries, 7, everything)
            assert [[h.id for h in hits] for hits in hits_own] == [
                [h.id for h in hits] for hits in hits_given
            ]
            for a, b in zip(hits_own, hits_given, strict=True):
                assert np.allclose([h.score for h in a], [h.score for h in b], atol=1e-6)
                assert len(a) == 7
    finally:
        await pool.close()


async def test_connection_opened_before_the_extension_is_replaced(
    pgvector_dsn: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The pool's first connection finds no extension (as before `migrate` creates it) ...
    monkeypatch.setattr(pgvector_module, "_EXTENSION_SCHEMA", "SELECT NULL::text")
    store = PgVectorStore(pgvector_dsn, dimension=DIM, schema=schema, min_size=1, max_size=1)
    async with store:
        await store._require_pool().fetchval("SELECT 1")  # that connection is open
        assert store._uncoded
        monkeypatch.undo()
        # ... so it is replaced before any vector travels in binary form through it.
        records = _records(10, seed=3)
        await store.upsert(records)
        assert store._binary
        assert not store._uncoded
        hits = await store.search(records[4].vector, 1, VectorFilter(scope_keys=(SCOPE,)))
        assert [h.id for h in hits] == [records[4].id]
