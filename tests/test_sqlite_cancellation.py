"""A task cancelled while it uses an embedded store leaves the store open for everyone else.

A scheduled consolidation job is stopped with ``task.cancel()`` while the application keeps
using the same engine (``examples/12_scheduled_consolidation.py``). The cancelled task may be
waiting for the SQLite worker, even for the store's opening; that must cancel the task, never
close the database under the other tasks.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from sagewai import ContextEngine
from sagewai.stores import SqliteMetadataStore


def _database_open(ctx: ContextEngine) -> bool:
    """Whether the engine's SQLite connection is still the one it opened.

    Read from the store's private database handle on purpose: a closed database reopens on the
    next call, so only its state shows the bug (the old worker's close could then run after the
    reopening and drop the new connection: "SQLite database ... is closed" in another task).
    """
    store = ctx.stores.metadata
    assert isinstance(store, SqliteMetadataStore)
    return store._database.is_open


async def _cancel_soon(work: asyncio.Task[object], steps: int) -> None:
    for _ in range(steps):
        await asyncio.sleep(0)
    work.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await work


async def test_a_task_cancelled_mid_read_leaves_the_store_open(tmp_path: Path) -> None:
    async with ContextEngine.local(tmp_path / "mem", project_id="app") as ctx:
        await ctx.add("Invoices are due on the 5th")
        for steps in range(6):  # cancelled at each of its first awaits in turn
            await _cancel_soon(asyncio.create_task(ctx.count()), steps)
            assert _database_open(ctx), f"cancelled after {steps} steps closed the database"
            assert await ctx.count() == 1


async def test_a_task_cancelled_while_the_store_opens_leaves_it_to_the_others(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "mem"
    async with ContextEngine.local(folder, project_id="app") as first:
        await first.add("The office closes at 18:00")
    for steps in range(6):
        ctx = ContextEngine.local(folder, project_id="app")
        try:
            opening = asyncio.create_task(ctx.count())
            other = asyncio.create_task(ctx.count())
            await _cancel_soon(opening, steps)
            assert await other == 1
            assert _database_open(ctx), f"cancelled after {steps} steps closed the database"
            assert await ctx.count() == 1
        finally:
            await ctx.close()
