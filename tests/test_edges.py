"""The last edges of issue 39, each reproduced through the public API on every backend.

Every test here failed before its fix: a blank subject stored but never forgettable, a conflict
error that told one project about another's ids, and graph names with lone surrogates that could
be written but never found or forgotten by the same text. (The untyped errors are in the hostile
suites, ``tests/test_hostile_engine.py`` and ``tests/test_hostile_parts.py``.)
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from sagewai.context._engine import ContextEngine
from sagewai.core._graph_records import Entity
from sagewai.errors import FactConflictError, InvalidInputError
from sagewai.stores.memory._graph import InMemoryGraphStore
from sagewai.stores.memory._metadata import InMemoryMetadataStore
from sagewai.stores.memory._vector import InMemoryVectorStore
from sagewai.stores.sqlite._graph import SqliteGraphStore
from sagewai.testing import FakeEmbedder
from sagewai.testing._nebula import FakeNebulaSession

EngineFactory = Callable[[str], ContextEngine]
"""Engines of several projects over one set of stores (one folder, one schema, one object)."""


@pytest.fixture(params=["memory", "local", "postgres"])
def backend(request: pytest.FixtureRequest) -> tuple[str, str]:
    """A backend name and, for PostgreSQL, its DSN (looked up outside the event loop)."""
    kind = request.param
    return kind, request.getfixturevalue("postgres_dsn") if kind == "postgres" else ""


@pytest.fixture
async def engines(backend: tuple[str, str], tmp_path: Path) -> AsyncIterator[EngineFactory]:
    kind, dsn = backend
    embedder = FakeEmbedder()
    opened: list[ContextEngine] = []
    metadata: Any = None
    schema = f"sagewai_test_{uuid.uuid4().hex[:12]}"
    if kind == "memory":
        metadata = InMemoryMetadataStore()
    elif kind == "postgres":
        from sagewai.stores import PostgresMetadataStore

        metadata = PostgresMetadataStore(dsn, schema=schema)
        await metadata.migrate()
    vectors = InMemoryVectorStore(embedder.dimension)

    def make(project_id: str) -> ContextEngine:
        if kind == "local":
            engine = ContextEngine.local(tmp_path / "mem", project_id=project_id, embedder=embedder)
        else:
            engine = ContextEngine(
                metadata_store=metadata,
                vector_store=vectors,
                project_id=project_id,
                embedder=embedder,
            )
        opened.append(engine)
        return engine

    yield make
    for engine in opened:
        await engine.close()
    if kind == "postgres":
        import asyncpg

        connection = await asyncpg.connect(dsn)
        try:
            await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await connection.close()


# ---------------------------------------------------------------- blank subjects (defect 4)


@pytest.mark.parametrize("blank", [" ", "\u2028\u2029", "\t\n", ""])
async def test_a_blank_subject_is_refused_at_write(engines: EngineFactory, blank: str) -> None:
    engine = engines("p")
    with pytest.raises(InvalidInputError):
        await engine.add("Alice prefers green tea", subject=blank)
    with pytest.raises(InvalidInputError):
        await engine.add_many([{"content": "Bob drives a truck", "subject": blank}])
    assert await engine.count() == 0
    # Nothing unforgettable is left: a subject that is not blank is stored and forgotten.
    await engine.add("Alice prefers green tea", subject="Alice")
    receipt = await engine.forget(subject="Alice")
    assert receipt is not None
    assert await engine.count() == 0


# ---------------------------------------------------------------- conflict errors (defect 5)


async def test_a_conflict_error_never_tells_one_project_about_another(
    engines: EngineFactory,
) -> None:
    alpha = engines("alpha")
    await alpha.add("Alice prefers green tea", fact_id="note-1")
    await alpha.close()  # one open engine per folder at a time
    beta = engines("beta")
    with pytest.raises(FactConflictError) as foreign:
        await beta.add("Bob drives a red truck", fact_id="note-1")
    message = str(foreign.value)
    for revealing in ("exist", "alpha", "project"):
        assert revealing not in message
    assert "choose another fact_id" in message
    assert await beta.count() == 0
    await beta.close()
    # In its own project the caller may be told the id is taken: the fact is theirs to read.
    alpha = engines("alpha")
    with pytest.raises(FactConflictError, match="already exists"):
        await alpha.add("Alice prefers black tea", fact_id="note-1")


# ---------------------------------------------------------------- graph names (defect 3)


async def _graph_store(kind: str, tmp_path: Path) -> Any:
    if kind == "memory":
        return InMemoryGraphStore()
    if kind == "sqlite":
        return SqliteGraphStore(tmp_path / "graph.sqlite3")
    from sagewai.stores.nebula._graph import NebulaGraphStore

    store = NebulaGraphStore(session=FakeNebulaSession(), retry_delay=0.0)
    await store.setup(wait_seconds=0)
    return store


@pytest.mark.parametrize("kind", ["memory", "sqlite", "nebula"])
async def test_a_graph_name_with_a_lone_surrogate_is_found_and_forgotten_by_it(
    kind: str, tmp_path: Path
) -> None:
    store = await _graph_store(kind, tmp_path)
    async with store:
        graph = store.for_project("p")
        written = await graph.upsert_entity(Entity(project_id="p", name="tea \ud800"))
        await graph.upsert_entity(Entity(project_id="p", name="coffee"))
        assert written.name == "tea \ufffd"
        assert [e.id for e in await graph.entities_named("tea \ud800")] == [written.id]
        assert [e.id for e in await graph.entities_named("TEA \ufffd")] == [written.id]
        assert [e.id for e in await graph.find_entities("we drank tea \ud800 at noon")] == [
            written.id
        ]
        assert [e.id for e in await graph.search_entities("tea \ud800")] == [written.id]
        deletion = await graph.delete_subject("tea \ud800")
        assert deletion.entities_deleted == 1
        assert [e.name for e in await graph.entities()] == ["coffee"]


async def test_the_engine_forgets_a_subject_written_with_a_lone_surrogate(tmp_path: Path) -> None:
    async with ContextEngine.local(tmp_path, project_id="p", embedder=FakeEmbedder()) as engine:
        assert engine.graph_store is not None
        await engine.graph_store.upsert_entity(Entity(project_id="p", name="tea \ud800"))
        await engine.add("tea \ud800 is brewed at noon", subject="tea \ud800")
        receipt = await engine.forget(subject="tea \ud800")
        assert receipt is not None
        assert await engine.count() == 0
        assert await engine.graph_store.entities() == []


# ---------------------------------------------------------------- vectors land with their facts


async def test_a_reimport_naming_another_vector_store_indexes_the_facts_it_skips(
    tmp_path: Path,
) -> None:
    from sagewai.context.archive import export_archive, import_archive

    embedder = FakeEmbedder()
    source = ContextEngine.in_memory(project_id="p", embedder=embedder)
    await source.add("Alice prefers green tea", fact_id="a1")
    await source.add("Bob drives a red truck", fact_id="b1")
    archive = tmp_path / "p.jsonl"
    await export_archive(source, archive)
    metadata = InMemoryMetadataStore()

    def target() -> ContextEngine:  # the same metadata store, a vector store of its own
        return ContextEngine(
            metadata_store=metadata,
            vector_store=InMemoryVectorStore(embedder.dimension),
            project_id="p",
            embedder=embedder,
        )

    await import_archive(target(), archive)
    other = target()
    report = await import_archive(other, archive)
    assert report.skipped["facts"] == 2
    assert report.indexed == 2
    found = await other.search("green tea")
    assert found[0].fact.id == "a1"
    assert found[0].parts.dense is not None, "the skipped fact has no vector in this store"
    assert (await import_archive(other, archive)).indexed == 0  # a re-run is a no-op
