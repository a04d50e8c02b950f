"""Hostile input to the parts around the engine: bridge, extractors, consolidator, graph
builder, episode stores and the command line, on every backend of each.

Each generated call either returns a documented result or raises a :class:`SagewaiError`
subclass; a call that raises writes nothing, and the stores read back whole afterwards.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagewai.context import MemoryBridge
from sagewai.context._engine import ContextEngine
from sagewai.core._queries import FactQuery
from sagewai.errors import InvalidInputError, SagewaiError, ScopeError
from sagewai.intelligence import (
    ConversationGraphBuilder,
    HybridFactExtractor,
    LLMFactExtractor,
    MemoryConsolidator,
    RuleBasedFactExtractor,
)
from sagewai.stores.memory._graph import InMemoryGraphStore
from sagewai.stores.sqlite._graph import SqliteGraphStore
from sagewai.testing import FakeEmbedder
from sagewai.testing._llm import ScriptedLLM
from sagewai.testing._nebula import FakeNebulaSession
from tests.hostile_values import (
    NASTY_TEXT,
    hostile_id,
    hostile_number,
    hostile_text,
    hostile_time,
    json_value,
    kwargs_of,
    wrong_type,
)

_SETTINGS: dict[str, Any] = {
    "deadline": None,
    "database": None,
    "suppress_health_check": list(HealthCheck),
}


def _typed(call: str, exc: BaseException) -> None:
    if not isinstance(exc, SagewaiError):
        pytest.fail(f"{call} raised untyped {type(exc).__name__}: {exc!r}")


async def _facts(engine: ContextEngine) -> dict[str, Any]:
    rows = await engine.stores.metadata.query(FactQuery(project_id=engine.project_id))
    for fact in rows:
        fact.content.encode("utf-8")
    return {fact.id: fact for fact in rows}


# ---------------------------------------------------------------- messages and model answers

hostile_message = st.one_of(
    hostile_text,
    wrong_type,
    st.fixed_dictionaries(
        {"content": hostile_text | wrong_type},
        optional={
            "role": hostile_text | wrong_type,
            "name": hostile_id,
            "id": hostile_id,
            "timestamp": hostile_time,
            "metadata": st.dictionaries(hostile_text, json_value, max_size=2),
        },
    ),
)


def _answer(value: Any, cut: int | None) -> str:
    text = json.dumps(value, ensure_ascii=True, allow_nan=True, default=str)
    return text if cut is None else text[:cut]


_fact_item = st.fixed_dictionaries(
    {"content": hostile_text | wrong_type},
    optional={
        "fact_type": st.sampled_from(["preference", "opinion", 3, None]),
        "confidence": hostile_number,
        "subject": hostile_text | wrong_type,
        "predicate": hostile_text,
        "object": hostile_text,
        "exact_values": st.lists(hostile_text, max_size=2) | wrong_type,
        "event_time": hostile_text,
        "negated": wrong_type,
    },
)
model_answer = st.one_of(
    hostile_text,
    st.builds(
        _answer,
        st.fixed_dictionaries({"facts": st.lists(_fact_item, max_size=3) | json_value}),
        st.none() | st.integers(0, 200),
    ),
    st.builds(_answer, json_value, st.none()),
    st.sampled_from(["[" * 5_000, '{"facts": [{"content": "\\ud83d tea"', "```json\n{", "null"]),
)


# ---------------------------------------------------------------- extractors


def test_extractors_answer_hostile_text_and_hostile_models() -> None:
    rules = RuleBasedFactExtractor()

    async def check(text: Any, answers: list[str]) -> None:
        llm = LLMFactExtractor(client=ScriptedLLM(list(answers) * 3))
        hybrid = HybridFactExtractor(
            rule_extractor=rules,
            llm_extractor=LLMFactExtractor(client=ScriptedLLM(list(answers) * 3)),
        )
        for name, extractor in (("rules", rules), ("llm", llm), ("hybrid", hybrid)):
            try:
                facts = await extractor.extract(text)
            except Exception as exc:
                _typed(f"{name}.extract({text!r})", exc)
                continue
            for fact in facts:
                fact.content.encode("utf-8")
                (fact.subject or "").encode("utf-8")

    @settings(max_examples=150, **_SETTINGS)
    @given(text=hostile_text | wrong_type, answers=st.lists(model_answer, min_size=1, max_size=2))
    def run(text: Any, answers: list[str]) -> None:
        asyncio.run(check(text, answers))

    run()


# ---------------------------------------------------------------- bridge


ENGINE_KINDS = ["memory", "local", "postgres"]


@pytest.fixture(params=ENGINE_KINDS)
def engine_kind(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Any]]:
    """A backend name and a factory of one engine on it (PostgreSQL in a fresh schema)."""
    kind = request.param
    schemas: list[str] = []

    def make() -> ContextEngine:
        embedder = FakeEmbedder()
        if kind == "memory":
            return ContextEngine.in_memory(project_id="p", embedder=embedder)
        if kind == "local":
            return ContextEngine.local(tmp_path / "mem", project_id="p", embedder=embedder)
        from sagewai.stores import PostgresMetadataStore
        from sagewai.stores.memory._vector import InMemoryVectorStore

        schema = f"sagewai_test_{uuid.uuid4().hex[:12]}"
        schemas.append(schema)
        return ContextEngine(
            metadata_store=PostgresMetadataStore(dsn, schema=schema),
            vector_store=InMemoryVectorStore(embedder.dimension),
            project_id="p",
            embedder=embedder,
        )

    dsn = request.getfixturevalue("postgres_dsn") if kind == "postgres" else ""
    yield kind, make
    if schemas:

        async def drop() -> None:
            import asyncpg

            connection = await asyncpg.connect(dsn)
            try:
                for schema in schemas:
                    await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            finally:
                await connection.close()

        asyncio.run(drop())


def _open(runner: asyncio.Runner, engine: ContextEngine) -> None:
    migrate = getattr(engine.stores.metadata, "migrate", None)
    if migrate is not None:
        runner.run(migrate())
    runner.run(engine.open())


_bridge_call = st.one_of(
    st.tuples(
        st.just("process_message"),
        st.tuples(hostile_message),
        kwargs_of(
            role=hostile_text | wrong_type,
            session_id=hostile_id | wrong_type,
            tags=st.lists(hostile_id, max_size=2) | wrong_type,
            user_id=hostile_id,
        ),
    ),
    st.tuples(
        st.just("bridge_conversation"),
        st.tuples(st.lists(hostile_message, max_size=4) | wrong_type),
        kwargs_of(tags=st.lists(hostile_id, max_size=2) | wrong_type),
    ),
    st.tuples(st.just("flush"), st.tuples(), kwargs_of(session_id=hostile_id)),
)


def test_bridge_answers_hostile_turns_and_writes_all_or_nothing(
    engine_kind: tuple[str, Any],
) -> None:
    kind, make = engine_kind
    runner = asyncio.Runner()
    engine = make()
    _open(runner, engine)

    async def check(call: tuple[str, tuple[Any, ...], dict[str, Any]], answers: list[str]) -> None:
        name, args, kwargs = call
        extractor = HybridFactExtractor(
            rule_extractor=RuleBasedFactExtractor(),
            llm_extractor=LLMFactExtractor(client=ScriptedLLM(list(answers) * 10)),
            llm_threshold=1.0,  # the model sees every message
        )
        bridge = MemoryBridge(
            context_engine=engine, fact_extractor=extractor, extract_every_n_turns=2
        )
        await engine.port.flush_access()  # the last search's read marks: not this call's writes
        before = await _facts(engine)
        try:
            await getattr(bridge, name)(*args, **kwargs)
            await bridge.flush()
        except Exception as exc:
            _typed(f"bridge.{name}(*{args!r}, **{kwargs!r})", exc)
            if name != "flush":
                assert await _facts(engine) == before, f"a refused {name} wrote something"
        await _facts(engine)
        await engine.search("tea")

    try:

        @settings(max_examples={"memory": 60, "local": 30}.get(kind, 20), **_SETTINGS)
        @given(call=_bridge_call, answers=st.lists(model_answer, min_size=1, max_size=2))
        def run(call: tuple[str, tuple[Any, ...], dict[str, Any]], answers: list[str]) -> None:
            runner.run(check(call, answers))

        run()
    finally:
        runner.run(engine.close())
        runner.close()


def test_journaled_hostile_messages_never_break_a_restart(tmp_path: Path) -> None:
    runner = asyncio.Runner()
    engine = ContextEngine.local(tmp_path / "mem", project_id="p", embedder=FakeEmbedder())
    runner.run(engine.open())

    async def scenario(messages: list[Any]) -> None:
        journal = tmp_path / uuid.uuid4().hex / "journal"
        bridge = MemoryBridge(
            context_engine=engine, fact_extractor=RuleBasedFactExtractor(), journal_path=journal
        )
        for message in messages:
            try:
                await bridge.submit(message, session_id="s1")
            except Exception as exc:
                _typed(f"submit({message!r})", exc)
        await bridge.aclose()
        restarted = MemoryBridge(
            context_engine=engine, fact_extractor=RuleBasedFactExtractor(), journal_path=journal
        )
        await restarted.start()
        await restarted.flush()
        await restarted.aclose()
        await _facts(engine)

    try:

        @settings(max_examples=30, **_SETTINGS)
        @given(messages=st.lists(hostile_message, min_size=1, max_size=3))
        def run(messages: list[Any]) -> None:
            runner.run(scenario(messages))

        run()
    finally:
        runner.run(engine.close())
        runner.close()


# ---------------------------------------------------------------- consolidator

_consolidate = kwargs_of(
    project_id=hostile_id | wrong_type,
    scope=st.sampled_from(["org", "project", "user", "session", "sesion", None, 1]),
    tags=st.lists(hostile_id, max_size=2) | wrong_type,
    dry_run=st.sampled_from([True, False, "no", 1, None]),
    user_id=hostile_id,
    session_id=hostile_id,
    incremental=st.sampled_from([True, False, "yes", 0]),
    now=hostile_time,
)


def test_consolidator_answers_hostile_arguments(engine_kind: tuple[str, Any]) -> None:
    kind, make = engine_kind
    runner = asyncio.Runner()
    engine = make()
    _open(runner, engine)

    async def seed() -> None:
        await engine.add("Alice prefers green tea", subject="Alice")
        await engine.add("Alice prefers green tea.", subject="Alice")
        await engine.add("Bob lives in Berlin", subject="Bob", user_id="u1")

    runner.run(seed())

    async def check(kwargs: dict[str, Any]) -> None:
        await engine.port.flush_access()  # the last search's read marks: not this run's writes
        before = await _facts(engine)
        try:
            report = await MemoryConsolidator(context_engine=engine).consolidate(**kwargs)
        except Exception as exc:
            _typed(f"consolidate(**{kwargs!r})", exc)
            assert await _facts(engine) == before, "a refused consolidation changed facts"
        else:
            if kwargs.get("dry_run") is True:
                assert await _facts(engine) == before, "a dry run changed facts"
            assert report.total_processed >= 0
        await engine.search("tea")

    try:

        @settings(max_examples={"memory": 80, "local": 40}.get(kind, 25), **_SETTINGS)
        @given(kwargs=_consolidate)
        def run(kwargs: dict[str, Any]) -> None:
            runner.run(check(kwargs))

        run()
    finally:
        runner.run(engine.close())
        runner.close()


@pytest.mark.parametrize(
    ("build", "arguments", "error"),
    [
        ("bridge", {"scope": "bogus"}, ScopeError),
        ("bridge", {"scope": 3}, ScopeError),
        ("bridge", {"roles": 5}, InvalidInputError),
        ("bridge", {"roles": "user"}, InvalidInputError),
        ("bridge", {"extract_every_n_turns": "5"}, InvalidInputError),
        ("consolidator", {"batch_size": "10"}, InvalidInputError),
        ("consolidator", {"batch_size": True}, InvalidInputError),
        ("consolidator", {"decay_halflife_days": "30"}, InvalidInputError),
        ("consolidator", {"similarity_threshold": b"0.9"}, InvalidInputError),
    ],
)
def test_parts_refuse_bad_settings_with_typed_errors(
    engine_kind: tuple[str, Any], build: str, arguments: dict[str, Any], error: type[Exception]
) -> None:
    """Settings given as text, a flag or the wrong kind fail at construction, typed (issue 39)."""
    _, make = engine_kind
    engine = make()
    part: Any = MemoryBridge if build == "bridge" else MemoryConsolidator
    with pytest.raises(error):
        part(context_engine=engine, **arguments)
    # The same part with a number where a number is due is built.
    fixed = {name: 10 for name in arguments if name in ("batch_size", "extract_every_n_turns")}
    part(context_engine=engine, **fixed)


# ---------------------------------------------------------------- graph builder

_turn = kwargs_of(
    role=hostile_text | wrong_type,
    session_id=hostile_id | wrong_type,
    speaker=hostile_text | wrong_type,
    message_id=hostile_id | wrong_type,
    timestamp=hostile_time,
)


@pytest.mark.parametrize("kind", ["memory", "sqlite", "nebula"])
def test_graph_builder_answers_hostile_turns(kind: str, tmp_path: Path) -> None:
    from sagewai.stores.nebula._graph import NebulaGraphStore

    runner = asyncio.Runner()
    store: Any
    if kind == "memory":
        store = InMemoryGraphStore()
    elif kind == "sqlite":
        store = SqliteGraphStore(tmp_path / "graph.sqlite3")
    else:
        store = NebulaGraphStore(session=FakeNebulaSession(), retry_delay=0.0)
        runner.run(store.setup(wait_seconds=0))
    runner.run(store.open())
    graph = store.for_project("p")
    builder = ConversationGraphBuilder(graph_store=graph)
    runner.run(builder.process_turn("Alice moved to Paris. Bob works at Initech.", session_id="s1"))

    async def snapshot() -> tuple[list[Any], list[Any]]:
        entities = await graph.entities()
        relations = await graph.relations()
        for entity in entities:
            entity.name.encode("utf-8")
            assert await graph.entities_named(entity.name), f"{entity.name!r} cannot be found"
        return entities, relations

    async def check(message: Any, kwargs: dict[str, Any], forget: Any) -> None:
        before = await snapshot()
        try:
            await builder.process_turn(message, **kwargs)
        except Exception as exc:
            _typed(f"process_turn({message!r}, **{kwargs!r})", exc)
            assert await snapshot() == before, "a refused turn changed the graph"
        try:
            await builder.process_conversation([{"content": message, **kwargs}, "junk", 3])
        except Exception as exc:
            _typed("process_conversation", exc)
        try:
            await graph.delete_session(forget, subject="Alice")
            await graph.delete_subject(forget)
        except Exception as exc:
            _typed(f"delete({forget!r})", exc)
        await snapshot()

    try:

        @settings(max_examples=80 if kind != "nebula" else 40, **_SETTINGS)
        @given(message=hostile_text | wrong_type, kwargs=_turn, forget=hostile_id | wrong_type)
        def run(message: Any, kwargs: dict[str, Any], forget: Any) -> None:
            runner.run(check(message, kwargs, forget))

        run()
    finally:
        runner.run(store.close())
        runner.close()


# ---------------------------------------------------------------- episode stores

_episode_call = st.one_of(
    st.tuples(
        st.just("save_episode"),
        st.tuples(hostile_id | wrong_type, st.lists(hostile_message, max_size=3) | wrong_type),
        kwargs_of(
            metadata=st.dictionaries(hostile_text, json_value, max_size=2) | wrong_type,
            project_id=hostile_id,
            user_id=hostile_id,
            summary=hostile_text | wrong_type,
        ),
    ),
    st.tuples(
        st.just("search_episodes"),
        st.tuples(hostile_text | wrong_type),
        kwargs_of(project_id=hostile_id, limit=hostile_number, user_id=hostile_id),
    ),
    st.tuples(st.just("get_episode"), st.tuples(hostile_id | wrong_type), st.just({})),
    st.tuples(
        st.just("delete_session"),
        st.tuples(hostile_id | wrong_type),
        kwargs_of(project_id=hostile_id),
    ),
    st.tuples(
        st.just("forget_subject"),
        st.tuples(hostile_text | wrong_type),
        kwargs_of(project_id=hostile_id),
    ),
)


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def episodes(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[str, asyncio.Runner, Any]]:
    from sagewai.context.episodes import EpisodeStore
    from sagewai.stores import SqliteEpisodeStore

    runner = asyncio.Runner()
    cleanup: list[Any] = []
    store: Any
    if request.param == "memory":
        store = EpisodeStore(embedder=FakeEmbedder())
    elif request.param == "sqlite":
        store = SqliteEpisodeStore(tmp_path / "episodes.sqlite3", embedder=FakeEmbedder())
    else:
        from sagewai.context.episodes import PersistentEpisodeStore

        dsn = request.getfixturevalue("postgres_dsn")
        schema = f"sagewai_test_{uuid.uuid4().hex[:12]}"
        store = PersistentEpisodeStore(dsn, schema=schema, embedder=FakeEmbedder())
        runner.run(store.migrate())

        async def drop() -> None:
            import asyncpg

            connection = await asyncpg.connect(dsn)
            try:
                await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            finally:
                await connection.close()

        cleanup.append(drop)
    runner.run(store.open())
    try:
        yield request.param, runner, store
    finally:
        runner.run(store.close())
        for step in cleanup:
            runner.run(step())
        runner.close()


def test_episode_stores_answer_hostile_calls(episodes: tuple[str, asyncio.Runner, Any]) -> None:
    kind, runner, store = episodes
    runner.run(store.save_episode("s1", ["Alice moved to Paris", "Bob likes tea"], project_id="p"))

    async def listing() -> list[Any]:
        found = await store.list_episodes()
        for episode in found:
            episode.summary.encode("utf-8")
        return found

    async def check(call: tuple[str, tuple[Any, ...], dict[str, Any]]) -> None:
        name, args, kwargs = call
        before = await listing()
        try:
            await getattr(store, name)(*args, **kwargs)
        except Exception as exc:
            _typed(f"{name}(*{args!r}, **{kwargs!r})", exc)
            assert await listing() == before, f"a refused {name} changed the episodes"
        await listing()
        await store.search_episodes("tea")

    @settings(max_examples=80 if kind != "postgres" else 30, **_SETTINGS)
    @given(call=_episode_call)
    def run(call: tuple[str, tuple[Any, ...], dict[str, Any]]) -> None:
        runner.run(check(call))

    run()


# ---------------------------------------------------------------- command line


def test_command_line_answers_hostile_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from sagewai.cli._main import main

    monkeypatch.chdir(tmp_path)
    store = tmp_path / "store"
    words = st.sampled_from(
        [
            "consolidate",
            "graph",
            "export",
            "eval",
            "--project",
            "--scope",
            "--format",
            "--batch-size",
            "--threshold",
            "--dry-run",
            "--json",
            "-x",
            "--",
            "nan",
            "-5",
        ]
    )
    argv = st.one_of(
        st.lists(words | hostile_text, max_size=5),
        st.builds(
            lambda project, extra: [
                "consolidate",
                "--store",
                str(store),
                "--project",
                project,
                "--dry-run",
                *extra,
            ],
            hostile_id,
            st.lists(st.sampled_from(NASTY_TEXT[:8]) | words, max_size=3),
        ),
        st.builds(
            lambda project, fmt: [
                "graph",
                "export",
                "--store",
                str(store),
                "--project",
                project,
                "--format",
                fmt,
            ],
            hostile_id,
            st.sampled_from(["html", "json", "graphml", "pdf", "\ud800"]),
        ),
    )

    @settings(max_examples=25, **_SETTINGS)
    @given(args=argv)
    def run(args: list[str]) -> None:
        code: object
        try:
            code = main(args)
        except SystemExit as exit_:  # argparse refusing a command line is a documented outcome
            code = exit_.code
        except Exception as exc:
            pytest.fail(f"sagewai {args!r} raised {type(exc).__name__}: {exc!r}")
        assert code in (0, 1, 2, 3)
        capsys.readouterr()

    run()


def test_hostile_model_answers_never_break_the_conversation_loop() -> None:
    # A valid turn with a broken, hostile or runaway model answer is stored (or its facts
    # skipped and counted); it never raises out of process_message or flush.
    runner = asyncio.Runner()
    engine = ContextEngine.in_memory(project_id="p", embedder=FakeEmbedder())

    async def check(text: str, answers: list[str]) -> None:
        extractor = HybridFactExtractor(
            rule_extractor=RuleBasedFactExtractor(),
            llm_extractor=LLMFactExtractor(client=ScriptedLLM(list(answers) * 10)),
            llm_threshold=1.0,
        )
        bridge = MemoryBridge(
            context_engine=engine, fact_extractor=extractor, extract_every_n_turns=1
        )
        await bridge.process_message(text, session_id="s1", user_id="u1")
        await bridge.flush()
        await _facts(engine)

    try:

        @settings(max_examples=80, **_SETTINGS)
        @given(
            text=st.sampled_from(
                [
                    "I prefer green tea",
                    "My name is Alice and I live in Paris",
                    *(t for t in NASTY_TEXT if t.strip() and "\x00" not in t),
                ]
            ),
            answers=st.lists(model_answer, min_size=1, max_size=2),
        )
        def run(text: str, answers: list[str]) -> None:
            runner.run(check(text, answers))

        run()
    finally:
        runner.close()
