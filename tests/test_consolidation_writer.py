"""A large run writes its batches in a child process while it decides the next one.

:class:`SqliteWriter` sends each encoded batch to a child Python that owns a second connection
to the same SQLite file; the run keeps a batch in its overlay until it landed. A run with the
writer must decide and store exactly what a run without it does, and a child that cannot start,
stops, or fails a batch leaves the rest to this process without losing, doubling or
half-writing a batch (a batch the store refuses is refused with the store's own error).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sagewai.context._engine import ContextEngine
from sagewai.core._queries import ChangeQuery, FactQuery, WriteBatch
from sagewai.core._records import ChangeAction, Fact, FactChange, FactStatus, utcnow
from sagewai.errors import BackendError, FactConflictError, InvalidInputError
from sagewai.intelligence import MemoryConsolidator
from sagewai.intelligence.consolidation._run import Run
from sagewai.stores import InMemoryVectorStore, SqliteMetadataStore
from sagewai.stores.qdrant._edge import QdrantEdgeVectorStore
from sagewai.stores.sqlite import _writer as writing
from sagewai.testing import FakeEmbedder
from tests.helpers import add_dated
from tests.test_consolidation import DAY, add_world, all_facts, assert_index_agrees, make_factory
from tests.test_consolidation_candidates import NOW, actions, corpus, counts


async def sqlite_engine(folder: Path) -> ContextEngine:
    ctx = ContextEngine(
        metadata_store=SqliteMetadataStore(folder / "metadata.sqlite3"),
        vector_store=InMemoryVectorStore(64),
        project_id="p",
        embedder=FakeEmbedder(64),
    )
    await add_dated(ctx, corpus(), NOW)
    return ctx


async def stored(ctx: ContextEngine) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every fact's decided fields and every audit row's, in a comparable form."""
    facts = await ctx.stores.metadata.query(FactQuery(project_id="p", statuses=None))
    changes = await ctx.stores.metadata.changes(ChangeQuery(project_id="p"))
    return (
        sorted(
            (f.id, f.status.value, round(f.strength, 9), f.merged_into, f.superseded_by)
            for f in facts
        ),
        sorted((c.fact_id, c.action.value, c.rule, c.related_fact_ids) for c in changes),
    )


@contextlib.asynccontextmanager
async def beside_a_reference(folder: Path) -> AsyncIterator[tuple[ContextEngine, ContextEngine]]:
    """An embedded engine consolidated without interruption, and another with the same facts."""
    reference = make_factory("embedded", folder / "reference")()
    other = make_factory("embedded", folder / "other")()
    async with reference, other:
        for engine in (reference, other):
            await add_world(engine)
        await MemoryConsolidator(reference, batch_size=3).consolidate(now=NOW)
        yield reference, other


def change_of(fact: Fact) -> FactChange:
    return FactChange(
        fact_id=fact.id,
        project_id=fact.project_id,
        action=ChangeAction.CREATED,
        at=utcnow(),
        actor="test",
        rule="test.write",
        reason="written by the test",
    )


@pytest.mark.parametrize("incremental", [False, True])
async def test_a_run_with_the_writer_stores_what_a_run_without_it_stores(
    tmp_path: Path, incremental: bool
) -> None:
    outcomes = []
    for use_child in (False, True):
        ctx = await sqlite_engine(tmp_path / f"child-{use_child}")
        async with ctx:
            consolidator = MemoryConsolidator(
                ctx,
                batch_size=10,
                decay_halflife_days=36_500.0,
                writing_process_from=1 if use_child else None,
            )
            planned = await consolidator.consolidate(now=NOW, dry_run=True)
            done = await consolidator.consolidate(now=NOW, incremental=incremental)
            assert counts(planned) == counts(done)
            assert actions(planned) == actions(done)
            # The next run finds the state the last batch's checkpoint left (finished).
            again = await consolidator.consolidate(now=NOW, incremental=True)
            outcomes.append((counts(done), actions(done), await stored(ctx), counts(again)))
    without, with_child = outcomes
    assert without[0][0] >= 10  # merges happened
    assert with_child == without


