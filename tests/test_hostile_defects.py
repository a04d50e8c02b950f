"""The defects of issue 14, each reproduced through the public API.

Every test here failed before its fix: shared folders and store objects, sessions named by
another user, forget criteria, a poisoned graph, lone surrogates, half writes, untyped errors,
subject limits and punctuation-only names.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from sagewai.context._engine import ContextEngine
from sagewai.errors import (
    FactConflictError,
    InvalidInputError,
    SagewaiError,
)
from sagewai.intelligence import ConversationGraphBuilder
from sagewai.stores.memory._graph import InMemoryGraphStore
from sagewai.stores.memory._metadata import InMemoryMetadataStore
from sagewai.stores.memory._vector import InMemoryVectorStore
from sagewai.stores.sqlite._graph import SqliteGraphStore
from sagewai.testing import FakeEmbedder
from sagewai.testing._nebula import FakeNebulaSession
from tests.helpers import memory_engine

SURROGATE = "tea \ud800 time"


def local(folder: Path, project_id: str) -> ContextEngine:
    return ContextEngine.local(folder, project_id=project_id, embedder=FakeEmbedder())


# ---------------------------------------------------------------- 1. shared folders, fact ids


async def test_same_fact_id_in_two_projects_of_one_folder_never_touches_the_other(
    tmp_path: Path,
) -> None:
    # One folder, two projects, opened one after the other (the embedded index takes a lock).
    async with local(tmp_path, "alpha") as alpha:
        await alpha.add("Alice prefers green tea", fact_id="note-1")
    async with local(tmp_path, "beta") as beta:
        with pytest.raises(FactConflictError):
            await beta.add("Bob drives a red truck", fact_id="note-1")
        assert await beta.count() == 0
    async with local(tmp_path, "alpha") as alpha:
        results = await alpha.search("green tea")
        assert [r.fact.id for r in results] == ["note-1"]
        assert results[0].parts.dense is not None, "alpha's vector was overwritten"
    async with local(tmp_path, "beta") as beta:
        await beta.add("Bob drives a red truck")
        await beta.forget(everything=True)
    async with local(tmp_path, "alpha") as alpha:
        results = await alpha.search("green tea")
        assert results
        assert results[0].parts.dense is not None, "beta deleted alpha's vector"


async def test_vector_ids_of_two_projects_on_one_store_object_stay_apart() -> None:
    vectors = InMemoryVectorStore(FakeEmbedder().dimension)
    alpha = memory_engine("alpha", vectors=vectors)
    beta = memory_engine("beta", vectors=vectors)  # its own metadata store: the id is free there
    await alpha.add("Alice prefers green tea", fact_id="note-1")
    await beta.add("Bob drives a red truck", fact_id="note-1")
    assert (await alpha.search("green tea"))[0].parts.dense is not None
    await beta.forget(everything=True)
    assert (await alpha.search("green tea"))[0].parts.dense is not None
    assert await alpha.count() == 1


async def test_reusing_a_fact_id_in_one_project_is_a_conflict_not_an_overwrite() -> None:
    engine = memory_engine()
    await engine.add("Alice prefers green tea", fact_id="note-1")
    with pytest.raises(FactConflictError):
        await engine.add("Alice hates tea", fact_id="note-1")
    with pytest.raises(FactConflictError):
        await engine.add_many(
            [{"content": "one", "fact_id": "twin"}, {"content": "two", "fact_id": "twin"}]
        )
    assert (await engine.get("note-1")).content == "Alice prefers green tea"
    assert await engine.count() == 1


# ---------------------------------------------------------------- 2. sessions of other users


async def test_a_session_of_another_user_reads_nothing() -> None:
    engine = memory_engine()
    await engine.add("Alice's secret plan", scope="session", user_id="alice", session_id="s1")
    mallory = await engine.search("secret plan", user_id="mallory", session_id="s1")
    assert mallory == []
    listed = await engine.list(user_id="mallory", session_id="s1")
    assert listed == []
    alice = await engine.search("secret plan", user_id="alice", session_id="s1")
    assert [r.fact.content for r in alice] == ["Alice's secret plan"]


# ---------------------------------------------------------------- 3. forget combines with AND


async def test_forget_subject_and_session_is_an_and_on_the_graph_too() -> None:
    engine = ContextEngine.in_memory(project_id="p", embedder=FakeEmbedder())
    builder = ConversationGraphBuilder(graph_store=engine.graph_store)
    await builder.process_turn("Alice moved to Paris.", session_id="s1")
    await builder.process_turn("Bob moved to Berlin.", session_id="s2")
    await builder.process_turn("Carol works at Initech.", session_id="s1")
    await engine.add("Alice likes tea", subject="Alice", session_id="s2")
    before = {e.name for e in await engine.graph_store.entities()}
    assert {"Alice", "Bob", "Carol"} <= before
    report = await engine.forget(subject="Alice", session_id="s1")
    after = {e.name for e in await engine.graph_store.entities()}
    assert "Carol" in after, "forget deleted every entity of s1, not only Alice's"
    assert "Bob" in after
    assert "Alice" not in after or report.graph_items_deleted == 0
    assert await engine.count() == 1, "a fact of s2 about Alice is outside the AND"


# ---------------------------------------------------------------- 4. a poisoned graph


@pytest.mark.parametrize("backend", ["memory", "sqlite", "nebula"])
async def test_a_bad_session_id_never_poisons_the_graph(backend: str, tmp_path: Path) -> None:
    store: Any
    if backend == "memory":
        store = InMemoryGraphStore()
    elif backend == "sqlite":
        store = SqliteGraphStore(tmp_path / "graph.sqlite3")
    else:
        from sagewai.stores.nebula._graph import NebulaGraphStore

        store = NebulaGraphStore(session=FakeNebulaSession(), retry_delay=0.0)
        await store.setup(wait_seconds=0)
    async with store:
        builder = ConversationGraphBuilder(graph_store=store.for_project("p"))
        await builder.process_turn("Alice moved to Paris.", session_id="s1")
        with pytest.raises(InvalidInputError):
            await builder.process_turn("Alice moved to Paris.", session_id="s\x01")
        names = {e.name for e in await store.entities("p")}
        assert {"Alice", "Paris"} <= names


# ---------------------------------------------------------------- 5. lone surrogates


async def test_lone_surrogates_are_replaced_in_every_text_of_the_engine(tmp_path: Path) -> None:
    async with local(tmp_path, "p") as engine:
        fact = await engine.add(SURROGATE, subject="Al\udc00ice", tags=["t"])
        assert fact.content == "tea \ufffd time"
        assert fact.subject == "Al\ufffdice"
        assert [r.fact.id for r in await engine.search(SURROGATE)] == [fact.id]
        report = await engine.forget(subject="Al\udc00ice")
        assert report.facts_deleted == 1
        with pytest.raises(InvalidInputError):
            await engine.add("fine", user_id="u\ud800")
        with pytest.raises(InvalidInputError):
            await engine.add("fine", tags=["t\ud800"])


async def test_surrogates_through_the_bridge_submit_journal_and_llm(tmp_path: Path) -> None:
    from sagewai.context import MemoryBridge
    from sagewai.intelligence import LLMFactExtractor
    from sagewai.testing._llm import ScriptedLLM

    answer = json.dumps(
        {"facts": [{"content": "User likes \ud83d tea", "fact_type": "preference"}]},
        ensure_ascii=True,
    )
    engine = ContextEngine.local(tmp_path / "mem", project_id="p", embedder=FakeEmbedder())
    async with engine:
        extractor = LLMFactExtractor(client=ScriptedLLM([answer, answer, answer]))
        bridge = MemoryBridge(
            context_engine=engine, fact_extractor=extractor, extract_every_n_turns=1
        )
        facts = await bridge.process_message("I like \ud83d tea", session_id="s1")
        assert all("\ud83d" not in f.content for f in facts)
        await bridge.flush()
        journal = tmp_path / "journal"
        background = MemoryBridge(
            context_engine=engine,
            fact_extractor=LLMFactExtractor(client=ScriptedLLM([answer, answer])),
            journal_path=journal,
        )
        await background.submit("we meet at \udc01 noon", session_id="s2")
        await background.aclose()
        restarted = MemoryBridge(
            context_engine=engine,
            fact_extractor=LLMFactExtractor(client=ScriptedLLM([answer, answer])),
            journal_path=journal,
        )
        await restarted.start()
        await restarted.flush()
        await restarted.aclose()
        assert await engine.count() >= 1


async def test_lone_surrogates_reach_the_graph_as_replacement_characters(tmp_path: Path) -> None:
    from sagewai.stores.nebula._graph import NebulaGraphStore

    nebula = NebulaGraphStore(session=FakeNebulaSession(), retry_delay=0.0)
    await nebula.setup(wait_seconds=0)
    for store in (SqliteGraphStore(tmp_path / "g.sqlite3"), nebula):
        async with store:
            builder = ConversationGraphBuilder(graph_store=store.for_project("p"))
            await builder.process_turn("Al\ud800ice moved to Paris.", session_id="s1")
            for entity in await store.entities("p"):
                entity.name.encode("utf-8")


# ---------------------------------------------------------------- 6. half writes


def _items_with_nan(count: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"content": f"fact number {i}"} for i in range(count - 1)]
    items.append({"content": "the bad one", "metadata": {"x": math.nan}})
    return items


async def test_add_many_is_all_or_nothing_in_memory_and_sqlite(tmp_path: Path) -> None:
    for engine in (memory_engine(), local(tmp_path, "p")):
        async with engine:
            with pytest.raises(InvalidInputError):
                await engine.add_many(_items_with_nan(300))
            assert await engine.count() == 0


async def test_add_many_is_all_or_nothing_on_postgres(
    postgres_dsn: str, postgres_schema: str
) -> None:
    from sagewai.stores import PostgresMetadataStore

    embedder = FakeEmbedder()
    store = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    engine = ContextEngine(
        metadata_store=store,
        vector_store=InMemoryVectorStore(embedder.dimension),
        project_id="p",
        embedder=embedder,
    )
    async with engine:
        await store.migrate()
        with pytest.raises(InvalidInputError):
            await engine.add_many(_items_with_nan(300))
        assert await engine.count() == 0


async def test_bridge_conversation_writes_nothing_when_a_turn_is_bad() -> None:
    from sagewai.context import MemoryBridge

    engine = memory_engine()
    bridge = MemoryBridge(context_engine=engine, extract_every_n_turns=1)
    turns: list[Any] = [
        {"role": "user", "content": "I prefer green tea"},
        {"role": "user", "content": "I work at Initech"},
        {"role": "user", "content": 42},
    ]
    with pytest.raises(InvalidInputError):
        await bridge.bridge_conversation(turns)
    assert await engine.count() == 0


# ---------------------------------------------------------------- 7. untyped errors

_BAD_SEARCHES: list[dict[str, Any]] = [
    {"fact_types": ["opinion"]},
    {"kinds": ["poem"]},
    {"statuses": ["alive"]},
    {"as_of": "2024-01-01"},
    {"as_of": datetime.max.replace(tzinfo=timezone(timedelta(hours=-14)))},
    {"as_of": datetime.min.replace(tzinfo=timezone(timedelta(hours=14)))},
    {"top_k": "5"},
    {"top_k": 2.5},
    {"top_k": True},
    {"tags": "abc"},
    {"min_score": "high"},
    {"graph_hops": "1"},
    {"scope": "sesion"},
]


@pytest.mark.parametrize("kwargs", _BAD_SEARCHES, ids=[str(k) for k in _BAD_SEARCHES])
async def test_bad_search_arguments_raise_typed_errors(kwargs: dict[str, Any]) -> None:
    engine = memory_engine()
    await engine.add("Alice prefers green tea")
    with pytest.raises(SagewaiError):
        await engine.search("tea", **kwargs)


_BAD_ADDS: list[dict[str, Any]] = [
    {"source": {"bogus": "s1"}},
    {"source": "s1"},
    {"sources": "s1"},
    {"tags": "abc"},
    {"exact_values": "abc"},
    {"confidence": "high"},
    {"confidence": math.nan},
    {"metadata": {"x": math.inf}},
    {"metadata": ["not", "a", "mapping"]},
    {"valid_from": "yesterday"},
    {"fact_type": "opinion"},
    {"subject": 42},
]


@pytest.mark.parametrize("kwargs", _BAD_ADDS, ids=[str(k) for k in _BAD_ADDS])
async def test_bad_add_arguments_raise_typed_errors(kwargs: dict[str, Any]) -> None:
    engine = memory_engine()
    with pytest.raises(SagewaiError):
        await engine.add("Alice prefers green tea", **kwargs)
    assert await engine.count() == 0


async def test_forget_refuses_non_boolean_everything_and_unknown_scopes() -> None:
    engine = memory_engine()
    await engine.add("Alice prefers green tea")
    for kwargs in ({"everything": "no"}, {"everything": 1}, {"scope": "sesion"}):
        with pytest.raises(InvalidInputError):
            await engine.forget(**kwargs)
    assert await engine.count() == 1


async def test_consolidate_refuses_a_naive_now() -> None:
    from sagewai.intelligence import MemoryConsolidator

    engine = memory_engine()
    await engine.add("Alice prefers green tea")
    consolidator = MemoryConsolidator(context_engine=engine)
    with pytest.raises(InvalidInputError):
        await consolidator.consolidate(now=datetime(2026, 1, 1))
    report = await consolidator.consolidate(now=datetime(2026, 1, 1, tzinfo=UTC))
    assert report.total_processed == 1


# ---------------------------------------------------------------- 9. subjects and names


async def test_subject_limit_is_the_same_at_add_and_forget(tmp_path: Path) -> None:
    for engine in (memory_engine(), local(tmp_path, "p")):
        async with engine:
            with pytest.raises(InvalidInputError):
                await engine.add("a fact", subject="x" * 10_000)
            longest = "y" * 256
            await engine.add("a fact", subject=longest)
            assert (await engine.forget(subject=longest)).facts_deleted == 1


async def test_punctuation_only_entity_names_are_refused_at_write() -> None:
    from sagewai.core._graph_records import Entity

    for name in ("?", "(", "...", "!!"):
        with pytest.raises(ValueError):
            Entity(project_id="p", name=name)
    graph = InMemoryGraphStore().for_project("p")
    builder = ConversationGraphBuilder(graph_store=graph)
    await builder.process_turn("What? ( ... ) !! Alice moved to Paris.", session_id="s1")
    for entity in await graph.entities():
        assert await graph.entities_named(entity.name), entity.name


class _DyingPool:
    """An asyncpg pool that works until ``dead``, then fails as a dropped connection does.

    A driver double (asyncpg's own error class), not a double of sagewai's code.
    """

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.dead = False

    def _check(self) -> None:
        if self.dead:
            import asyncpg

            raise asyncpg.InternalClientError("cannot perform operation: connection is closed")

    def acquire(self) -> Any:
        self._check()
        return self.pool.acquire()

    async def release(self, connection: Any) -> None:
        await self.pool.release(connection)

    async def fetch(self, *args: Any) -> Any:
        self._check()
        return await self.pool.fetch(*args)

    async def fetchval(self, *args: Any) -> Any:
        self._check()
        return await self.pool.fetchval(*args)

    async def execute(self, *args: Any) -> Any:
        self._check()
        return await self.pool.execute(*args)

    async def close(self) -> None:
        await self.pool.close()


async def test_asyncpg_client_errors_are_translated(
    postgres_dsn: str, postgres_schema: str
) -> None:
    import asyncpg

    from sagewai.errors import BackendError
    from sagewai.stores import PostgresMetadataStore

    real = await asyncpg.create_pool(postgres_dsn, min_size=1, max_size=2)
    pool = _DyingPool(real)
    store = PostgresMetadataStore(pool=pool, schema=postgres_schema)
    await store.migrate()
    embedder = FakeEmbedder()
    engine = ContextEngine(
        metadata_store=store,
        vector_store=InMemoryVectorStore(embedder.dimension),
        project_id="p",
        embedder=embedder,
    )
    try:
        fact = await engine.add("Alice prefers green tea")
        pool.dead = True
        with pytest.raises(BackendError):
            await engine.add("Bob drives a red truck")  # apply
        with pytest.raises(BackendError):
            await engine.get(fact.id)  # fetch
        with pytest.raises(BackendError):
            await store.set_state("p", "k", {"a": 1})
        pool.dead = False
        assert await engine.count() == 1
    finally:
        await real.close()


async def test_bridge_conversation_checks_its_episode_before_writing_facts() -> None:
    from sagewai.context import MemoryBridge
    from sagewai.context.episodes import EpisodeStore
    from sagewai.core._conversation import Conversation

    embedder = FakeEmbedder()
    episodes = EpisodeStore(embedder=embedder)
    engine = ContextEngine(
        metadata_store=InMemoryMetadataStore(),
        vector_store=InMemoryVectorStore(embedder.dimension),
        project_id="p",
        embedder=embedder,
        episode_store=episodes,
    )
    bridge = MemoryBridge(context_engine=engine, extract_every_n_turns=1)
    # Every turn is fine; the conversation as an episode is not (its metadata holds NaN).
    turns = ["I prefer green tea", "I work at Initech", "We deploy on Fridays"]
    conversation = Conversation.of(turns, session_id="s1", metadata={"score": math.nan})
    with pytest.raises(InvalidInputError):
        await bridge.bridge_conversation(conversation)
    assert await engine.count() == 0
    assert await episodes.list_episodes() == []


def test_ngql_ids_never_raise_on_lone_surrogates() -> None:
    from sagewai.stores.nebula import _ngql as ngql

    assert ngql.vertex_id("p", "e\ud800") != ngql.vertex_id("p", "e\ufffd")
    assert ngql.project_key("p\udc00") != ngql.project_key("p")
    assert 0 <= ngql.edge_rank("r\ud83d") < 2**63


async def test_an_old_journal_entry_holding_a_surrogate_replays(tmp_path: Path) -> None:
    from sagewai.context import MemoryBridge
    from sagewai.context.bridge._journal import WriteAheadJournal
    from sagewai.intelligence import RuleBasedFactExtractor

    journal_path = tmp_path / "journal"
    journal = WriteAheadJournal(journal_path)
    journal.open()
    # What an earlier version journaled: the surrogate survives as a JSON escape.
    entry = {
        "message": {"role": "user", "content": "I prefer \ud800 green tea"},
        "session_id": "s1",
        "message_id": "m1",
        "turn_index": 0,
        "received_at": "2026-01-01T00:00:00+00:00",
    }
    journal.append_json("e1", json.dumps(entry))
    journal.close()
    engine = memory_engine()
    bridge = MemoryBridge(
        context_engine=engine,
        fact_extractor=RuleBasedFactExtractor(),
        journal_path=journal_path,
    )
    await bridge.start()
    await bridge.flush()
    await bridge.aclose()
    facts = await engine.list(statuses=None)
    assert facts
    assert all("\ud800" not in fact.content for fact in facts)
