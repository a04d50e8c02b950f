"""Where one ``ctx.search`` spends its CPU, stage by stage, on a store kept by ``scale_bench``.

Usage:
    python benchmarks/search_stages.py /work/cache/scale/1m/local-1000000 \\
        --queries /work/cache/scale/1m/queries.npz
    # warm, like scale_bench's warm pass: 600 warm-up questions, then 300 others, new
    python benchmarks/search_stages.py /work/cache/scale/1m/local-1000000 \\
        --queries /work/cache/scale/1m/queries.npz --warm /work/cache/scale/1m/warm.npz

Opens the embedded default (SQLite + Qdrant edge) in that folder, asks the ``scale_bench``
questions with their precomputed vectors (query embedding excluded), and times the stages by
wrapping them: the keyword search with its hits' records (read by the ranking statement), the
reading of the dense hits' records not read yet (both on the SQLite worker thread), rebuilding
the ``Fact`` records (in both), the Qdrant batch query, fusion and grouping (the event loop).
CPU is per thread (``time.thread_time``) except the total, which is the whole process's
(``time.process_time``: it includes Qdrant's own threads, which the per-stage figures miss); on
Linux the total is also split into Python's threads and Qdrant's search threads (read from
``/proc/self/task``). Figures are means per search over every measured question, after 20
warm-up searches (``--warm``: after the warm-up questions of ``scale_bench``'s ``warm.npz``,
measured on its warm questions), with the wall p50 / p95.
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
from sagewai.stores import SqliteMetadataStore

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


def thread_cpu() -> dict[str, float]:
    """CPU seconds so far per thread name of this process (Linux; empty elsewhere)."""
    tasks = Path("/proc/self/task")
    out: dict[str, float] = defaultdict(float)
    if not tasks.is_dir():
        return out
    tick = os.sysconf("SC_CLK_TCK")
    for task in tasks.iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:  # the thread ended
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        out[name] += (int(fields[11]) + int(fields[12])) / tick  # utime + stime
    return out


async def measure(folder: Path, queries: Path, warm: Path | None) -> None:
    totals: Totals = defaultdict(lambda: [0.0, 0.0, 0.0])
    timed(
        SqliteMetadataStore,
        "_keyword_facts_sync",
        "keyword search with its records (SQLite)",
        totals,
    )
    timed(
        SqliteMetadataStore,
        "_facts_sync",
        "reading the dense hits' records (SQLite)",
        totals,
    )
    timed(sqlite_metadata, "fact_from_row", "rebuilding Fact records (in reading records)", totals)
    timed(search, "fuse", "fusion (event loop)", totals)
    timed(search, "_record_hits", "dense hits per record (event loop)", totals)
    timed(ranking, "group_by_source", "grouping by source (event loop)", totals)
    with np.load(queries, allow_pickle=False) as stored:
        asked = [str(q) for q in stored["texts"]]
        lookup = dict(zip(asked, np.asarray(stored["vectors"], dtype=np.float32), strict=True))
    warm_up = asked[:20]
    if warm is not None:
        with np.load(warm, allow_pickle=False) as stored:
            warm_up = [str(q) for q in stored["warmup_texts"]]
            asked = [str(q) for q in stored["warm_texts"]]
            for texts, vectors in ((warm_up, "warmup_vectors"), (asked, "warm_vectors")):
                vectors_of = np.asarray(stored[vectors], dtype=np.float32)
                lookup.update(zip(texts, vectors_of, strict=True))
    latencies: list[float] = []
    async with make_engine("local", folder, "", "", TableEmbedder(lookup)) as ctx:
        await ctx.search(asked[0], top_k=10)
        store = raw_vectors(ctx)
        store._shard = _Shard(store._shard, totals)
        for question in warm_up:
            await ctx.search(question, top_k=10)
        totals.clear()
        threads = thread_cpu()
        wall, cpu = time.perf_counter(), time.process_time()
        for question in asked:
            start = time.perf_counter()
            await ctx.search(question, top_k=10)
            latencies.append(time.perf_counter() - start)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        threads = {name: used - threads.get(name, 0.0) for name, used in thread_cpu().items()}
    n = len(asked)
    p50, p95 = (1000 * float(np.percentile(latencies, q)) for q in (50, 95))
    print(f"{folder} ({n} searches, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())})")
    print(
        f"  {'whole search':<52} wall {1000 * wall / n:6.2f} ms  process CPU"
        f" {1000 * cpu / n:6.2f} ms  (wall p50 {p50:.2f}, p95 {p95:.2f})"
    )
    if threads:
        qdrant = sum(used for name, used in threads.items() if name.startswith("edge-search"))
        others = sum(used for name, used in threads.items() if not name.startswith("edge-search"))
        print(
            f"  {'  CPU of Python threads / Qdrant search threads':<52}"
            f" {1000 * others / n:6.2f} / {1000 * qdrant / n:.2f} ms"
        )
    for label, (stage_wall, stage_cpu, calls) in totals.items():
        print(
            f"  {label:<52} wall {1000 * stage_wall / n:6.2f} ms  thread CPU"
            f" {1000 * stage_cpu / n:6.2f} ms  ({calls / n:.1f} calls)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("folder", type=Path, help="a local deployment kept by scale_bench")
    parser.add_argument("--queries", type=Path, required=True, help="scale_bench's queries.npz")
    parser.add_argument("--warm", type=Path, default=None, help="scale_bench's warm.npz")
    args = parser.parse_args()
    asyncio.run(measure(args.folder, args.queries, args.warm))


if __name__ == "__main__":
    main()
