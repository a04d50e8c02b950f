"""Consolidation benchmark: wall time, memory, and precision/recall against planted truth.

Builds a project of synthetic facts on the EMBEDDED default stores (``SqliteMetadataStore`` +
``QdrantEdgeVectorStore`` in a temporary folder), with known planted cases:

* duplicate clusters: an original and one or two restatements whose vectors are small
  perturbations of the original's (cosine about 0.97) and whose texts and exact values agree;
* exact-value near misses: pairs with nearly identical vectors (cosine about 0.99) whose texts
  differ only in an exact value (an IP address): they must NOT merge;
* contradictions: a subject stated to live in two places (a single-valued predicate), and
  statements followed by their negation: the older must be superseded;
* multi-valued decoys: a subject liking two things: nothing may happen;
* stale facts, created long ago and never used: decay archives them.

Vectors are random unit vectors written straight into the stores in bulk (nothing is embedded),
then the vector index is built once (``optimize``). The consolidation run is then timed on its own
(wall and CPU), the process's resident memory is sampled during the run, and merges and
supersessions read back from the store are scored against the planted truth.

``--realistic`` builds the project from generated chat-like facts instead, embedded with the
default MiniLM model (384-d; vectors cached in ``--vector-cache``), as plain facts with no triple
(see :class:`RealisticWorld`): restatements of earlier facts are planted (7.5 % of the facts),
near-distinct distractors (18 %: the same sentence with another predicate, object, subject,
number, amount, date, version, unit, name or place, a negation or another tense) must never
merge, and contradictions (1.5 %, with triples) must be superseded. Merge precision counts a
merge as right when both facts state the same thing (the same generated statement).

Run from the repository root::

    python benchmarks/consolidation_bench.py --sizes 10000,100000
    python benchmarks/consolidation_bench.py --sizes 1000000 --out /tmp/c1m.json
    python benchmarks/consolidation_bench.py --realistic --sizes 10000,100000 \
        --out benchmarks/results/consolidation_bench_realistic.json

Writes JSON (``--out``, default benchmarks/results/consolidation_bench.json) and prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import RESULTS, write_json
from sagewai.context.engine import ContextEngine
from sagewai.core.queries import FactQuery, VectorPayload, VectorRecord, WriteBatch
from sagewai.core.records import Fact, FactStatus
from sagewai.intelligence.consolidation import MemoryConsolidator
from sagewai.stores.qdrant.edge import QdrantEdgeVectorStore
from sagewai.stores.sqlite import SqliteMetadataStore
from sagewai.testing import FakeEmbedder

try:
    from benchmarks.consolidation_realistic import RealisticWorld, embedded_vectors
except ImportError:  # run as a script from benchmarks/
    from consolidation_realistic import RealisticWorld, embedded_vectors  # type: ignore[no-redef]

PROJECT = "bench"
NOW = datetime(2025, 6, 1, tzinfo=UTC)
DAY = timedelta(days=1)
CHUNK = 10_000
TOPICS = ("billing", "search", "payments", "auth", "reporting", "mobile", "infra", "data")
PLACES = ("Lisbon", "Berlin", "Kyoto", "Austin", "Lagos", "Oslo", "Quito", "Hanoi")
LIKES = ("tea", "jazz", "chess", "kayaking", "sourdough", "poetry", "rust", "pottery")
Vectors = npt.NDArray[np.float32]


@dataclass
class Truth:
    """What was planted: the pairs a perfect run finds, and the pairs it must leave alone."""

    duplicate_clusters: list[list[str]] = field(default_factory=list)
    contradictions: dict[str, str] = field(default_factory=dict)
    """loser id -> winner id."""
    near_misses: int = 0
    decoys: int = 0
    stale: int = 0


def unit(rows: npt.NDArray[np.floating[Any]]) -> Vectors:
    array = np.asarray(rows, dtype=np.float32)
    norms: Vectors = np.linalg.norm(array, axis=1, keepdims=True).astype(np.float32)
    return (array / norms).astype(np.float32)


def perturb(rng: np.random.Generator, base: Vectors, cosine: float) -> Vectors:
    """Unit vectors at about ``cosine`` from each row of ``base`` (random directions)."""
    noise = unit(rng.standard_normal(base.shape))
    # Remove the component along base so the mix has the intended angle.
    noise = unit(noise - (noise * base).sum(axis=1, keepdims=True) * base)
    sine = float(np.sqrt(1.0 - cosine**2))
    return unit(cosine * base + sine * noise)


class World:
    """Generates the facts and vectors of one benchmark project, chunk by chunk."""

    def __init__(self, size: int, dimension: int, seed: int) -> None:
        self.size = size
        self.dimension = dimension
        self.rng = np.random.default_rng(seed)
        self.random = random.Random(seed)
        self.truth = Truth()
        self.serial = 0

    def _fact(self, content: str, age_days: float, **fields: Any) -> Fact:
        self.serial += 1
        return Fact(
            id=f"f{self.serial:08d}",
            project_id=PROJECT,
            content=content,
            created_at=NOW - age_days * DAY,
            **fields,
        )

    def chunk(self, count: int) -> tuple[list[Fact], Vectors]:
        """About ``count`` facts with their vectors; planted cases are kept inside a chunk."""
        facts: list[Fact] = []
        rows: list[Vectors] = []
        rng, pick = self.rng, self.random
        while len(facts) < count:
            roll = pick.random()
            age = pick.uniform(0, 60)
            serial = self.serial
            if roll < 0.04:  # a duplicate cluster of 2 or 3
                topic = pick.choice(TOPICS)
                text = f"The {topic} service {serial} stores its data in cluster {serial % 97}"
                original = self._fact(text, age + 20, sources=())
                base = unit(rng.standard_normal((1, self.dimension)))
                facts.append(original)
                rows.append(base)
                cluster = [original.id]
                for copy in range(pick.choice((1, 2))):
                    variant = text.lower() if copy == 0 else text + "."
                    restated = self._fact(variant, age + 10 - copy)
                    facts.append(restated)
                    rows.append(perturb(rng, base, 0.97))
                    cluster.append(restated.id)
                self.truth.duplicate_clusters.append(cluster)
            elif roll < 0.05:  # an exact-value near miss: must not merge
                base = unit(rng.standard_normal((1, self.dimension)))
                for last in (1, 2):
                    text = f"Deploy the worker {serial} to 10.{serial % 250}.0.{last}"
                    facts.append(self._fact(text, age + last))
                    rows.append(base if last == 1 else perturb(rng, base, 0.99))
                self.truth.near_misses += 1
            elif roll < 0.06:  # a contradiction: single-valued, or a statement and its negation
                subject = f"user-{serial}"
                if pick.random() < 0.7:
                    first, second = pick.sample(PLACES, 2)
                    older = self._fact(
                        f"{subject} lives in {first}",
                        age + 30,
                        subject=subject,
                        predicate="lives_in",
                        object=first,
                    )
                    newer = self._fact(
                        f"{subject} lives in {second}",
                        age,
                        subject=subject,
                        predicate="lives_in",
                        object=second,
                    )
                else:
                    thing = pick.choice(LIKES)
                    older = self._fact(
                        f"{subject} likes {thing}",
                        age + 30,
                        subject=subject,
                        predicate="likes",
                        object=thing,
                    )
                    newer = self._fact(
                        f"{subject} does not like {thing} anymore",
                        age,
                        subject=subject,
                        predicate="likes",
                        object=thing,
                        metadata={"negated": True},
                    )
                facts.extend((older, newer))
                rows.append(unit(rng.standard_normal((2, self.dimension))))
                self.truth.contradictions[older.id] = newer.id
            elif roll < 0.07:  # a multi-valued decoy: nothing may happen
                subject = f"user-{serial}"
                for thing in pick.sample(LIKES, 2):
                    facts.append(
                        self._fact(
                            f"{subject} likes {thing}",
                            age,
                            subject=subject,
                            predicate="likes",
                            object=thing,
                        )
                    )
                rows.append(unit(rng.standard_normal((2, self.dimension))))
                self.truth.decoys += 1
            elif roll < 0.09:  # stale: decay archives it
                topic = pick.choice(TOPICS)
                facts.append(self._fact(f"An old note about the {topic} roadmap", 400))
                rows.append(unit(rng.standard_normal((1, self.dimension))))
                self.truth.stale += 1
            else:
                topic = pick.choice(TOPICS)
                facts.append(self._fact(f"Fact {serial} about the {topic} team", age))
                rows.append(unit(rng.standard_normal((1, self.dimension))))
        return facts, np.concatenate(rows)


class RssSampler:
    """Peak resident memory of this process while a block runs (sampled every 50 ms)."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def current() -> int:
        with open("/proc/self/statm", encoding="ascii") as handle:
            pages = int(handle.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE")

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.current())
            self._stop.wait(0.05)

    def __enter__(self) -> RssSampler:
        self.peak = self.current()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.current())


