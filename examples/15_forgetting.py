"""15 forgetting: one request removes a subject, a session or a user from every store.

Every record naming it as a word, their vectors, the graph's entities and relations, the
episode turns and journal entries that mention it all go; the audit log keeps content-free
tombstones. The receipt counts what each store lost, and a dry run returns the same receipt
without changing anything. Nothing of another subject, session or user is touched.

Run: python examples/15_forgetting.py
"""

from __future__ import annotations

import asyncio

from _setup import example_folder

from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.core import Conversation
from sagewai.intelligence import ConversationGraphBuilder, RuleBasedFactExtractor

CONVERSATION = [
    {"role": "user", "name": "Nina", "content": "I work at Initech."},
    {"role": "user", "name": "Tom", "content": "I live in Oslo and I work at Initech too."},
    {"role": "user", "name": "Nina", "content": "I prefer morning meetings."},
]


async def counts(ctx: ContextEngine) -> str:
    assert ctx.graph_store is not None
    assert ctx.episodes.store is not None
    graph = await ctx.graph_store.counts()
    episode = (await ctx.episodes.store.list_episodes(project_id=ctx.project_id))[0]
    return (
        f"{await ctx.count(kinds=['fact'])} facts, {graph.entities} entities, "
        f"{graph.relations} relations, "
        f"episode lines: {[m.content for m in episode.messages]}"
    )


async def main() -> None:
    with example_folder("15_forgetting") as folder:
        async with ContextEngine.local(folder, project_id="team") as ctx:
            bridge = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor())
            await bridge.bridge_conversation(Conversation.of(CONVERSATION, session_id="s1"))
            await ConversationGraphBuilder(graph_store=ctx.graph_store).process_conversation(
                CONVERSATION, session_id="s1"
            )
            print(f"before: {await counts(ctx)}")
            preview = await ctx.forget(subject="Tom", dry_run=True)  # changes nothing
            report = await ctx.forget(subject="Tom")
            print(
                f"forget(subject='Tom'): facts_deleted={report.facts_deleted} "
                f"(vectors={report.vectors}, graph_items_deleted={report.graph_items_deleted}, "
                f"episode_messages={report.episode_messages}), "
                f"the dry run's receipt: {preview == report}"
            )
            print(f"after:  {await counts(ctx)}")
            left = await ctx.search("Who lives in Oslo?", top_k=5, kinds=["fact"])
            print(f"search 'Who lives in Oslo?' now finds: {[r.fact.content for r in left]}")
            history = await ctx.changes()
            print(f"audit log: {sum(c.action.value == 'deleted' for c in history)} tombstones")


if __name__ == "__main__":
    asyncio.run(main())
