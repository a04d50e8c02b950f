"""Embedded default at scale: add throughput with embedding, and search latency at N facts.

Usage:
    python benchmarks/store_bench.py [--size 100000] [--add-sample 3000] [--queries 300]
        [--out benchmarks/results/store_bench.json]

* add throughput: ``add_many`` of ``--add-sample`` facts on ``ContextEngine.local`` with the
  default MiniLM embedder (embedding included), facts/s;
* search latency: the index is filled to ``--size`` facts (MiniLM vectors, or with ``--fast-fill``
  a hashing embedder's, which only the latency figure may use), then
  ``ctx.search`` is timed with the query vector precomputed, so the figure is the engine and the
  stores (dense + keyword + hydration + fusion), query embedding excluded. Reported p50/p95/p99.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS, percentiles, synthetic_sentences, write_json

from sagewai.context.engine import ContextEngine
from sagewai.embeddings.base import Vector, Vectors
from sagewai.embeddings.minilm import MiniLMEmbedder
from sagewai.testing import FakeEmbedder


class PrecomputedQueries:
    """Wraps an embedder; queries registered beforehand are answered from memory.

    With ``fill`` set, documents are embedded by that (cheap) embedder instead: used to fill a
    large index quickly when only the search latency is measured.
    """

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner = inner
        self.known: dict[str, Vector] = {}
        self.fill: FakeEmbedder | None = None

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def name(self) -> str:
        return self.inner.name

    async def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if self.fill is not None:
            return self.fill.embed_sync(texts)
        return await self.inner.embed_documents(texts)

    async def embed_query(self, text: str) -> Vector:
        cached = self.known.get(text)
        return cached if cached is not None else await self.inner.embed_query(text)


async def run(size: int, add_sample: int, queries: int, out: Path, fast_fill: bool) -> None:
    embedder = PrecomputedQueries(MiniLMEmbedder())
    folder = Path(tempfile.mkdtemp(prefix="sagewai-store-bench-"))
    texts = synthetic_sentences(size)
    results: dict[str, object] = {"size": size, "folder": str(folder)}
    async with ContextEngine.local(folder, project_id="bench", embedder=embedder) as ctx:
        await embedder.embed_documents(["warm up"])
        started = time.perf_counter()
        await ctx.add_many(texts[:add_sample])
        add_seconds = time.perf_counter() - started
        results["add"] = {
            "facts": add_sample,
            "seconds": round(add_seconds, 2),
            "facts_per_s": round(add_sample / add_seconds, 1),
        }
        print(f"add_many with embedding: {add_sample / add_seconds:.0f} facts/s")

        if fast_fill:
            embedder.fill = FakeEmbedder(embedder.dimension)
        results["fill_embedder"] = "hashing (fast fill)" if fast_fill else embedder.name
        started = time.perf_counter()
        for start in range(add_sample, size, 2048):
            await ctx.add_many(texts[start : start + 2048])
            done = min(size, start + 2048)
            print(f"\r  filling: {done}/{size}", end="", flush=True)
        print()
        results["fill_seconds"] = round(time.perf_counter() - started, 1)

        questions = [f"what did {t.split(' (note')[0]}" for t in texts[:: max(1, size // queries)]]
        questions = questions[:queries]
        vectors = await embedder.inner.embed_documents(questions)
        embedder.known = dict(zip(questions, vectors, strict=True))
        for question in questions[:20]:
            await ctx.search(question, top_k=10)
        samples = []
        for question in questions:
            started = time.perf_counter()
            await ctx.search(question, top_k=10)
            samples.append((time.perf_counter() - started) * 1000)
        results["search_top10"] = percentiles(samples)
        print(f"search at {size} facts (query embedding excluded): {results['search_top10']}")
    write_json(out, {"benchmark": "store_bench", **results})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--add-sample", type=int, default=3_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--out", type=Path, default=RESULTS / "store_bench.json")
    parser.add_argument(
        "--fast-fill",
        action="store_true",
        help="fill the index beyond --add-sample with a hashing embedder (latency only)",
    )
    args = parser.parse_args()
    asyncio.run(run(args.size, args.add_sample, args.queries, args.out, args.fast_fill))


if __name__ == "__main__":
    main()
