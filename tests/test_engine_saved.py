"""The engine's doors to its saved sessions and its graph (``sagewai.context._saved``).

Every one of them is bound to the engine's project: what is saved lands in it, what is read comes
from it, and a record of another project is refused. An engine without an episode store or a
graph answers reads with nothing and refuses writes with a ``ConfigurationError``.
"""

from __future__ import annotations

import pytest

from sagewai import ContextEngine
from sagewai.context.episodes import EpisodeStore
from sagewai.core._graph_records import Entity
from sagewai.errors import ConfigurationError, InvalidInputError
from sagewai.stores import InMemoryGraphStore, InMemoryMetadataStore, InMemoryVectorStore
from sagewai.stores.base._graph import GraphWrite
from sagewai.testing import FakeEmbedder


def _engine(project_id: str, episodes: EpisodeStore | None = None) -> ContextEngine:
    embedder = FakeEmbedder()
    return ContextEngine(
        metadata_store=InMemoryMetadataStore(),
        vector_store=InMemoryVectorStore(embedder.dimension),
        embedder=embedder,
        project_id=project_id,
        episode_store=episodes,
    )


async def test_an_engine_without_an_episode_store_reads_nothing_and_refuses_to_save() -> None:
    engine = _engine("p")
    assert not engine.episodes.enabled
    assert await engine.episodes.list() == []
    assert await engine.episodes.search("launch") == []
    assert await engine.episodes.get("e1") is None
    with pytest.raises(ConfigurationError, match="no episode store"):
        await engine.episodes.save("s1", ["Our launch is in May"])


async def test_episodes_are_saved_and_read_within_the_engine_project() -> None:
    shared = EpisodeStore(embedder=FakeEmbedder())
    mine, other = _engine("mine", shared), _engine("other", shared)
    episode_id = await mine.episodes.save("s1", ["Our launch is in May"], user_id="ana")
    await other.episodes.save("s1", ["Their launch is in June"])

    saved = await mine.episodes.get(episode_id)
    assert saved is not None
    assert (saved.project_id, saved.user_id) == ("mine", "ana")
    assert [e.id for e in await mine.episodes.list()] == [episode_id]
    assert [e.id for e in await mine.episodes.search("launch")] == [episode_id]
    assert await other.episodes.get(episode_id) is None
    assert [e.project_id for e in await other.episodes.list()] == ["other"]


async def test_check_episode_refuses_what_save_episode_would_refuse() -> None:
    engine = _engine("p", EpisodeStore(embedder=FakeEmbedder()))
    with pytest.raises(InvalidInputError):
        engine.episodes.check("s1", [])
    with pytest.raises(InvalidInputError):
        await engine.episodes.save("s1", [])
    assert await engine.episodes.list() == []


async def test_restore_keeps_the_record_and_refuses_another_project() -> None:
    source = _engine("p", EpisodeStore(embedder=FakeEmbedder()))
    episode_id = await source.episodes.save("s1", ["Our launch is in May"])
    episode = await source.episodes.get(episode_id)
    assert episode is not None

    target = _engine("p", EpisodeStore(embedder=FakeEmbedder()))
    await target.episodes.restore(episode)
    restored = await target.episodes.get(episode_id)
    assert restored is not None
    assert restored.created_at == episode.created_at

    stranger = _engine("q", EpisodeStore(embedder=FakeEmbedder()))
    with pytest.raises(InvalidInputError, match="project"):
        await stranger.episodes.restore(episode)
    assert await stranger.episodes.list() == []


async def test_the_graph_doors_write_and_read_the_engine_project_only() -> None:
    embedder = FakeEmbedder()
    graph = InMemoryGraphStore()
    engines = {
        name: ContextEngine(
            metadata_store=InMemoryMetadataStore(),
            vector_store=InMemoryVectorStore(embedder.dimension),
            graph_store=graph,
            embedder=embedder,
            project_id=name,
        )
        for name in ("mine", "other")
    }
    mine, other = engines["mine"], engines["other"]
    await mine.port.apply_graph(
        GraphWrite("mine", put_entities=[Entity(project_id="mine", name="Ana")])
    )
    assert [e.name for e in await mine.port.graph_entities()] == ["Ana"]
    assert await other.port.graph_entities() == []
    assert await mine.port.graph_relations() == []

    with pytest.raises(InvalidInputError):
        await other.port.apply_graph(
            GraphWrite("mine", put_entities=[Entity(project_id="mine", name="Ben")])
        )
    assert [e.name for e in await mine.port.graph_entities()] == ["Ana"]

    without = _engine("mine")
    assert await without.port.graph_entities() == []
    with pytest.raises(ConfigurationError, match="no graph store"):
        await without.port.apply_graph(GraphWrite("mine"))
