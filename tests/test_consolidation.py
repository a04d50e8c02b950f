"""MemoryConsolidator's rules through its public API: dedup, contradictions, decay, audit.

The rules run on the in-memory stores and on SQLite; the embedded default (SQLite + Qdrant's
embedded engine) runs the merge test here and the safety tests in test_consolidation_safety.py.
The helpers below (fault-injecting subclasses of the real stores, never mocks, and a small world
with one fact of every case) are shared with the other consolidation tests.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sagewai.context._engine import ContextEngine
from sagewai.core._embedder import Vector
from sagewai.core._queries import FactQuery, VectorFilter, VectorHit, WriteBatch
from sagewai.core._records import ChangeAction, Fact, FactStatus, Provenance
from sagewai.errors import BackendError, InvalidInputError, ScopeError
from sagewai.intelligence import ActionKind, ConsolidationReport, MemoryConsolidator
from sagewai.stores import SqliteMetadataStore
from sagewai.stores.base._metadata import MetadataStore
from sagewai.stores.base._vector import VectorStore
from sagewai.stores.memory._metadata import InMemoryMetadataStore
from sagewai.stores.memory._vector import InMemoryVectorStore
from sagewai.testing import FakeEmbedder

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
NO_DECAY: dict[str, Any] = {"decay_halflife_days": 36_500.0}
BACKENDS = ("memory", "sqlite", "embedded")
FAST_BACKENDS = ("memory", "sqlite")


# --------------------------------------------------------------------------- fault injection


class FailingMemoryStore(InMemoryMetadataStore):
    """The in-memory store, failing its ``fail_on``-th apply (counted from 1) once."""

    def __init__(self) -> None:
        super().__init__()
        self.applies = 0
        self.fail_on: int | None = None

    async def apply(self, batch: WriteBatch) -> None:
        self.applies += 1
        if self.fail_on is not None and self.applies == self.fail_on:
            self.fail_on = None
            raise BackendError("injected failure")
        await super().apply(batch)


class FailingSqliteStore(SqliteMetadataStore):
    """The SQLite store, failing its ``fail_on``-th apply once (before the transaction)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.applies = 0
        self.fail_on: int | None = None

    async def apply(self, batch: WriteBatch) -> None:
        self.applies += 1
        if self.fail_on is not None and self.applies == self.fail_on:
            self.fail_on = None
            raise BackendError("injected failure")
        await super().apply(batch)


class RecordingVectorStore(InMemoryVectorStore):
    """The in-memory index, counting writes; ``gate`` (when set) holds every search and every
    read of vectors."""

    def __init__(self, dimension: int) -> None:
        super().__init__(dimension)
        self.writes = 0
        self.gate: asyncio.Event | None = None
        self.searching = asyncio.Event()

    async def upsert(self, records: Any) -> None:
        self.writes += 1
        await super().upsert(records)

    async def update_payloads(self, payloads: Any) -> None:
        self.writes += 1
        await super().update_payloads(payloads)

    async def delete(self, ids: Any) -> None:
        self.writes += 1
        await super().delete(ids)

    async def search(self, vector: Any, top_k: int, where: VectorFilter) -> list[VectorHit]:
        await self._hold()
        return await super().search(vector, top_k, where)

    async def search_many(
        self, vectors: Sequence[Vector], top_k: int, where: VectorFilter, *, ef: int | None = None
    ) -> list[list[VectorHit]]:
        await self._hold()
        return await super().search_many(vectors, top_k, where, ef=ef)

    async def get_vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        await self._hold()  # a full run's first read of the index (its candidate table)
        return await super().get_vectors(ids)

    async def _hold(self) -> None:
        self.searching.set()
        if self.gate is not None:
            await self.gate.wait()


# --------------------------------------------------------------------------- engines and data


EngineFactory = Callable[[], ContextEngine]


def make_factory(backend: str, folder: Path) -> EngineFactory:
    """Engines on ``backend``; calling the factory again reopens the same stores' data."""
    embedder = FakeEmbedder()
    memory_metadata = FailingMemoryStore()
    memory_vectors = RecordingVectorStore(embedder.dimension)

    def factory() -> ContextEngine:
        metadata: MetadataStore
        vectors: VectorStore
        if backend == "memory":
            metadata, vectors = memory_metadata, memory_vectors
        elif backend == "sqlite":
            metadata, vectors = FailingSqliteStore(folder / "meta.sqlite3"), memory_vectors
        else:
            from sagewai.stores.qdrant._edge import QdrantEdgeVectorStore

            metadata = FailingSqliteStore(folder / "meta.sqlite3")
            vectors = QdrantEdgeVectorStore(folder / "vectors", dimension=embedder.dimension)
        return ContextEngine(
            metadata_store=metadata, vector_store=vectors, project_id="p1", embedder=embedder
        )

    return factory


