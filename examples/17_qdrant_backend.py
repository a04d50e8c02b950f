"""17 Qdrant backend: the vector index on a Qdrant server (or cluster) instead of embedded.

Set QDRANT_URL (and QDRANT_API_KEY if needed) to use your server (``pip install
"sagewai[qdrant]"``); the example uses the collection ``sagewai_examples`` and removes its own
project's vectors at the end. Without it, the same code runs on the embedded default (Qdrant's
engine in-process), so the example works anywhere.

Run: QDRANT_URL=http://127.0.0.1:6333 python examples/17_qdrant_backend.py
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from _setup import example_folder

from sagewai import ContextEngine
from sagewai.embeddings import MiniLMEmbedder
from sagewai.stores import SqliteMetadataStore

PROJECT = "example-17"


def open_engine(folder: Path) -> ContextEngine:
    url = os.environ.get("QDRANT_URL")
    if not url:
        print("QDRANT_URL is not set: running on the embedded default (Qdrant edge) instead.")
        return ContextEngine.local(folder, project_id=PROJECT)
    from sagewai.stores import QdrantVectorStore

    print(f"Qdrant server: {url} (collection sagewai_examples)")
    embedder = MiniLMEmbedder()
    return ContextEngine(
        metadata_store=SqliteMetadataStore(folder / "metadata.sqlite3"),
        vector_store=QdrantVectorStore(
            url=url,
            api_key=os.environ.get("QDRANT_API_KEY") or None,
            collection="sagewai_examples",
            dimension=embedder.dimension,
        ),
        project_id=PROJECT,
        embedder=embedder,
    )


async def main() -> None:
    with example_folder("17_qdrant_backend") as folder:
        async with open_engine(folder) as ctx:
            await ctx.add_many(
                [
                    "The mobile app is written in Kotlin and Swift",
                    "Our CDN is CloudFront in front of an S3 bucket",
                    "Search latency budget is 200 ms at p95",
                ]
            )
            for question in ("what is the app built with?", "how fast must search be?"):
                best = (await ctx.search(question, top_k=1))[0]
                print(f"{question!r} -> {best.fact.content}  (dense {best.parts.dense or 0:.2f})")
            report = await ctx.forget(everything=True)
            print(f"cleaned up: {report.facts_deleted} facts and their vectors")


if __name__ == "__main__":
    asyncio.run(main())
