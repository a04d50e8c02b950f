"""Where one ``ctx.search`` spends its CPU, stage by stage, on a store kept by ``scale_bench``.

Usage:
    python benchmarks/search_stages.py /work/cache/scale/1m/local-1000000 \\
        --queries /work/cache/scale/1m/queries.npz

Opens the embedded default (SQLite + Qdrant edge) in that folder, asks the ``scale_bench``
questions with their precomputed vectors (query embedding excluded), and times the stages by
wrapping them: the keyword search and the re-reading of candidates (the SQLite worker thread),
rebuilding the candidate ``Fact`` records, the Qdrant batch query, fusion and grouping (the event
loop). CPU is per thread (``time.thread_time``) except the total, which is the whole process's
(``time.process_time``: it includes Qdrant's own threads, which the per-stage figures miss).
Figures are means per search over every question, after 20 warm-up searches.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scale_bench import TableEmbedder, make_engine, raw_vectors

import sagewai.context._ranking as ranking
import sagewai.context._search as search
import sagewai.stores.sqlite._metadata as sqlite_metadata
from sagewai.stores.sqlite import SqliteMetadataStore

Totals = defaultdict[str, list[float]]


def timed(owner: Any, name: str, label: str, totals: Totals) -> None:
    """Replace ``owner.name`` by a wrapper adding its wall and thread CPU time to ``totals``."""
    inner: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return inner(*args, **kwargs)
        finally:
            entry = totals[label]
            entry[0] += time.perf_counter() - wall
            entry[1] += time.thread_time() - cpu
            entry[2] += 1

    setattr(owner, name, wrapper)


class _Shard:
    """The Qdrant edge shard with its ``query_batch`` timed."""

    def __init__(self, shard: Any, totals: Totals) -> None:
        self._shard = shard
        timed(self, "query_batch", "dense: Qdrant query_batch (caller thread)", totals)

    def query_batch(self, request: Any) -> Any:
        return self._shard.query_batch(request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._shard, name)


async def measure(folder: Path, queries: Path) -> None:
    totals: Totals = defaultdict(lambda: [0.0, 0.0, 0.0])
    timed(SqliteMetadataStore, "_keyword_sync", "keyword search (SQLite thread)", totals)
    timed(SqliteMetadataStore, "_facts_sync", "re-read candidates (SQLite thread)", totals)
    timed(sqlite_metadata, "fact_from_row", "  of which rebuilding Fact records", totals)
    timed(search, "fuse", "fusion (event loop)", totals)
    timed(search, "_record_hits", "dense hits per record (event loop)", totals)
    timed(ranking, "group_by_source", "grouping by source (event loop)", totals)
    with np.load(queries, allow_pickle=False) as stored:
        asked = [str(q) for q in stored["texts"]]
        lookup = dict(zip(asked, np.asarray(stored["vectors"], dtype=np.float32), strict=True))
    async with make_engine("local", folder, "", "", TableEmbedder(lookup)) as ctx:
        await ctx.search(asked[0], top_k=10)
        store = raw_vectors(ctx)
        store._shard = _Shard(store._shard, totals)
        for question in asked[:20]:
            await ctx.search(question, top_k=10)
        totals.clear()
        wall, cpu = time.perf_counter(), time.process_time()
        for question in asked:
            await ctx.search(question, top_k=10)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    n = len(asked)
    print(f"{folder} ({n} searches, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())})")
    print(
        f"  {'whole search':<44} wall {1000 * wall / n:6.2f} ms"
        f"  process CPU {1000 * cpu / n:6.2f} ms"
    )
    for label, (stage_wall, stage_cpu, calls) in totals.items():
        print(
            f"  {label:<44} wall {1000 * stage_wall / n:6.2f} ms  thread CPU"
            f" {1000 * stage_cpu / n:6.2f} ms  ({calls / n:.1f} calls)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("folder", type=Path, help="a local deployment kept by scale_bench")
    parser.add_argument("--queries", type=Path, required=True, help="scale_bench's queries.npz")
    args = parser.parse_args()
    asyncio.run(measure(args.folder, args.queries))


if __name__ == "__main__":
    main()