@pytest.fixture(params=FAST_BACKENDS)
async def ctx(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ContextEngine]:
    """An engine on the in-memory stores, then on SQLite (the rules do not depend on the index)."""
    engine = make_factory(request.param, tmp_path)()
    async with engine:
        yield engine


@pytest.fixture(params=BACKENDS)
async def any_ctx(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ContextEngine]:
    """An engine on every backend, the embedded default (SQLite + Qdrant edge) included."""
    engine = make_factory(request.param, tmp_path)()
    async with engine:
        yield engine


def fact(ctx: ContextEngine, key: str, content: str, age_days: float, **fields: Any) -> Fact:
    """A fact with a fixed id and creation time (so two stores can hold the same world)."""
    return ctx.port.build_fact(content, fact_id=key, created_at=NOW - age_days * DAY, **fields)


def world(ctx: ContextEngine) -> list[Fact]:
    """A small project holding one of every case consolidation must handle."""
    return [
        fact(
            ctx,
            "dup-a",
            "The staging database runs PostgreSQL",
            30,
            source=Provenance(session_id="s1", message_id="m1"),
        ),
        fact(
            ctx,
            "dup-b",
            "the staging database runs postgresql!",
            20,
            source=Provenance(session_id="s2", message_id="m7"),
        ),
        fact(
            ctx,
            "dup-c",
            "The staging database runs PostgreSQL.",
            10,
            source=Provenance(session_id="s3", message_id="m2"),
        ),
        fact(ctx, "ip-1", "Deploy the billing API to host", 9, exact_values=["10.0.0.1"]),
        fact(ctx, "ip-2", "Deploy the billing API to host", 8, exact_values=["10.0.0.2"]),
        fact(
            ctx,
            "paris",
            "Alice lives in Paris",
            60,
            subject="Alice",
            predicate="lives_in",
            object="Paris",
            confidence=0.9,
        ),
        fact(
            ctx,
            "london",
            "Alice lives in London",
            6,
            subject="Alice",
            predicate="lives_in",
            object="London",
            confidence=0.6,
        ),
        fact(ctx, "tea", "Alice likes tea", 5, subject="Alice", predicate="likes", object="tea"),
        fact(
            ctx,
            "coffee",
            "Alice likes coffee",
            5,
            subject="Alice",
            predicate="likes",
            object="coffee",
        ),
        fact(ctx, "jazz", "Bob likes jazz", 40, subject="Bob", predicate="likes", object="jazz"),
        fact(
            ctx,
            "no-jazz",
            "Bob does not like jazz",
            4,
            subject="Bob",
            predicate="likes",
            object="jazz",
            metadata={"negated": True},
        ),
        fact(ctx, "plant", "The office plant was watered", 400),
        fact(ctx, "token", "The root token lives at /srv/vault/root-token", 400),
        fact(ctx, "fresh", "The quarterly planning meeting moved online", 1),
        fact(ctx, "doc", "A document chunk about PostgreSQL staging", 30, kind="document"),
    ]


async def add_world(ctx: ContextEngine) -> dict[str, Fact]:
    added = await ctx.add_many(world(ctx))
    return {f.id: f for f in added}


async def all_facts(ctx: ContextEngine) -> dict[str, Fact]:
    facts = await ctx.stores.metadata.query(FactQuery(project_id=ctx.project_id))
    return {f.id: f for f in facts}


async def status_of(ctx: ContextEngine, fact_id: str) -> FactStatus:
    return (await ctx.get(fact_id)).status


async def index_snapshot(ctx: ContextEngine, facts: dict[str, Fact]) -> dict[str, Any]:
    """What the vector index holds for each fact: its vector and the payload fields it filters."""
    vectors = await ctx.port.vectors.get_vectors(list(facts))
    out: dict[str, Any] = {}
    for fact_id, f in facts.items():
        seen = {}
        for status in FactStatus:
            where = VectorFilter(
                scope_keys=(f.scope_key,), statuses=(status.value,), ids=(fact_id,)
            )
            seen[status.value] = await ctx.port.vectors.count(where)
        vector = vectors.get(fact_id)
        out[fact_id] = (None if vector is None else np.round(vector, 5).tolist(), seen)
    return out


