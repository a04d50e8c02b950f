"""07 memory bridge: conversation turns in, reconciled facts with provenance out.

The bridge buffers each session's turns, extracts every turn with the turns before it as
context, and writes the facts to the user's scope, each knowing the session, message and turn it
came from. Facts are searchable as soon as ``process_message``/``flush`` return.

Run: python examples/07_memory_bridge.py
"""

from __future__ import annotations

import asyncio

from _setup import example_folder

from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.intelligence import RuleBasedFactExtractor

CONVERSATION = [
    ("user", "Hi! I'm planning the team offsite."),
    ("assistant", "Happy to help. Where is the team based?"),
    ("user", "We're in Lisbon, and I prefer venues near the river."),
    ("assistant", "Noted. Any dietary needs?"),
    ("user", "Two of us are vegetarian, and my budget is 4000 EUR."),
]


async def main() -> None:
    with example_folder("07_memory_bridge") as folder:
        async with ContextEngine.local(folder, project_id="offsite") as ctx:
            bridge = MemoryBridge(
                context_engine=ctx,
                fact_extractor=RuleBasedFactExtractor(),
                extract_every_n_turns=2,
            )
            for role, text in CONVERSATION:
                stored = await bridge.process_message(
                    text, role=role, session_id="planning-1", user_id="rui"
                )
                print(f"{role:9} {text}")
                for fact in stored:
                    print(f"          -> learned: {fact.content}")
            await bridge.flush("planning-1")  # the end of the session: the last buffered turn

            print("\nwhat a later session of rui recalls about the offsite:")
            for result in await ctx.search("offsite venue, budget and diet", user_id="rui"):
                source = result.fact.sources[0]
                print(
                    f"  {result.fact.content}  (session {source.session_id}, "
                    f"turn {source.turn_index}, {source.extractor})"
                )
            print(f"stats: {bridge.stats}")


if __name__ == "__main__":
    asyncio.run(main())
