"""08 background bridge: accept messages in microseconds, extract them in background workers.

``submit`` journals the message (a write-ahead log on disk) and returns at once; workers extract
and store it. A crash loses nothing accepted: a bridge restarted on the same journal replays it.
``flush`` waits until everything accepted is stored; ``aclose`` flushes and stops the workers.

Run: python examples/08_background_bridge.py
"""

from __future__ import annotations

import asyncio
import time

from _setup import example_folder

from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.intelligence import RuleBasedFactExtractor

MESSAGES = [
    "I work at Initech as a data engineer.",
    "My favourite database is PostgreSQL.",
    "I live in Montreal.",
    "We decided to migrate the warehouse to Parquet.",
]


async def main() -> None:
    with example_folder("08_background_bridge") as folder:
        async with ContextEngine.local(folder / "memory", project_id="bg") as ctx:
            bridge = MemoryBridge(
                context_engine=ctx,
                fact_extractor=RuleBasedFactExtractor(),
                extract_every_n_turns=2,
                journal_path=folder / "bridge.journal",
            )
            async with bridge:  # start(): replays whatever a crashed run left in the journal
                for text in MESSAGES:
                    started = time.perf_counter()
                    await bridge.submit(text, session_id="chat-7", user_id="mei")
                    micros = (time.perf_counter() - started) * 1e6
                    print(f"accepted in {micros:7.0f} µs: {text}")
                print(f"facts stored right after submitting: {await ctx.count(kinds=['fact'])}")
                await bridge.flush()
                print(f"facts stored after flush(): {await ctx.count(kinds=['fact'])}")
            for fact in await ctx.list(user_id="mei", kinds=["fact"]):
                print(f"  {fact.content}")
            print(
                f"stats: accepted={bridge.stats.messages_accepted} "
                f"processed={bridge.stats.messages_processed} added={bridge.stats.facts_added}"
            )


if __name__ == "__main__":
    asyncio.run(main())