async def assert_index_agrees(ctx: ContextEngine) -> None:
    """Every vector payload says what the metadata says (status, scope)."""
    facts = await all_facts(ctx)
    snapshot = await index_snapshot(ctx, facts)
    for fact_id, f in facts.items():
        _, seen = snapshot[fact_id]
        assert seen[f.status.value] == 1, (fact_id, f.status, seen)


def comparable(report: ConsolidationReport) -> list[Any]:
    return [action.comparable() for action in report.actions]


# --------------------------------------------------------------------------- configuration


async def test_defaults_construct_with_the_engine_alone(ctx: ContextEngine) -> None:
    consolidator = MemoryConsolidator(context_engine=ctx)
    assert consolidator.settings.similarity_threshold == 0.92
    assert consolidator.settings.contradiction_strategy == "keep_newer"
    report = await consolidator.consolidate()
    assert report.total_processed == 0
    assert report.actions == []


@pytest.mark.parametrize(
    "settings",
    [
        {"similarity_threshold": 1.5},
        {"similarity_threshold": 0.0},
        {"decay_halflife_days": 0},
        {"contradiction_strategy": "keep_both"},
        {"batch_size": 0},
        {"neighbours": 50, "max_neighbours": 10},
        {"no_such_setting": 1},
    ],
)
def test_bad_settings_are_rejected_at_construction(settings: dict[str, Any]) -> None:
    ctx = make_factory("memory", Path("."))()
    with pytest.raises(InvalidInputError):
        MemoryConsolidator(ctx, **settings)


async def test_another_project_is_a_clear_error(ctx: ContextEngine) -> None:
    consolidator = MemoryConsolidator(ctx)
    with pytest.raises(InvalidInputError, match="bound to project 'p1'"):
        await consolidator.consolidate(project_id="p2")
    report = await consolidator.consolidate(project_id="p1")
    assert report.project_id == "p1"


async def test_bad_scope_arguments_are_scope_errors(ctx: ContextEngine) -> None:
    consolidator = MemoryConsolidator(ctx)
    with pytest.raises(ScopeError):
        await consolidator.consolidate(scope="galaxy")
    with pytest.raises(ScopeError):
        await consolidator.consolidate(scope="org")
    with pytest.raises(ScopeError):
        await consolidator.consolidate(scope="project", user_id="alice")


# --------------------------------------------------------------------------- dedup


async def test_near_duplicates_merge_into_the_oldest_with_provenance_and_strength(
    any_ctx: ContextEngine,
) -> None:
    ctx = any_ctx
    await add_world(ctx)
    report = await MemoryConsolidator(ctx, **NO_DECAY).consolidate(now=NOW)
    merges = [a for a in report.actions if a.kind is ActionKind.MERGE]
    assert [(a.target_id, sorted(a.fact_ids)) for a in merges] == [("dup-a", ["dup-b", "dup-c"])]
    assert report.duplicates_removed == 2
    canonical = await ctx.get("dup-a")
    assert canonical.status is FactStatus.ACTIVE
    assert {s.session_id for s in canonical.sources} == {"s1", "s2", "s3"}
    assert canonical.last_accessed_at == NOW - 10 * DAY  # the latest restatement
    for absorbed in ("dup-b", "dup-c"):
        merged = await ctx.get(absorbed)
        assert merged.status is FactStatus.MERGED
        assert merged.merged_into == "dup-a"
        assert merged.content  # kept, never deleted
    # Merged facts leave search; the canonical stays.
    found = [r.fact.id for r in await ctx.search("staging database postgresql", top_k=5)]
    assert "dup-a" in found
    assert not {"dup-b", "dup-c"} & set(found)
    # The document chunk with the same words is not a fact and is never merged.
    assert (await ctx.get("doc")).status is FactStatus.ACTIVE


async def test_every_change_is_audited_and_explained(ctx: ContextEngine) -> None:
    await add_world(ctx)
    report = await MemoryConsolidator(ctx).consolidate(now=NOW)
    history = await ctx.history("dup-b")
    merged = [c for c in history if c.action is ChangeAction.MERGED]
    assert len(merged) == 1
    change = merged[0]
    assert change.actor == "consolidator"
    assert change.rule == "dedup.cosine"
    assert change.run_id == report.run_id
    assert "near-duplicate of dup-a" in change.reason
    assert change.before == {"status": "active", "merged_into": None}
    assert change.after == {"status": "merged", "merged_into": "dup-a"}
    rules = {c.rule for c in await ctx.changes(run_id=report.run_id)}
    assert rules == {"dedup.cosine", "decay.halflife", "contradiction.keep_newer"}
    for action in report.actions:
        assert action.change_ids
        assert action.reason


