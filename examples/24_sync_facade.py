"""24 sync facade: the engine, the bridge and the agent from plain, non-async code.

``sagewai.sync.wrap`` gives an engine, a bridge or an agent blocking methods (the async ones,
run on a private event loop in a background thread), so a script or a notebook cell calls
``ctx.search(...)`` without ``await`` or ``asyncio.run``. It also works where a loop is already
running (Jupyter): the call waits for sagewai's own loop instead of nesting in yours.

The chat model is the offline scripted stand-in unless SAGEWAI_MODEL is set.

Run: python examples/24_sync_facade.py
"""

from __future__ import annotations

from _setup import chat_model, example_folder

from sagewai import ContextEngine, UniversalAgent
from sagewai.context import MemoryBridge
from sagewai.intelligence import MemoryConsolidator, RuleBasedFactExtractor
from sagewai.sync import run, wrap
from sagewai.testing import offline_stand_in


def main() -> None:
    with example_folder("24_sync_facade") as folder:
        # The README's quickstart, without asyncio.
        with wrap(ContextEngine.local(folder, project_id="my-app")) as ctx:
            ctx.add("Alice prefers green tea over coffee", subject="Alice", user_id="alice")
            for result in ctx.search("what does Alice drink?", user_id="alice"):
                print(f"quickstart: {result.score:.3f}  {result.fact.content}")

        # The seed's wiring, built as usual, then wrapped.
        engine = ContextEngine.local(folder, project_id="my-app")
        bridge = MemoryBridge(context_engine=engine, fact_extractor=RuleBasedFactExtractor())
        agent = UniversalAgent(
            name="helper", context=engine, memory_bridge=bridge, llm=chat_model(offline_stand_in())
        )
        with wrap(engine) as ctx, wrap(bridge) as sync_bridge, wrap(agent) as sync_agent:
            learned = sync_bridge.process_message("I moved to Berlin last month", session_id="s1")
            print(f"bridge learned: {[fact.content for fact in learned]}")
            print(f"agent: {sync_agent.chat('Where did I move last month?', session_id='s2')}")
            report = run(MemoryConsolidator(context_engine=engine).consolidate(dry_run=True))
            print(f"consolidation dry run looked at {report.total_processed} facts")
            print(f"records in the folder: {ctx.count()}")


if __name__ == "__main__":
    main()
