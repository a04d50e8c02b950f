"""How an incremental run asks the index: widened searches go together, decisions do not change.

(A full run finds its candidates exactly before deciding, see ``test_consolidation_candidates``;
an incremental run, which examines only the facts written since the last one, searches the
index for each.)

A corpus of similar sentences ("Ben Okafor likes tea at work.") makes many facts' searches widen:
either every hit is above the threshold, or too few are left below it for the structure rule.
The run makes those wider searches in one batch per width (``Run.widen_weak`` and
``Run.settle_many``); these tests check that it does, and that a run searching one fact at a time
takes exactly the same actions.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from sagewai.context._engine import ContextEngine
from sagewai.core._embedder import Vector
from sagewai.core._queries import VectorFilter, VectorHit
from sagewai.core._records import Fact, FactStatus
from sagewai.intelligence import ConsolidationReport, MemoryConsolidator
from sagewai.intelligence.consolidation._run import Run
from sagewai.stores.memory._metadata import InMemoryMetadataStore
from sagewai.stores.memory._vector import InMemoryVectorStore
from sagewai.testing import FakeEmbedder
from tests.helpers import add_dated

NOW = datetime(2025, 6, 1, tzinfo=UTC)
PEOPLE = ("Ben Okafor", "Ana Silva", "Eli Tanaka", "Chen Novak", "Maya Haddad", "Omar Rossi")
VERBS = ("likes", "uses", "recommends")
THINGS = ("tea", "jazz", "chess", "yoga", "Rust", "Kafka", "sushi", "Linux")
WHEN = (" at work", " at work", " on weekends")


class CountingVectorStore(InMemoryVectorStore):
    """The in-memory index, counting batch-search calls and queries by ``top_k``."""

    def __init__(self, dimension: int) -> None:
        super().__init__(dimension)
        self.calls: Counter[int] = Counter()
        self.queries: Counter[int] = Counter()

    async def search_many(
        self, vectors: Sequence[Vector], top_k: int, where: VectorFilter, *, ef: int | None = None
    ) -> list[list[VectorHit]]:
        self.calls[top_k] += 1
        self.queries[top_k] += len(vectors)
        return await super().search_many(vectors, top_k, where, ef=ef)


def corpus() -> list[str]:
    """Every person's statements about every thing, many restated ("really", lower case)."""
    rng = random.Random(15)
    texts: list[str] = []
    for who in PEOPLE:
        for verb in VERBS:
            for thing in THINGS:
                when = rng.choice(WHEN)
                texts.append(f"{who} {verb} {thing}{when}.")
                if rng.random() < 0.6:
                    texts.append(f"{who} really {verb} {thing}{when}.")
                if rng.random() < 0.6:
                    texts.append(f"{who} {verb} {thing}{when}".lower())
    rng.shuffle(texts)
    return texts


async def consolidate(
    monkeypatch: pytest.MonkeyPatch, *, one_by_one: bool
) -> tuple[ConsolidationReport, CountingVectorStore, dict[str, Fact]]:
    embedder = FakeEmbedder(64)
    vectors = CountingVectorStore(embedder.dimension)
    metadata = InMemoryMetadataStore()
    ctx = ContextEngine(
        metadata_store=metadata, vector_store=vectors, project_id="p", embedder=embedder
    )
    texts = corpus()
    await add_dated(ctx, texts, NOW)
    if one_by_one:

        async def no_batched_widening(self: Run, facts: Any, where: Any) -> None:
            return None

        monkeypatch.setattr(Run, "widen_weak", no_batched_widening)
    vectors.calls.clear()
    vectors.queries.clear()
    consolidator = MemoryConsolidator(ctx, batch_size=40, decay_halflife_days=36_500.0)
    # An incremental run searches the index fact by fact (a full run finds its candidates up
    # front); its first run examines every fact.
    report = await consolidator.consolidate(now=NOW, incremental=True)
    facts = {f.id: f for f in await metadata.get("p", [f"f{i:04d}" for i in range(len(texts))])}
    return report, vectors, facts


def actions_of(report: ConsolidationReport) -> set[tuple[str, str, tuple[str, ...], str | None]]:
    return {(a.kind.value, a.rule, a.fact_ids, a.target_id) for a in report.actions}


async def test_widened_searches_go_in_batches_and_change_no_decision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    batched, batched_index, batched_facts = await consolidate(monkeypatch, one_by_one=False)
    single, single_index, single_facts = await consolidate(monkeypatch, one_by_one=True)

    first = 8 + 1  # the first search of every fact: `neighbours` + itself
    wide_calls = sum(n for k, n in batched_index.calls.items() if k > first)
    wide_calls_single = sum(n for k, n in single_index.calls.items() if k > first)
    wide_queries = sum(n for k, n in batched_index.queries.items() if k > first)
    assert wide_queries >= 10, "the corpus must make searches widen"
    # One call per width per batch at most, against one call per fact.
    assert wide_calls <= batched.batches * len(batched_index.calls)
    assert wide_calls < wide_calls_single

    assert batched.duplicates_removed > 0
    assert actions_of(batched) == actions_of(single)
    assert batched.duplicates_removed == single.duplicates_removed
    assert {i: f.status for i, f in batched_facts.items()} == {
        i: f.status for i, f in single_facts.items()
    }
    merged = [f for f in batched_facts.values() if f.status is FactStatus.MERGED]
    assert all(f.merged_into in batched_facts for f in merged)
