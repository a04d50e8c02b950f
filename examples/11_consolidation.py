"""11 consolidation: merge near-duplicates, decay what is never used, resolve contradictions.

A dry run reports exactly what a real run would do and changes nothing; the real run records
every change in the audit log (so each can be reverted). Exact values are never merged away.

Run: python examples/11_consolidation.py
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from _setup import example_folder

from sagewai import ContextEngine
from sagewai.intelligence import MemoryConsolidator


async def main() -> None:
    with example_folder("11_consolidation") as folder:
        async with ContextEngine.local(folder, project_id="ops") as ctx:
            long_ago = datetime.now(UTC) - timedelta(days=400)
            await ctx.add_many(
                [
                    "The deploy window is Tuesday morning",
                    "Deploy window: Tuesday morning",  # a near-duplicate, written by hand
                    {
                        "content": "Alice lives in Paris",
                        "subject": "Alice",
                        "predicate": "lives_in",
                        "object": "Paris",
                        "created_at": datetime.now(UTC) - timedelta(days=30),
                    },
                    {
                        "content": "Alice lives in Berlin",
                        "subject": "Alice",
                        "predicate": "lives_in",
                        "object": "Berlin",
                    },  # newer: it wins
                    {"content": "We once tried a Friday deploy", "created_at": long_ago},
                ]
            )
            consolidator = MemoryConsolidator(
                context_engine=ctx, similarity_threshold=0.9, decay_halflife_days=30.0
            )
            plan = await consolidator.consolidate(dry_run=True)
            active = await ctx.count(statuses=["active"])
            print(
                f"dry run: {plan.total_processed} facts read, would merge "
                f"{plan.duplicates_removed}, decay {plan.facts_decayed}, resolve "
                f"{plan.contradictions_resolved}; facts still active: {active}"
            )
            report = await consolidator.consolidate()
            print(
                f"real run: merged {report.duplicates_removed}, decayed {report.facts_decayed} "
                f"(archived {report.facts_archived}), resolved {report.contradictions_resolved} "
                f"in {report.duration_ms:.0f} ms"
            )
            for action in report.actions:
                print(f"  {action.kind.value:9} {action.rule}: {action.reason[:80]}")
            print("searchable now:")
            for fact in await ctx.list():
                print(f"  {fact.content}  (strength {fact.strength:.2f})")


if __name__ == "__main__":
    asyncio.run(main())
