"""Vector store benchmark: upsert rate, filtered search latency and recall, per backend and size.

Loads random unit vectors (384-d, like MiniLM) with realistic payloads: a handful of scope keys
of very different sizes (a project, users, sessions), mostly active facts, a few tags, closed
validity intervals on superseded facts. Then it runs searches the way the engine does (a scope and
the scopes above it, default statuses) plus narrower ones (one session, a tag, an "as of" date),
timing each and comparing its hits with exact brute force to report recall@k.

Run from the repository root::

    python -m benchmarks.vector_bench                       # 10k and 100k, every backend
    python -m benchmarks.vector_bench --sizes 100000 --backends qdrant-edge
    # the embedded default against its exact search and the older Qdrant edge store:
    python -m benchmarks.vector_bench --sizes 100000 1000000 --data topics \
        --backends sqlite sqlite-exact qdrant-edge --kinds scope+ancestors "one session"

The Qdrant edge store is loaded with automatic optimisation off and then optimised once, so the
table shows the load rate and the index build separately. ``qdrant-client`` local mode is brute
force in Python, so it runs fewer queries (``--slow-queries``). ``sqlite`` is the embedded default
(exact below
its ``cells_from``, cells above it); ``sqlite-exact`` the same store with ``cells_from=None``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from sagewai import FactType
from sagewai.core import VectorFilter, VectorPayload, VectorRecord
from sagewai.embeddings import normalize_rows
from sagewai.stores import (
    InMemoryVectorStore,
    QdrantEdgeVectorStore,
    QdrantVectorStore,
    SqliteVectorStore,
    VectorStore,
)

BACKENDS = ("memory", "qdrant-edge", "sqlite", "sqlite-exact", "qdrant-local")
PROJECT = "project:bench:bench"
USERS = tuple(f"user:bench:u{n}" for n in range(3))
SESSIONS = tuple(f"session:bench:s{n}" for n in range(4))
SCOPES = (PROJECT, *USERS, *SESSIONS)
SCOPE_WEIGHTS = (0.40, 0.15, 0.12, 0.08, 0.10, 0.07, 0.05, 0.03)
STATUSES = ("active", "flagged", "superseded", "archived")
STATUS_WEIGHTS = (0.85, 0.05, 0.07, 0.03)
TYPES = tuple(fact_type.value for fact_type in FactType)
TAGS = tuple(f"tag{n}" for n in range(10))
NOW = 1_750_000_000.0
YEAR = 365 * 24 * 3600.0
QUERY_POOL = 1000
"""Extra vectors drawn with the data and used as queries (never stored)."""


@dataclass
class QueryStats:
    """Latency (milliseconds) and recall of one kind of query."""

    queries: int
    matching_share: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    recall_at_k: float
    cpu_p50_ms: float = 0.0
    """This process's CPU per search (every thread): what a loaded machine's wall time hides."""
    cpu_p95_ms: float = 0.0


@dataclass
class RunResult:
    """One backend at one size."""

    backend: str
    size: int
    upsert_seconds: float
    upserts_per_second: float
    index_build_seconds: float | None
    queries: dict[str, QueryStats] = field(default_factory=dict)
    first_read_seconds: float | None = None
    """SQLite: a new store's first read (every vector into memory), what each process pays once."""
    first_search_seconds: float | None = None
    """SQLite: that store's first search after the read (where the cells are made, at scale)."""


