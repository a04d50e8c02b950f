"""A full run's candidates are found exactly before it decides: a dry run equals the real run.

The index here is approximate the way an HNSW graph walk is: which true neighbours it misses
depends on the state of the index, which changes with every payload update the real run makes
(a dry run never writes, so it never changes). A run that asked such an index fact by fact would
plan one thing and do another; a full run asks it (for facts that mention no name) only before
its first decision, and compares everything else exactly, so the plan and the run agree.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from sagewai.context._engine import ContextEngine
from sagewai.core._embedder import Vector
from sagewai.core._queries import VectorFilter, VectorHit
from sagewai.core._records import Fact, FactStatus
from sagewai.intelligence import ConsolidationReport, MemoryConsolidator
from sagewai.intelligence.consolidation import _candidates as candidates
from sagewai.intelligence.consolidation._selection import Selection
from sagewai.intelligence.consolidation._structure import structure_of
from sagewai.stores.memory._metadata import InMemoryMetadataStore
from sagewai.stores.memory._vector import InMemoryVectorStore
from sagewai.testing import FakeEmbedder
from tests.helpers import add_dated

NOW = datetime(2025, 6, 1, tzinfo=UTC)
PEOPLE = ("Ben Okafor", "Ana Silva", "Eli Tanaka", "Chen Novak")
VERBS = ("likes", "uses", "recommends")
THINGS = ("tea", "jazz", "chess", "yoga", "Rust", "Kafka")


class DriftingIndex(InMemoryVectorStore):
    """Exact search that misses about one hit in three, which ones depending on how many payload
    updates the index has taken (as an approximate graph walk depends on the index's state)."""

    def __init__(self, dimension: int) -> None:
        super().__init__(dimension)
        self.generation = 0
        self.searches = 0

    async def update_payloads(self, payloads: Any) -> None:
        self.generation += 1
        await super().update_payloads(payloads)

    async def search_many(
        self, vectors: Sequence[Vector], top_k: int, where: VectorFilter, *, ef: int | None = None
    ) -> list[list[VectorHit]]:
        self.searches += len(vectors)
        found = await super().search_many(vectors, top_k, where, ef=ef)
        return [[h for h in hits if not self.misses(h.id)] for hits in found]

    def misses(self, fact_id: str) -> bool:
        digest = hashlib.sha256(f"{fact_id}/{self.generation}".encode()).digest()
        return digest[0] % 3 == 0


def corpus() -> list[str]:
    """Statements and restatements ("really", lower case: those mention no name)."""
    rng = random.Random(15)
    texts: list[str] = []
    for who in PEOPLE:
        for verb in VERBS:
            for thing in THINGS:
                texts.append(f"{who} {verb} {thing}.")
                if rng.random() < 0.6:
                    texts.append(f"{who} really {verb} {thing}.")
                if rng.random() < 0.6:
                    texts.append(f"{who} {verb} {thing}".lower())
    rng.shuffle(texts)
    return texts


async def engine_with_corpus() -> tuple[ContextEngine, DriftingIndex]:
    embedder = FakeEmbedder(64)
    index = DriftingIndex(embedder.dimension)
    ctx = ContextEngine(
        metadata_store=InMemoryMetadataStore(),
        vector_store=index,
        project_id="p",
        embedder=embedder,
    )
    await add_dated(ctx, corpus(), NOW)
    return ctx, index


def counts(report: ConsolidationReport) -> tuple[int, ...]:
    return (
        report.duplicates_removed,
        report.facts_decayed,
        report.facts_archived,
        report.contradictions_resolved,
        report.facts_flagged,
        report.total_processed,
    )


def actions(report: ConsolidationReport) -> set[tuple[str, str, tuple[str, ...], str | None]]:
    return {(a.kind.value, a.rule, a.fact_ids, a.target_id) for a in report.actions}


async def plan_and_run(*, incremental: bool) -> tuple[ConsolidationReport, ConsolidationReport]:
    ctx, _ = await engine_with_corpus()
    async with ctx:
        consolidator = MemoryConsolidator(ctx, batch_size=10, decay_halflife_days=36_500.0)
        planned = await consolidator.consolidate(now=NOW, dry_run=True, incremental=incremental)
        done = await consolidator.consolidate(now=NOW, incremental=incremental)
    return planned, done


@pytest.mark.parametrize("exhaustive", [candidates.EXHAUSTIVE, 0])
async def test_a_dry_run_plans_exactly_what_the_run_does_on_a_drifting_index(
    monkeypatch: pytest.MonkeyPatch, exhaustive: int
) -> None:
    # exhaustive=0: the facts without a name are searched in the (drifting) index, up front.
    monkeypatch.setattr(candidates, "EXHAUSTIVE", exhaustive)
    planned, done = await plan_and_run(incremental=False)
    assert done.duplicates_removed >= 10
    assert counts(planned) == counts(done)
    assert actions(planned) == actions(done)


async def test_the_index_drifts_enough_to_change_a_run_that_searches_it_fact_by_fact() -> None:
    # The same corpus through the incremental path, which searches the index as it goes: the
    # drift changes what it finds, which is what the full run's table is there to avoid.
    planned, done = await plan_and_run(incremental=True)
    assert actions(planned) != actions(done)


async def test_the_table_finds_what_an_exact_search_finds() -> None:
    # Every pair an exhaustive comparison of all facts would call a candidate (cosine at or
    # above the floor, names each within the other's words) is in the table, both ways.
    ctx, _ = await engine_with_corpus()
    async with ctx:
        table, facts = await table_and_facts(ctx)
        vectors = await ctx.port.get_vectors([f.id for f in facts])
    structures = {f.id: structure_of(f) for f in facts}
    expected: set[tuple[str, str]] = set()
    for a in facts:
        for b in facts:
            if a.id == b.id:
                continue
            va, vb = vectors[a.id], vectors[b.id]
            cosine = float(va @ vb) / float((va @ va) ** 0.5 * (vb @ vb) ** 0.5)
            sa, sb = structures[a.id], structures[b.id]
            if cosine >= 0.75 and sa.names <= sb.words and sb.names <= sa.words:
                expected.add((a.id, b.id))
    found = {(a.id, h.id) for a in facts for h in table.hits(a.id)}
    assert expected
    assert found == expected
    assert all(
        [h.score for h in table.hits(f.id)]
        == sorted((h.score for h in table.hits(f.id)), reverse=True)
        for f in facts
    )
    assert {f.status for f in facts} == {FactStatus.ACTIVE}


async def table_and_facts(ctx: ContextEngine) -> tuple[candidates.CandidateTable, list[Fact]]:
    """The candidate table of the project's facts (the default thresholds), and those facts."""
    selection = consolidator_selection(ctx)
    table = await candidates.build_candidates(
        ctx.port,
        selection,
        ctx.port.embedder,
        floor=0.75,
        threshold=0.92,
        neighbours=8,
        max_neighbours=512,
        search_ef=None,
    )
    facts = await ctx.port.find(selection.scan(after=None, limit=1_000, updated_since=None))
    return table, facts


def consolidator_selection(ctx: ContextEngine) -> Selection:
    return Selection.build(
        project_id=ctx.project_id,
        org_id=None,
        scope="project",
        user_id=None,
        session_id=None,
        tags=None,
    )
