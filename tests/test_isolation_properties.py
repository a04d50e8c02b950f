"""Property-based isolation: random writes, reads and forgets across projects, users, sessions.

No read ever returns, and no delete or forget ever touches, a row of another project, user or
session; a session written for one user is never read by another; a user-chosen fact id is never
silently reused; every live fact keeps its own vector. Runs on shared in-memory stores, on one
vector store object shared by projects with their own metadata, on the stores of one embedded
folder, on a shared PostgreSQL schema, and on shared graph and episode stores: 1,160 generated
cases per run.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagewai.context._engine import ContextEngine
from sagewai.core._scope import ContextScope
from sagewai.errors import FactConflictError, FactNotFoundError
from sagewai.stores.memory._metadata import InMemoryMetadataStore
from sagewai.stores.memory._vector import InMemoryVectorStore
from tests.helpers import memory_engine

PROJECTS = ("p1", "p2", "p3")
USERS = ("u1", "u2")
SESSIONS = ("s1", "s2")
WORDS = ("apple", "river", "guitar", "orbit", "lantern", "maple")


@dataclass(frozen=True)
class Add:
    project: str
    scope: ContextScope
    user: str | None
    session: str | None
    words: tuple[str, ...]
    fact_id: str | None = None


@dataclass(frozen=True)
class Search:
    project: str
    user: str | None
    session: str | None
    word: str


@dataclass(frozen=True)
class Forget:
    project: str
    user: str | None
    session: str | None
    subject: str | None


@dataclass(frozen=True)
class DeleteAny:
    project: str
    index: int


USER_IDS = ("note-1", "note-2", "shared")
"""Fact ids a user might choose: the same few, in every project."""


def _add(chosen_ids: bool = False) -> st.SearchStrategy[Add]:
    def build(
        project: str,
        scope: ContextScope,
        user: str | None,
        session: str,
        words: list[str],
        fact_id: str | None,
    ) -> Add:
        if scope is ContextScope.USER and user is None:
            user = USERS[0]
        return Add(
            project,
            scope,
            user if scope in (ContextScope.USER, ContextScope.SESSION) else None,
            session if scope is ContextScope.SESSION else None,
            tuple(words),
            fact_id,
        )

    return st.builds(
        build,
        st.sampled_from(PROJECTS),
        st.sampled_from([ContextScope.PROJECT, ContextScope.USER, ContextScope.SESSION]),
        st.sampled_from(USERS) | st.none(),  # a session written without a user is anyone's
        st.sampled_from(SESSIONS),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
        st.sampled_from(USER_IDS) | st.none() if chosen_ids else st.none(),
    )


def _operations(chosen_ids: bool = False) -> st.SearchStrategy[object]:
    return st.one_of(_add(chosen_ids), *_OTHERS)


_OTHERS = (
    st.builds(
        Search,
        st.sampled_from(PROJECTS),
        st.none() | st.sampled_from(USERS),
        st.none() | st.sampled_from(SESSIONS),
        st.sampled_from(WORDS),
    ),
    st.builds(
        Forget,
        st.sampled_from(PROJECTS),
        st.none() | st.sampled_from(USERS),
        st.none() | st.sampled_from(SESSIONS),
        st.none() | st.sampled_from(WORDS),
    ),
    st.builds(DeleteAny, st.sampled_from(PROJECTS), st.integers(0, 50)),
)
OPERATIONS = _operations()


async def _run(
    engines: dict[str, ContextEngine],
    operations: list[object],
    *,
    ids_shared: bool = True,
) -> None:
    """Run ``operations`` against a model of what each project holds.

    ``ids_shared``: the projects share one metadata store, so a fact id is taken store-wide
    (reusing one is a conflict); without, each project has its own metadata store (the same
    fact id may live in two projects, and only the vector store is shared).
    """
    # The model: every fact we believe exists, with where it lives.
    alive: dict[tuple[str, str], Add] = {}  # (project, fact id) -> origin
    written: list[tuple[str, str]] = []  # (fact id, project) ever written
    for op in operations:
        if isinstance(op, Add):
            taken = op.fact_id is not None and any(
                fact_id == op.fact_id and (ids_shared or project == op.project)
                for project, fact_id in alive
            )
            try:
                fact = await engines[op.project].add(
                    " ".join(op.words),
                    scope=op.scope,
                    user_id=op.user,
                    session_id=op.session,
                    subject=op.words[0],
                    fact_id=op.fact_id,
                )
            except FactConflictError:
                assert taken, "a free fact id was refused"
                continue
            assert not taken, "a fact id in use was silently reused"
            alive[(op.project, fact.id)] = op
            written.append((fact.id, op.project))
        elif isinstance(op, Search):
            results = await engines[op.project].search(
                op.word, top_k=50, user_id=op.user, session_id=op.session
            )
            for result in results:
                origin = alive.get((op.project, result.fact.id))
                assert origin is not None, "read a foreign project's fact"
                assert origin.project == op.project, "read a foreign project's fact"
                if origin.scope is ContextScope.USER:
                    assert origin.user == op.user, "read a sibling user's fact"
                if origin.scope is ContextScope.SESSION:
                    assert origin.session == op.session, "read a sibling session's fact"
                    if origin.user is not None:
                        assert origin.user == op.user, "read another user's session"
        elif isinstance(op, Forget):
            if op.user is None and op.session is None and op.subject is None:
                continue
            before = {p: await engines[p].count() for p in PROJECTS}
            report = await engines[op.project].forget(
                user_id=op.user, session_id=op.session, subject=op.subject
            )
            for project in PROJECTS:
                if project != op.project:
                    assert await engines[project].count() == before[project]
            expected = {
                key
                for key, origin in alive.items()
                if origin.project == op.project
                and (op.user is None or origin.user == op.user)
                and (op.session is None or origin.session == op.session)
                # A subject is forgotten wherever it stands as a word (issue 37).
                and (op.subject is None or op.subject in origin.words)
            }
            assert report.facts_deleted == len(expected)
            for key in expected:
                del alive[key]
        elif isinstance(op, DeleteAny) and written:
            fact_id, owner = written[op.index % len(written)]
            engine = engines[op.project]
            if (op.project, fact_id) not in alive:
                before = await engines[owner].count()
                try:
                    await engine.delete(fact_id)
                except FactNotFoundError:
                    pass
                else:
                    raise AssertionError("deleted a fact that is foreign or already gone")
                assert await engines[owner].count() == before
            else:
                await engine.delete(fact_id)
                del alive[(op.project, fact_id)]
    for project in PROJECTS:
        assert await engines[project].count() == sum(
            1 for origin in alive.values() if origin.project == project
        )
    # Every live fact still has its own vector: nothing another project wrote or deleted
    # replaced or removed it (point ids carry the project).
    for (project, fact_id), origin in alive.items():
        engine = engines[project]
        vectors = await engine.port.vectors.get_vectors([fact_id])
        assert fact_id in vectors, "a fact lost its vector to another project"
        (expected,) = await engine.port.embedder.embed_documents([" ".join(origin.words)])
        assert float(np.dot(vectors[fact_id], expected)) > 0.999, "a vector was overwritten"


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(OPERATIONS, min_size=1, max_size=25))
def test_isolation_on_shared_in_memory_stores(operations: list[object]) -> None:
    metadata = InMemoryMetadataStore()
    vectors = InMemoryVectorStore(64)
    engines = {p: memory_engine(p, metadata=metadata, vectors=vectors) for p in PROJECTS}
    asyncio.run(_run(engines, operations))


_SETTINGS: dict[str, object] = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


@settings(max_examples=300, **_SETTINGS)  # type: ignore[arg-type]
@given(st.lists(_operations(chosen_ids=True), min_size=1, max_size=25))
def test_isolation_with_user_chosen_ids_on_shared_stores(operations: list[object]) -> None:
    metadata = InMemoryMetadataStore()
    vectors = InMemoryVectorStore(64)
    engines = {p: memory_engine(p, metadata=metadata, vectors=vectors) for p in PROJECTS}
    asyncio.run(_run(engines, operations))


@settings(max_examples=200, **_SETTINGS)  # type: ignore[arg-type]
@given(st.lists(_operations(chosen_ids=True), min_size=1, max_size=25))
def test_isolation_when_only_the_vector_store_object_is_shared(operations: list[object]) -> None:
    # Each project has its own metadata store, so the same fact id lives in several projects;
    # their vectors share one store object and must never meet.
    vectors = InMemoryVectorStore(64)
    engines = {p: memory_engine(p, vectors=vectors) for p in PROJECTS}
    asyncio.run(_run(engines, operations, ids_shared=False))


def test_isolation_in_one_folder(tmp_path: Path) -> None:
    # What several ContextEngine.local(folder, project_id=...) share: the folder's SQLite
    # metadata, its embedded vector index and its graph file.
    from sagewai.stores import SqliteMetadataStore
    from sagewai.stores.qdrant._edge import QdrantEdgeVectorStore
    from sagewai.stores.sqlite._graph import SqliteGraphStore
    from sagewai.testing import FakeEmbedder

    embedder = FakeEmbedder()
    metadata = SqliteMetadataStore(tmp_path / "metadata.sqlite3")
    vectors = QdrantEdgeVectorStore(tmp_path / "vectors", dimension=embedder.dimension)
    graph = SqliteGraphStore(tmp_path / "graph.sqlite3")
    engines = {
        p: ContextEngine(
            metadata_store=metadata,
            vector_store=vectors,
            project_id=p,
            embedder=embedder,
            graph_store=graph.for_project(p),
        )
        for p in PROJECTS
    }
    runner = asyncio.Runner()
    for engine in engines.values():
        runner.run(engine.open())

    async def case(operations: list[object]) -> None:
        try:
            await _run(engines, operations)
        finally:
            for engine in engines.values():
                await engine.forget(everything=True)

    try:

        @settings(max_examples=60, **_SETTINGS)  # type: ignore[arg-type]
        @given(st.lists(_operations(chosen_ids=True), min_size=1, max_size=15))
        def run(operations: list[object]) -> None:
            runner.run(case(operations))

        run()
    finally:
        runner.run(engines[PROJECTS[0]].close())
        runner.close()


@pytest.mark.postgres
def test_isolation_on_a_shared_postgres_store(postgres_dsn: str) -> None:
    import uuid

    from sagewai.stores import PostgresMetadataStore

    schema = f"sagewai_test_{uuid.uuid4().hex[:12]}"
    metadata = PostgresMetadataStore(postgres_dsn, schema=schema)
    vectors = InMemoryVectorStore(64)
    runner = asyncio.Runner()
    runner.run(metadata.migrate())
    engines = {p: memory_engine(p, metadata=metadata, vectors=vectors) for p in PROJECTS}  # type: ignore[arg-type]

    async def case(operations: list[object]) -> None:
        try:
            await _run(engines, operations)
        finally:
            for engine in engines.values():
                await engine.forget(everything=True)

    async def drop() -> None:
        import asyncpg

        await metadata.close()
        connection = await asyncpg.connect(postgres_dsn)
        try:
            await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await connection.close()

    try:

        @settings(max_examples=40, **_SETTINGS)  # type: ignore[arg-type]
        @given(st.lists(_operations(chosen_ids=True), min_size=1, max_size=12))
        def run(operations: list[object]) -> None:
            runner.run(case(operations))

        run()
    finally:
        runner.run(drop())
        runner.close()


# ---------------------------------------------------------------- graph and episode stores

NAMES = ("Alice", "Bob", "Carol", "Dana")
PLACES = ("Paris", "Berlin", "Lisbon")


@dataclass(frozen=True)
class Say:
    project: str
    session: str
    user: str | None
    name: str
    place: str


@dataclass(frozen=True)
class ForgetPart:
    project: str
    session: str | None
    subject: str | None


@dataclass(frozen=True)
class Look:
    project: str
    word: str


PART_OPERATIONS = st.one_of(
    st.builds(
        Say,
        st.sampled_from(PROJECTS),
        st.sampled_from(SESSIONS),
        st.none() | st.sampled_from(USERS),
        st.sampled_from(NAMES),
        st.sampled_from(PLACES),
    ),
    st.builds(
        ForgetPart,
        st.sampled_from(PROJECTS),
        st.none() | st.sampled_from(SESSIONS),
        st.none() | st.sampled_from(NAMES),
    ),
    st.builds(Look, st.sampled_from(PROJECTS), st.sampled_from(NAMES + PLACES)),
)


async def _graph_case(store: object, operations: list[object]) -> None:
    from sagewai.intelligence import ConversationGraphBuilder
    from sagewai.stores.base._graph import GraphStore

    assert isinstance(store, GraphStore)
    graphs = {p: store.for_project(p) for p in PROJECTS}
    builders = {p: ConversationGraphBuilder(graph_store=graphs[p]) for p in PROJECTS}
    said: dict[str, set[str]] = {p: set() for p in PROJECTS}
    for op in operations:
        if isinstance(op, Say):
            await builders[op.project].process_turn(
                f"{op.name} moved to {op.place}.", session_id=op.session
            )
            said[op.project].update((op.name, op.place))
        elif isinstance(op, ForgetPart):
            before = {p: await store.counts(p) for p in PROJECTS if p != op.project}
            if op.session is not None:
                await graphs[op.project].delete_session(op.session, subject=op.subject)
            elif op.subject is not None:
                await graphs[op.project].delete_subject(op.subject)
            for project, counts in before.items():
                assert await store.counts(project) == counts, "forgot another project's graph"
        elif isinstance(op, Look):
            for entity in await graphs[op.project].entities():
                assert entity.project_id == op.project, "read another project's entity"
                assert entity.name in said[op.project], "an entity nobody said here"
            for entity in await graphs[op.project].find_entities(f"where is {op.word}?"):
                assert entity.project_id == op.project, "found another project's entity"
    for project in PROJECTS:
        await store.delete_project(project)


@settings(max_examples=120, **_SETTINGS)  # type: ignore[arg-type]
@given(st.lists(PART_OPERATIONS, min_size=1, max_size=15))
def test_graph_isolation_on_a_shared_in_memory_store(operations: list[object]) -> None:
    from sagewai.stores.memory._graph import InMemoryGraphStore

    asyncio.run(_graph_case(InMemoryGraphStore(), operations))


def test_graph_isolation_on_a_shared_sqlite_store(tmp_path: Path) -> None:
    from sagewai.stores.sqlite._graph import SqliteGraphStore

    store = SqliteGraphStore(tmp_path / "graph.sqlite3")
    runner = asyncio.Runner()
    runner.run(store.open())
    try:

        @settings(max_examples=60, **_SETTINGS)  # type: ignore[arg-type]
        @given(st.lists(PART_OPERATIONS, min_size=1, max_size=12))
        def run(operations: list[object]) -> None:
            runner.run(_graph_case(store, operations))

        run()
    finally:
        runner.run(store.close())
        runner.close()


async def _episode_case(store: object, operations: list[object]) -> None:
    from sagewai.stores.base._episodes import EpisodeStoreBase

    assert isinstance(store, EpisodeStoreBase)
    for op in operations:
        if isinstance(op, Say):
            await store.save_episode(
                op.session,
                [f"{op.name} moved to {op.place}", "tea time"],
                project_id=op.project,
                user_id=op.user,
            )
        elif isinstance(op, ForgetPart):
            before = {
                p: sorted(e.model_dump_json() for e in await store.list_episodes(project_id=p))
                for p in PROJECTS
                if p != op.project
            }
            if op.session is not None:
                await store.delete_session(op.session, project_id=op.project)
            if op.subject is not None:
                await store.forget_subject(op.subject, project_id=op.project)
            for project, dumps in before.items():
                now = sorted(
                    e.model_dump_json() for e in await store.list_episodes(project_id=project)
                )
                assert now == dumps, "forgot another project's episodes"
        elif isinstance(op, Look):
            for episode in await store.search_episodes(op.word, project_id=op.project):
                assert episode.project_id == op.project, "found another project's episode"
    for project in PROJECTS:
        await store.delete_project(project)


@settings(max_examples=120, **_SETTINGS)  # type: ignore[arg-type]
@given(st.lists(PART_OPERATIONS, min_size=1, max_size=15))
def test_episode_isolation_on_a_shared_in_memory_store(operations: list[object]) -> None:
    from sagewai.context.episodes import EpisodeStore
    from sagewai.testing import FakeEmbedder

    asyncio.run(_episode_case(EpisodeStore(embedder=FakeEmbedder()), operations))


def test_episode_isolation_on_a_shared_sqlite_store(tmp_path: Path) -> None:
    from sagewai.stores import SqliteEpisodeStore
    from sagewai.testing import FakeEmbedder

    store = SqliteEpisodeStore(tmp_path / "episodes.sqlite3", embedder=FakeEmbedder())
    runner = asyncio.Runner()
    runner.run(store.open())
    try:

        @settings(max_examples=60, **_SETTINGS)  # type: ignore[arg-type]
        @given(st.lists(PART_OPERATIONS, min_size=1, max_size=12))
        def run(operations: list[object]) -> None:
            runner.run(_episode_case(store, operations))

        run()
    finally:
        runner.run(store.close())
        runner.close()