def random_vectors(
    rng: np.random.Generator, size: int, dimension: int, data: str
) -> npt.NDArray[np.float32]:
    """Unit vectors: uniform on the sphere, or around centroids like real embeddings.

    Uniform random vectors in 384 dimensions have no neighbourhood structure (every point is
    almost orthogonal to every other), the worst case for any index; sentence embeddings
    cluster by topic, which ``clustered`` imitates (one centroid per 50 points, noise of the same
    order as the centroid: many small, separate groups) and ``topics`` too (one centroid per
    500 points, noise as large as the centroid: fewer, larger groups).
    """
    if data == "random":
        return normalize_rows(rng.standard_normal((size, dimension)))
    per, noise = (50, 0.9) if data == "clustered" else (500, 1.0)
    centroids = rng.standard_normal((max(size // per, 1), dimension))
    picks = rng.integers(0, len(centroids), size)
    return normalize_rows(centroids[picks] + noise * rng.standard_normal((size, dimension)))


def make_data(
    size: int, dimension: int, seed: int, data: str
) -> tuple[list[str], npt.NDArray[np.float32], list[VectorPayload]]:
    rng = np.random.default_rng(seed)
    vectors = random_vectors(rng, size + QUERY_POOL, dimension, data)
    scopes = rng.choice(len(SCOPES), size=size, p=SCOPE_WEIGHTS)
    statuses = rng.choice(len(STATUSES), size=size, p=STATUS_WEIGHTS)
    created = NOW - rng.random(size) * YEAR
    payloads = []
    for n in range(size):
        status = STATUSES[statuses[n]]
        tags = tuple(rng.choice(TAGS, size=int(rng.integers(0, 3)), replace=False).tolist())
        valid_to = float("inf")
        if status == "superseded":
            valid_to = float(created[n] + rng.random() * (NOW - created[n]))
        payloads.append(
            VectorPayload(
                project_id="bench",
                scope_key=SCOPES[scopes[n]],
                status=status,
                kind="document" if rng.random() < 0.1 else "fact",
                fact_type=TYPES[int(rng.integers(0, len(TYPES)))],
                tags=tags,
                created_at=float(created[n]),
                valid_from=float(created[n]),
                valid_to=valid_to,
            )
        )
    return [f"fact-{n}" for n in range(size)], vectors, payloads


QUERY_KINDS: dict[str, Callable[[int], VectorFilter]] = {
    # The engine's usual read: a user's session, the user and the project, default statuses.
    "scope+ancestors": lambda n: VectorFilter(scope_keys=(SESSIONS[n % 4], USERS[n % 3], PROJECT)),
    # One small session (3-10 % of the store): the restrictive case for HNSW.
    "one session": lambda n: VectorFilter(scope_keys=(SESSIONS[n % 4],)),
    # A tag within the project and a user.
    "tag": lambda n: VectorFilter(scope_keys=(USERS[n % 3], PROJECT), tags_any=(TAGS[n % 10],)),
    # "What did we believe then": every status, validity at a past instant.
    "as of a date": lambda n: VectorFilter(
        scope_keys=(USERS[n % 3], PROJECT), statuses=None, valid_at=NOW - (n % 10) / 10 * YEAR
    ),
}


def make_store(backend: str, dimension: int, folder: Path) -> VectorStore:
    if backend == "memory":
        return InMemoryVectorStore(dimension)
    if backend == "qdrant-edge":
        return QdrantEdgeVectorStore(folder / "edge", dimension, optimize_threshold=None)
    if backend == "sqlite":
        # The cells made by the first search that needs them, as before: the index measured.
        return SqliteVectorStore(folder / "vectors.sqlite3", dimension, cells_in_background=False)
    if backend == "sqlite-exact":
        return SqliteVectorStore(folder / "vectors.sqlite3", dimension, cells_from=None)
    return QdrantVectorStore(location=":memory:", dimension=dimension)


async def run_one(
    backend: str,
    size: int,
    dimension: int,
    queries: int,
    top_k: int,
    seed: int,
    data: str,
    kinds: list[str] | None = None,
) -> RunResult:
    ids, all_vectors, payloads = make_data(size, dimension, seed, data)
    vectors, query_pool = all_vectors[:size], all_vectors[size:]
    with tempfile.TemporaryDirectory(prefix="sagewai-bench-") as folder:
        store = make_store(backend, dimension, Path(folder))
        async with store:
            started = time.perf_counter()
            batch = 1000
            for start in range(0, size, batch):
                await store.upsert(
                    [
                        VectorRecord(ids[n], vectors[n], payloads[n])
                        for n in range(start, min(start + batch, size))
                    ]
                )
            upsert_seconds = time.perf_counter() - started
            build: float | None = None
            if isinstance(store, QdrantEdgeVectorStore):
                started = time.perf_counter()
                await store.optimize()
                build = time.perf_counter() - started
            result = RunResult(backend, size, upsert_seconds, size / upsert_seconds, build)
            if isinstance(store, SqliteVectorStore):
                # What a new process pays before its first search: reading every vector, then
                # (at scale, where cells are used) making the cells.
                exact = {"cells_from": None} if backend == "sqlite-exact" else {}
                async with SqliteVectorStore(store.path, dimension, **exact) as fresh:
                    started = time.perf_counter()
                    await fresh.count(VectorFilter(scope_keys=(PROJECT,)))
                    result.first_read_seconds = round(time.perf_counter() - started, 3)
                    started = time.perf_counter()
                    await fresh.search(query_pool[0], top_k, VectorFilter(scope_keys=(PROJECT,)))
                    result.first_search_seconds = round(time.perf_counter() - started, 3)
                await store.search(query_pool[0], top_k, VectorFilter(scope_keys=(PROJECT,)))
            rng = np.random.default_rng(seed + 1)
            for kind, make_filter in QUERY_KINDS.items():
                if kinds is not None and kind not in kinds:
                    continue
                result.queries[kind] = await measure(
                    store, vectors, query_pool, ids, payloads, make_filter, queries, top_k, rng
                )
                print(f"  {backend:13} {size:>7} {kind:16} {result.queries[kind]}", flush=True)
    return result


async def measure(
    store: VectorStore,
    vectors: npt.NDArray[np.float32],
    query_pool: npt.NDArray[np.float32],
    ids: list[str],
    payloads: list[VectorPayload],
    make_filter: Callable[[int], VectorFilter],
    queries: int,
    top_k: int,
    rng: np.random.Generator,
) -> QueryStats:
    latencies: list[float] = []
    cpu: list[float] = []
    recalls: list[float] = []
    shares: list[float] = []
    masks: dict[VectorFilter, npt.NDArray[np.bool_]] = {}
    for n in range(queries):
        filter_ = make_filter(n)
        mask = masks.get(filter_)
        if mask is None:
            mask = np.array([filter_.matches(p, i) for i, p in zip(ids, payloads, strict=True)])
            masks[filter_] = mask
        query = query_pool[int(rng.integers(0, len(query_pool)))]
        started, used = time.perf_counter(), time.process_time()
        hits = await store.search(query, top_k, filter_)
        latencies.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - used) * 1000)
        scores = np.where(mask, vectors @ query, -np.inf)
        keep = min(top_k, int(mask.sum()))
        best = np.argpartition(-scores, keep - 1)[:keep] if keep else []
        truth = {ids[b] for b in best}
        recalls.append(len(truth & {h.id for h in hits}) / len(truth) if truth else 1.0)
        shares.append(float(mask.mean()))
    p50, p95, p99 = np.percentile(latencies, [50, 95, 99])
    return QueryStats(
        queries=queries,
        matching_share=round(float(np.mean(shares)), 4),
        p50_ms=round(float(p50), 3),
        p95_ms=round(float(p95), 3),
        p99_ms=round(float(p99), 3),
        recall_at_k=round(float(np.mean(recalls)), 4),
        cpu_p50_ms=round(float(np.percentile(cpu, 50)), 3),
        cpu_p95_ms=round(float(np.percentile(cpu, 95)), 3),
    )


def table(results: list[RunResult]) -> str:
    lines = [
        f"{'backend':13} {'size':>7} {'upsert/s':>9} {'build s':>8} {'query':16} "
        f"{'match':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'recall':>7}"
    ]
    for result in results:
        build = "-" if result.index_build_seconds is None else f"{result.index_build_seconds:.1f}"
        for kind, stats in result.queries.items():
            lines.append(
                f"{result.backend:13} {result.size:>7} {result.upserts_per_second:>9.0f} "
                f"{build:>8} {kind:16} {stats.matching_share:>6.1%} {stats.p50_ms:>8.2f} "
                f"{stats.p95_ms:>8.2f} {stats.p99_ms:>8.2f} {stats.recall_at_k:>7.3f}"
            )
    return "\n".join(lines)


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--queries", type=int, default=200, help="queries per kind")
    parser.add_argument(
        "--slow-queries", type=int, default=20, help="queries per kind for qdrant-local"
    )
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument(
        "--data",
        choices=("random", "clustered", "topics"),
        default="random",
        help="uniform random unit vectors, or grouped like real embeddings (see random_vectors)",
    )
    parser.add_argument(
        "--kinds", nargs="+", choices=tuple(QUERY_KINDS), default=None, help="default: all"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent / "results" / "vector_bench.json",
    )
    return parser.parse_args(argv)


async def run(args: argparse.Namespace) -> None:
    results: list[RunResult] = []
    for size in args.sizes:
        for backend in args.backends:
            queries = args.slow_queries if backend == "qdrant-local" else args.queries
            print(f"{backend} at {size} ...", flush=True)
            results.append(
                await run_one(
                    backend,
                    size,
                    args.dimension,
                    queries,
                    args.top_k,
                    args.seed,
                    args.data,
                    args.kinds,
                )
            )
    print()
    print(table(results))
    for result in results:
        if result.first_read_seconds is not None:
            print(
                f"{result.backend} at {result.size}: a new process's first read "
                f"{result.first_read_seconds:.1f} s, then its first search "
                f"{result.first_search_seconds:.1f} s"
            )
    report: dict[str, object] = {
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        },
        "settings": {
            "dimension": args.dimension,
            "data": args.data,
            "top_k": args.top_k,
            "seed": args.seed,
            "scopes": dict(zip(SCOPES, SCOPE_WEIGHTS, strict=True)),
            "statuses": dict(zip(STATUSES, STATUS_WEIGHTS, strict=True)),
        },
        "results": [asdict(result) for result in results],
    }
    write_report(args.out, report)


def write_report(out: Path, report: dict[str, object]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {out}")


def main(argv: list[str] | None = None) -> None:
    asyncio.run(run(parse_arguments(argv)))


if __name__ == "__main__":
    main()
