"""The memory server's cost: search through HTTP against the engine's own, and requests/s.

Usage:
    python -m benchmarks.server_bench                       # 100k facts, the embedded default
    python -m benchmarks.server_bench --facts 10000 --queries 200 --out server.json
    python -m benchmarks.server_bench --embedder minilm     # the real model (a slow fill)

In one run, on one embedded store (SQLite + Qdrant's embedded engine) filled with ``--facts``
facts:

1. ``engine``: ``ContextEngine.search(q, top_k=10)`` in this process, ``--queries`` questions,
   p50/p95 in milliseconds;
2. ``http``: the same questions as ``POST /v1/search`` to ``sagewai serve``'s app
   (``create_app``) in a uvicorn child process on 127.0.0.1, with an API key, through one
   keep-alive ``httpx`` client: p50/p95, and the overhead (HTTP minus engine; the goal is at most
   3 ms at p95). Each question is asked both ways back to back, so a loaded machine weighs on
   both alike;
   The same app is also asked in this process through httpx's ASGI transport (``asgi``): the
   framework's own cost, without the socket and the second process;
3. ``throughput``: requests/s of ``POST /v1/search`` with 1, 8 and 32 concurrent clients for
   ``--seconds`` each (asyncio ``httpx`` clients in this process; the server is one process).

The embedder is ``FakeEmbedder(dimension=384)`` by default (a bag-of-words hashing embedder: a
real 384-d vector search, a fill of 100k facts in about a minute); ``--embedder minilm`` uses the
default model in both processes (the query's embedding then costs the same few milliseconds on
both sides). Imports only public sagewai names. Prints a table and writes JSON (``--out``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

GOAL_P95_OVERHEAD_MS = 3.0
PROJECT = "bench"
_NAMES = ["Alice", "Bob", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hiro", "Ines", "Jonas"]
_VERBS = ["prefers", "booked", "moved to", "works on", "decided on", "visited", "bought", "likes"]
_THINGS = [
    "green tea",
    "the Lisbon office",
    "a window seat",
    "the billing API",
    "Postgres 16",
    "a red bicycle",
    "the Tokyo trip",
    "dark roast coffee",
    "the staging cluster",
    "jazz records",
    "the quarterly report",
    "a standing desk",
    "the mobile app",
    "sourdough bread",
    "Kyoto",
]
_WHEN = ["on Monday", "last week", "in March", "yesterday", "every Friday", "this morning"]


def _embedder(name: str) -> Any:
    if name == "minilm":
        from sagewai.embeddings import MiniLMEmbedder

        return MiniLMEmbedder()
    from sagewai.testing import FakeEmbedder

    return FakeEmbedder(dimension=384)


def _sentences(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        f"{rng.choice(_NAMES)} {rng.choice(_VERBS)} {rng.choice(_THINGS)} {rng.choice(_WHEN)} "
        f"(note {i})"
        for i in range(count)
    ]


def _questions(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    forms = ["what does {n} prefer", "where did {n} move", "who {v} {t}", "{t} {w}", "{n} {t}"]
    return [
        rng.choice(forms).format(
            n=rng.choice(_NAMES), v=rng.choice(_VERBS), t=rng.choice(_THINGS), w=rng.choice(_WHEN)
        )
        for _ in range(count)
    ]


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {
        "p50_ms": round(at(0.50), 3),
        "p95_ms": round(at(0.95), 3),
        "p99_ms": round(at(0.99), 3),
        "mean_ms": round(statistics.fmean(ordered), 3),
    }


async def fill(folder: Path, facts: int, embedder_name: str) -> float:
    """Write ``facts`` facts into a new embedded store; seconds taken."""
    from sagewai import ContextEngine

    started = time.perf_counter()
    texts = _sentences(facts, seed=1)
    embedder = _embedder(embedder_name)
    async with ContextEngine.local(folder, project_id=PROJECT, embedder=embedder) as ctx:  # noqa: SIM117
        async with ctx.bulk_load():  # bulk_load needs the engine open
            for start in range(0, facts, 2_000):
                await ctx.add_many(texts[start : start + 2_000])
    return time.perf_counter() - started


async def paired_latency(
    folders: tuple[Path, Path], url: str, token: str, questions: list[str], embedder_name: str
) -> dict[str, list[float]]:
    """Milliseconds of each question asked three ways, back to back, in rotating order.

    * ``engine``: ``ctx.search`` in this process;
    * ``asgi``: the server's app in this process, through httpx's ASGI transport (the
      framework's own cost: routing, the key check, validation, JSON; no socket, no second
      process);
    * ``http``: the server process over a keep-alive connection on 127.0.0.1.

    Asking each question every way in turn makes a loaded machine weigh on all alike; 20
    questions warm every path first. Each path reads its own copy of the store, so none
    answers a question from caches another path filled (and Qdrant's embedded engine opens a
    folder in one process at a time).
    """
    from sagewai import ContextEngine
    from sagewai.server import ServerSettings, create_app, open_state
    from sagewai.stores import ProjectStores

    headers = {"authorization": f"Bearer {token}"}
    timings: dict[str, list[float]] = {"engine": [], "asgi": [], "http": []}
    engine_folder, app_folder = folders
    async with ContextEngine.local(
        engine_folder, project_id=PROJECT, embedder=_embedder(embedder_name)
    ) as ctx:
        app = create_app(
            ProjectStores.local(app_folder, embedder=_embedder(embedder_name)),
            open_state(str(app_folder)),
            settings=ServerSettings(rate_limit=0),
        )
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://asgi", headers=headers
            ) as asgi,
            httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as http,
        ):

            async def by_engine(question: str) -> None:
                await ctx.search(question, 10)

            def by(client: httpx.AsyncClient) -> Any:
                async def ask(question: str) -> None:
                    response = await client.post(
                        "/v1/search", json={"query": question, "top_k": 10}
                    )
                    response.raise_for_status()

                return ask

            ways = {"engine": by_engine, "asgi": by(asgi), "http": by(http)}
            names = list(ways)
            for question in questions[:20]:
                for name in names:
                    await ways[name](question)
            for index, question in enumerate(questions):
                for name in names[index % 3 :] + names[: index % 3]:
                    started = time.perf_counter()
                    await ways[name](question)
                    timings[name].append((time.perf_counter() - started) * 1000)
    return timings


async def throughput(
    url: str, token: str, questions: list[str], clients: int, seconds: float
) -> float:
    """Requests/s of ``clients`` concurrent clients for ``seconds``."""
    headers = {"authorization": f"Bearer {token}"}
    deadline = time.perf_counter() + seconds
    done = 0
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60, limits=limits) as http:

        async def worker(offset: int) -> None:
            nonlocal done
            index = offset
            while time.perf_counter() < deadline:
                question = questions[index % len(questions)]
                response = await http.post("/v1/search", json={"query": question, "top_k": 10})
                response.raise_for_status()
                done += 1
                index += clients

        started = time.perf_counter()
        await asyncio.gather(*(worker(i) for i in range(clients)))
        elapsed = time.perf_counter() - started
    return done / elapsed


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_child(folder: str, port: int, embedder_name: str) -> None:
    """The server process: ``sagewai serve``'s app on the benchmark's embedder."""
    import uvicorn

    from sagewai.server import ServerSettings, create_app, open_state
    from sagewai.stores import ProjectStores

    stores = ProjectStores.local(folder, embedder=_embedder(embedder_name))
    app = create_app(stores, open_state(folder), settings=ServerSettings(rate_limit=0))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def _make_key(folder: Path) -> str:
    from sagewai.server import new_key, open_state

    async def make() -> str:
        state = open_state(str(folder))
        await state.open()
        made = new_key(project_id=PROJECT, role="read")
        await state.add_key(made.key)
        await state.close()
        return made.token

    return asyncio.run(make())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=10.0, help="per concurrency level")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--embedder", choices=("fake", "minilm"), default="fake")
    parser.add_argument("--folder", default=None, help="reuse this store (filled when empty)")
    parser.add_argument("--out", default=None, help="JSON results (default: results/server.json)")
    parser.add_argument(
        "--serve-child", nargs=2, metavar=("FOLDER", "PORT"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.serve_child:
        serve_child(args.serve_child[0], int(args.serve_child[1]), args.embedder)
        return 0

    folder = Path(args.folder or tempfile.mkdtemp(prefix="sagewai-server-bench-"))
    filled_in = None
    if not (folder / "metadata.sqlite3").exists():
        print(
            f"filling {args.facts} facts into {folder} ({args.embedder} embedder) ...", flush=True
        )
        filled_in = asyncio.run(fill(folder, args.facts, args.embedder))
        print(f"  filled in {filled_in:.1f} s", flush=True)
    questions = _questions(args.queries, seed=2)
    token = _make_key(folder)
    twins = (folder.with_name(folder.name + "-engine"), folder.with_name(folder.name + "-asgi"))
    for twin in twins:
        shutil.rmtree(twin, ignore_errors=True)
        shutil.copytree(folder, twin)

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    child = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--embedder",
            args.embedder,
            "--serve-child",
            str(folder),
            str(port),
        ],
        env=dict(os.environ, HF_HUB_OFFLINE="1"),
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(url + "/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if child.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the server did not start")
            time.sleep(0.2)
        timings = asyncio.run(paired_latency(twins, url, token, questions, args.embedder))
        engine, asgi, http = (_percentiles(timings[n]) for n in ("engine", "asgi", "http"))
        rates = {
            int(n): round(asyncio.run(throughput(url, token, questions, int(n), args.seconds)), 1)
            for n in args.concurrency.split(",")
        }
    finally:
        child.terminate()
        child.wait(timeout=30)

    overhead = {
        "p50_ms": round(http["p50_ms"] - engine["p50_ms"], 3),
        "p95_ms": round(http["p95_ms"] - engine["p95_ms"], 3),
    }
    framework = {
        "p50_ms": round(asgi["p50_ms"] - engine["p50_ms"], 3),
        "p95_ms": round(asgi["p95_ms"] - engine["p95_ms"], 3),
    }
    result = {
        "benchmark": "server_bench",
        "facts": args.facts,
        "queries": args.queries,
        "embedder": args.embedder,
        "fill_seconds": None if filled_in is None else round(filled_in, 1),
        "engine": engine,
        "asgi": asgi,
        "http": http,
        "overhead": overhead,
        "framework_overhead": framework,
        "goal_p95_overhead_ms": GOAL_P95_OVERHEAD_MS,
        "goal_met": overhead["p95_ms"] <= GOAL_P95_OVERHEAD_MS,
        "throughput_rps": rates,
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
    }
    print(
        f"\nsearch top_k=10 at {args.facts} facts, {args.queries} queries"
        f" ({args.embedder} embedder; engine and HTTP interleaved)"
    )
    print(f"{'':10}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}")
    for name, row in (("engine", engine), ("asgi", asgi), ("http", http)):
        print(f"{name:10}{row['p50_ms']:>10.2f}{row['p95_ms']:>10.2f}{row['p99_ms']:>10.2f}")
    print(f"{'overhead':10}{overhead['p50_ms']:>10.2f}{overhead['p95_ms']:>10.2f}  (http - engine)")
    print(
        f"{'framework':10}{framework['p50_ms']:>10.2f}{framework['p95_ms']:>10.2f}  (asgi - engine)"
    )
    verdict = "met" if result["goal_met"] else "NOT met"
    print(f"goal: overhead at most {GOAL_P95_OVERHEAD_MS} ms at p95: {verdict}")
    for clients, rate in rates.items():
        print(f"{clients:>3} concurrent clients: {rate:8.1f} requests/s")
    out = (
        Path(args.out) if args.out else Path(__file__).resolve().parent / "results" / "server.json"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
