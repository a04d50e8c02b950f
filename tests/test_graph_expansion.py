"""Graph-aware search adds facts about the neighbours of the entities a query names."""

from __future__ import annotations

from sagewai.context._engine import ContextEngine
from sagewai.context._ranking import SearchConfig
from sagewai.core._graph_records import Entity, Relation
from sagewai.testing import FakeEmbedder


async def _engine_with_family() -> ContextEngine:
    ctx = ContextEngine.in_memory(project_id="fam", embedder=FakeEmbedder())
    await ctx.open()
    graph = ctx.graph_store
    assert graph is not None
    caroline = await graph.upsert_entity(Entity(project_id="fam", name="Caroline", label="person"))
    sara = await graph.upsert_entity(Entity(project_id="fam", name="Sara", label="person"))
    await graph.upsert_relation(
        Relation(
            project_id="fam", subject_id=caroline.id, predicate="sibling_of", object_id=sara.id
        )
    )
    await ctx.add("Sara works as a nurse at the city hospital", subject="Sara")
    for i in range(10):
        await ctx.add(f"Somebody else number {i} has a job they enjoy a lot")
    await ctx.add("Caroline mentioned an unrelated hobby", subject="Caroline")
    return ctx


async def test_graph_hops_add_the_neighbours_facts() -> None:
    ctx = await _engine_with_family()
    query = "what job does the sibling of Caroline have"
    plain = await ctx.search(query, top_k=10)
    expanded = await ctx.search(query, top_k=10, graph_hops=1)
    nurse = "Sara works as a nurse at the city hospital"
    plain_hit = next(r for r in plain if r.fact.content == nurse)
    expanded_hit = next(r for r in expanded if r.fact.content == nurse)
    assert expanded_hit.parts.graph > 0
    assert expanded_hit.score > plain_hit.score
    assert all(r.parts.graph == 0 for r in plain)
    # With the graph weighted fully, the neighbour's fact leads.
    strong = await ctx.search(
        query, top_k=10, graph_hops=1, search_config=SearchConfig(graph_weight=1.0)
    )
    assert strong[0].fact.content == nurse
    await ctx.close()


async def test_graph_hops_without_named_entities_change_nothing() -> None:
    ctx = await _engine_with_family()
    plain = await ctx.search("unrelated hobby", top_k=5)
    expanded = await ctx.search("unrelated hobby", top_k=5, graph_hops=2)
    assert [r.fact.id for r in plain] == [r.fact.id for r in expanded]
    await ctx.close()


async def test_forget_subject_reaches_the_graph() -> None:
    ctx = await _engine_with_family()
    report = await ctx.forget(subject="Sara")
    assert report.facts_deleted == 1
    assert report.graph_items_deleted >= 1
    assert ctx.graph_store is not None
    assert await ctx.graph_store.entities_named("Sara") == []
    await ctx.close()