async def test_the_writer_writes_in_the_child_in_order(tmp_path: Path) -> None:
    store = SqliteMetadataStore(tmp_path / "m.sqlite3")
    async with store:
        facts = [Fact(project_id="p", content=f"fact {i}") for i in range(30)]
        async with writing.SqliteWriter(store) as writer:
            assert writer.running
            landings = [
                writer.submit(WriteBatch("p", upserts=[f], changes=[change_of(f)]))
                for f in facts[:20]
            ]
            # A later version of a fact, in a later batch, wins.
            newer = facts[0].model_copy(update={"content": "fact 0, rewritten"})
            last = writer.submit(WriteBatch("p", upserts=[newer]), state=("p", "k", {"n": 1}))
            await asyncio.gather(*landings, last)
            assert writer.written_in_child == 21
        found = {f.id: f for f in await store.get("p", [f.id for f in facts])}
        assert len(found) == 20
        assert found[facts[0].id].content == "fact 0, rewritten"
        assert await store.get_state("p", "k") == {"n": 1}
        # This process's view of the file counts the child's new rows.
        assert len(await store.keyword_search(FactQuery(project_id="p"), "fact", 50)) == 20


async def test_a_batch_the_store_refuses_is_refused_with_its_own_error(tmp_path: Path) -> None:
    store = SqliteMetadataStore(tmp_path / "m.sqlite3")
    async with store:
        theirs = Fact(project_id="other", content="not yours")
        await store.apply(WriteBatch("other", upserts=[theirs]))
        taken = Fact(id=theirs.id, project_id="p", content="taking it")
        mine = Fact(project_id="p", content="mine")
        async with writing.SqliteWriter(store) as writer:
            with pytest.raises(InvalidInputError):
                writer.submit(WriteBatch("p", upserts=[mine], changes=[change_of(theirs)]))
            refused = writer.submit(WriteBatch("p", upserts=[mine, taken]))
            with pytest.raises(FactConflictError):
                await refused
            assert not writer.running
            # The refused batch wrote nothing; later batches are written here.
            assert await store.get("p", [mine.id]) == []
            await writer.submit(WriteBatch("p", upserts=[mine], changes=[change_of(mine)]))
        assert [f.content for f in await store.get("p", [mine.id])] == ["mine"]
        assert [f.content for f in await store.get("other", [theirs.id])] == ["not yours"]


async def test_a_child_that_stops_leaves_the_rest_to_this_process_without_doubling(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SqliteMetadataStore(tmp_path / "m.sqlite3")
    async with store:
        facts = [Fact(project_id="p", content=f"fact {i}") for i in range(6)]
        batches = [WriteBatch("p", upserts=[f], changes=[change_of(f)]) for f in facts]
        with caplog.at_level(logging.WARNING, logger="sagewai.stores.sqlite"):
            async with writing.SqliteWriter(store) as writer:
                await writer.submit(batches[0])
                # The child wrote batches[1] but its answer was lost: not written again.
                await writer.submit(batches[1])
                lost: asyncio.Future[tuple[Any, ...]] = asyncio.get_running_loop().create_future()
                lost.set_exception(EOFError("answer lost"))
                await writer._land(None, lost, batches[1], store.encode(batches[1]), None)
                assert not writer.running
                for batch in batches[2:]:
                    await writer.submit(batch)
        assert "writing here instead" in caplog.text
        assert len(await store.get("p", [f.id for f in facts])) == 6
        changes = await store.changes(ChangeQuery(project_id="p"))
        assert sorted(c.fact_id for c in changes) == sorted(f.id for f in facts)


async def test_a_killed_child_loses_nothing(tmp_path: Path) -> None:
    store = SqliteMetadataStore(tmp_path / "m.sqlite3")
    async with store:
        facts = [Fact(project_id="p", content=f"fact {i}") for i in range(40)]
        async with writing.SqliteWriter(store) as writer:
            landings = []
            for i, fact in enumerate(facts):
                landings.append(
                    writer.submit(WriteBatch("p", upserts=[fact], changes=[change_of(fact)]))
                )
                if i == 20:
                    assert writer._child.process is not None
                    writer._child.process.kill()
            await asyncio.gather(*landings)
            assert writer.written_in_child < 40
        assert len(await store.get("p", [f.id for f in facts])) == 40
        changes = await store.changes(ChangeQuery(project_id="p"))
        assert sorted(c.fact_id for c in changes) == sorted(f.id for f in facts)


async def test_a_child_that_cannot_start_leaves_the_writing_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    store = SqliteMetadataStore(tmp_path / "m.sqlite3")
    async with store:
        fact = Fact(project_id="p", content="written here")
        with caplog.at_level(logging.WARNING, logger="sagewai.stores.sqlite"):
            async with writing.SqliteWriter(store) as writer:
                assert not writer.running
                await writer.submit(WriteBatch("p", upserts=[fact]), state=("p", "k", 1))
        assert "could not start" in caplog.text
        assert [f.content for f in await store.get("p", [fact.id])] == ["written here"]
        assert await store.get_state("p", "k") == 1


async def test_a_store_in_memory_is_written_here(tmp_path: Path) -> None:
    store = SqliteMetadataStore(":memory:")
    async with store:
        fact = Fact(project_id="p", content="in memory")
        async with writing.SqliteWriter(store) as writer:
            assert not writer.running
            await writer.submit(WriteBatch("p", upserts=[fact]))
        assert [f.content for f in await store.get("p", [fact.id])] == ["in memory"]


@pytest.mark.parametrize("fail_on", [2, 4])
async def test_a_run_failing_while_a_batch_is_in_flight_resumes_to_the_uninterrupted_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_on: int
) -> None:
    async with beside_a_reference(tmp_path) as (reference, interrupted):
        consolidator = MemoryConsolidator(interrupted, batch_size=3, writing_process_from=1)
        processed = Run.process
        calls = 0

        async def failing(run: Run, *args: Any, **kwargs: Any) -> None:
            nonlocal calls
            calls += 1
            if calls == fail_on:  # the batch before is in the writer process now
                assert run.landing is not None
                assert run.queue is not None
                raise BackendError("injected failure")
            await processed(run, *args, **kwargs)

        monkeypatch.setattr(Run, "process", failing)
        with pytest.raises(BackendError, match="injected"):
            await consolidator.consolidate(now=NOW)
        monkeypatch.undo()
        # What landed is consistent and indexed: every link points at a live fact.
        middle = await all_facts(interrupted)
        assert any(f.status is not FactStatus.ACTIVE for f in middle.values())
        for f in middle.values():
            if f.merged_into is not None:
                assert middle[f.merged_into].status is FactStatus.ACTIVE
        await assert_index_agrees(interrupted)
        resumed = await consolidator.consolidate(now=NOW + 5 * DAY)
        assert resumed.resumed_run_id is not None
        assert await all_facts(interrupted) == await all_facts(reference)
        await assert_index_agrees(interrupted)


