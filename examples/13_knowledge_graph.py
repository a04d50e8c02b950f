"""13 knowledge graph: entities and time-bounded relations built from conversation turns.

The builder finds the named things of each message (people, places, organisations, values),
resolves them to graph entities, and reads relations between them. A new value of a
single-valued relation (lives_in) closes the old edge's validity instead of deleting it, so the
graph keeps its history. The whole graph exports to one offline HTML page.

Without GLiNER weights on this machine the GLiNER extractor is not usable; the builder says so
once in the log and uses the rule-based entity extractor.

Run: python examples/13_knowledge_graph.py
"""

from __future__ import annotations

import asyncio

from _setup import example_folder, show_logs

from sagewai import ContextEngine
from sagewai.graph import export_graph
from sagewai.intelligence import (
    ConversationGraphBuilder,
    GLiNEREntityExtractor,
    HeuristicRelationExtractor,
)

CONVERSATION = [
    {"role": "user", "name": "Caroline", "content": "I live in Boston and work at Initech."},
    {"role": "user", "name": "Caroline", "content": "My sister Sara works at Mercy Hospital."},
    {"role": "user", "name": "Caroline", "content": "I moved to Denver last month."},
]


async def main() -> None:
    show_logs()
    with example_folder("13_knowledge_graph") as folder:
        async with ContextEngine.local(folder, project_id="family") as ctx:
            builder = ConversationGraphBuilder(
                graph_store=ctx.graph_store,
                entity_extractor=GLiNEREntityExtractor(),
                relation_extractor=HeuristicRelationExtractor(),
            )
            result = await builder.process_conversation(CONVERSATION, session_id="s1")
            print(
                f"entities added {result.entities_added}, relations added "
                f"{result.relations_added}, superseded {result.relations_superseded}"
            )

            graph = ctx.graph_store
            assert graph is not None
            names = {entity.id: entity.name for entity in await graph.entities()}
            print("relations (with their validity):")
            for relation in await graph.relations():
                until = relation.valid_to.date() if relation.valid_to else "now"
                print(
                    f"  {names[relation.subject_id]} {relation.predicate} "
                    f"{names[relation.object_id]}  [{relation.valid_from.date()} .. {until}]"
                )

            [caroline] = await graph.entities_named("Caroline")
            around = await graph.neighbours(caroline.id, depth=2)
            print(f"within 2 hops of Caroline: {sorted(e.name for e in around.entities)}")

            page = folder / "graph.html"
            page.write_text(await export_graph(graph, "html"), encoding="utf-8")
            print(f"exported the graph to {page.name} ({page.stat().st_size} bytes, no network)")


if __name__ == "__main__":
    asyncio.run(main())
