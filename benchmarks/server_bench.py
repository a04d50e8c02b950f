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
   (``create_app``) in a uvicorn child process on 127.0.0.1, with an API key, over one
   keep-alive HTTP/1.1 connection (each request written in one piece, the response read by its
   ``Content-Length`` and its JSON parsed): p50/p95, and the overhead (HTTP minus engine; the
   goal is at most 3 ms at p95). Each question is asked every way back to back, in rotating
   order, so a loaded machine weighs on all alike;
   ``httpx``: the same through one keep-alive ``httpx.AsyncClient`` (a general-purpose client;
   its own CPU per request is part of what it measures);
   ``asgi``: the same app in this process through httpx's ASGI transport: the framework's own
   cost, without the socket and the second process;
   ``floor``: ``GET /v1/health`` over the keep-alive connection (no key, no engine): what one
   round trip to the server process costs at all;
   ``server``: the server's own time on each ``http`` search (its ``Server-Timing`` header);
3. ``cpu_per_search_ms``: the CPU each search costs in the engine's process, the server process
   and the client (means; a figure the machine's load does not move);
4. ``throughput``: requests/s of ``POST /v1/search`` with 1, 8 and 32 concurrent clients for
   ``--seconds`` each (one keep-alive connection per client, in this process; the server is one
   process, a second one, warmed first).

Like for like: the engine runs on the server's event loop (uvloop when installed, as uvicorn
picks it), and for the latency comparison every thread of both processes is pinned to one CPU
(``--cpu``, the last by default; ``-1``: anywhere), so both sides share that CPU's neighbours.

