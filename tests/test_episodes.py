"""Episode stores: one behaviour on memory, SQLite and PostgreSQL (isolation, search, forget).

The shared behaviour ships as :class:`sagewai.testing.conformance.EpisodeStoreConformance`; the
classes at the end run it on each backend. The tests here are specific to one backend, to the
engine's forget cascade, or to the summarizers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sagewai.context.episodes import (
    EpisodeStore,
    LLMSummarizer,
    PersistentEpisodeStore,
    extractive_summary,
)
from sagewai.core._conversation import ChatMessage
from sagewai.errors import ConfigurationError
from sagewai.llm._errors import ModelTimeoutError
from sagewai.stores import EpisodeStoreBase, SqliteEpisodeStore
from sagewai.testing import FakeEmbedder
from sagewai.testing._llm import ScriptedLLM
from sagewai.testing.conformance import EpisodeStoreConformance
from sagewai.testing.conformance._episodes import BUDGET, PETS, TRIP, EpisodeStoreFactory
from tests.helpers import memory_engine

KINDS = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


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


async def test_engine_forget_reaches_the_episodes(store: EpisodeStoreBase) -> None:
    async with memory_engine("p1") as ctx:
        ctx.episodes.attach(store)
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


class TestInMemoryEpisodeStore(EpisodeStoreConformance):
    @pytest.fixture
    def make_store(self) -> EpisodeStoreFactory:
        return lambda: EpisodeStore(embedder=FakeEmbedder())


class TestSqliteEpisodeStore(EpisodeStoreConformance):
    @pytest.fixture
    def make_store(self, tmp_path: Path) -> EpisodeStoreFactory:
        return lambda: SqliteEpisodeStore(tmp_path / "episodes.sqlite3", embedder=FakeEmbedder())


@pytest.mark.postgres
class TestPostgresEpisodeStore(EpisodeStoreConformance):
    needs_migrate = True

    @pytest.fixture
    def make_store(self, postgres_dsn: str, postgres_schema: str) -> EpisodeStoreFactory:
        return lambda: PersistentEpisodeStore(
            connection_string=postgres_dsn, schema=postgres_schema, embedder=FakeEmbedder()
        )
