"""Episode stores: one behaviour on memory, SQLite and PostgreSQL (isolation, search, forget)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sagewai.context.episodes import (
    EpisodeStore,
    EpisodeStoreBase,
    LLMSummarizer,
    PersistentEpisodeStore,
    SqliteEpisodeStore,
    extractive_summary,
)
from sagewai.core.conversation import ChatMessage
from sagewai.errors import ConfigurationError, InvalidInputError
from sagewai.llm.errors import ModelTimeoutError
from sagewai.testing import FakeEmbedder
from sagewai.testing.llm import ScriptedLLM
from tests.helpers import memory_engine

KINDS = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]

TRIP = [
    {"role": "user", "name": "alice", "content": "We fly to Lisbon on 12 May for the offsite."},
    {"role": "assistant", "content": "Great, I booked the Lisbon hotel near Belem."},
]
BUDGET = [
    {"role": "user", "name": "bob", "content": "The Q3 marketing budget is $40,000."},
    {"role": "assistant", "content": "Noted: the budget covers ads and two conferences."},
]
PETS = [
    {"role": "user", "name": "carol", "content": "My beagle Rex needs his vaccine next week."},
    {"role": "user", "name": "carol", "content": "Alice will walk Rex while I travel."},
]


def build(kind: str, request: pytest.FixtureRequest, folder: Path) -> EpisodeStoreBase:
    if kind == "memory":
        return EpisodeStore(embedder=FakeEmbedder())
    if kind == "sqlite":
        return SqliteEpisodeStore(folder / "episodes.sqlite3", embedder=FakeEmbedder())
    dsn = request.getfixturevalue("postgres_dsn")
    schema = request.getfixturevalue("postgres_schema")
    return PersistentEpisodeStore(connection_string=dsn, schema=schema, embedder=FakeEmbedder())


@pytest.fixture(params=KINDS)
def unopened(request: pytest.FixtureRequest, tmp_path: Path) -> EpisodeStoreBase:
    return build(request.param, request, tmp_path)


@pytest.fixture
async def store(unopened: EpisodeStoreBase) -> AsyncIterator[EpisodeStoreBase]:
    if isinstance(unopened, PersistentEpisodeStore):
        await unopened.migrate()
    yield unopened
    await unopened.close()


async def test_save_and_get_round_trip(store: EpisodeStoreBase) -> None:
    said = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
    messages = [ChatMessage(role="user", content="Ship 2.1.0 on Friday", id="m1", timestamp=said)]
    episode_id = await store.save_episode(
        "s1",
        [*messages, *TRIP],
        metadata={"channel": "slack", "n": 3},
        project_id="p1",
        user_id="alice",
    )
    episode = await store.get_episode(episode_id)
    assert episode is not None
    assert (episode.session_id, episode.project_id, episode.user_id) == ("s1", "p1", "alice")
    assert episode.messages[0] == messages[0]
    assert episode.messages[1].name == "alice"
    assert episode.metadata == {"channel": "slack", "n": 3}
    assert episode.summary
    assert "Lisbon" in episode.summary
    assert await store.get_episode("no-such-episode") is None


async def test_search_finds_the_session_that_discussed_it(store: EpisodeStoreBase) -> None:
    ids = {
        name: await store.save_episode(name, messages, project_id="p1")
        for name, messages in (("trip", TRIP), ("budget", BUDGET), ("pets", PETS))
    }
    for query, expected in (
        ("when do we fly to Lisbon", "trip"),
        ("marketing budget for Q3", "budget"),
        ("Rex vaccine", "pets"),
    ):
        found = await store.search_episodes(query, project_id="p1", limit=3)
        assert found[0].id == ids[expected], query
        assert found[0].score is not None
        assert found[0].score >= (found[-1].score or 0)


async def test_episodes_of_another_project_are_never_seen(store: EpisodeStoreBase) -> None:
    mine = await store.save_episode("s1", TRIP, project_id="p1")
    theirs = await store.save_episode("s1", TRIP, project_id="p2")
    found = await store.search_episodes("Lisbon hotel", project_id="p1", limit=10)
    assert [e.id for e in found] == [mine]
    assert await store.get_episode(theirs, project_id="p1") is None
    assert await store.delete_session("s1", project_id="p1") == 1
    assert await store.get_episode(theirs) is not None
    assert [e.id for e in await store.search_episodes("Lisbon", project_id="p2")] == [theirs]


async def test_delete_user_and_project_return_counts(store: EpisodeStoreBase) -> None:
    await store.save_episode("s1", TRIP, project_id="p1", user_id="alice")
    await store.save_episode("s2", BUDGET, project_id="p1", user_id="alice")
    await store.save_episode("s3", PETS, project_id="p1", user_id="carol")
    await store.save_episode("s4", PETS, project_id="p2", user_id="alice")
    assert await store.delete_user("alice", project_id="p1") == 2
    assert [e.session_id for e in await store.list_episodes(project_id="p1")] == ["s3"]
    assert await store.delete_project("p1") == 1
    assert await store.list_episodes(project_id="p1") == []
    assert len(await store.list_episodes(project_id="p2")) == 1


async def test_forget_subject_removes_every_mention(store: EpisodeStoreBase) -> None:
    pets = await store.save_episode("pets", PETS, project_id="p1")
    only_alice = await store.save_episode(
        "a", [{"role": "user", "name": "alice", "content": "Hi there"}], project_id="p1"
    )
    budget = await store.save_episode("budget", BUDGET, project_id="p1")
    other_project = await store.save_episode("pets", PETS, project_id="p2")
    assert await store.forget_subject("Alice", project_id="p1") == 2
    redacted = await store.get_episode(pets)
    assert redacted is not None
    assert [m.content for m in redacted.messages] == [PETS[0]["content"]]
    assert "alice" not in redacted.summary.lower()
    assert await store.get_episode(only_alice) is None
    assert await store.get_episode(budget) is not None
    assert await store.search_episodes("Alice walk", project_id="p1") != []
    assert all(
        "Alice" not in m.content
        for e in await store.list_episodes(project_id="p1")
        for m in e.messages
    )
    kept = await store.get_episode(other_project)
    assert kept is not None
    assert len(kept.messages) == 2


async def test_saving_under_an_id_replaces(store: EpisodeStoreBase) -> None:
    first = await store.save_episode("s1", TRIP, project_id="p1", episode_id="ep-1")
    again = await store.save_episode("s1", BUDGET, project_id="p1", episode_id="ep-1")
    assert first == again == "ep-1"
    (episode,) = await store.list_episodes(project_id="p1")
    assert episode.messages[0].content == BUDGET[0]["content"]
    assert [e.id for e in await store.search_episodes("budget", project_id="p1")] == ["ep-1"]
    assert await store.search_episodes("Belem hotel", project_id="p1") != []


@pytest.mark.parametrize(
    "hostile",
    [
        "'; DROP TABLE episodes; --",
        'NEAR( "tea" * -coffee OR',
        "a & b | !c <-> d:*",
        "\\x00 ) ( ' \" `",
    ],
)
async def test_hostile_text_is_data_not_syntax(store: EpisodeStoreBase, hostile: str) -> None:
    episode_id = await store.save_episode(
        "s'1", [{"role": "user", "content": f"remember {hostile}"}], project_id="p'1"
    )
    found = await store.search_episodes(hostile, project_id="p'1")
    assert [e.id for e in found] == [episode_id]
    assert await store.forget_subject("remember", project_id="p'1") == 1
    assert await store.list_episodes(project_id="p'1") == []


async def test_bad_input_is_a_typed_error(store: EpisodeStoreBase) -> None:
    with pytest.raises(InvalidInputError):
        await store.save_episode("s1", [], project_id="p1")
    with pytest.raises(InvalidInputError):
        await store.save_episode("s1", [{"role": "user", "content": "  "}])
    with pytest.raises(InvalidInputError):
        await store.save_episode("bad\nid", TRIP)
    with pytest.raises(InvalidInputError):
        await store.search_episodes("   ")
    with pytest.raises(InvalidInputError):
        await store.save_episode("s1", TRIP, metadata={"x": float("nan")})


async def test_engine_forget_reaches_the_episodes(store: EpisodeStoreBase) -> None:
    async with memory_engine("p1") as ctx:
        ctx.episode_store = store
        await store.save_episode("s1", TRIP, project_id="p1", user_id="alice")
        await store.save_episode("s2", PETS, project_id="p1", user_id="carol")
        await store.save_episode("s3", BUDGET, project_id="p1", user_id="bob")
        await store.save_episode("s1", TRIP, project_id="p2", user_id="alice")
        assert (await ctx.forget(session_id="s1")).episodes_deleted == 1
        assert (await ctx.forget(user_id="bob")).episodes_deleted == 1
        assert (await ctx.forget(subject="Rex")).episodes_deleted == 1
        assert (await ctx.forget(everything=True)).episodes_deleted == 0
        assert await store.list_episodes(project_id="p1") == []
        assert len(await store.list_episodes(project_id="p2")) == 1


# --------------------------------------------------------------------------- backend specifics


async def test_sqlite_episodes_persist_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "episodes.sqlite3"
    async with SqliteEpisodeStore(path, embedder=FakeEmbedder()) as first:
        episode_id = await first.save_episode("s1", TRIP, project_id="p1")
    async with SqliteEpisodeStore(path, embedder=FakeEmbedder()) as second:
        assert await second.migrate() == []
        found = await second.search_episodes("Lisbon", project_id="p1")
        assert [e.id for e in found] == [episode_id]


@pytest.mark.postgres
async def test_postgres_needs_an_explicit_recorded_migration(
    postgres_dsn: str, postgres_schema: str
) -> None:
    import asyncpg

    store = PersistentEpisodeStore(
        connection_string=postgres_dsn, schema=postgres_schema, embedder=FakeEmbedder()
    )
    try:
        with pytest.raises(ConfigurationError, match="migrate"):
            await store.save_episode("s1", TRIP)
        assert await store.migrate() == ["0001"]
        assert await store.migrate() == []
        await store.save_episode("s1", TRIP, project_id="p1")
    finally:
        await store.close()
    connection = await asyncpg.connect(postgres_dsn)
    try:
        versions = await connection.fetch(
            f'SELECT version FROM "{postgres_schema}".episode_migrations'
        )
    finally:
        await connection.close()
    assert [row["version"] for row in versions] == ["0001"]


def test_schema_names_are_validated() -> None:
    with pytest.raises(ConfigurationError):
        PersistentEpisodeStore(connection_string="postgresql://x", schema='x"; DROP SCHEMA y')


# --------------------------------------------------------------------------- summaries


def test_extractive_summary_keeps_salient_sentences_verbatim() -> None:
    messages = [ChatMessage.coerce(m) for m in PETS + BUDGET]
    summary = extractive_summary(messages, max_sentences=2)
    lines = {m.line() for m in messages}
    picked = [line for line in lines if line in summary]
    assert len(picked) == 2  # two sentences, each verbatim with its speaker
    assert "Rex" in summary
    assert "budget" in summary
    assert extractive_summary([ChatMessage(content="   ")]) == ""


async def test_llm_summaries_through_the_llm_layer() -> None:
    llm = ScriptedLLM(["Alice and the assistant planned the May Lisbon offsite."])
    store = EpisodeStore(embedder=FakeEmbedder(), summarizer=LLMSummarizer(llm))
    episode_id = await store.save_episode("s1", TRIP)
    episode = await store.get_episode(episode_id)
    assert episode is not None
    assert episode.summary == "Alice and the assistant planned the May Lisbon offsite."
    assert "alice: We fly to Lisbon" in llm.calls[0].prompt


async def test_llm_summary_falls_back_to_extractive_when_the_model_fails() -> None:
    llm = ScriptedLLM([ModelTimeoutError("slow"), "   "])
    store = EpisodeStore(embedder=FakeEmbedder(), summarizer=LLMSummarizer(llm))
    for _ in range(2):
        episode = await store.get_episode(await store.save_episode("s1", BUDGET))
        assert episode is not None
        assert episode.summary == extractive_summary([ChatMessage.coerce(m) for m in BUDGET])
