"""01 quickstart: store facts and search them on the embedded default (one folder, no server).

The folder holds SQLite (facts and their history), Qdrant's embedded engine (vectors) and a
SQLite graph; the MiniLM embedder runs offline. Reopening the folder finds everything again.

Run: python examples/01_quickstart.py
"""

from __future__ import annotations

import asyncio

from _setup import example_folder

from sagewai import ContextEngine


async def main() -> None:
    with example_folder("01_quickstart") as folder:
        async with ContextEngine.local(folder, project_id="demo") as ctx:
            await ctx.add("Alice prefers green tea over coffee", fact_type="preference")
            await ctx.add("The team decided to deploy on Tuesdays", fact_type="decision")
            await ctx.add("The staging database is postgresql://staging-db:5432/app")
            print(f"stored {await ctx.count()} facts in {folder}")

        # A new engine on the same folder, as after a restart.
        async with ContextEngine.local(folder, project_id="demo") as ctx:
            for question in ("What does Alice drink?", "When do we deploy?", "staging database"):
                best = (await ctx.search(question, top_k=1))[0]
                print(f"{question!r:26} -> {best.fact.content}  (score {best.score:.2f})")


if __name__ == "__main__":
    asyncio.run(main())
