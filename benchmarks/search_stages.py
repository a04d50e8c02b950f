"""Where one ``ctx.search`` spends its CPU, stage by stage, on a store kept by ``scale_bench``.

Usage:
    python -m benchmarks.search_stages $KEEP/local-1000000 \\
        --queries $KEEP/queries.npz
    # warm, like scale_bench's warm pass: 600 warm-up questions, then 300 others, new
    python -m benchmarks.search_stages $KEEP/local-1000000 \\
        --queries $KEEP/queries.npz --warm $KEEP/warm.npz

Opens the embedded default (SQLite + Qdrant edge) in that folder, asks the ``scale_bench``
questions with their precomputed vectors (query embedding excluded), and attributes the CPU to
the stages with a profiler in every Python thread (``cProfile``, thread CPU clock; the stages
are found by function name, so the script imports nothing private): the keyword search with its
hits' records (read by the ranking statement), the reading of the dense hits' records not read
yet (both on the SQLite worker thread), rebuilding the ``Fact`` records (in both), the Qdrant
batch query, fusion and grouping (the event loop). The profiler slows every Python call, so the
stages' figures are shares to compare, not latencies; the wall p50 / p95 of the same run are
beside them. CPU is per thread except the total, which is the whole process's
(``time.process_time``: it includes Qdrant's own threads, which the per-stage figures miss); on
Linux the total is also split into Python's threads and Qdrant's search threads (read from
``/proc/self/task``). Figures are means per search over every measured question, after 20
warm-up searches (``--warm``: after the warm-up questions of ``scale_bench``'s ``warm.npz``,
measured on its warm questions), with the wall p50 / p95.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.scale_bench import TableEmbedder, make_engine

STAGES: tuple[tuple[str, str, str], ...] = (
    ("keyword search with its records (SQLite)", "_metadata.py", "_keyword_facts_sync"),
    ("reading the dense hits' records (SQLite)", "_metadata.py", "_facts_sync"),
    ("rebuilding Fact records (in reading records)", "_sql.py", "fact_from_row"),
    ("dense: Qdrant query_batch (caller thread)", "~", "query_batch"),
    ("fusion (event loop)", "_ranking.py", "fuse"),
    ("dense hits per record (event loop)", "_search.py", "_record_hits"),
    ("grouping by source (event loop)", "_ranking.py", "group_by_source"),
)
"""(label, file name ending, function name) of each stage: a label's CPU is the cumulative time
of the functions matching it."""


class ThreadProfiles:
    """A ``cProfile`` profiler in this thread and in every Python thread started later."""

    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []
        self._lock = threading.Lock()

    def _start(self, *_: Any) -> None:
        profile = cProfile.Profile(time.thread_time)
        with self._lock:
            self.profiles.append(profile)
        profile.enable()

    def __enter__(self) -> ThreadProfiles:
        threading.setprofile(self._start)
        self._start()
        return self

    def __exit__(self, *_: object) -> None:
        threading.setprofile(None)
        self.profiles[0].disable()

    def clear(self) -> None:
        """Forget what was measured so far (after the warm-up)."""
        for profile in list(self.profiles):
            profile.clear()

    def stages(self) -> dict[str, tuple[float, int]]:
        """CPU seconds and calls per stage label, summed over the threads."""
        totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
        for profile in list(self.profiles):
            profile.create_stats()
            if not profile.stats:
                continue
            stats: dict[Any, Any] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
            for (filename, _, function), (_, calls, _, cumulative, _) in stats.items():
                for label, ending, name in STAGES:
                    if ending == "~":  # a built-in (the Qdrant shard's method)
                        hit = filename == "~" and f"'{name}'" in function
                    else:
                        hit = function == name and str(filename).endswith(ending)
                    if hit:
                        totals[label][0] += cumulative
                        totals[label][1] += calls
        return {label: (seconds, int(calls)) for label, (seconds, calls) in totals.items()}


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
    with ThreadProfiles() as profiles:
        async with make_engine("local", folder, "", "", TableEmbedder(lookup)) as ctx:
            for question in warm_up:
                await ctx.search(question, top_k=10)
            profiles.clear()
            threads = thread_cpu()
            wall, cpu = time.perf_counter(), time.process_time()
            for question in asked:
                start = time.perf_counter()
                await ctx.search(question, top_k=10)
                latencies.append(time.perf_counter() - start)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            threads = {name: used - threads.get(name, 0.0) for name, used in thread_cpu().items()}
            stages = profiles.stages()
    n = len(asked)
    p50, p95 = (1000 * float(np.percentile(latencies, q)) for q in (50, 95))
    print(f"{folder} ({n} searches, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())})")
    print(
        f"  {'whole search (profiled)':<52} wall {1000 * wall / n:6.2f} ms  process CPU"
        f" {1000 * cpu / n:6.2f} ms  (wall p50 {p50:.2f}, p95 {p95:.2f})"
    )
    if threads:
        qdrant = sum(used for name, used in threads.items() if name.startswith("edge-search"))
        others = sum(used for name, used in threads.items() if not name.startswith("edge-search"))
        print(
            f"  {'  CPU of Python threads / Qdrant search threads':<52}"
            f" {1000 * others / n:6.2f} / {1000 * qdrant / n:.2f} ms"
        )
    for label, _, _ in STAGES:
        seconds, calls = stages.get(label, (0.0, 0))
        print(f"  {label:<52} thread CPU {1000 * seconds / n:6.2f} ms  ({calls / n:.1f} calls)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("folder", type=Path, help="a local deployment kept by scale_bench")
    parser.add_argument("--queries", type=Path, required=True, help="scale_bench's queries.npz")
    parser.add_argument("--warm", type=Path, default=None, help="scale_bench's warm.npz")
    args = parser.parse_args()
    asyncio.run(measure(args.folder, args.queries, args.warm))


if __name__ == "__main__":
    main()
