"""18 NebulaGraph backend: the knowledge graph in a NebulaGraph cluster instead of SQLite.

Set NEBULA_ADDRESS (host:port of graphd; NEBULA_USER, NEBULA_PASSWORD, NEBULA_SPACE optional) to
use your cluster (``pip install "sagewai[nebula]"``); the space is created if missing and the
example removes its own project's graph at the end. Without it, the same code runs on the
embedded SQLite graph, so the example works anywhere.

Run: NEBULA_ADDRESS=127.0.0.1:9669 python examples/18_nebula_backend.py
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from _setup import example_folder

from sagewai.graph import graph_file
from sagewai.intelligence import ConversationGraphBuilder
from sagewai.stores import GraphStore, SqliteGraphStore

PROJECT = "example-18"
CONVERSATION = [
    {"role": "user", "name": "Omar", "content": "I work at Globex and live in Cairo."},
    {"role": "user", "name": "Omar", "content": "My manager Lina lives in Dubai."},
]


async def open_graph(folder: Path) -> GraphStore:
    address = os.environ.get("NEBULA_ADDRESS")
    if not address:
        print("NEBULA_ADDRESS is not set: running on the embedded SQLite graph instead.")
        return SqliteGraphStore(graph_file(folder))
    from sagewai.stores import NebulaGraphStore

    print(f"NebulaGraph: {address}")
    store = NebulaGraphStore(
        addresses=[address],
        username=os.environ.get("NEBULA_USER", "root"),
        password=os.environ.get("NEBULA_PASSWORD", "nebula"),
        space=os.environ.get("NEBULA_SPACE", "sagewai_examples"),
    )
    await store.setup()  # once per cluster; idempotent
    return store


async def main() -> None:
    with example_folder("18_nebula_backend") as folder:
        store = await open_graph(folder)
        async with store:
            graph = store.for_project(PROJECT)
            builder = ConversationGraphBuilder(graph_store=graph)
            result = await builder.process_conversation(CONVERSATION, session_id="s1")
            print(f"entities added {result.entities_added}, relations {result.relations_added}")
            names: dict[str, Any] = {e.id: e.name for e in await graph.entities()}
            for relation in await graph.relations():
                print(
                    f"  {names[relation.subject_id]} {relation.predicate} "
                    f"{names[relation.object_id]}"
                )
            [omar] = await graph.entities_named("Omar")
            around = await graph.neighbours(omar.id, depth=2)
            print(f"within 2 hops of Omar: {sorted(e.name for e in around.entities)}")
            removed = await graph.delete_all()
            print(f"cleaned up: {removed.total} graph items")


if __name__ == "__main__":
    asyncio.run(main())
