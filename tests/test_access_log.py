"""Access tracking off the search path: a search returns before its read marks are written."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from sagewai.context._access_log import AccessLog
from sagewai.core._queries import WriteBatch
from sagewai.core._records import Fact, utcnow
from sagewai.errors import BackendUnavailableError, InvalidInputError
from sagewai.stores import SqliteMetadataStore
from sagewai.stores.memory._metadata import InMemoryMetadataStore
from tests.helpers import memory_engine


class CountingStore(InMemoryMetadataStore):
    """Counts ``touch`` statements; fails them while ``down`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.touches: list[list[str]] = []
        self.stamps: list[datetime] = []
        self.down = False

    async def touch(self, project_id: str, ids: Sequence[str], at: datetime) -> None:
        if self.down:
            raise BackendUnavailableError("the database is down")
        self.touches.append(list(ids))
        self.stamps.append(at)
        await super().touch(project_id, ids, at)


async def test_search_returns_before_the_marks_are_written_and_get_shows_them() -> None:
    store = CountingStore()
    async with memory_engine(metadata=store) as ctx:
        fact = await ctx.add("the printer is in room 12")
        await ctx.search("printer room")
        assert store.touches == []  # nothing written inside the search
        assert (await ctx.get(fact.id)).last_accessed_at is not None  # the pending mark
        assert store.touches == []  # get only reads
        (stored,) = await store.get(ctx.project_id, [fact.id])
        assert stored.last_accessed_at is None
    assert store.touches == [[fact.id]]  # written by close


async def test_many_searches_share_one_write() -> None:
    store = CountingStore()
    async with memory_engine(metadata=store) as ctx:
        facts = await ctx.add_many([f"room {n} has a printer" for n in range(5)])
        for _ in range(20):
            await ctx.search("printer room", top_k=5)
        await asyncio.sleep(0.8)  # past the delay: the background task wrote them
        assert len(store.touches) == 1
        assert set(store.touches[0]) == {fact.id for fact in facts}


async def test_close_writes_what_is_pending() -> None:
    store = CountingStore()
    ctx = memory_engine(metadata=store)
    async with ctx:
        fact = await ctx.add("the printer is in room 12")
        await ctx.search("printer room")
    assert store.touches == [[fact.id]]
    (stored,) = await store.get(ctx.project_id, [fact.id])
    assert stored.last_accessed_at is not None


async def test_a_failed_write_is_counted_and_never_fails_a_search() -> None:
    store = CountingStore()
    log = AccessLog(store, "p1", delay=0.0)
    store.down = True
    log.record(["a", "b"], utcnow())
    await log.flush()
    assert (log.failed, log.written, log.pending) == (2, 0, 0)
    store.down = False
    log.record(["a"], utcnow())
    await log.flush()
    assert (log.failed, log.written) == (2, 1)


async def test_the_latest_read_of_a_fact_wins() -> None:
    store = CountingStore()
    log = AccessLog(store, "p1", delay=60.0)
    early = utcnow()
    late = early + timedelta(seconds=1)
    log.record(["a"], late)
    log.record(["a"], early)
    assert log.pending == 1
    await log.flush()  # flush does not wait for the delay
    assert (store.touches, store.stamps) == ([["a"]], [late])


def test_delay_must_be_a_non_negative_number() -> None:
    with pytest.raises(InvalidInputError):
        AccessLog(InMemoryMetadataStore(), "p1", delay=-1.0)
    with pytest.raises(InvalidInputError):
        AccessLog(InMemoryMetadataStore(), "p1", delay=float("nan"))


async def test_consolidation_sees_the_reads_of_searches_just_made() -> None:
    from sagewai.intelligence import MemoryConsolidator

    store = CountingStore()
    async with memory_engine(metadata=store) as ctx:
        ctx.port._access = AccessLog(
            store, ctx.project_id, delay=60.0
        )  # no background write in time
        fact = await ctx.add("the printer is in room 12")
        await ctx.search("printer room")
        await MemoryConsolidator(ctx).consolidate(dry_run=True)
        assert store.touches[:1] == [[fact.id]]  # written before the run read the facts


async def test_sqlite_marks_never_hold_up_reads(tmp_path: Path) -> None:
    # The marks go through a connection of their own: while one waits for the write lock
    # (another writer holds it), reads and the stored facts stay available at once.
    store = SqliteMetadataStore(str(tmp_path / "metadata.sqlite3"), busy_timeout=10.0)
    fact = Fact(project_id="p", content="Alice prefers tea")
    await store.apply(WriteBatch(project_id="p", upserts=[fact]))
    other = sqlite3.connect(tmp_path / "metadata.sqlite3", isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        at = utcnow()
        touching = asyncio.create_task(store.touch("p", [fact.id], at))
        await asyncio.sleep(0.2)
        assert not touching.done()  # waiting for the lock
        found = await asyncio.wait_for(store.get("p", [fact.id]), timeout=2.0)
        assert found[0].last_accessed_at is None
        other.execute("COMMIT")
        await asyncio.wait_for(touching, timeout=5.0)
        assert (await store.get("p", [fact.id]))[0].last_accessed_at == at
    finally:
        other.close()
        await store.close()
    # A closed store reopens both connections on the next mark.
    await store.touch("p", [fact.id], at + timedelta(seconds=1))
    assert (await store.get("p", [fact.id]))[0].last_accessed_at == at + timedelta(seconds=1)
    await store.close()


async def test_in_memory_sqlite_marks_use_its_one_connection() -> None:
    store = SqliteMetadataStore(":memory:")
    fact = Fact(project_id="p", content="Alice prefers tea")
    await store.apply(WriteBatch(project_id="p", upserts=[fact]))
    at = utcnow()
    await store.touch("p", [fact.id], at)
    assert (await store.get("p", [fact.id]))[0].last_accessed_at == at
    await store.close()
