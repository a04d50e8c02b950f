"""14 graph search: answer through the entities *linked* to the ones a question names.

"What does Caroline's sister do?" names Caroline, but the answer is about Sara. The graph knows
``Caroline -sibling_of-> Sara -works_as-> nurse``: walking two hops from the entities the
question names reaches the answer (this neighbourhood is what UniversalAgent shows its model).
``search(..., graph_hops=2)`` blends the same walk into fact ranking as a bonus for the facts
that name the neighbours; the bonus is one signal among several, so print where it moves them.

Run: python examples/14_graph_search.py
"""

from __future__ import annotations

import asyncio

from _setup import example_folder

from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.intelligence import ConversationGraphBuilder, RuleBasedFactExtractor

CONVERSATION = [
    {"role": "user", "name": "Caroline", "content": "My sister Sara lives in Denver."},
    {"role": "user", "name": "Caroline", "content": "I adopted a cat last spring."},
    {"role": "user", "name": "Caroline", "content": "I'm learning to play the cello."},
    {"role": "user", "name": "Sara", "content": "I work as a nurse at Mercy Hospital."},
]
QUESTION = "What does Caroline's sister do for a living?"


async def main() -> None:
    with example_folder("14_graph_search") as folder:
        async with ContextEngine.local(folder, project_id="family") as ctx:
            builder = ConversationGraphBuilder(graph_store=ctx.graph_store)
            bridge = MemoryBridge(
                context_engine=ctx, fact_extractor=RuleBasedFactExtractor(), extract_every_n_turns=1
            )
            await builder.process_conversation(CONVERSATION, session_id="s1")
            for message in CONVERSATION:
                await bridge.process_message(message, session_id="s1")

            graph = ctx.graph_store
            assert graph is not None
            named = await graph.find_entities(QUESTION)
            print(f"the question names: {[e.name for e in named]}")
            for entity in named:
                around = await graph.neighbours(entity.id, depth=2)
                names = {e.id: e.name for e in (around.center, *around.entities)}
                for relation in around.relations:
                    print(
                        f"  2 hops from {entity.name}: {names[relation.subject_id]} "
                        f"{relation.predicate} {names[relation.object_id]}"
                    )

            for hops in (0, 2):
                results = await ctx.search(QUESTION, top_k=10, graph_hops=hops)
                rank = next(i for i, r in enumerate(results, 1) if "nurse" in r.fact.content)
                best = results[rank - 1]
                print(
                    f"graph_hops={hops}: the nurse fact ranks #{rank} of {len(results)} "
                    f"(graph bonus {best.parts.graph:.2f}, score {best.score:.2f})"
                )


if __name__ == "__main__":
    asyncio.run(main())
