"""`migrate` rate: a project moved from the embedded folder to PostgreSQL + Qdrant edge.

Usage:
    python -m benchmarks.migrate_bench                       # 100k facts
    python -m benchmarks.migrate_bench --facts 10000 --out migrate.json

What it does:

1. fills an embedded store (``ContextEngine.local``: SQLite + Qdrant edge) with ``--facts``
   synthetic facts (a tenth of them at USER scope, with tags and a history row each), embedded
   by a 384-d hashing embedder so the fill is fast (vectors of MiniLM's size; the archive and
   the stores do not care where a vector came from);
2. runs :func:`sagewai.context.archive.migrate` (export to a JSONL archive, then import) into
   PostgreSQL (a throw-away schema, ``SAGEWAI_TEST_POSTGRES_DSN`` or 127.0.0.1:5432) + a Qdrant
   edge folder, with the same embedder, so the vectors are copied, not recomputed;
3. checks the counts and that a search gives the same top results on both sides.

Prints the rate (facts/s, end to end and per phase) and writes JSON (``--out``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks._common import RESULTS, synthetic_sentences, write_json
from sagewai import ContextEngine
from sagewai.context.archive import migrate
from sagewai.testing import FakeEmbedder

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"


async def fill(engine: ContextEngine, n: int) -> float:
    started = time.perf_counter()
    sentences = synthetic_sentences(n)
    batch = 2_048
    for start in range(0, n, batch):
        items: list[Any] = []
        for i, text in enumerate(sentences[start : start + batch], start=start):
            fields: dict[str, Any] = {"content": text, "tags": [f"t{i % 7}"]}
            if i % 10 == 0:
                fields["user_id"] = f"user{i % 100}"
            items.append(fields)
        await engine.add_many(items)
    return time.perf_counter() - started


QUERIES = ("who visited Kyoto last week?", "Alice likes green tea", "moved to Berlin", "jazz")


async def compare_searches(source: ContextEngine, target: ContextEngine) -> dict[str, Any]:
    """Top-5 ids of the same queries on both sides: the dense index alone, and hybrid search.

    The dense hits compare the vectors moved; the hybrid ranking also depends on each
    backend's keyword scoring (SQLite FTS5 BM25 vs PostgreSQL ts_rank), which differ by design.
    """
    from sagewai.core import VectorFilter

    where = VectorFilter(scope_keys=(source.port.address().key,))
    target_where = VectorFilter(scope_keys=(target.port.address().key,))
    dense_same = hybrid_same = 0
    for query in QUERIES:
        vector = await source.port.embedder.embed_query(query)
        a = [h.id for h in await source.port.vectors.search(vector, 5, where)]
        b = [h.id for h in await target.port.vectors.search(vector, 5, target_where)]
        dense_same += a == b
        a = [r.fact.id for r in await source.search(query, top_k=5)]
        b = [r.fact.id for r in await target.search(query, top_k=5)]
        hybrid_same += a == b
    return {
        "queries": len(QUERIES),
        "dense_top5_equal": dense_same,
        "hybrid_top5_equal": hybrid_same,
    }


async def run(n: int, dsn: str, keep: Path | None) -> dict[str, Any]:
    import asyncpg

    from sagewai.stores import PostgresMetadataStore, QdrantEdgeVectorStore

    embedder = FakeEmbedder(384)
    schema = f"sagewai_bench_{uuid.uuid4().hex[:10]}"
    with tempfile.TemporaryDirectory(prefix="sagewai-migrate-bench-") as tmp:
        folder = Path(tmp)
        source = ContextEngine.local(folder / "memory", project_id="bench", embedder=embedder)
        target = ContextEngine(
            metadata_store=PostgresMetadataStore(dsn, schema=schema),
            vector_store=QdrantEdgeVectorStore(folder / "vectors", dimension=embedder.dimension),
            project_id="bench",
            embedder=embedder,
        )
        try:
            async with source:
                fill_s = await fill(source, n)
                print(f"filled {n} facts in {fill_s:.1f} s", flush=True)
                await target.stores.metadata.migrate()
                async with target:
                    last: dict[str, float] = {}

                    def progress(p: Any) -> None:
                        if p.done == p.total or p.done - last.get(p.stage, 0) >= n // 10:
                            last[p.stage] = p.done
                            print(f"  {p.stage}: {p.done}/{p.total}", flush=True)

                    report = await migrate(
                        source, target, archive=keep, progress=progress, batch_size=1_000
                    )
                    same = await compare_searches(source, target)
                    counts = (await source.count(), await target.count())
        finally:
            connection = await asyncpg.connect(dsn)
            try:
                await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            finally:
                await connection.close()
    total_s = report.export_s + report.import_s
    return {
        "facts": n,
        "source": "ContextEngine.local (SQLite + Qdrant edge)",
        "target": "PostgreSQL 15 + Qdrant edge",
        "embedder": embedder.name,
        "fill_s": round(fill_s, 2),
        "export_s": round(report.export_s, 2),
        "import_s": round(report.import_s, 2),
        "total_s": round(total_s, 2),
        "facts_per_s": round(report.facts_per_second, 1),
        "export_facts_per_s": round(n / report.export_s, 1),
        "import_facts_per_s": round(n / report.import_s, 1),
        "changes": report.header.counts.changes,
        "counts_equal": counts[0] == counts[1] == n,
        "search": same,
        "re_embedded": report.imported.re_embedded,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=RESULTS / "migrate_bench.json")
    parser.add_argument("--keep-archive", type=Path, default=None, help="keep the archive here")
    args = parser.parse_args()
    dsn = os.environ.get("SAGEWAI_TEST_POSTGRES_DSN", DEFAULT_DSN)
    result = asyncio.run(run(args.facts, dsn, args.keep_archive))
    print(
        f"migrate {result['facts']} facts embedded -> PostgreSQL + Qdrant edge: "
        f"{result['total_s']} s, {result['facts_per_s']:,} facts/s "
        f"(export {result['export_facts_per_s']:,}/s, import {result['import_facts_per_s']:,}/s); "
        f"counts equal: {result['counts_equal']}, search: {result['search']}"
    )
    write_json(args.out, {"migrate": result})


if __name__ == "__main__":
    main()