async def test_different_exact_values_never_merge(ctx: ContextEngine) -> None:
    # Declared values: identical texts, different addresses.
    await add_world(ctx)
    # Values written in the content: close vectors, different numbers.
    await ctx.add("Deploy the payments worker to 10.0.0.1", fact_id="w-1")
    await ctx.add("Deploy the payments worker to 10.0.0.2", fact_id="w-2")
    vectors = await ctx.port.vectors.get_vectors(["w-1", "w-2", "ip-1", "ip-2"])
    assert float(vectors["ip-1"] @ vectors["ip-2"]) > 0.99
    assert float(vectors["w-1"] @ vectors["w-2"]) > 0.8
    report = await MemoryConsolidator(ctx, similarity_threshold=0.8, **NO_DECAY).consolidate()
    merged_ids = {i for a in report.actions if a.kind is ActionKind.MERGE for i in a.fact_ids}
    assert not merged_ids & {"ip-1", "ip-2", "w-1", "w-2"}
    for fact_id in ("ip-1", "ip-2", "w-1", "w-2"):
        assert await status_of(ctx, fact_id) is FactStatus.ACTIVE


async def test_the_canonical_holds_every_exact_value_it_absorbs(ctx: ContextEngine) -> None:
    # The older fact holds fewer values, so the newer one must survive.
    await ctx.add("The API key is stored in the vault", fact_id="short", created_at=NOW - 9 * DAY)
    await ctx.add(
        "The API key is stored in the vault at /srv/vault/api-key",
        fact_id="long",
        created_at=NOW - 1 * DAY,
        exact_values=["kv-v2"],
    )
    report = await MemoryConsolidator(ctx, similarity_threshold=0.75, **NO_DECAY).consolidate()
    merges = [a for a in report.actions if a.kind is ActionKind.MERGE]
    assert [(a.target_id, a.fact_ids) for a in merges] == [("long", ("short",))]
    survivor = await ctx.get("long")
    assert "/srv/vault/api-key" in survivor.content
    assert "kv-v2" in survivor.exact_values


async def test_a_statement_and_its_negation_are_never_duplicates(ctx: ContextEngine) -> None:
    await ctx.add("Carol likes spicy food", fact_id="yes")
    await ctx.add("Carol does not like spicy food", fact_id="no")
    report = await MemoryConsolidator(ctx, similarity_threshold=0.5, **NO_DECAY).consolidate()
    assert report.duplicates_removed == 0


async def test_scopes_never_merge_across(ctx: ContextEngine) -> None:
    await ctx.add("The team standup is at nine", fact_id="proj")
    await ctx.add("The team standup is at nine", fact_id="alice", user_id="alice")
    await ctx.add("The team standup is at nine", fact_id="alice-2", user_id="alice")
    project_run = await MemoryConsolidator(ctx, **NO_DECAY).consolidate()
    assert project_run.duplicates_removed == 0
    user_run = await MemoryConsolidator(ctx, **NO_DECAY).consolidate(scope="user", user_id="alice")
    assert [(a.target_id, a.fact_ids) for a in user_run.actions] == [("alice", ("alice-2",))]
    assert await status_of(ctx, "proj") is FactStatus.ACTIVE


async def test_tags_limit_what_is_consolidated(ctx: ContextEngine) -> None:
    await ctx.add("Release notes go to the wiki", fact_id="a", tags=["ops"])
    await ctx.add("release notes go to the wiki", fact_id="b", tags=["ops"])
    await ctx.add("Release notes go to the wiki!", fact_id="c", tags=["misc"])
    report = await MemoryConsolidator(ctx, **NO_DECAY).consolidate(tags=["ops"])
    assert [(a.target_id, a.fact_ids) for a in report.actions] == [("a", ("b",))]
    assert await status_of(ctx, "c") is FactStatus.ACTIVE


# --------------------------------------------------------------------------- contradictions


