"""Export / import / migrate: a project moved between any two backends comes back the same.

Every pair among in-memory, embedded (``ContextEngine.local``) and PostgreSQL + Qdrant edge is
run: facts (every field), their audit history, the graph and the episodes compare equal, and the
same searches give the same results.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sagewai import ContextEngine, Fact, FactChange, Provenance
from sagewai.cli._main import main
from sagewai.context.archive import (
    ARCHIVE_VERSION,
    export_archive,
    import_archive,
    migrate,
    read_header,
)
from sagewai.context.episodes import EpisodeStore, PersistentEpisodeStore
from sagewai.errors import InvalidInputError
from sagewai.graph import Entity, Relation
from sagewai.stores.memory._graph import InMemoryGraphStore
from sagewai.stores.memory._metadata import InMemoryMetadataStore
from sagewai.stores.memory._vector import InMemoryVectorStore
from sagewai.stores.qdrant._edge import QdrantEdgeVectorStore
from sagewai.stores.sqlite._graph import SqliteGraphStore
from sagewai.testing import FakeEmbedder

BACKENDS = ("memory", "local", "postgres")
QUERIES = ("what tea does Alice drink?", "deploy version 2.4.1", "Bob moved to Oslo")
Factory = Callable[[str, str], Awaitable[ContextEngine]]


@pytest.fixture
def postgres_place(request: pytest.FixtureRequest) -> tuple[str, str] | None:
    """The DSN and a fresh schema when the test runs a PostgreSQL backend, else None."""
    params = getattr(request.node, "callspec", None)
    if params is None or "postgres" not in params.params.values():
        return None
    return request.getfixturevalue("postgres_dsn"), request.getfixturevalue("postgres_schema")


@pytest.fixture
async def make_engine(
    tmp_path: Path, postgres_place: tuple[str, str] | None
) -> AsyncIterator[Factory]:
    """Build an engine on a named backend, with a graph and an episode store on each."""
    made: list[ContextEngine] = []
    schemas: list[str] = []

    async def build(backend: str, role: str) -> ContextEngine:
        embedder = FakeEmbedder()
        folder = tmp_path / role
        if backend == "memory":
            engine = ContextEngine(
                metadata_store=InMemoryMetadataStore(),
                vector_store=InMemoryVectorStore(embedder.dimension),
                project_id=f"proj-{role}",
                embedder=embedder,
                graph_store=InMemoryGraphStore().for_project(f"proj-{role}"),
                episode_store=EpisodeStore(embedder=embedder),
            )
        elif backend == "local":
            engine = ContextEngine.local(folder, project_id=f"proj-{role}", embedder=embedder)
        else:
            from sagewai.stores import PostgresMetadataStore

            assert postgres_place is not None
            dsn, base_schema = postgres_place
            schema = f"{base_schema}_{role}"
            schemas.append(schema)
            folder.mkdir()
            engine = ContextEngine(
                metadata_store=PostgresMetadataStore(dsn, schema=schema),
                vector_store=QdrantEdgeVectorStore(
                    folder / "vectors", dimension=embedder.dimension
                ),
                project_id=f"proj-{role}",
                embedder=embedder,
                graph_store=SqliteGraphStore(folder / "graph.sqlite3").for_project(f"proj-{role}"),
                episode_store=PersistentEpisodeStore(dsn, schema, embedder=embedder),
            )
        if backend == "postgres":
            await engine.stores.metadata.migrate()
            assert engine.episodes.store is not None
            await engine.episodes.store.migrate()
        await engine.open()
        made.append(engine)
        return engine

    yield build
    for engine in made:
        await engine.close()
    if schemas and postgres_place is not None:
        import asyncpg

        connection = await asyncpg.connect(postgres_place[0])
        try:
            for schema in schemas:
                await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await connection.close()


async def fill(engine: ContextEngine) -> None:
    """A project with every kind of record: scopes, a supersession, a flag, a deletion, ..."""
    at = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
    tea = await engine.add(
        "Alice prefers green tea",
        subject="Alice",
        predicate="prefers",
        object="green tea",
        fact_type="preference",
        user_id="alice",
        tags=["drinks"],
        metadata={"origin": "chat", "n": 3},
        source=Provenance(session_id="s1", message_id="m1", turn_index=0, role="user"),
        created_at=at,
    )
    await engine.add("Deploy with version 2.4.1 of the installer", exact_values=["2.4.1"])
    await engine.add("Bob lives in Bergen", subject="Bob", session_id="s2", scope="session")
    await engine.supersede(
        (await engine.list(session_id="s2", scope="session"))[0].id,
        "Bob moved to Oslo",
        reason="moved",
    )
    await engine.set_status(tea.id, "flagged", reason="check it")
    doomed = await engine.add("a fact deleted later")
    await engine.delete(doomed.id)
    graph = engine.graph_store
    assert graph is not None
    alice = Entity(project_id=engine.project_id, name="Alice", label="person", created_at=at)
    oslo = Entity(
        project_id=engine.project_id, name="Oslo", label="place", aliases=("Christiania",)
    )
    await graph.upsert_entities([alice, oslo])
    await graph.upsert_relation(
        Relation(
            project_id=engine.project_id,
            subject_id=alice.id,
            predicate="visited",
            object_id=oslo.id,
            valid_from=at,
            valid_to=at + timedelta(days=3),
            sources=(Provenance(session_id="s1", message_id="m2"),),
        )
    )
    assert engine.episodes.store is not None
    await engine.episodes.store.save_episode(
        "s1",
        [{"role": "user", "content": "I like green tea"}, {"role": "assistant", "content": "ok"}],
        {"topic": "drinks"},
        project_id=engine.project_id,
        user_id="alice",
    )


async def snapshot(engine: ContextEngine) -> dict[str, Any]:
    """Everything of a project, with the project id blanked so two projects compare."""
    from sagewai.context.archive._export import _all_facts

    facts: list[Fact] = []
    async for page in _all_facts(engine):
        facts.extend(page)
    changes: list[FactChange] = await engine.changes()
    vectors = await engine.port.vectors.get_vectors([f.id for f in facts])
    graph = engine.graph_store
    assert graph is not None
    assert engine.episodes.store is not None
    episodes = await engine.episodes.store.list_episodes(project_id=engine.project_id)

    def plain(record: Any) -> dict[str, Any]:
        data: dict[str, Any] = record.model_dump(mode="json")
        data.pop("project_id", None)
        return data

    return {
        "facts": sorted((plain(f) for f in facts), key=lambda d: d["id"]),
        "vectors": {i: [round(float(x), 6) for x in v] for i, v in sorted(vectors.items())},
        "changes": [plain(c) for c in changes],
        "entities": [plain(e) for e in await graph.entities()],
        "relations": [plain(r) for r in await graph.relations()],
        "episodes": [plain(e) for e in episodes],
    }


async def searches(engine: ContextEngine) -> list[list[tuple[str, float]]]:
    out = []
    for query in QUERIES:
        found = await engine.search(query, top_k=3, user_id="alice")
        out.append([(r.fact.id, round(r.score, 4)) for r in found])
    found = await engine.search("Bob", top_k=3, session_id="s2", as_of=datetime.now(UTC))
    out.append([(r.fact.id, round(r.score, 4)) for r in found])
    return out


@pytest.mark.parametrize("source_backend", BACKENDS)
@pytest.mark.parametrize("target_backend", BACKENDS)
async def test_round_trip_between_backends(
    source_backend: str, target_backend: str, make_engine: Factory, tmp_path: Path
) -> None:
    source = await make_engine(source_backend, "source")
    await fill(source)
    before = await snapshot(source)
    path = tmp_path / "project.jsonl"
    header = await export_archive(source, path)
    assert header.counts.facts == len(before["facts"]) == 4
    assert header.counts.changes == len(before["changes"])
    assert (header.counts.entities, header.counts.relations, header.counts.episodes) == (2, 1, 1)

    target = await make_engine(target_backend, "target")
    report = await import_archive(target, path)
    assert report.imported["facts"] == 4
    assert report.re_embedded == 0
    assert report.unsupported == []
    after = await snapshot(target)
    for kind in before:
        assert after[kind] == before[kind], kind
    # The tombstone of the deleted fact came along, and the history of each fact reads the same.
    assert any(c["action"] == "deleted" for c in after["changes"])
    for fact in before["facts"]:
        assert [c.model_dump() for c in await target.history(fact["id"])] == [
            c.model_copy(update={"project_id": target.project_id}).model_dump()
            for c in await source.history(fact["id"])
        ]
    assert await searches(target) == await searches(source)


async def test_import_is_idempotent_and_conflicts_are_chosen(
    make_engine: Factory, tmp_path: Path
) -> None:
    source = await make_engine("local", "source")
    await fill(source)
    path = tmp_path / "project.jsonl.gz"
    await export_archive(source, path)
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        assert json.loads(handle.readline())["version"] == ARCHIVE_VERSION

    target = await make_engine("memory", "target")
    await import_archive(target, path)
    first = await snapshot(target)
    again = await import_archive(target, path)
    assert again.imported == dict.fromkeys(again.imported, 0)
    assert again.skipped == {
        "facts": 4,
        "changes": len(first["changes"]),
        "entities": 2,
        "relations": 1,
        "episodes": 1,
    }
    assert await snapshot(target) == first

    # replace: the archive's version wins over a change made in the target since.
    fact_id = first["facts"][0]["id"]
    await target.set_status(fact_id, "archived", reason="local edit")
    await import_archive(target, path, on_conflict="replace")
    assert (await target.get(fact_id)).status.value == first["facts"][0]["status"]

    # new-ids: a copy beside the original, with every reference rewritten; stable on re-run.
    copied = await import_archive(target, path, on_conflict="new-ids")
    assert copied.imported["facts"] == 4
    assert await target.count() == 8
    rerun = await import_archive(target, path, on_conflict="new-ids")
    assert rerun.imported["facts"] == 0
    ids = {f["id"] for f in (await snapshot(target))["facts"]}
    for fact in (await snapshot(target))["facts"]:
        if fact["superseded_by"] is not None:
            assert fact["superseded_by"] in ids
    relations = (await snapshot(target))["relations"]
    entity_ids = {e["id"] for e in (await snapshot(target))["entities"]}
    assert all(r["subject_id"] in entity_ids and r["object_id"] in entity_ids for r in relations)


async def test_a_different_embedder_re_embeds(make_engine: Factory, tmp_path: Path) -> None:
    source = await make_engine("memory", "source")
    await fill(source)
    path = tmp_path / "a.jsonl"
    await export_archive(source, path)
    embedder = FakeEmbedder(32)
    target = ContextEngine.in_memory(project_id="other", embedder=embedder)
    report = await import_archive(target, path)
    assert report.re_embedded == 4
    assert report.unsupported == ["episodes"]  # in_memory() has a graph but no episode store
    assert (await target.search("green tea", user_id="alice"))[0].fact.content == (
        "Alice prefers green tea"
    )


async def test_a_target_without_graph_or_episodes_counts_what_it_skips(
    make_engine: Factory, tmp_path: Path
) -> None:
    source = await make_engine("memory", "source")
    await fill(source)
    path = tmp_path / "a.jsonl"
    await export_archive(source, path)
    embedder = FakeEmbedder()
    bare = ContextEngine(
        metadata_store=InMemoryMetadataStore(),
        vector_store=InMemoryVectorStore(embedder.dimension),
        project_id="bare",
        embedder=embedder,
    )
    report = await import_archive(bare, path)
    assert report.unsupported == ["graph", "episodes"]
    assert (report.skipped["entities"], report.skipped["episodes"]) == (2, 1)
    assert report.imported["facts"] == 4


async def test_migrate_moves_everything(make_engine: Factory, tmp_path: Path) -> None:
    source = await make_engine("local", "source")
    await fill(source)
    target = await make_engine("memory", "target")
    seen: list[str] = []
    report = await migrate(source, target, progress=lambda p: seen.append(p.stage))
    assert report.imported.imported["facts"] == 4
    assert report.facts_per_second > 0
    assert {"export facts", "import facts"} <= set(seen)
    assert (await snapshot(target))["facts"] == (await snapshot(source))["facts"]


@pytest.mark.parametrize(
    ("first_line", "body", "message"),
    [
        ("not json", "", "not a sagewai archive"),
        ('{"format": "other"}', "", "not a sagewai archive"),
        ('{"format": "sagewai-archive", "version": 99}', "", "upgrade sagewai"),
        (None, '{"type": "fact", "data": {"content": ""}}', "line 3: bad record"),
        (None, '{"type": "spaceship", "data": {}}', "line 3: bad record"),
        (
            None,
            '{"type": "fact", "data": {"project_id": "p", "content": "x"}, "vector": "!!"}',
            "not base64",
        ),
    ],
)
async def test_a_bad_archive_is_refused_and_nothing_is_written(
    first_line: str | None, body: str, message: str, tmp_path: Path
) -> None:
    header = '{"format": "sagewai-archive", "version": 1, "project_id": "p", "embedder": "e", '
    header += '"dimension": 64}'
    good = '{"type": "fact", "data": {"project_id": "p", "content": "kept?"}, "vector": null}'
    path = tmp_path / "bad.jsonl"
    path.write_text(f"{first_line or header}\n{good}\n{body}\n", encoding="utf-8")
    engine = ContextEngine.in_memory(project_id="p", embedder=FakeEmbedder())
    with pytest.raises(InvalidInputError, match=message):
        await import_archive(engine, path)
    assert await engine.count() == 0
    if first_line is None:
        assert read_header(path).project_id == "p"


async def test_unknown_conflict_mode_is_refused(tmp_path: Path) -> None:
    engine = ContextEngine.in_memory(project_id="p", embedder=FakeEmbedder())
    with pytest.raises(InvalidInputError, match="on_conflict"):
        await import_archive(engine, tmp_path / "x.jsonl", on_conflict="merge")


# ------------------------------------------------------------------------------ the commands


def _seed_folder(folder: Path, project: str) -> None:
    async def seed() -> None:
        async with ContextEngine.local(folder, project_id=project, embedder=FakeEmbedder()) as e:
            await fill(e)

    asyncio.run(seed())


def _folder_snapshot(folder: Path, project: str) -> dict[str, Any]:
    async def read() -> dict[str, Any]:
        async with ContextEngine.local(folder, project_id=project, embedder=FakeEmbedder()) as e:
            return await snapshot(e)

    return asyncio.run(read())


def test_export_and_import_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _seed_folder(tmp_path / "a", "demo")
    archive = tmp_path / "demo.jsonl.gz"
    code = main(
        [
            "export",
            "--project",
            "demo",
            "--store",
            str(tmp_path / "a"),
            "--out",
            str(archive),
            "--embedder",
            "fake",
            "--no-progress",
        ]
    )
    assert code == 0
    assert "exported project 'demo'" in capsys.readouterr().out
    assert read_header(archive).counts.facts == 4

    argv = [
        "import",
        str(archive),
        "--store",
        str(tmp_path / "b"),
        "--embedder",
        "fake",
        "--json",
        "--no-progress",
    ]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["imported"]["facts"] == 4
    assert main(argv) == 0  # idempotent
    assert json.loads(capsys.readouterr().out)["skipped"]["facts"] == 4
    assert _folder_snapshot(tmp_path / "b", "demo") == _folder_snapshot(tmp_path / "a", "demo")


def test_command_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("hello\n", encoding="utf-8")
    assert (
        main(
            [
                "import",
                str(bad),
                "--store",
                str(tmp_path / "b"),
                "--project",
                "p",
                "--embedder",
                "fake",
            ]
        )
        == 2
    )
    assert "not a sagewai archive" in capsys.readouterr().err
    assert (
        main(
            [
                "export",
                "--project",
                "p",
                "--store",
                str(tmp_path / "missing"),
                "--out",
                str(tmp_path / "x.jsonl"),
            ]
        )
        == 2
    )
    assert "no embedded store" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["import", str(bad), "--on-conflict", "merge"])
    assert exit_info.value.code == 2


def test_migrate_command_to_postgres(
    tmp_path: Path, postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`sagewai migrate --from ./memory --to postgresql://...` (the default schema, own project)."""
    project = f"migrate-{uuid.uuid4().hex[:10]}"
    _seed_folder(tmp_path / "memory", project)
    vectors, graph = tmp_path / "vectors", tmp_path / "graph.sqlite3"
    argv = [
        "migrate",
        "--project",
        project,
        "--from",
        str(tmp_path / "memory"),
        "--to",
        postgres_dsn,
        "--to-vectors",
        str(vectors),
        "--to-graph",
        str(graph),
        "--embedder",
        "fake",
    ]
    try:
        assert main(argv) == 0
        out = capsys.readouterr()
        assert "migrated 4 facts" in out.out
        assert "import facts: 4/4" in out.err

        async def read() -> dict[str, Any]:
            from sagewai.cli._transfer import open_store

            engine = open_store(
                postgres_dsn,
                project,
                vectors=str(vectors),
                graph=str(graph),
                embedder_spec="fake",
                create=False,
            )
            async with engine:
                return await snapshot(engine)

        assert asyncio.run(read()) == _folder_snapshot(tmp_path / "memory", project)
    finally:

        async def clean() -> None:
            from sagewai.cli._transfer import open_store

            engine = open_store(
                postgres_dsn,
                project,
                vectors=str(vectors),
                graph=None,
                embedder_spec="fake",
                create=False,
            )
            async with engine:
                await engine.stores.metadata.delete_project(project)
                assert engine.episodes.store is not None
                await engine.episodes.store.delete_project(project)

        asyncio.run(clean())


async def test_an_unwritable_archive_path_is_a_configuration_error(tmp_path: Path) -> None:
    from sagewai.errors import ConfigurationError

    engine = ContextEngine.in_memory(project_id="p", embedder=FakeEmbedder())
    await engine.add("something")
    with pytest.raises(ConfigurationError, match="cannot write the archive"):
        await export_archive(engine, tmp_path / "no" / "such" / "folder" / "a.jsonl")
