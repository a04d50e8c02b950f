"""Benchmark the SQL metadata stores: batch inserts, hydration by ids, keyword search, filters.

Runs SQLite (a file in a temporary folder) and, when it answers, PostgreSQL (a throw-away schema)
at each size, prints a table and writes the figures as JSON.

Usage:
    python -m benchmarks.metadata_bench                      # 10k and 100k facts
    python -m benchmarks.metadata_bench --sizes 10000 --repeats 50 --no-postgres
    SAGEWAI_TEST_POSTGRES_DSN=postgresql://... python -m benchmarks.metadata_bench
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sagewai import ContextScope, Fact, FactStatus, FactType
from sagewai.core import FactQuery, WriteBatch
from sagewai.errors import BackendUnavailableError
from sagewai.stores import MetadataStore, SqliteMetadataStore

PROJECT = "bench"
DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "metadata_bench.json"
START = datetime(2024, 1, 1, tzinfo=UTC)


def vocabulary(rng: random.Random, size: int = 5000) -> list[str]:
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "do", "fe", "gi"]
    words: dict[str, None] = {}
    while len(words) < size:
        words["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))] = None
    return list(words)


def zipf_word(rng: random.Random, words: list[str]) -> str:
    # Rank r is drawn with probability ~ 1/r: a few frequent words, a long tail of rare ones.
    rank = int(len(words) ** rng.random()) - 1
    return words[min(rank, len(words) - 1)]


def make_facts(count: int, seed: int, words: list[str]) -> list[Fact]:
    rng = random.Random(seed)
    facts = []
    for i in range(count):
        user = f"user-{rng.randrange(50)}" if rng.random() < 0.5 else None
        facts.append(
            Fact(
                project_id=PROJECT,
                scope=ContextScope.USER if user else ContextScope.PROJECT,
                user_id=user,
                content=" ".join(zipf_word(rng, words) for _ in range(rng.randint(8, 24))),
                fact_type=rng.choice(list(FactType)),
                subject=f"subject-{rng.randrange(500)}",
                tags=tuple(rng.sample([f"tag{t}" for t in range(20)], rng.randint(0, 3))),
                metadata={"n": i, "source": "bench"},
                status=FactStatus.ACTIVE if rng.random() < 0.85 else FactStatus.ARCHIVED,
                created_at=START + timedelta(seconds=i),
            )
        )
    return facts


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000, 3),
    }


async def timed(repeats: int, call: Callable[[int], Awaitable[Any]]) -> dict[str, float]:
    await call(0)  # warm caches and prepared statements
    samples = []
    for i in range(repeats):
        began = time.perf_counter()
        await call(i)
        samples.append(time.perf_counter() - began)
    return percentiles(samples)


def analyze(dsn: str, schema: str) -> Callable[[], Awaitable[None]]:
    """ANALYZE the facts table, as autovacuum does soon after a bulk load."""

    async def run() -> None:
        import asyncpg

        connection = await asyncpg.connect(dsn)
        try:
            await connection.execute(f'ANALYZE "{schema}".facts')
        finally:
            await connection.close()

    return run


async def measure(
    store: MetadataStore,
    size: int,
    batch: int,
    repeats: int,
    words: list[str],
    analyze: Callable[[], Awaitable[None]] | None = None,
) -> dict[str, Any]:
    facts = make_facts(size, seed=size, words=words)
    began = time.perf_counter()
    for start in range(0, size, batch):
        await store.apply(WriteBatch(project_id=PROJECT, upserts=facts[start : start + batch]))
    insert_seconds = time.perf_counter() - began
    if analyze is not None:
        await analyze()

    rng = random.Random(1)
    id_sets = [[f.id for f in rng.sample(facts, 50)] for _ in range(repeats + 1)]
    # Natural queries hold a frequent word (zipf) and rarer ones; "rare" queries only the latter.
    queries = [
        f"{zipf_word(rng, words)} {rng.choice(words)} {rng.choice(words)}"
        for _ in range(repeats + 1)
    ]
    rare_queries = [" ".join(rng.sample(words, 3)) for _ in range(repeats + 1)]
    searchable = FactQuery(project_id=PROJECT, statuses=(FactStatus.ACTIVE, FactStatus.FLAGGED))

    async def get(i: int) -> None:
        assert len(await store.get(PROJECT, id_sets[i])) == 50

    async def keyword(i: int) -> None:
        await store.keyword_search(searchable, queries[i], 10)

    async def keyword_rare(i: int) -> None:
        await store.keyword_search(searchable, rare_queries[i], 10)

    async def filtered(i: int) -> None:
        await store.query(
            FactQuery(
                project_id=PROJECT,
                statuses=(FactStatus.ACTIVE,),
                tags_any=(f"tag{i % 20}",),
                user_id=f"user-{i % 50}",
                limit=50,
            )
        )

    async def page(i: int) -> None:
        at = facts[(i * 997) % size]
        await store.query(FactQuery(project_id=PROJECT, after=(at.created_at, at.id), limit=100))

    return {
        "facts": size,
        "batch_size": batch,
        "insert_seconds": round(insert_seconds, 3),
        "insert_facts_per_second": round(size / insert_seconds),
        "get_50_ids": await timed(repeats, get),
        "keyword_search_top10": await timed(repeats, keyword),
        "keyword_search_rare_words_top10": await timed(repeats, keyword_rare),
        "filtered_query_limit50": await timed(repeats, filtered),
        "keyset_page_100": await timed(repeats, page),
    }


async def run_sqlite(size: int, batch: int, repeats: int, words: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        async with SqliteMetadataStore(os.path.join(folder, "metadata.db")) as store:
            return await measure(store, size, batch, repeats, words)


async def run_postgres(
    dsn: str, size: int, batch: int, repeats: int, words: list[str]
) -> dict[str, Any]:
    import asyncpg

    from sagewai.stores import PostgresMetadataStore

    schema = f"sagewai_bench_{uuid.uuid4().hex[:10]}"
    try:
        async with PostgresMetadataStore(dsn, schema=schema) as store:
            await store.migrate()
            return await measure(store, size, batch, repeats, words, analyze=analyze(dsn, schema))
    finally:
        connection = await asyncpg.connect(dsn)
        try:
            await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await connection.close()


async def postgres_version(dsn: str) -> str | None:
    from sagewai.stores import PostgresMetadataStore

    store = PostgresMetadataStore(dsn, schema="sagewai_bench_probe", connect_timeout=5)
    try:
        await store.open()
    except BackendUnavailableError as exc:
        print(f"PostgreSQL skipped: {exc}", file=sys.stderr)
        return None
    finally:
        await store.close()
    import asyncpg

    connection = await asyncpg.connect(dsn)
    try:
        return str(await connection.fetchval("SHOW server_version"))
    finally:
        await connection.close()


def print_table(rows: list[dict[str, Any]]) -> None:
    header = (
        f"{'backend':<10} {'facts':>7} {'insert/s':>9} {'get50 p50/p95':>15} "
        f"{'keyword p50/p95':>17} {'rare kw p50/p95':>16} {'filter p50/p95':>16}"
        f" {'page p50/p95':>15}"
    )
    print(header)
    print("-" * len(header))

    def pair(figures: dict[str, float]) -> str:
        return f"{figures['p50_ms']:.2f}/{figures['p95_ms']:.2f}"

    for row in rows:
        print(
            f"{row['backend']:<10} {row['facts']:>7} {row['insert_facts_per_second']:>9} "
            f"{pair(row['get_50_ids']):>15} {pair(row['keyword_search_top10']):>17} "
            f"{pair(row['keyword_search_rare_words_top10']):>16} "
            f"{pair(row['filtered_query_limit50']):>16} {pair(row['keyset_page_100']):>15}"
        )
    print("(times in milliseconds)")


async def main(arguments: argparse.Namespace) -> None:
    words = vocabulary(random.Random(0))
    dsn = None if arguments.no_postgres else arguments.postgres_dsn
    pg_version = await postgres_version(dsn) if dsn else None
    rows: list[dict[str, Any]] = []
    for size in arguments.sizes:
        result = await run_sqlite(size, arguments.batch, arguments.repeats, words)
        rows.append({"backend": "sqlite", **result})
        print(f"sqlite {size}: done", file=sys.stderr)
        if dsn and pg_version:
            result = await run_postgres(dsn, size, arguments.batch, arguments.repeats, words)
            rows.append({"backend": "postgres", **result})
            print(f"postgres {size}: done", file=sys.stderr)
    print_table(rows)
    report = {
        "benchmark": "metadata_bench",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "postgres": pg_version,
            "platform": platform.platform(),
        },
        "results": rows,
    }
    arguments.out.parent.mkdir(parents=True, exist_ok=True)
    arguments.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {arguments.out}")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--batch", type=int, default=1000, help="facts per WriteBatch")
    parser.add_argument("--repeats", type=int, default=200, help="timed calls per figure")
    parser.add_argument(
        "--postgres-dsn", default=os.environ.get("SAGEWAI_TEST_POSTGRES_DSN", DEFAULT_DSN)
    )
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