async def test_keep_newer_supersedes_the_older_and_closes_its_validity(
    ctx: ContextEngine,
) -> None:
    facts = await add_world(ctx)
    report = await MemoryConsolidator(ctx, **NO_DECAY).consolidate(now=NOW)
    paris = await ctx.get("paris")
    assert paris.status is FactStatus.SUPERSEDED
    assert paris.superseded_by == "london"
    assert paris.valid_to == facts["london"].effective_from
    assert await status_of(ctx, "london") is FactStatus.ACTIVE
    # Negation: the later "does not like jazz" wins.
    assert (await ctx.get("jazz")).superseded_by == "no-jazz"
    assert report.contradictions_resolved == 2
    # What was believed before the move is still answerable.
    before = await ctx.search("where does Alice live", top_k=3, as_of=NOW - 30 * DAY)
    assert "paris" in [r.fact.id for r in before]


async def test_keep_higher_confidence_supersedes_the_weaker(ctx: ContextEngine) -> None:
    await add_world(ctx)
    report = await MemoryConsolidator(
        ctx, contradiction_strategy="keep_higher_confidence", **NO_DECAY
    ).consolidate(now=NOW)
    london = await ctx.get("london")
    assert london.status is FactStatus.SUPERSEDED
    assert london.superseded_by == "paris"
    assert await status_of(ctx, "paris") is FactStatus.ACTIVE
    rules = {a.rule for a in report.actions if a.kind is ActionKind.SUPERSEDE}
    assert rules == {"contradiction.keep_higher_confidence"}


async def test_flag_marks_both_and_keeps_both_retrievable(ctx: ContextEngine) -> None:
    await add_world(ctx)
    report = await MemoryConsolidator(ctx, contradiction_strategy="flag", **NO_DECAY).consolidate(
        now=NOW
    )
    for fact_id in ("paris", "london", "jazz", "no-jazz"):
        assert await status_of(ctx, fact_id) is FactStatus.FLAGGED
    assert report.facts_flagged == 4
    found = {r.fact.id for r in await ctx.search("Alice lives in", top_k=10)}
    assert {"paris", "london"} <= found
    again = await MemoryConsolidator(ctx, contradiction_strategy="flag", **NO_DECAY).consolidate(
        now=NOW
    )
    assert again.actions == []


async def test_only_compatible_types_merge_however_close(ctx: ContextEngine) -> None:
    # The index is asked for every active neighbour of the scope; types are checked on the
    # hydrated facts. A decision and an event never merge; a general fact joins either.
    text = "The release train leaves every second Tuesday"
    await ctx.add_many(
        [
            fact(ctx, "decision", text, 30, fact_type="decision"),
            fact(ctx, "event", text.lower(), 20, fact_type="event"),
        ]
    )
    report = await MemoryConsolidator(ctx, **NO_DECAY).consolidate(now=NOW)
    assert report.duplicates_removed == 0
    await ctx.add_many([fact(ctx, "general", text + "!", 10)])
    report = await MemoryConsolidator(ctx, **NO_DECAY).consolidate(now=NOW)
    assert report.duplicates_removed == 1
    assert await status_of(ctx, "decision") is FactStatus.ACTIVE
    assert await status_of(ctx, "event") is FactStatus.ACTIVE


async def test_multi_valued_predicates_are_left_alone(ctx: ContextEngine) -> None:
    await add_world(ctx)
    for strategy in ("keep_newer", "keep_higher_confidence", "flag"):
        await MemoryConsolidator(ctx, contradiction_strategy=strategy, **NO_DECAY).consolidate()
        assert await status_of(ctx, "tea") is FactStatus.ACTIVE
        assert await status_of(ctx, "coffee") is FactStatus.ACTIVE


# --------------------------------------------------------------------------- decay


async def test_decay_archives_unused_facts_but_never_deletes_them(ctx: ContextEngine) -> None:
    await add_world(ctx)
    report = await MemoryConsolidator(ctx).consolidate(now=NOW)
    plant = await ctx.get("plant")
    assert plant.status is FactStatus.ARCHIVED
    assert plant.strength < 0.05
    assert report.facts_archived >= 1
    assert report.facts_decayed >= report.facts_archived
    assert "plant" not in {r.fact.id for r in await ctx.search("office plant watered")}
    # A recent fact keeps its strength.
    assert (await ctx.get("fresh")).strength == 1.0


