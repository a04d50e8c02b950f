"""ProjectStores and the engine's door to them: both constructors, typed stores, the reads
subsystems make, and the writes that go through the engine (issue #12)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sagewai import ContextEngine, FactStatus
from sagewai.context.episodes import EpisodeStore
from sagewai.core._queries import FactQuery, VectorFilter
from sagewai.errors import ConfigurationError, InvalidInputError
from sagewai.stores import (
    InMemoryGraphStore,
    InMemoryMetadataStore,
    InMemoryVectorStore,
    ProjectStores,
)
from sagewai.testing import FakeEmbedder


def _stores() -> ProjectStores:
    return ProjectStores.in_memory(embedder=FakeEmbedder())


def test_the_bundle_refuses_an_embedder_of_another_dimension() -> None:
    with pytest.raises(InvalidInputError, match="8-d vectors"):
        ProjectStores(
            metadata=InMemoryMetadataStore(),
            vectors=InMemoryVectorStore(8),
            embedder=FakeEmbedder(),
        )


def test_the_engine_takes_the_bundle_or_the_stores_one_by_one_not_both() -> None:
    stores = _stores()
    with pytest.raises(InvalidInputError, match="not both"):
        ContextEngine(  # type: ignore[call-overload]
            stores=stores, metadata_store=stores.metadata, project_id="p"
        )
    with pytest.raises(InvalidInputError, match="needs stores="):
        ContextEngine(metadata_store=stores.metadata, project_id="p")  # type: ignore[call-overload]
    with pytest.raises(InvalidInputError, match="ProjectStores"):
        ContextEngine(stores=object(), project_id="p")  # type: ignore[arg-type]


def test_the_keyword_form_builds_the_same_bundle() -> None:
    embedder = FakeEmbedder()
    graph = InMemoryGraphStore()
    view = graph.for_project("p")
    episodes = EpisodeStore(embedder=embedder)
    ctx = ContextEngine(
        metadata_store=InMemoryMetadataStore(),
        vector_store=InMemoryVectorStore(embedder.dimension),
        project_id="p",
        embedder=embedder,
        graph_store=view,
        episode_store=episodes,
    )
    assert ctx.graph_store is view
    assert ctx.stores.graph is graph
    assert ctx.episodes.store is episodes
    assert ctx.port.embedder is embedder
    assert ctx.stores.folder is None
    assert not ctx.stores.persistent
    # A shared graph store is viewed for the engine's project.
    shared = ContextEngine(stores=dataclasses.replace(ctx.stores), project_id="q")
    assert shared.graph_store is not None
    assert shared.graph_store.project_id == "q"


def test_a_graph_view_of_another_project_is_refused() -> None:
    embedder = FakeEmbedder()
    with pytest.raises(InvalidInputError, match="bound to project 'other'"):
        ContextEngine(
            metadata_store=InMemoryMetadataStore(),
            vector_store=InMemoryVectorStore(embedder.dimension),
            project_id="p",
            embedder=embedder,
            graph_store=InMemoryGraphStore().for_project("other"),
        )


def test_the_stores_are_read_only_and_episodes_attach_once() -> None:
    ctx = ContextEngine(stores=_stores(), project_id="p")
    with pytest.raises(AttributeError):
        ctx.stores.metadata = InMemoryMetadataStore()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        ctx.graph_store = None  # type: ignore[misc]
    first = EpisodeStore(embedder=FakeEmbedder())
    ctx.episodes.attach(first)
    ctx.episodes.attach(first)  # the same store again: nothing to do
    assert ctx.episodes.store is first
    with pytest.raises(ConfigurationError, match="already has an episode store"):
        ctx.episodes.attach(EpisodeStore(embedder=FakeEmbedder()))
    with pytest.raises(InvalidInputError):
        ctx.episodes.attach(object())  # type: ignore[arg-type]


def test_local_stores_touch_no_file_until_opened(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    stores = ProjectStores.local(folder, embedder=FakeEmbedder())
    assert stores.folder == folder
    assert not folder.exists()
    ctx = ContextEngine(stores=stores, project_id="p")
    assert ctx.stores.folder == folder
    assert ctx.stores.persistent
    assert ctx.episodes.store is stores.episodes is not None


async def test_two_projects_on_one_bundle_stay_apart() -> None:
    stores = _stores()
    async with ContextEngine(stores=stores, project_id="a") as a:
        b = ContextEngine(stores=stores, project_id="b")
        fact = await a.add("Alice prefers green tea", subject="Alice")
        assert await b.port.get_many([fact.id]) == []
        assert await b.search("green tea") == []
        with pytest.raises(InvalidInputError, match="this engine reads project 'b'"):
            await b.port.find(FactQuery(project_id="a"))
        assert [f.id for f in await a.port.get_many([fact.id, "missing"])] == [fact.id]


async def test_the_reads_subsystems_make() -> None:
    async with ContextEngine(stores=_stores(), project_id="p") as ctx:
        facts = await ctx.add_many([f"note number {n} about tea" for n in range(7)])
        query = FactQuery(project_id="p")
        assert [f.id async for f in ctx.port.iter_facts(query, page_size=3)] == [
            f.id for f in facts
        ]
        assert await ctx.port.count_matching(query) == 7
        assert len(await ctx.port.find(dataclasses.replace(query, limit=2))) == 2
        assert {i for i, _ in await ctx.port.keyword_hits(query, "tea", 10)} == {
            f.id for f in facts
        }
        vectors = await ctx.port.get_vectors([facts[0].id])
        where = VectorFilter(tuple(facts[0].address.readable_keys()))
        (best,) = await ctx.port.nearest(vectors[facts[0].id], 1, where)
        assert best.id == facts[0].id
        (many,) = await ctx.port.nearest_many([vectors[facts[0].id]], 1, where)
        assert many == [best]
        await ctx.port.set_state("checkpoint", {"page": 2})
        assert await ctx.port.get_state("checkpoint") == {"page": 2}
        async with ctx.port.lock("job"):
            pass


async def test_index_repairs_and_deletes_go_through_the_engine() -> None:
    async with ContextEngine(stores=_stores(), project_id="p") as ctx:
        fact = await ctx.add("the deploy key rotates monthly")
        archived = fact.evolve(status=FactStatus.ARCHIVED)
        assert await ctx.port.refresh_index([archived]) == 1
        active = VectorFilter(tuple(fact.address.readable_keys()))
        assert await ctx.port.vectors.count(active) == 0  # the index now says archived
        other = await ctx.add("an unrelated note")
        with pytest.raises(InvalidInputError):
            await ctx.port.refresh_index([archived.model_copy(update={"project_id": "q"})])
        assert await ctx.delete_many([fact.id, other.id, "missing"], reason="cleanup") == 2
        assert await ctx.count() == 0
        (tombstone,) = await ctx.history(fact.id)
        assert tombstone.reason == "cleanup"
        assert tombstone.rule == "engine.delete"