def score(predicted: set[Any], truth: set[Any]) -> dict[str, float | int]:
    hits = len(predicted & truth)
    return {
        "planted": len(truth),
        "found": len(predicted),
        "correct": hits,
        "precision": round(hits / len(predicted), 4) if predicted else 1.0,
        "recall": round(hits / len(truth), 4) if truth else 1.0,
    }


def merged_clusters(merged: dict[str, str]) -> list[list[str]]:
    """The predicted clusters: each canonical fact with the facts merged into it."""
    clusters: dict[str, list[str]] = {}
    for absorbed, canonical in merged.items():
        clusters.setdefault(canonical, [canonical]).append(absorbed)
    return list(clusters.values())


def cluster_pairs(clusters: list[list[str]]) -> set[tuple[str, str]]:
    """Every pair of members of the same cluster, ordered (larger id, smaller id)."""
    pairs = set()
    for members in clusters:
        ordered = sorted(members)
        for i, older in enumerate(ordered):
            for newer in ordered[i + 1 :]:
                pairs.add((newer, older))
    return pairs


async def read_outcome(store: Any) -> tuple[dict[str, str], dict[str, str]]:
    merged: dict[str, str] = {}
    superseded: dict[str, str] = {}
    for status, out, link in (
        (FactStatus.MERGED, merged, "merged_into"),
        (FactStatus.SUPERSEDED, superseded, "superseded_by"),
    ):
        after: tuple[datetime, str] | None = None
        while True:
            page = await store.query(
                FactQuery(project_id=PROJECT, statuses=(status,), after=after, limit=10_000)
            )
            for fact in page:
                out[fact.id] = str(getattr(fact, link))
            if len(page) < 10_000:
                break
            after = (page[-1].created_at, page[-1].id)
    return merged, superseded


