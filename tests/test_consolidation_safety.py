"""MemoryConsolidator's safety: dry runs, interrupted runs, locks, reverts, incremental runs.

Each runs on the in-memory stores and SQLite, and the ones that depend on how the index behaves
(a dry run over a stale index, a resumed run) also on the embedded default, SQLite + Qdrant edge.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from sagewai.context._engine import ContextEngine
from sagewai.core._queries import WriteBatch
from sagewai.core._records import ChangeAction, FactStatus
from sagewai.errors import BackendError, InvalidInputError, LockedError
from sagewai.intelligence import ActionKind, MemoryConsolidator
from sagewai.stores import SqliteMetadataStore
from sagewai.stores.base._vector import ProjectVectorStore
from sagewai.stores.memory._vector import InMemoryVectorStore
from sagewai.testing import FakeEmbedder
from tests.test_consolidation import (
    DAY,
    NO_DECAY,
    NOW,
    FailingMemoryStore,
    FailingSqliteStore,
    RecordingVectorStore,
    add_world,
    all_facts,
    any_ctx,
    assert_index_agrees,
    comparable,
    ctx,
    index_snapshot,
    make_factory,
    status_of,
)

__all__ = ["any_ctx", "ctx"]  # fixtures imported for this module


# --------------------------------------------------------------------------- safety


async def test_dry_run_changes_nothing_and_plans_exactly_the_real_run(
    any_ctx: ContextEngine,
) -> None:
    ctx = any_ctx
    await add_world(ctx)
    before = await all_facts(ctx)
    index_before = await index_snapshot(ctx, before)
    changes_before = await ctx.changes()
    writes_before = getattr(ctx.port.vectors, "writes", None)
    consolidator = MemoryConsolidator(ctx, batch_size=4)
    planned = await consolidator.consolidate(dry_run=True, now=NOW)
    assert planned.dry_run
    assert await all_facts(ctx) == before
    assert await index_snapshot(ctx, before) == index_before
    assert await ctx.changes() == changes_before
    assert getattr(ctx.port.vectors, "writes", None) == writes_before
    assert planned.actions
    assert all(not a.change_ids for a in planned.actions)
    done = await consolidator.consolidate(now=NOW)
    assert comparable(done) == comparable(planned)
    for field in (
        "duplicates_removed",
        "facts_decayed",
        "contradictions_resolved",
        "facts_archived",
        "total_processed",
    ):
        assert getattr(done, field) == getattr(planned, field), field
    await assert_index_agrees(ctx)


@pytest.mark.parametrize(
    ("backend", "fail_on"),
    [("memory", 2), ("memory", 3), ("memory", 4), ("sqlite", 2), ("sqlite", 4), ("embedded", 3)],
)
async def test_an_interrupted_run_resumes_to_the_uninterrupted_state(
    backend: str, fail_on: int, tmp_path: Path
) -> None:
    reference = make_factory(backend, tmp_path / "reference")()
    interrupted = make_factory(backend, tmp_path / "interrupted")()
    async with reference, interrupted:
        for engine in (reference, interrupted):
            await add_world(engine)
        # add_many wrote one batch; every consolidation batch is one more apply.
        seeded = interrupted.stores.metadata
        assert isinstance(seeded, FailingMemoryStore | FailingSqliteStore)
        seeded.fail_on = seeded.applies + fail_on
        await MemoryConsolidator(reference, batch_size=3).consolidate(now=NOW)
        consolidator = MemoryConsolidator(interrupted, batch_size=3)
        with pytest.raises(BackendError, match="injected"):
            await consolidator.consolidate(now=NOW)
        # Consistent after the failure: every link points at a live fact, the index agrees.
        middle = await all_facts(interrupted)
        for f in middle.values():
            if f.merged_into is not None:
                assert middle[f.merged_into].status is FactStatus.ACTIVE
            if f.superseded_by is not None:
                assert f.superseded_by in middle
        await assert_index_agrees(interrupted)
        resumed = await consolidator.consolidate(now=NOW + 5 * DAY)
        assert resumed.resumed_run_id is not None
        assert resumed.reference_time == NOW  # the interrupted run's reference time
        assert await all_facts(interrupted) == await all_facts(reference)
        await assert_index_agrees(interrupted)
        after = await consolidator.consolidate(now=NOW)
        assert after.actions == []


async def test_a_second_run_on_a_consolidated_project_changes_nothing(
    any_ctx: ContextEngine,
) -> None:
    ctx = any_ctx
    await add_world(ctx)
    consolidator = MemoryConsolidator(ctx, batch_size=2)
    first = await consolidator.consolidate(now=NOW)
    assert first.actions
    second = await consolidator.consolidate(now=NOW)
    assert second.actions == []


async def test_overlapping_runs_on_one_project_are_refused() -> None:
    ctx = make_factory("memory", Path("."))()
    view = ctx.port.vectors
    assert isinstance(view, ProjectVectorStore)  # the engine's project view of the store
    vectors = view.store
    assert isinstance(vectors, RecordingVectorStore)
    async with ctx:
        await add_world(ctx)
        vectors.gate = asyncio.Event()
        first = asyncio.create_task(MemoryConsolidator(ctx).consolidate(now=NOW))
        await vectors.searching.wait()
        with pytest.raises(LockedError):
            await MemoryConsolidator(ctx).consolidate(now=NOW)
        vectors.gate.set()
        report = await first
        assert report.duplicates_removed == 2


async def test_overlapping_runs_across_processes_are_refused_on_sqlite(tmp_path: Path) -> None:
    factory = make_factory("sqlite", tmp_path)
    ctx = factory()
    other = SqliteMetadataStore(tmp_path / "meta.sqlite3")  # as another process would open it
    async with ctx, other:
        await add_world(ctx)
        async with other.lock("p1", "consolidation"):
            with pytest.raises(LockedError):
                await MemoryConsolidator(ctx).consolidate()
        report = await MemoryConsolidator(ctx).consolidate(now=NOW)
        assert report.duplicates_removed == 2


async def test_revert_of_a_merge(ctx: ContextEngine) -> None:
    await add_world(ctx)
    consolidator = MemoryConsolidator(ctx, **NO_DECAY)
    report = await consolidator.consolidate(now=NOW)
    merge = next(a for a in report.actions if a.kind is ActionKind.MERGE)
    # One audit row at a time, through the engine.
    merged_change = next(c for c in await ctx.history("dup-b") if c.action is ChangeAction.MERGED)
    restored = await ctx.revert(merged_change.id)
    assert restored.status is FactStatus.ACTIVE
    assert restored.merged_into is None
    assert [c.action for c in await ctx.history("dup-b")][-1] is ChangeAction.RESTORED
    # The whole action at once, remembered so the next run does not merge them again.
    await consolidator.revert_action(merge)
    canonical = await ctx.get("dup-a")
    assert {s.session_id for s in canonical.sources} == {"s1"}
    assert await status_of(ctx, "dup-c") is FactStatus.ACTIVE
    again = await consolidator.consolidate(now=NOW)
    assert again.duplicates_removed == 0
    with pytest.raises(InvalidInputError, match="dry-run"):
        await consolidator.revert_action(merge.model_copy(update={"change_ids": ()}))


async def test_incremental_mode_processes_only_what_changed(ctx: ContextEngine) -> None:
    await add_world(ctx)
    consolidator = MemoryConsolidator(ctx)
    full = await consolidator.consolidate(now=NOW)
    active = await ctx.count(statuses=["active"])
    assert full.total_processed > 3
    await ctx.add("The staging database runs PostgreSQL!!", fact_id="dup-d", created_at=NOW + DAY)
    await ctx.add("Lunch is at noon on Fridays", fact_id="lunch", created_at=NOW + DAY)
    incremental = await consolidator.consolidate(incremental=True, now=NOW + DAY)
    assert incremental.incremental
    assert incremental.total_processed == 2
    assert [(a.target_id, a.fact_ids) for a in incremental.actions] == [("dup-a", ("dup-d",))]
    assert await ctx.count(statuses=["active"]) == active + 1
    nothing = await consolidator.consolidate(incremental=True, now=NOW + DAY)
    assert nothing.actions == []
    assert nothing.total_processed == 0


async def test_progress_is_reported_after_each_batch(ctx: ContextEngine) -> None:
    await add_world(ctx)
    seen: list[tuple[int, int]] = []
    await MemoryConsolidator(ctx, batch_size=5).consolidate(
        now=NOW, progress=lambda p: seen.append((p.processed, p.total))
    )
    assert len(seen) >= 3
    assert [p for p, _ in seen] == sorted(p for p, _ in seen)
    assert all(total >= processed for processed, total in seen)


def failing_postgres_store(dsn: str, schema: str) -> Any:
    """A PostgreSQL store failing its ``fail_on``-th apply once (the subclass is made here so
    this module imports without asyncpg)."""
    from sagewai.stores import PostgresMetadataStore

    class FailingPostgresStore(PostgresMetadataStore):
        applies = 0
        fail_on: int | None = None

        async def apply(self, batch: WriteBatch) -> None:
            self.applies += 1
            if self.fail_on is not None and self.applies == self.fail_on:
                self.fail_on = None
                raise BackendError("injected failure")
            await super().apply(batch)

    return FailingPostgresStore(dsn, schema=schema)


@pytest.mark.postgres
async def test_on_postgresql_dry_run_resume_and_lock(
    postgres_dsn: str, postgres_schema: str
) -> None:
    embedder = FakeEmbedder()
    store = failing_postgres_store(postgres_dsn, postgres_schema)
    await store.migrate()
    ctx = ContextEngine(
        metadata_store=store,
        vector_store=InMemoryVectorStore(embedder.dimension),
        project_id="p1",
        embedder=embedder,
    )
    reference = make_factory("memory", Path("."))()
    async with ctx, reference:
        await add_world(ctx)
        await add_world(reference)
        consolidator = MemoryConsolidator(ctx, batch_size=3)
        planned = await consolidator.consolidate(dry_run=True, now=NOW)
        store.fail_on = store.applies + 2
        with pytest.raises(BackendError, match="injected"):
            await consolidator.consolidate(now=NOW)
        other = failing_postgres_store(postgres_dsn, postgres_schema)
        async with other, other.lock("p1", "consolidation"):
            with pytest.raises(LockedError):
                await consolidator.consolidate(now=NOW)
        resumed = await consolidator.consolidate(now=NOW + DAY)
        assert resumed.resumed_run_id is not None
        await MemoryConsolidator(reference, batch_size=3).consolidate(now=NOW)
        assert await all_facts(ctx) == await all_facts(reference)
        assert planned.actions
        assert (await consolidator.consolidate(now=NOW)).actions == []


class FlakyPayloadStore(InMemoryVectorStore):
    """The in-memory index, failing one payload update when armed (a crash after the metadata
    commit and before the index caught up)."""

    armed = False

    async def update_payloads(self, payloads: Any) -> None:
        if self.armed:
            self.armed = False
            raise BackendError("injected index failure")
        await super().update_payloads(payloads)


async def test_a_stale_index_left_by_a_crash_is_repaired_by_the_next_run() -> None:
    embedder = FakeEmbedder()
    vectors = FlakyPayloadStore(embedder.dimension)
    ctx = ContextEngine(
        metadata_store=FailingMemoryStore(),
        vector_store=vectors,
        project_id="p1",
        embedder=embedder,
    )
    async with ctx:
        await add_world(ctx)
        vectors.armed = True
        consolidator = MemoryConsolidator(ctx, **NO_DECAY)
        with pytest.raises(BackendError, match="index failure"):
            await consolidator.consolidate(now=NOW)
        # The metadata committed, the index did not: merged facts still look active there.
        assert await status_of(ctx, "dup-b") is FactStatus.MERGED
        with pytest.raises(AssertionError):
            await assert_index_agrees(ctx)
        report = await consolidator.consolidate(now=NOW)
        assert report.index_repairs >= 2
        assert report.actions == []
        await assert_index_agrees(ctx)
