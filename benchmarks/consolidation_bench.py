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

Vectors are random unit vectors written straight into the stores in bulk (nothing is embedded;
the vectors go through the project's view, :class:`ProjectVectorStore`, as the engine writes them),
then the vector index is built once (``optimize``). The consolidation run is then timed on its own
(wall and CPU), the process's resident memory is sampled during the run, and merges and
supersessions read back from the store are scored against the planted truth.

``--realistic`` builds the project from generated chat-like facts instead, embedded with the
default MiniLM model (384-d; vectors cached in ``--vector-cache``), as plain facts with no triple
(see :class:`RealisticWorld`): restatements of earlier facts are planted (7.5 % of the facts),
near-distinct distractors (18 %: the same sentence with another predicate, object, subject,
number, amount, date, version, unit, name or place, a negation or another tense) must never
merge, and contradictions (1.5 %, with triples) must be superseded. Merge precision counts a
merge as right when both facts state the same thing (the same generated statement). Past
``--pool`` embedded facts (100k by default) the corpus is copies of the pool about other people
(:class:`RealisticCorpus`). ``--dry-run-check`` runs a dry run first and compares it with the real
run (counts and a digest of every action); ``--dry-run-only FILE`` and ``--compare-dry FILE`` do
the same from two processes on copies of one store kept with ``--built DIR``.

Run from the repository root::

    python -m benchmarks.consolidation_bench --sizes 10000,100000
    python -m benchmarks.consolidation_bench --sizes 1000000 --out c1m.json
    python -m benchmarks.consolidation_bench --realistic --sizes 10000 --dry-run-check
    python -m benchmarks.consolidation_bench --realistic --sizes 100000 --built DIR \
        --dry-run-only DRY.json &
    python -m benchmarks.consolidation_bench --realistic --sizes 100000 --built DIR \
        --compare-dry DRY.json
    python -m benchmarks.consolidation_bench --realistic --sizes 100000 --dry-run-check \
        --postgres postgresql://root@127.0.0.1:5432/test

Writes JSON (``--out``, default benchmarks/results/consolidation_bench.json) and prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
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

from benchmarks._common import RESULTS, write_json
from evals.consolidation_realistic import (  # the realistic world is shared with its eval
    RealisticWorld,
    copy_fact,
    embedded_vectors,
    rotate,
)
from sagewai import ContextEngine, Fact, FactStatus
from sagewai.core import FactQuery, VectorPayload, VectorRecord, WriteBatch
from sagewai.intelligence import MemoryConsolidator
from sagewai.stores import ProjectVectorStore, QdrantEdgeVectorStore, SqliteMetadataStore
from sagewai.testing import FakeEmbedder

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
                await ProjectVectorStore.of(vectors, PROJECT).upsert(
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
            "search_ef": consolidator.settings.search_ef,
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


def write_whole(path: str, text: str) -> None:
    """Write ``text`` under a temporary name, then rename it: a reader never sees half."""
    partial = Path(f"{path}.partial")
    partial.write_text(text)
    partial.rename(path)


def read_when_written(path: str) -> str:
    """The text of ``path``, waiting until another process has written it."""
    while not Path(path).exists():
        time.sleep(5)
    return Path(path).read_text()


class Progress:
    """Prints a run's progress (facts, rate, load) every ``every`` batches to stderr."""

    def __init__(self, label: str, every: int = 20) -> None:
        self.label = label
        self.every = every
        self.started = time.perf_counter()

    def __call__(self, progress: Any) -> None:
        if progress.batches % self.every:
            return
        elapsed = time.perf_counter() - self.started
        print(
            f"  {self.label}: {progress.processed}/{progress.total} facts in {elapsed:.0f} s "
            f"({progress.processed / max(elapsed, 1e-9):.0f}/s, load {os.getloadavg()[0]:.1f})",
            file=sys.stderr,
            flush=True,
        )


class TableLog(logging.Handler):
    """Keeps the consolidator's candidate-table figures (its debug line) of each run."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.tables: list[dict[str, Any]] = []

    @classmethod
    def attach(cls) -> TableLog:
        handler = cls()
        logger = logging.getLogger("sagewai.consolidation")
        logger.setLevel(logging.DEBUG)
        logger.addHandler(handler)
        return handler

    def emit(self, record: logging.LogRecord) -> None:
        if "candidate pairs" in str(record.msg) and isinstance(record.args, tuple):
            _, pairs, facts, ms, searched = record.args
            self.tables.append(
                {
                    "facts": facts,
                    "pairs": pairs,
                    "seconds": round(float(ms) / 1000.0, 2),
                    "facts_searched_in_index": searched,
                }
            )

    def last(self) -> dict[str, Any] | None:
        return self.tables[-1] if self.tables else None


def action_signatures(report: Any) -> list[str]:
    """A digest of each action of a run (kind, rule, facts, target, reason), sorted: two runs
    took the same set of actions when these lists are equal (stable across processes)."""
    return sorted(
        hashlib.blake2b(
            repr((a.kind.value, a.rule, tuple(a.fact_ids), a.target_id, a.reason)).encode(),
            digest_size=12,
        ).hexdigest()
        for a in report.actions
    )


def report_counts(report: Any) -> dict[str, int]:
    return {
        "duplicates_removed": report.duplicates_removed,
        "facts_decayed": report.facts_decayed,
        "facts_archived": report.facts_archived,
        "contradictions_resolved": report.contradictions_resolved,
        "facts_flagged": report.facts_flagged,
        "total_processed": report.total_processed,
        "batches": report.batches,
    }


class RealisticCorpus:
    """The realistic corpus of one size, chunk by chunk, and what was planted in it.

    Up to ``pool`` facts, every fact is a generated statement with its own MiniLM vector. Past
    the pool (MiniLM embeds about 100 short sentences a second on this shared machine, so a
    million would take most of a day), the corpus is copies of the pool's facts about other
    people: copy ``c`` gives every person a second surname of its own ("Ben Okafor" becomes
    "Ben Okafor Wood", see :func:`copy_text`) and turns the pool's vectors by one orthogonal map
    per copy (:func:`rotate`: every cosine inside a copy is MiniLM's, a fact sits at 0.9 from
    its original and at about 0.81 from the other copies, the cosine MiniLM gives one statement
    about two people). Restatements, distractors and contradictions are planted in every copy
    in the same proportions; a merge across copies is a merge of two different facts.
    """

    def __init__(self, size: int, pool: int, seed: int) -> None:
        self.size = size
        self.world = RealisticWorld(seed)
        self.base, base_keys = self.world.facts(min(size, pool), PROJECT, NOW)
        self.copies = -(-size // len(self.base))
        self.keys: dict[str, Any] = {}
        self.restatements: dict[str, str] = {}
        self.contradictions: dict[str, str] = {}
        self.distractors = 0
        planted = self.world.truth
        for copy in range(self.copies):
            count = min(len(self.base), size - copy * len(self.base))
            taken = {f.id for f in self.base[:count]}
            ident = (lambda i: i) if copy == 0 else (lambda i, c=copy: f"{i}c{c:02d}")
            for fact in self.base[:count]:
                self.keys[ident(fact.id)] = (copy, base_keys[fact.id])
            for copied, base in planted.restatements.items():
                if copied in taken and base in taken:
                    self.restatements[ident(copied)] = ident(base)
            for loser, winner in planted.contradictions.items():
                if loser in taken and winner in taken:
                    self.contradictions[ident(loser)] = ident(winner)
            self.distractors += round(planted.distractors * count / len(self.base))

    def chunks(self, rows: Vectors) -> Any:
        """``(facts, vectors)`` in chunks of ``CHUNK``, copy after copy."""
        for copy in range(self.copies):
            count = min(len(self.base), self.size - copy * len(self.base))
            for start in range(0, count, CHUNK):
                part = self.base[start : min(count, start + CHUNK)]
                vectors = rotate(rows[start : start + len(part)], copy, seed=7)
                yield [copy_fact(f, copy) for f in part], vectors


async def bench_realistic(size: int, args: argparse.Namespace) -> dict[str, Any]:
    """One size of the realistic mode: MiniLM vectors of generated facts, planted truth."""
    corpus = RealisticCorpus(size, args.pool, args.seed)
    embed_started = time.perf_counter()
    rows = await embedded_vectors([f.content for f in corpus.base], Path(args.vector_cache))
    embed_seconds = time.perf_counter() - embed_started
    dimension = int(rows.shape[1])
    folder = Path(tempfile.mkdtemp(prefix="consolidation-bench-", dir=args.tmp))
    store = folder / "store"
    schema = f"bench_{os.getpid()}_{size}"
    built = None if args.built is None or args.postgres else Path(args.built) / f"realistic-{size}"
    keep_actions = bool(args.dry_run_check or args.dry_run_only or args.compare_dry)
    metadata: Any
    dry: dict[str, Any] | None = None

    def open_stores() -> tuple[Any, QdrantEdgeVectorStore]:
        if args.postgres:
            from sagewai.stores import PostgresMetadataStore

            found: Any = PostgresMetadataStore(args.postgres, schema=schema)
        else:
            found = SqliteMetadataStore(store / "metadata.sqlite3")
        return found, QdrantEdgeVectorStore(
            store / "vectors", dimension=dimension, optimize_threshold=None
        )

    try:
        if built is not None and (built / "build.json").exists():
            # A store this script built before for the same corpus: copied, so the run
            # starts from the state the build left (the build's figures are read back).
            await asyncio.to_thread(shutil.copytree, built, store)
            recorded = json.loads((store / "build.json").read_text())
            written = int(recorded["size"])
            load_seconds = float(recorded["load_seconds"])
            index_seconds = float(recorded["index_build_seconds"])
            print(f"  reusing the store built in {built}", file=sys.stderr)
        else:
            metadata, vectors = open_stores()
            if args.postgres:
                await metadata.migrate()
            load_started = time.perf_counter()
            written = 0
            async with metadata, vectors:
                for chunk, chunk_rows in corpus.chunks(rows):
                    await metadata.apply(WriteBatch(PROJECT, upserts=chunk))
                    await ProjectVectorStore.of(vectors, PROJECT).upsert(
                        [
                            VectorRecord(fact.id, chunk_rows[i], VectorPayload.of(fact))
                            for i, fact in enumerate(chunk)
                        ]
                    )
                    written += len(chunk)
                    print(f"  loaded {written}/{size}", file=sys.stderr, end="\r", flush=True)
                load_seconds = time.perf_counter() - load_started
                index_started = time.perf_counter()
                if not args.skip_index_build:
                    await vectors.optimize()
                index_seconds = time.perf_counter() - index_started
            print(
                f"\n  {written} facts loaded in {load_seconds:.0f} s, index built in "
                f"{index_seconds:.0f} s",
                file=sys.stderr,
            )
            if built is not None:
                figures = {
                    "size": written,
                    "load_seconds": load_seconds,
                    "index_build_seconds": index_seconds,
                    "load_average": os.getloadavg()[0],
                }
                (store / "build.json").write_text(json.dumps(figures))
                await asyncio.to_thread(shutil.copytree, store, built)
        del rows
        if args.build_only:
            return {"mode": "realistic", "size": written, "built": str(built)}
        metadata, vectors = open_stores()
        async with metadata, vectors:
            engine = ContextEngine(
                metadata_store=metadata,
                vector_store=vectors,
                project_id=PROJECT,
                embedder=FakeEmbedder(dimension),
            )
            consolidator = MemoryConsolidator(
                engine,
                batch_size=args.batch_size,
                max_report_actions=None if keep_actions else 0,
                search_ef=args.search_ef,
            )
            tables = TableLog.attach()
            if args.dry_run_check or args.dry_run_only:
                load_dry = os.getloadavg()[0]
                cpu_started = time.process_time()
                with RssSampler() as dry_sampler:
                    planned = await consolidator.consolidate(
                        now=NOW, dry_run=True, progress=Progress("dry run")
                    )
                dry = {
                    "seconds": round(planned.duration_ms / 1000.0, 2),
                    "cpu_seconds": round(time.process_time() - cpu_started, 2),
                    "rss_peak_mb": round(dry_sampler.peak / 2**20, 1),
                    "load_average_at_start": round(load_dry, 2),
                    "counts": report_counts(planned),
                    "actions": len(planned.actions),
                }
                planned_actions = action_signatures(planned)
                del planned
                print(f"  dry run in {dry['seconds']} s", file=sys.stderr)
                if args.dry_run_only:
                    signatures = {"counts": dry["counts"], "actions": planned_actions}
                    await asyncio.to_thread(write_whole, args.dry_run_only, json.dumps(signatures))
                    return {"mode": "realistic", "size": written, "dry_run": dry}
            load1 = os.getloadavg()[0]
            rss_before = RssSampler.current()
            cpu_started = time.process_time()
            with RssSampler() as sampler:
                report = await consolidator.consolidate(now=NOW, progress=Progress("run"))
            cpu_seconds = time.process_time() - cpu_started
            if args.compare_dry:
                # Read after the run: the dry run may still be running in another process.
                recorded = json.loads(await asyncio.to_thread(read_when_written, args.compare_dry))
                dry = {"counts": recorded["counts"], "from": args.compare_dry}
                planned_actions = recorded["actions"]
            if dry is not None:
                actions = action_signatures(report)
                # Batches are not decisions: a real run's later pages no longer hold the facts
                # it merged, so it reads fewer of them.
                decided = {k: v for k, v in report_counts(report).items() if k != "batches"}
                dry["equal_counts"] = {
                    k: v for k, v in dry["counts"].items() if k != "batches"
                } == decided
                dry["batches"] = {"dry_run": dry["counts"]["batches"], "run": report.batches}
                dry["equal_actions"] = planned_actions == actions
                dry["real_actions"] = len(actions)
                report.actions.clear()
            merged, superseded = await read_outcome(metadata)
            wrong = [(a, b) for a, b in merged.items() if corpus.keys[a] != corpus.keys[b]]
            shown = await metadata.get(PROJECT, [i for pair in wrong[:10] for i in pair])
            contents = {f.id: f.content for f in shown}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if args.postgres:
            import asyncpg

            connection = await asyncpg.connect(args.postgres)
            try:
                await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            finally:
                await connection.close()
    right = len(merged) - len(wrong)

    def root(fact_id: str) -> str:
        while fact_id in merged:
            fact_id = merged[fact_id]
        return fact_id

    restatements = corpus.restatements
    planted_found = sum(1 for copy, base in restatements.items() if root(copy) == root(base))
    precision = round(right / len(merged), 4) if merged else 1.0
    recall = round(planted_found / len(restatements), 4) if restatements else 1.0
    return {
        "mode": "realistic",
        "stores": (
            "PostgresMetadataStore + QdrantEdgeVectorStore"
            if args.postgres
            else "SqliteMetadataStore + QdrantEdgeVectorStore (embedded default)"
        ),
        "size": written,
        "dimension": dimension,
        "embedder": "MiniLMEmbedder (all-MiniLM-L6-v2, int8 ONNX)",
        "embedded_facts": len(corpus.base),
        "copies": corpus.copies,
        "batch_size": args.batch_size,
        "search_ef": consolidator.settings.search_ef,
        "embed_seconds_or_cache": round(embed_seconds, 2),
        "load_seconds": round(load_seconds, 2),
        "index_build_seconds": round(index_seconds, 2),
        "index_built": not args.skip_index_build,
        "consolidation_seconds": round(report.duration_ms / 1000.0, 2),
        "consolidation_cpu_seconds": round(cpu_seconds, 2),
        "candidate_table": tables.last(),
        "rss_before_mb": round(rss_before / 2**20, 1),
        "rss_peak_during_run_mb": round(sampler.peak / 2**20, 1),
        "rss_growth_during_run_mb": round((sampler.peak - rss_before) / 2**20, 1),
        "process_max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "load_average_at_start": round(load1, 2),
        "load_average_at_end": round(os.getloadavg()[0], 2),
        "report": report_counts(report),
        "dry_run": dry,
        "merges": {
            "merged": len(merged),
            "correct": right,
            "precision": precision,
            "planted_restatements": len(restatements),
            "planted_found": planted_found,
            "recall": recall,
            "wrong_examples": [(contents.get(a, a), contents.get(b, b)) for a, b in wrong[:10]],
        },
        # The shape the table prints (merge precision / planted recall).
        "duplicates": {"precision": precision, "recall": recall},
        "contradictions": score(set(superseded.items()), set(corpus.contradictions.items())),
        "planted": {
            "restatements": len(restatements),
            "near_distinct_distractors": corpus.distractors,
            "contradiction_pairs": len(corpus.contradictions),
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
        default=str(Path(tempfile.gettempdir()) / "sagewai-consolidation-vectors"),
        help="realistic mode: folder caching the MiniLM vectors by text, in resumable shards",
    )
    parser.add_argument(
        "--pool",
        type=int,
        default=100_000,
        help="realistic mode: facts embedded with MiniLM; a larger size copies them (see "
        "RealisticCorpus)",
    )
    parser.add_argument(
        "--dry-run-check",
        action="store_true",
        help="realistic mode: run a dry run first and compare its counts and actions",
    )
    parser.add_argument(
        "--built",
        default=None,
        help="realistic mode, embedded stores: keep the built store under this folder and "
        "reuse it next time (the run works on a copy)",
    )
    parser.add_argument(
        "--dry-run-only",
        default=None,
        metavar="FILE",
        help="realistic mode: only the dry run; its counts and action digests go to FILE",
    )
    parser.add_argument(
        "--compare-dry",
        default=None,
        metavar="FILE",
        help="realistic mode: compare the real run with the dry run recorded in FILE (a dry "
        "run made by another process on a copy of the same --built store)",
    )
    parser.add_argument(
        "--skip-index-build",
        action="store_true",
        help="realistic mode: leave the vector index unbuilt (a full consolidation run reads "
        "vectors by id and searches the index only for many facts without a name)",
    )
    parser.add_argument(
        "--build-only",
        action="store_true",
        help="realistic mode, with --built: build the store (or find it built) and stop",
    )
    parser.add_argument("--tmp", default=None, help="folder for the temporary stores")
    parser.add_argument("--out", default=str(RESULTS / "consolidation_bench.json"))
    args = parser.parse_args()
    if args.build_only and (args.built is None or not args.realistic or args.postgres):
        parser.error("--build-only needs --realistic and --built (embedded stores)")
    sizes = [int(s) for s in args.sizes.split(",") if s]
    results = []
    for size in sizes:
        print(f"consolidating {size} synthetic facts ...", file=sys.stderr)
        results.append(asyncio.run(bench_size(size, args)))
        print(json.dumps(results[-1], indent=2), file=sys.stderr)
    if not (args.dry_run_only or args.build_only):
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