async def test_a_standing_instruction_decays_but_is_never_archived(ctx: ContextEngine) -> None:
    """Issue 42: a user's standing instruction holds until they change it, used or not."""
    said = Provenance(session_id="s1", message_id="m9", role="user")
    rule = fact(ctx, "rule", "Always answer in French.", 400, tags=["profile"], source=said)
    quoted = fact(
        ctx,
        "quoted",
        "Always answer in German.",
        400,
        tags=["profile"],
        source=Provenance(session_id="s1", message_id="m8", role="tool"),
    )
    await ctx.add_many([rule, quoted])
    await MemoryConsolidator(ctx).consolidate(now=NOW)
    kept = await ctx.get("rule")
    assert kept.status is FactStatus.ACTIVE
    assert kept.strength < 0.05
    assert await status_of(ctx, "quoted") is FactStatus.ARCHIVED  # not the user's: not a rule


async def test_the_only_copy_of_an_exact_value_is_never_archived(ctx: ContextEngine) -> None:
    await add_world(ctx)
    await MemoryConsolidator(ctx).consolidate(now=NOW)
    token = await ctx.get("token")
    assert token.status is FactStatus.ACTIVE
    assert token.strength < 0.05  # it decays, it just is not archived
    decay = [c for c in await ctx.history("token") if c.rule == "decay.halflife"]
    assert "only copy" in decay[-1].reason
    # Once another fact holds the value, the old one may go.
    await ctx.add("Rotate the root token at /srv/vault/root-token monthly", fact_id="rotate")
    await MemoryConsolidator(ctx).consolidate(now=NOW)
    assert await status_of(ctx, "token") is FactStatus.ARCHIVED
    assert await status_of(ctx, "rotate") is FactStatus.ACTIVE


async def test_decay_is_idempotent_and_does_not_compound(ctx: ContextEngine) -> None:
    await ctx.add("The coffee machine is on floor two", fact_id="a", created_at=NOW - 30 * DAY)
    consolidator = MemoryConsolidator(ctx)
    first = await consolidator.consolidate(now=NOW)
    assert (await ctx.get("a")).strength == pytest.approx(0.5)
    assert [a.kind for a in first.actions] == [ActionKind.DECAY]
    again = await consolidator.consolidate(now=NOW)
    assert again.actions == []
    assert (await ctx.get("a")).strength == pytest.approx(0.5)
    # Thirty more days: a quarter of the base, not half of the decayed value twice over.
    await consolidator.consolidate(now=NOW + 30 * DAY)
    assert (await ctx.get("a")).strength == pytest.approx(0.25)
    # Using the fact restarts its clock; the next run raises its strength again.
    await ctx.stores.metadata.touch(ctx.project_id, ["a"], NOW + 30 * DAY)
    refreshed = await consolidator.consolidate(now=NOW + 31 * DAY)
    assert [a.kind for a in refreshed.actions] == [ActionKind.REFRESH]
    assert (await ctx.get("a")).strength == pytest.approx(0.5 ** (1 / 30), abs=1e-6)


class CountingBatchStore(InMemoryVectorStore):
    """The in-memory index, counting the batch searches the consolidator makes."""

    def __init__(self, dimension: int) -> None:
        super().__init__(dimension)
        self.batches = 0

    async def search_many(
        self, vectors: Sequence[Vector], top_k: int, where: VectorFilter, *, ef: int | None = None
    ) -> list[list[VectorHit]]:
        self.batches += 1
        return await super().search_many(vectors, top_k, where, ef=ef)


class OneByOneStore(InMemoryVectorStore):
    """The in-memory index answering a batch as one search per vector."""

    async def search_many(
        self, vectors: Sequence[Vector], top_k: int, where: VectorFilter, *, ef: int | None = None
    ) -> list[list[VectorHit]]:
        single = super().search_many
        return [(await single([vector], top_k, where, ef=ef))[0] for vector in vectors]


async def test_batch_search_and_one_search_per_fact_reach_the_same_outcome() -> None:
    embedder = FakeEmbedder()
    batched = CountingBatchStore(embedder.dimension)
    engines = [
        ContextEngine(
            metadata_store=InMemoryMetadataStore(),
            vector_store=vectors,
            project_id="p1",
            embedder=embedder,
        )
        for vectors in (OneByOneStore(embedder.dimension), batched)
    ]
    outcomes = []
    for engine in engines:
        async with engine:
            await add_world(engine)
            # An incremental run searches the index fact by fact (a full run finds its
            # candidates up front, without it): its first run examines every fact.
            await MemoryConsolidator(engine, batch_size=4).consolidate(now=NOW, incremental=True)
            outcomes.append(await all_facts(engine))
    assert outcomes[0] == outcomes[1]
    assert batched.batches >= 4