The embedder is ``FakeEmbedder(dimension=384)`` by default (a bag-of-words hashing embedder: a
real 384-d vector search, a fill of 100k facts in about a minute); ``--embedder minilm`` uses the
default model in both processes (the query's embedding then costs the same few milliseconds on
both sides). Imports only public sagewai names. Prints a table and writes JSON (``--out``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from benchmarks._common import RESULTS, percentiles, write_json

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


class KeepAlive:
    """One keep-alive HTTP/1.1 connection: the leanest client, so that the figure is the
    server's.

    Each request is written in one piece; the response is read by its ``Content-Length``, its
    status checked and its JSON parsed (the engine's caller gets objects, so this one does
    too). A connection the server closed while idle (uvicorn closes one after 5 s) is opened
    again.

    Args:
        host: The server's address.
        port: Its port.
        token: The API key sent with every request.
    """

    def __init__(self, host: str, port: int, token: str) -> None:
        self.host, self.port = host, port
        self._head = f"host: {host}:{port}\r\nauthorization: Bearer {token}\r\n".encode()
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self.server_ms = 0.0
        """The server's own time on the last request (its ``Server-Timing``)."""

    async def _connection(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self._reader is None or self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
            sock = self._writer.get_extra_info("socket")
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self._reader, self._writer

    async def request(self, method: str, path: str, body: Any = None) -> Any:
        """The parsed JSON of a 200 response (else ``RuntimeError``)."""
        data = b"" if body is None else json.dumps(body).encode()
        message = (
            f"{method} {path} HTTP/1.1\r\n".encode()
            + self._head
            + b"content-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(data)
            + data
        )
        for attempt in (1, 2):
            reader, writer = await self._connection()
            writer.write(message)
            status = await reader.readline()
            if status:
                break
            await self.close()  # the server closed the idle connection: open a new one, once
            if attempt == 2:
                raise RuntimeError("the server closed the connection")
        length = None
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"server-timing":
                self.server_ms = float(value.split(b"dur=", 1)[1])
        if length is None:
            raise RuntimeError(f"no Content-Length in the response to {method} {path}")
        payload = await reader.readexactly(length)
        code = int(status.split()[1])
        if code != 200:
            raise RuntimeError(f"{method} {path}: {code} {payload[:200]!r}")
        return json.loads(payload)

    async def close(self) -> None:
        """Close the connection."""
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None


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


def _process_cpu_ms(pid: int) -> float:
    """CPU time (user + system, every thread) a process has used, from ``/proc`` (0 where there
    is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


async def paired_latency(
    folders: tuple[Path, Path],
    server: tuple[int, int],
    token: str,
    questions: list[str],
    embedder_name: str,
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Milliseconds of each question asked four ways, back to back, in rotating order.

    * ``engine``: ``ctx.search`` in this process;
    * ``asgi``: the server's app in this process, through httpx's ASGI transport (the
      framework's own cost: routing, the key check, validation, JSON; no socket, no second
      process);
    * ``http``: the server process over one keep-alive connection on 127.0.0.1
      (:class:`KeepAlive`); ``server`` keeps the server's own time of each (``Server-Timing``)
      and ``floor`` a ``GET /v1/health`` round trip after it;
    * ``httpx``: the server process through one keep-alive ``httpx.AsyncClient``.

    Also the CPU each search costs, whatever the machine's load: ``engine`` this process's CPU
    during its searches, ``server`` and ``server_httpx`` the server process's CPU during the
    ``http`` and ``httpx`` searches, ``client`` and ``client_httpx`` this process's CPU during
    them (milliseconds per search, means).

    Asking each question every way in turn makes a loaded machine weigh on all alike; 20
    questions warm every path first. Each path reads its own copy of the store, so none
    answers a question from caches another path filled (and Qdrant's embedded engine opens a
    folder in one process at a time).
    """
    from sagewai import ContextEngine
    from sagewai.server import ServerSettings, create_app, open_state
    from sagewai.stores import ProjectStores

    headers = {"authorization": f"Bearer {token}"}
    timings: dict[str, list[float]] = {
        name: [] for name in ("engine", "asgi", "http", "httpx", "server", "floor")
    }
    engine_folder, app_folder = folders
    port, pid = server
    keep_alive = KeepAlive("127.0.0.1", port, token)
    spent = dict.fromkeys(("engine", "server", "server_httpx", "client", "client_httpx"), 0.0)
    spent_by = {
        "engine": ("engine", None),
        "http": ("client", "server"),
        "httpx": ("client_httpx", "server_httpx"),
    }
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
            httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=60
            ) as client,
        ):

            async def by_engine(question: str) -> None:
                await ctx.search(question, 10)

            async def by_keep_alive(question: str) -> None:
                await keep_alive.request("POST", "/v1/search", {"query": question, "top_k": 10})

            def by(client: httpx.AsyncClient) -> Any:
                async def ask(question: str) -> None:
                    response = await client.post(
                        "/v1/search", json={"query": question, "top_k": 10}
                    )
                    response.raise_for_status()
                    response.json()

                return ask

            ways = {
                "engine": by_engine,
                "asgi": by(asgi),
                "http": by_keep_alive,
                "httpx": by(client),
            }
            names = list(ways)
            for question in questions[:20]:
                for name in names:
                    await ways[name](question)
            for index, question in enumerate(questions):
                turn = index % len(names)
                for name in names[turn:] + names[:turn]:
                    here, there = spent_by.get(name, (None, None))
                    other = _process_cpu_ms(pid) if there else 0.0
                    own = time.process_time()
                    started = time.perf_counter()
                    await ways[name](question)
                    timings[name].append((time.perf_counter() - started) * 1000)
                    if here:
                        spent[here] += (time.process_time() - own) * 1000
                    if there:
                        spent[there] += _process_cpu_ms(pid) - other
                    if name == "http":
                        timings["server"].append(keep_alive.server_ms)
                started = time.perf_counter()
                await keep_alive.request("GET", "/v1/health")
                timings["floor"].append((time.perf_counter() - started) * 1000)
    await keep_alive.close()
    return timings, {name: round(total / len(questions), 3) for name, total in spent.items()}


async def throughput(
    port: int, token: str, questions: list[str], clients: int, seconds: float
) -> float:
    """Requests/s of ``clients`` concurrent clients (one keep-alive connection each) for
    ``seconds``."""
    connections = [KeepAlive("127.0.0.1", port, token) for _ in range(clients)]
    for question in questions[:20]:  # a fresh server process: warm it first
        await connections[0].request("POST", "/v1/search", {"query": question, "top_k": 10})
    deadline = time.perf_counter() + seconds
    done = 0

    async def worker(offset: int) -> None:
        nonlocal done
        index = offset
        while time.perf_counter() < deadline:
            question = questions[index % len(questions)]
            await connections[offset].request(
                "POST", "/v1/search", {"query": question, "top_k": 10}
            )
            done += 1
            index += clients

    started = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(clients)))
    elapsed = time.perf_counter() - started
    for connection in connections:
        await connection.close()
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


