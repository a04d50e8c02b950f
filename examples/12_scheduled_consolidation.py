"""12 scheduled consolidation: run it beside the application, or from cron.

Two ways to schedule the same maintenance job:

* in-process: a background task consolidates every N seconds (incremental runs: only facts
  written since the last run), while the application keeps writing;
* from a scheduler: ``sagewai consolidate`` (cron, a systemd timer, a Kubernetes CronJob) with
  exit codes 0 ok, 1 failure, 2 usage, 3 another run holds the lock.

Run: python examples/12_scheduled_consolidation.py
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys

from _setup import example_folder

from sagewai import ContextEngine
from sagewai.intelligence import MemoryConsolidator


async def consolidate_every(consolidator: MemoryConsolidator, seconds: float) -> None:
    """The scheduler loop: one incremental run per period; a failed run waits for the next."""
    while True:
        await asyncio.sleep(seconds)
        report = await consolidator.consolidate(incremental=True)
        print(f"  [scheduled] read {report.total_processed}, merged {report.duplicates_removed}")


async def main() -> None:
    with example_folder("12_scheduled_consolidation") as folder:
        async with ContextEngine.local(folder, project_id="app") as ctx:
            consolidator = MemoryConsolidator(context_engine=ctx, similarity_threshold=0.9)
            job = asyncio.create_task(consolidate_every(consolidator, seconds=0.5))
            for text in (
                "Invoices are due on the 5th",
                "Invoices are due on the 5th.",
                "The office closes at 18:00",
                "The office closes at 18:00 h",
            ):
                await ctx.add(text)
                print(f"app wrote: {text}")
                await asyncio.sleep(0.3)
            await asyncio.sleep(0.6)
            job.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await job
            print(f"active facts now: {await ctx.count(statuses=['active'])}")

        command = [
            sys.executable,
            "-m",
            "sagewai",
            "consolidate",
            "--project",
            "app",
            "--store",
            str(folder),
            "--dry-run",
            "--json",
        ]
        print(f"\ncron line: */30 * * * * {' '.join(command[2:])}")
        process = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE)
        stdout, _ = await process.communicate()
        report = json.loads(stdout)
        print(
            f"`sagewai consolidate` exited {process.returncode}: "
            f"{report['total_processed']} facts read, {len(report['actions'])} actions planned"
        )


if __name__ == "__main__":
    asyncio.run(main())
