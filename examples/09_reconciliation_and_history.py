"""09 reconciliation and history: a change supersedes, a repeat reinforces, nothing is lost.

Write-time reconciliation compares each new fact with what the user's scope holds: a new value
of a single-valued relation (lives_in) supersedes the old fact, whose validity is closed instead
of deleted; a repeat reinforces the existing fact. Every change is in the audit log, and
``search(as_of=...)`` answers what was believed at an earlier time.

Run: python examples/09_reconciliation_and_history.py
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from _setup import example_folder

from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.intelligence import RuleBasedFactExtractor

SAID = [
    ("2024-01-10T09:00:00+00:00", "I live in Paris."),
    ("2024-02-02T18:30:00+00:00", "I live in Paris, still loving it."),
    ("2024-06-20T12:00:00+00:00", "I moved to Berlin last week."),
]


async def main() -> None:
    with example_folder("09_reconciliation") as folder:
        async with ContextEngine.local(folder, project_id="history") as ctx:
            bridge = MemoryBridge(
                context_engine=ctx, fact_extractor=RuleBasedFactExtractor(), extract_every_n_turns=1
            )
            for when, text in SAID:
                await bridge.process_message(
                    {"role": "user", "content": text, "timestamp": when},
                    session_id=f"s-{when[:10]}",
                    user_id="lea",
                )
            print(
                f"stats: added={bridge.stats.facts_added} updated={bridge.stats.facts_updated} "
                f"reinforced={bridge.stats.facts_reinforced}"
            )

            now = await ctx.search("where does Lea live?", user_id="lea", top_k=1, kinds=["fact"])
            print(f"today:        {now[0].fact.content}")
            spring = datetime(2024, 3, 1, tzinfo=UTC)
            then = await ctx.search(
                "where does Lea live?", user_id="lea", top_k=1, as_of=spring, kinds=["fact"]
            )
            print(f"on 2024-03-01: {then[0].fact.content}")

            for fact in await ctx.list(user_id="lea", statuses=None, kinds=["fact"]):
                print(
                    f"\n{fact.status.value:10} {fact.content!r} strength={fact.strength:.1f} "
                    f"valid {fact.valid_from:%Y-%m-%d} .. "
                    f"{fact.valid_to.strftime('%Y-%m-%d') if fact.valid_to else 'now'}"
                )
                for change in await ctx.history(fact.id):
                    print(
                        f"    {change.at:%Y-%m-%d} {change.action.value:10} by {change.rule}: "
                        f"{change.reason[:70]}"
                    )


if __name__ == "__main__":
    asyncio.run(main())