async def test_payloads_a_crash_left_behind_the_writer_are_repaired_on_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with beside_a_reference(tmp_path) as (reference, interrupted):
        consolidator = MemoryConsolidator(interrupted, batch_size=3, writing_process_from=1)
        written = QdrantEdgeVectorStore.update_payloads
        calls = 0

        async def crashing(store: QdrantEdgeVectorStore, *args: Any, **kwargs: Any) -> None:
            nonlocal calls
            calls += 1
            if calls == 2:  # the second batch landed (with its checkpoint), its index did not
                raise BackendError("injected index failure")
            await written(store, *args, **kwargs)

        monkeypatch.setattr(QdrantEdgeVectorStore, "update_payloads", crashing)
        with pytest.raises(BackendError, match="index failure"):
            await consolidator.consolidate(now=NOW)
        monkeypatch.undo()
        resumed = await consolidator.consolidate(now=NOW + 5 * DAY)
        assert resumed.resumed_run_id is not None
        assert resumed.index_repairs > 0
        assert await all_facts(interrupted) == await all_facts(reference)
        await assert_index_agrees(interrupted)


async def test_a_run_whose_child_is_killed_goes_on_here(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with beside_a_reference(tmp_path) as (reference, killed):
        submitted = writing.SqliteWriter.submit
        calls = 0

        def kill_then_submit(writer: writing.SqliteWriter, *args: Any) -> asyncio.Task[None]:
            nonlocal calls
            calls += 1
            if calls == 3 and writer._child.process is not None:
                writer._child.process.kill()
            return submitted(writer, *args)

        monkeypatch.setattr(writing.SqliteWriter, "submit", kill_then_submit)
        with caplog.at_level(logging.WARNING, logger="sagewai.stores.sqlite"):
            report = await MemoryConsolidator(
                killed, batch_size=3, writing_process_from=1
            ).consolidate(now=NOW)
        assert calls > 3
        assert "writing here instead" in caplog.text
        assert report.resumed_run_id is None
        assert await all_facts(killed) == await all_facts(reference)
        await assert_index_agrees(killed)