@contextlib.contextmanager
def _server(folder: Path, embedder: str) -> Iterator[tuple[int, int]]:
    """A ``sagewai serve`` child process on a free port: its port and process id."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    command = ["-m", "benchmarks.server_bench", "--embedder", embedder]
    child = subprocess.Popen(
        [sys.executable, *command, "--serve-child", str(folder), str(port)],
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
        yield port, child.pid
    finally:
        child.terminate()
        child.wait(timeout=30)


def _pin(pid: int, cpus: set[int]) -> None:
    """Every thread of process ``pid`` on ``cpus`` (threads started later inherit it): both
    processes alike, their library thread pools included."""
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            os.sched_setaffinity(int(task), cpus)


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


def _loop_factory() -> Any:
    """uvloop's loop when it is installed, as uvicorn's server process runs on it: the engine
    is measured on the same event loop as the server (``None``: asyncio's own on both)."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def _difference(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    return {key: round(a[key] - b[key], 3) for key in ("p50_ms", "p95_ms")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10.0, help="per concurrency level")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--embedder", choices=("fake", "minilm"), default="fake")
    parser.add_argument(
        "--cpu",
        type=int,
        default=(os.cpu_count() or 1) - 1,
        help=(
            "run the latency comparison (this process and the server's) on this one CPU, so "
            "that both sides share one CPU's neighbours (default: the last; -1: anywhere); "
            "requests/s use every CPU"
        ),
    )
    parser.add_argument("--folder", default=None, help="reuse this store (filled when empty)")
    parser.add_argument("--out", type=Path, default=RESULTS / "server.json", help="JSON results")
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

    pinnable = hasattr(os, "sched_setaffinity") and Path("/proc/self/task").is_dir()
    cpu = None if args.cpu < 0 or not pinnable else args.cpu
    everywhere = os.sched_getaffinity(0) if cpu is not None else None
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        with _server(folder, args.embedder) as (port, pid):
            if cpu is not None:  # the engine and the server on the same CPU, every thread
                _pin(os.getpid(), {cpu})
                _pin(pid, {cpu})
            timings, cpu_ms = runner.run(
                paired_latency(twins, (port, pid), token, questions, args.embedder)
            )
        if everywhere is not None:
            _pin(os.getpid(), everywhere)
        with _server(folder, args.embedder) as (port, _):  # requests/s: every CPU
            rates = {
                int(n): round(
                    runner.run(throughput(port, token, questions, int(n), args.seconds)), 1
                )
                for n in args.concurrency.split(",")
            }

    paths = {name: percentiles(samples) for name, samples in timings.items()}
    engine, http = paths["engine"], paths["http"]
    overhead = _difference(http, engine)
    result = {
        "benchmark": "server_bench",
        "facts": args.facts,
        "queries": args.queries,
        "embedder": args.embedder,
        "fill_seconds": None if filled_in is None else round(filled_in, 1),
        **paths,
        "overhead": overhead,
        "framework_overhead": _difference(paths["asgi"], engine),
        "httpx_overhead": _difference(paths["httpx"], engine),
        "goal_p95_overhead_ms": GOAL_P95_OVERHEAD_MS,
        "goal_met": overhead["p95_ms"] <= GOAL_P95_OVERHEAD_MS,
        "cpu_per_search_ms": cpu_ms,
        "throughput_rps": rates,
        "latency_cpu": cpu,
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    print(
        f"\nsearch top_k=10 at {args.facts} facts, {args.queries} queries"
        f" ({args.embedder} embedder; every path interleaved"
        + ("" if cpu is None else f"; on CPU {cpu}")
        + ")"
    )
    print(f"{'':10}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}")
    for name in ("engine", "http", "httpx", "asgi", "server", "floor"):
        row = paths[name]
        print(f"{name:10}{row['p50_ms']:>10.2f}{row['p95_ms']:>10.2f}{row['p99_ms']:>10.2f}")
    for name, key, what in (
        ("overhead", "overhead", "http - engine"),
        ("httpx", "httpx_overhead", "httpx - engine"),
        ("framework", "framework_overhead", "asgi - engine"),
    ):
        row = result[key]
        print(f"{name:10}{row['p50_ms']:>10.2f}{row['p95_ms']:>10.2f}  ({what})")
    print(
        "CPU per search, ms (mean; whatever the load): engine {engine:.2f}; server process "
        "{server:.2f} (keep-alive) / {server_httpx:.2f} (httpx); client {client:.2f} "
        "(keep-alive) / {client_httpx:.2f} (httpx)".format(**cpu_ms)
    )
    verdict = "met" if result["goal_met"] else "NOT met"
    print(f"goal: overhead at most {GOAL_P95_OVERHEAD_MS} ms at p95: {verdict}")
    for clients, rate in rates.items():
        print(f"{clients:>3} concurrent clients: {rate:8.1f} requests/s")
    print(f"load average (1 min): {result['load_average_1min']}")
    write_json(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
