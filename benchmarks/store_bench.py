"""ContextEngine on every backend: add throughput and search latency at 1k, 10k and 100k facts.

Usage:
    python -m benchmarks.store_bench                                  # every backend, 1k/10k/100k
    python -m benchmarks.store_bench --backends local --sizes 100000  # the embedded default only
    SAGEWAI_TEST_POSTGRES_DSN=postgresql://... python -m benchmarks.store_bench

Backends (metadata store + vector store under one ``ContextEngine``):

* ``memory``: ``ContextEngine.in_memory`` (numpy vectors, in-memory BM25);
* ``local``: ``ContextEngine.local(folder)``, the embedded default (SQLite + Qdrant edge);
* ``sqlite+qdrant-local``: SQLite + ``qdrant-client`` local mode (exact search in Python);
* ``postgres+qdrant-edge``: PostgreSQL (a throw-away schema) + Qdrant edge, when PostgreSQL answers.

For each backend and size, in a fresh store:

* ``add_with_embedding``: ``add_many`` of ``--add-sample`` facts (in batches of 256) with the
  default MiniLM embedder, facts/s, embedding included;
* ``add_without_embedding``: the fill up to the size, ``add_many`` in batches of 2048 with
  vectors embedded beforehand (the embedder answers from a table), facts/s of the engine and the
  stores alone. The fill vectors come from a hashing embedder, so only latency may use them;
* ``search``: ``ctx.search(question, top_k=10)`` with the query vector precomputed (query
  embedding excluded: dense + keyword + hydration + fusion + access tracking), p50/p95/p99, on
  the store as filled and again after closing and reopening it (a restarted process).

Prints a table and writes JSON (``--out``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import RESULTS, percentiles, synthetic_sentences, write_json
from sagewai import ContextEngine
from sagewai.embeddings import MiniLMEmbedder, Vector, Vectors
from sagewai.errors import BackendUnavailableError
from sagewai.stores import (
    InMemoryMetadataStore,
    InMemoryVectorStore,
    QdrantEdgeVectorStore,
    QdrantVectorStore,
    SqliteMetadataStore,
)
from sagewai.testing import FakeEmbedder

BACKENDS = ("memory", "local", "sqlite+qdrant-local", "postgres+qdrant-edge")
DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"
PROJECT = "bench"


class BenchEmbedder:
    """MiniLM for the timed add; a lookup table for everything embedded beforehand.

    ``embed_documents`` answers from ``table`` when every text is in it (the fill and the
    queries), otherwise it runs MiniLM (the add with embedding).
    """

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner = inner
        self.table: dict[str, Vector] = {}

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def name(self) -> str:
        return self.inner.name

    async def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if texts and all(text in self.table for text in texts):
            return np.stack([self.table[text] for text in texts])
        return await self.inner.embed_documents(texts)

    async def embed_query(self, text: str) -> Vector:
        cached = self.table.get(text)
        return cached if cached is not None else await self.inner.embed_query(text)


@asynccontextmanager
async def open_engine(
    backend: str, folder: Path, embedder: BenchEmbedder, dsn: str, schema: str
) -> AsyncIterator[ContextEngine]:
    """An engine on ``backend`` in ``folder`` (and ``schema``); reopening reaches the same data."""
    dimension = embedder.dimension
    if backend == "memory":
        raise AssertionError("the memory backend is opened once (see run_backend)")
    if backend == "local":
        engine = ContextEngine.local(folder, project_id=PROJECT, embedder=embedder)
    elif backend == "sqlite+qdrant-local":
        engine = ContextEngine(
            metadata_store=SqliteMetadataStore(folder / "metadata.sqlite3"),
            vector_store=QdrantVectorStore(path=str(folder / "qdrant"), dimension=dimension),
            project_id=PROJECT,
            embedder=embedder,
        )
    elif backend == "postgres+qdrant-edge":
        from sagewai.stores import PostgresMetadataStore

        metadata = PostgresMetadataStore(dsn, schema=schema)
        await metadata.migrate()
        engine = ContextEngine(
            metadata_store=metadata,
            vector_store=QdrantEdgeVectorStore(folder / "vectors", dimension=dimension),
            project_id=PROJECT,
            embedder=embedder,
        )
    else:
        raise ValueError(f"unknown backend {backend!r}")
    async with engine:
        yield engine


async def timed_searches(
    ctx: ContextEngine, questions: Sequence[str], warmup: int = 20
) -> dict[str, float]:
    for question in questions[:warmup]:
        await ctx.search(question, top_k=10)
    samples = []
    for question in questions:
        started = time.perf_counter()
        await ctx.search(question, top_k=10)
        samples.append((time.perf_counter() - started) * 1000)
    return percentiles(samples)


async def fill(ctx: ContextEngine, texts: Sequence[str], label: str) -> float:
    """Add ``texts`` in batches of 2048; the facts/s of the engine and the stores."""
    started = time.perf_counter()
    for start in range(0, len(texts), 2048):
        await ctx.add_many(texts[start : start + 2048])
        done = min(start + 2048, len(texts))
        print(f"\r  {label}: filling {done}/{len(texts)}", end="", flush=True)
    seconds = time.perf_counter() - started
    print()
    return len(texts) / seconds if seconds else 0.0


async def run_backend(
    backend: str,
    size: int,
    args: argparse.Namespace,
    embedder: BenchEmbedder,
    texts: Sequence[str],
    questions: Sequence[str],
) -> dict[str, Any]:
    label = f"{backend} {size}"
    sample = min(args.add_sample, size)
    timed, rest = texts[:sample], texts[sample:size]
    queries = questions if backend != "sqlite+qdrant-local" else questions[: args.slow_queries]
    result: dict[str, Any] = {"backend": backend, "size": size}
    folder = Path(tempfile.mkdtemp(prefix="sagewai-store-bench-", dir=args.tmp))
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    try:
        if backend == "memory":
            engine = ContextEngine(
                metadata_store=InMemoryMetadataStore(),
                vector_store=InMemoryVectorStore(embedder.dimension),
                project_id=PROJECT,
                embedder=embedder,
            )
            async with engine as ctx:
                result["add_with_embedding"] = await add_with_embedding(ctx, timed)
                result["add_without_embedding"] = await fill(ctx, rest, label) if rest else None
                result["search"] = await timed_searches(ctx, queries)
            return result
        async with open_engine(backend, folder, embedder, args.dsn, schema) as ctx:
            result["add_with_embedding"] = await add_with_embedding(ctx, timed)
            result["add_without_embedding"] = await fill(ctx, rest, label) if rest else None
            result["search"] = await timed_searches(ctx, queries)
        async with open_engine(backend, folder, embedder, args.dsn, schema) as ctx:
            result["search_after_reopen"] = await timed_searches(ctx, queries)
        return result
    finally:
        if backend == "postgres+qdrant-edge":
            await drop_schema(args.dsn, schema)
        shutil.rmtree(folder, ignore_errors=True)


async def add_with_embedding(ctx: ContextEngine, texts: Sequence[str]) -> float:
    started = time.perf_counter()
    for start in range(0, len(texts), 256):
        await ctx.add_many(texts[start : start + 256])
    return len(texts) / (time.perf_counter() - started)


async def postgres_answers(dsn: str) -> bool:
    try:
        import asyncpg
    except ImportError:
        return False
    try:
        connection = await asyncpg.connect(dsn, timeout=3)
    except (TimeoutError, OSError, asyncpg.PostgresError):
        return False
    await connection.close()
    return True


async def drop_schema(dsn: str, schema: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await connection.close()


def cell(value: Any, digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}"


def print_table(results: Sequence[dict[str, Any]]) -> None:
    print(
        f"{'backend':<22} {'facts':>7} {'add+emb/s':>10} {'add/s':>8} {'p50 ms':>7} "
        f"{'p95 ms':>7} {'reopen p50':>10} {'reopen p95':>10}"
    )
    for r in results:
        reopened = r.get("search_after_reopen") or {}
        print(
            f"{r['backend']:<22} {r['size']:>7} {cell(r['add_with_embedding']):>10} "
            f"{cell(r['add_without_embedding']):>8} {cell(r['search']['p50_ms'], 1):>7} "
            f"{cell(r['search']['p95_ms'], 1):>7} {cell(reopened.get('p50_ms'), 1):>10} "
            f"{cell(reopened.get('p95_ms'), 1):>10}"
        )


async def run(args: argparse.Namespace) -> None:
    backends = [b for b in args.backends.split(",") if b]
    unknown = set(backends) - set(BACKENDS)
    if unknown:
        raise SystemExit(f"unknown backends: {', '.join(sorted(unknown))}")
    if "postgres+qdrant-edge" in backends and not await postgres_answers(args.dsn):
        if os.environ.get("CI") == "true":
            raise BackendUnavailableError(f"PostgreSQL does not answer at {args.dsn}")
        print(f"PostgreSQL does not answer at {args.dsn}: skipping postgres+qdrant-edge")
        backends.remove("postgres+qdrant-edge")
    load_before = os.getloadavg()
    sizes = sorted(int(s) for s in args.sizes.split(",") if s)
    largest = max(sizes)
    texts = synthetic_sentences(largest)
    embedder = BenchEmbedder(MiniLMEmbedder())
    await embedder.inner.embed_documents(["warm up"])
    # Everything but the timed add sample is embedded beforehand: hashing vectors for the fill
    # (cheap, latency only) and MiniLM vectors for the questions.
    hashing = FakeEmbedder(embedder.dimension)
    embedder.table = dict(
        zip(texts[args.add_sample :], hashing.embed_sync(texts[args.add_sample :]), strict=True)
    )
    questions = [
        f"what did {t.split(' (note')[0]}" for t in texts[:: max(1, largest // args.queries)]
    ]
    questions = questions[: args.queries]
    embedder.table.update(
        zip(questions, await embedder.inner.embed_documents(questions), strict=True)
    )
    results = []
    for size in sizes:
        for backend in backends:
            print(f"{backend} at {size} facts ...")
            results.append(await run_backend(backend, size, args, embedder, texts, questions))
            print_table(results[-1:])
    print()
    print_table(results)
    write_json(
        args.out,
        {
            "benchmark": "store_bench",
            "embedder": embedder.name,
            "add_sample": args.add_sample,
            "queries": args.queries,
            "load_average_before": load_before,
            "load_average_after": os.getloadavg(),
            "results": results,
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--add-sample", type=int, default=3_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--slow-queries", type=int, default=60, help="queries on qdrant-client local mode"
    )
    parser.add_argument("--dsn", default=os.environ.get("SAGEWAI_TEST_POSTGRES_DSN", DEFAULT_DSN))
    parser.add_argument("--tmp", default=None, help="folder for the temporary stores")
    parser.add_argument("--out", type=Path, default=RESULTS / "store_bench.json")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
