"""19 self-learning agent: every mechanism wired into one agent that learns across sessions.

* ContextEngine.local: facts, vectors and the graph in one folder (survives restarts);
* MemoryBridge: facts extracted from every turn in the background (rules; with a real model, the
  model too where the rules are unsure), reconciled so a changed preference supersedes the old;
* ConversationGraphBuilder: entities and relations (GLiNER when its weights are installed, the
  rules otherwise; the log says which);
* episodes (SQLite, in the same folder): each ended session saved whole and recalled by topic;
* MemoryConsolidator: the "nightly" maintenance between sessions;
* UniversalAgent: recalls all of it within a token budget before each answer, answers through a
  bounded tool loop (memory tools + a user tool), and learns from the turn.

The agent is closed and built again half-way, as after a restart: what it learned is on disk.

Run: python examples/19_self_learning_agent.py      (offline scripted stand-in)
     SAGEWAI_MODEL=gpt-4o-mini python examples/19_self_learning_agent.py
"""

from __future__ import annotations

import asyncio
import os
from datetime import date

from _setup import chat_model, example_folder, show_logs

from sagewai import ContextEngine
from sagewai.agent import UniversalAgent
from sagewai.context import MemoryBridge
from sagewai.intelligence import (
    ConversationGraphBuilder,
    GLiNEREntityExtractor,
    HeuristicRelationExtractor,
    HybridFactExtractor,
    LLMFactExtractor,
    MemoryConsolidator,
    RuleBasedFactExtractor,
)
from sagewai.llm import LLMClient
from sagewai.testing import offline_stand_in

USER = "ana"
FIRST_RUN = {
    "s1": ["Hi! I live in Porto and I work at Initech.", "My favourite drink is green tea."],
    "s2": ["What is my favourite drink?", "Where do I live?"],
}
AFTER_RESTART = {
    "s3": ["My favourite drink is espresso now."],
    "s4": ["What is my favourite drink?", "Please forget where I live."],
    "s5": ["Where do I live?", "What is my favourite drink?", "What do you know about Initech?"],
}


def days_until(day: str) -> int:
    """Days from today until a date.

    Args:
        day: The date, as YYYY-MM-DD.
    """
    return (date.fromisoformat(day) - date.today()).days


def build_agent(ctx: ContextEngine, model: LLMClient, real: bool) -> UniversalAgent:
    rules = RuleBasedFactExtractor()
    extractor = (
        HybridFactExtractor(
            rule_extractor=rules,
            llm_extractor=LLMFactExtractor(model=os.environ["SAGEWAI_MODEL"], client=model),
        )
        if real
        else rules  # the scripted stand-in answers chat turns only, not extraction prompts
    )
    return UniversalAgent(
        name="sage",
        context=ctx,
        llm=model,
        memory_bridge=MemoryBridge(context_engine=ctx, fact_extractor=extractor),
        graph_builder=ConversationGraphBuilder(
            graph_store=ctx.graph_store,
            entity_extractor=GLiNEREntityExtractor(),
            relation_extractor=HeuristicRelationExtractor(),
        ),
        tools=[days_until],
        memory_token_budget=800,
        max_steps=4,
        user_id=USER,
    )


async def converse(agent: UniversalAgent, sessions: dict[str, list[str]]) -> None:
    for session_id, messages in sessions.items():
        print(f"\n--- session {session_id}")
        for message in messages:
            reply = await agent.respond(message, session_id=session_id)
            memory = reply.memory
            recalled = [item.section for item in memory.items]
            print(f"{USER:>5}: {message}")
            print(f" sage: {reply.answer}")
            print(
                f"       (recalled {recalled.count('facts')} facts, {recalled.count('graph')} "
                f"relations, {recalled.count('episodes')} past sessions in {memory.tokens} "
                f"tokens; tools used: {[r.call.name for r in reply.tool_results] or 'none'})"
            )
        await agent.end_session(session_id)  # learn everything, save the episode


async def show_memory(ctx: ContextEngine, label: str) -> None:
    facts = await ctx.list(user_id=USER, kinds=["fact"])
    print(f"\n{label}: {len(facts)} facts about {USER}")
    for fact in facts:
        print(f"  - {fact.content}")


async def main() -> None:
    show_logs()
    real = bool(os.environ.get("SAGEWAI_MODEL"))
    model = chat_model(offline_stand_in())
    with example_folder("19_self_learning_agent") as folder:
        async with ContextEngine.local(folder, project_id="assistant") as ctx:
            async with build_agent(ctx, model, real) as agent:
                await converse(agent, FIRST_RUN)
            await show_memory(ctx, "memory after the first run")

        print("\n=== restart: a new engine and agent on the same folder")
        async with ContextEngine.local(folder, project_id="assistant") as ctx:
            report = await MemoryConsolidator(context_engine=ctx).consolidate(scope=None)
            print(
                f"nightly consolidation: {report.total_processed} facts checked, "
                f"{len(report.actions)} changes"
            )
            async with build_agent(ctx, model, real) as agent:
                await converse(agent, AFTER_RESTART)
            await show_memory(ctx, "memory at the end")
            episodes = agent.episode_store
            assert episodes is not None
            saved = await episodes.list_episodes(project_id="assistant", user_id=USER)
            print(f"episodes saved: {sorted(e.session_id for e in saved)}")


if __name__ == "__main__":
    asyncio.run(main())