async def bench_size(size: int, args: argparse.Namespace) -> dict[str, Any]:
    if args.realistic:
        return await bench_realistic(size, args)
    folder = Path(tempfile.mkdtemp(prefix="consolidation-bench-", dir=args.tmp))
    try:
        metadata = SqliteMetadataStore(folder / "metadata.sqlite3")
        # The embedded default's store settings; only the optimizer is left to one explicit
        # call after the bulk load, so the load rate and the index build show separately.
        vectors = QdrantEdgeVectorStore(
            folder / "vectors", dimension=args.dim, optimize_threshold=None
        )
        world = World(size, args.dim, args.seed)
        load_started = time.perf_counter()
        async with metadata, vectors:
            written = 0
            while written < size:
                facts, rows = world.chunk(min(CHUNK, size - written))
                await metadata.apply(WriteBatch(PROJECT, upserts=facts))
                await vectors.upsert(
                    [
                        VectorRecord(fact.id, rows[i], VectorPayload.of(fact))
                        for i, fact in enumerate(facts)
                    ]
                )
                written += len(facts)
                print(f"  loaded {written}/{size}", file=sys.stderr, end="\r", flush=True)
            load_seconds = time.perf_counter() - load_started
            index_started = time.perf_counter()
            await vectors.optimize()
            index_seconds = time.perf_counter() - index_started
            print(
                f"\n  {written} facts loaded in {load_seconds:.0f} s, index built in "
                f"{index_seconds:.0f} s; consolidating",
                file=sys.stderr,
            )
            engine = ContextEngine(
                metadata_store=metadata,
                vector_store=vectors,
                project_id=PROJECT,
                embedder=FakeEmbedder(args.dim),
            )
            consolidator = MemoryConsolidator(
                engine, batch_size=args.batch_size, max_report_actions=0, search_ef=args.search_ef
            )
            load1 = os.getloadavg()[0]
            rss_before = RssSampler.current()
            cpu_started = time.process_time()
            with RssSampler() as sampler:
                report = await consolidator.consolidate(now=NOW)
            cpu_seconds = time.process_time() - cpu_started
            merged, superseded = await read_outcome(metadata)
        truth = world.truth
        duplicates = score(
            cluster_pairs(merged_clusters(merged)), cluster_pairs(truth.duplicate_clusters)
        )
        contradictions = score(set(superseded.items()), set(truth.contradictions.items()))
        return {
            "size": written,
            "dimension": args.dim,
            "batch_size": args.batch_size,
            "search_ef": consolidator.config.search_ef,
            "load_seconds": round(load_seconds, 2),
            "index_build_seconds": round(index_seconds, 2),
            "consolidation_seconds": round(report.duration_ms / 1000.0, 2),
            "consolidation_cpu_seconds": round(cpu_seconds, 2),
            "facts_per_second": round(written / max(report.duration_ms / 1000.0, 1e-9)),
            "rss_before_mb": round(rss_before / 2**20, 1),
            "rss_peak_during_run_mb": round(sampler.peak / 2**20, 1),
            "rss_growth_during_run_mb": round((sampler.peak - rss_before) / 2**20, 1),
            "process_max_rss_mb": round(
                resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
            ),
            "load_average_at_start": round(load1, 2),
            "report": {
                "duplicates_removed": report.duplicates_removed,
                "facts_decayed": report.facts_decayed,
                "facts_archived": report.facts_archived,
                "contradictions_resolved": report.contradictions_resolved,
                "total_processed": report.total_processed,
                "batches": report.batches,
            },
            "duplicates": duplicates,
            "contradictions": contradictions,
            "planted": {
                "near_miss_pairs": truth.near_misses,
                "multi_valued_decoys": truth.decoys,
                "stale_facts": truth.stale,
            },
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def bench_realistic(size: int, args: argparse.Namespace) -> dict[str, Any]:
    """One size of the realistic mode: MiniLM vectors of generated facts, planted truth."""
    world = RealisticWorld(args.seed)
    facts, keys = world.facts(size, PROJECT, NOW)
    embed_started = time.perf_counter()
    rows = await embedded_vectors([f.content for f in facts], Path(args.vector_cache))
    embed_seconds = time.perf_counter() - embed_started
    dimension = int(rows.shape[1])
    folder = Path(tempfile.mkdtemp(prefix="consolidation-bench-", dir=args.tmp))
    schema = f"bench_{os.getpid()}_{size}"
    metadata: Any
    try:
        if args.postgres:
            from sagewai.stores.postgres import PostgresMetadataStore

            metadata = PostgresMetadataStore(args.postgres, schema=schema)
            await metadata.migrate()
        else:
            metadata = SqliteMetadataStore(folder / "metadata.sqlite3")
        vectors = QdrantEdgeVectorStore(
            folder / "vectors", dimension=dimension, optimize_threshold=None
        )
        load_started = time.perf_counter()
        async with metadata, vectors:
            for start in range(0, len(facts), CHUNK):
                chunk = facts[start : start + CHUNK]
                await metadata.apply(WriteBatch(PROJECT, upserts=chunk))
                await vectors.upsert(
                    [
                        VectorRecord(fact.id, rows[start + i], VectorPayload.of(fact))
                        for i, fact in enumerate(chunk)
                    ]
                )
            load_seconds = time.perf_counter() - load_started
            index_started = time.perf_counter()
            await vectors.optimize()
            index_seconds = time.perf_counter() - index_started
            print(
                f"  {len(facts)} facts loaded in {load_seconds:.0f} s, index built in "
                f"{index_seconds:.0f} s; consolidating",
                file=sys.stderr,
            )
            engine = ContextEngine(
                metadata_store=metadata,
                vector_store=vectors,
                project_id=PROJECT,
                embedder=FakeEmbedder(dimension),
            )
            consolidator = MemoryConsolidator(
                engine, batch_size=args.batch_size, max_report_actions=0, search_ef=args.search_ef
            )
            load1 = os.getloadavg()[0]
            rss_before = RssSampler.current()
            cpu_started = time.process_time()
            with RssSampler() as sampler:
                report = await consolidator.consolidate(now=NOW)
            cpu_seconds = time.process_time() - cpu_started
            merged, superseded = await read_outcome(metadata)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if args.postgres:
            import asyncpg

            connection = await asyncpg.connect(args.postgres)
            try:
                await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            finally:
                await connection.close()
    truth = world.truth
    right = sum(1 for absorbed, into in merged.items() if keys[absorbed] == keys[into])

    def root(fact_id: str) -> str:
        while fact_id in merged:
            fact_id = merged[fact_id]
        return fact_id

    planted_found = sum(1 for copy, base in truth.restatements.items() if root(copy) == root(base))
    wrong = [(absorbed, into) for absorbed, into in merged.items() if keys[absorbed] != keys[into]]
    contents = {f.id: f.content for f in facts}
    return {
        "mode": "realistic",
        "stores": (
            "PostgresMetadataStore + QdrantEdgeVectorStore"
            if args.postgres
            else "SqliteMetadataStore + QdrantEdgeVectorStore (embedded default)"
        ),
        "size": len(facts),
        "dimension": dimension,
        "embedder": "MiniLMEmbedder (all-MiniLM-L6-v2, int8 ONNX)",
        "batch_size": args.batch_size,
        "search_ef": consolidator.config.search_ef,
        "embed_seconds_or_cache": round(embed_seconds, 2),
        "load_seconds": round(load_seconds, 2),
        "index_build_seconds": round(index_seconds, 2),
        "consolidation_seconds": round(report.duration_ms / 1000.0, 2),
        "consolidation_cpu_seconds": round(cpu_seconds, 2),
        "rss_before_mb": round(rss_before / 2**20, 1),
        "rss_peak_during_run_mb": round(sampler.peak / 2**20, 1),
        "rss_growth_during_run_mb": round((sampler.peak - rss_before) / 2**20, 1),
        "process_max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "load_average_at_start": round(load1, 2),
        "report": {
            "duplicates_removed": report.duplicates_removed,
            "facts_decayed": report.facts_decayed,
            "facts_archived": report.facts_archived,
            "contradictions_resolved": report.contradictions_resolved,
            "total_processed": report.total_processed,
            "batches": report.batches,
        },
        "merges": {
            "merged": len(merged),
            "correct": right,
            "precision": round(right / len(merged), 4) if merged else 1.0,
            "planted_restatements": len(truth.restatements),
            "planted_found": planted_found,
            "recall": round(planted_found / len(truth.restatements), 4)
            if truth.restatements
            else 1.0,
            "wrong_examples": [(contents[a], contents[b]) for a, b in wrong[:10]],
        },
        # The shape the table prints (merge precision / planted recall).
        "duplicates": {
            "precision": round(right / len(merged), 4) if merged else 1.0,
            "recall": round(planted_found / len(truth.restatements), 4)
            if truth.restatements
            else 1.0,
        },
        "contradictions": score(set(superseded.items()), set(truth.contradictions.items())),
        "planted": {
            "restatements": len(truth.restatements),
            "near_distinct_distractors": truth.distractors,
            "contradiction_pairs": len(truth.contradictions),
        },
    }


def print_table(results: list[dict[str, Any]]) -> None:
    print(
        f"{'facts':>9} {'dim':>4} {'load s':>8} {'index s':>8} {'run s':>8} {'cpu s':>8} "
        f"{'rss+ MB':>8} {'dup P':>6} {'dup R':>6} {'con P':>6} {'con R':>6} {'load':>5}"
    )
    for r in results:
        print(
            f"{r['size']:>9} {r['dimension']:>4} {r['load_seconds']:>8} "
            f"{r['index_build_seconds']:>8} {r['consolidation_seconds']:>8} "
            f"{r['consolidation_cpu_seconds']:>8} {r['rss_growth_during_run_mb']:>8} "
            f"{r['duplicates']['precision']:>6} {r['duplicates']['recall']:>6} "
            f"{r['contradictions']['precision']:>6} {r['contradictions']['recall']:>6} "
            f"{r['load_average_at_start']:>5}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated fact counts")
    parser.add_argument("--dim", type=int, default=64, help="vector dimension (default 64)")
    parser.add_argument("--batch-size", type=int, default=1000, help="consolidation batch size")
    parser.add_argument(
        "--search-ef", type=int, default=32, help="HNSW beam of the consolidator's searches"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--realistic", action="store_true", help="generated chat-like facts, MiniLM vectors"
    )
    parser.add_argument(
        "--postgres",
        default=None,
        help="realistic mode: a PostgreSQL DSN for the metadata store (a fresh schema, dropped)",
    )
    parser.add_argument(
        "--vector-cache",
        default="/tmp/sagewai-consolidation-vectors.npz",
        help="realistic mode: .npz cache of the MiniLM vectors by text",
    )
    parser.add_argument("--tmp", default=None, help="folder for the temporary stores")
    parser.add_argument("--out", default=str(RESULTS / "consolidation_bench.json"))
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    results = []
    for size in sizes:
        print(f"consolidating {size} synthetic facts ...", file=sys.stderr)
        results.append(asyncio.run(bench_size(size, args)))
        print(json.dumps(results[-1], indent=2), file=sys.stderr)
    print_table(results)
    write_json(
        Path(args.out),
        {
            "benchmark": "consolidation",
            "stores": "SqliteMetadataStore + QdrantEdgeVectorStore (embedded default)",
            "mode": "realistic (MiniLM vectors)" if args.realistic else "synthetic vectors",
            "settings": {
                "dimension": 384 if args.realistic else args.dim,
                "batch_size": args.batch_size,
                "search_ef": args.search_ef,
                "seed": args.seed,
                "similarity_threshold": 0.92,
                "contradiction_strategy": "keep_newer",
            },
            "results": results,
        },
    )


if __name__ == "__main__":
    main()
