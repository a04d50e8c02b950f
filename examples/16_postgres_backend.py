"""16 PostgreSQL backend: facts, history and episodes in PostgreSQL instead of SQLite.

Set SAGEWAI_POSTGRES_DSN (e.g. postgresql://postgres@127.0.0.1:5432/test) to run against your
server (``pip install "sagewai[postgres]"``); the example uses the schema ``sagewai_examples``
and removes its own project's data at the end. Without it, the same code runs on the embedded
default, so the example works anywhere.

Run: SAGEWAI_POSTGRES_DSN=postgresql://... python examples/16_postgres_backend.py
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from _setup import example_folder

from sagewai import ContextEngine
from sagewai.context.episodes import PersistentEpisodeStore
from sagewai.embeddings import MiniLMEmbedder
from sagewai.stores import EpisodeStoreBase

SCHEMA = "sagewai_examples"
PROJECT = "example-16"


async def open_stores(folder: Path) -> tuple[ContextEngine, EpisodeStoreBase]:
    dsn = os.environ.get("SAGEWAI_POSTGRES_DSN")
    if not dsn:
        print("SAGEWAI_POSTGRES_DSN is not set: running on the embedded default (SQLite) instead.")
        engine = ContextEngine.local(folder, project_id=PROJECT)
        assert engine.episodes.store is not None  # episodes.sqlite3 in the folder
        return engine, engine.episodes.store
    from sagewai.stores import PostgresMetadataStore, QdrantEdgeVectorStore

    print(f"PostgreSQL: {dsn.split('@')[-1]} (schema {SCHEMA})")
    embedder = MiniLMEmbedder()
    metadata = PostgresMetadataStore(dsn, schema=SCHEMA)
    await metadata.migrate()  # once per schema, at deploy time; safe to repeat
    episodes = PersistentEpisodeStore(connection_string=dsn, schema=SCHEMA, embedder=embedder)
    await episodes.migrate()
    engine = ContextEngine(
        metadata_store=metadata,
        vector_store=QdrantEdgeVectorStore(folder / "vectors", dimension=embedder.dimension),
        project_id=PROJECT,
        embedder=embedder,
        episode_store=episodes,
    )
    return engine, episodes


async def main() -> None:
    with example_folder("16_postgres_backend") as folder:
        engine, episodes = await open_stores(folder)
        async with engine as ctx:  # closing the engine closes its episode store
            await ctx.add("Invoices are archived for 10 years", fact_type="decision")
            await ctx.add("The billing DB is postgresql://billing-db:5432/billing")
            await episodes.save_episode(
                "s1",
                [{"role": "user", "content": "We agreed to archive invoices for 10 years."}],
                project_id=PROJECT,
            )
            best = (await ctx.search("how long do we keep invoices?", top_k=1))[0]
            print(f"fact search    -> {best.fact.content}")
            found = await episodes.search_episodes("invoice archive", project_id=PROJECT)
            print(f"episode search -> {found[0].summary}")
            report = await ctx.forget(everything=True)  # leave the schema as it was
            print(f"cleaned up: {report.facts_deleted} facts, {report.episodes_deleted} episodes")


if __name__ == "__main__":
    asyncio.run(main())
