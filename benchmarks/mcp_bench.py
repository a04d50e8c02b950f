"""Benchmark ``sagewai mcp`` as a client sees it: start-up over stdio and tool call latency.

Why: an MCP client (Claude Desktop, Cursor) starts the server as a command when it opens, and
waits for it; every tool call is on the agent's turn. This measures, through the MCP SDK's own
stdio client: the time from launching the command to an initialised session, ``list_tools``,
the first ``recall`` (which loads the embedder), then ``remember`` (verbatim facts) and
``recall`` latencies on an embedded folder. Offline: nothing but the subprocess is started.

Usage (from the repository root, with sagewai and the ``mcp`` extra installed)::

    python -m benchmarks.mcp_bench
    python -m benchmarks.mcp_bench --starts 5 --calls 100 --out mcp_bench.json
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._common import RESULTS, percentiles, synthetic_sentences, write_json

DEFAULT_OUT = RESULTS / "mcp_bench.json"


def _parameters(store: Path) -> Any:
    from mcp import StdioServerParameters

    args = ["-m", "sagewai", "mcp", "--store", str(store), "--project", "bench", "--user", "u"]
    return StdioServerParameters(command=sys.executable, args=args)


async def _start_once(store: Path) -> dict[str, float]:
    from mcp import Client

    started = time.perf_counter()
    async with Client(_parameters(store), read_timeout_seconds=120) as client:
        ready = time.perf_counter()
        await client.list_tools()
        listed = time.perf_counter()
        await client.call_tool("recall", {"query": "warm up"})
        recalled = time.perf_counter()
    return {
        "start_s": round(ready - started, 3),
        "list_tools_ms": round(1000 * (listed - ready), 3),
        "first_recall_s": round(recalled - listed, 3),
    }


async def _calls(store: Path, count: int) -> dict[str, Any]:
    from mcp import Client

    sentences = synthetic_sentences(count)
    remember_ms: list[float] = []
    recall_ms: list[float] = []
    async with Client(_parameters(store), read_timeout_seconds=120) as client:
        await client.call_tool("recall", {"query": "warm up"})
        for text in sentences:
            began = time.perf_counter()
            await client.call_tool("remember", {"text": text, "mode": "fact"})
            remember_ms.append(1000 * (time.perf_counter() - began))
        for text in sentences:
            began = time.perf_counter()
            await client.call_tool("recall", {"query": text, "top_k": 5})
            recall_ms.append(1000 * (time.perf_counter() - began))
    return {"remember_fact": percentiles(remember_ms), "recall": percentiles(recall_ms)}


async def run(starts: int, calls: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="sagewai-mcp-bench-") as tmp:
        store = Path(tmp) / "memory"
        start_runs = [await _start_once(store) for _ in range(starts)]
        latencies = await _calls(store, calls)
    return {"starts": start_runs, "calls": calls, **latencies}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=3, help="server starts measured")
    parser.add_argument("--calls", type=int, default=50, help="remember and recall calls")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON output file")
    args = parser.parse_args(argv)
    result = asyncio.run(run(args.starts, args.calls))
    for index, start in enumerate(result["starts"], 1):
        print(
            f"start {index}: session ready in {start['start_s']:.2f} s, list_tools "
            f"{start['list_tools_ms']:.1f} ms, first recall {start['first_recall_s']:.2f} s"
        )
    for name in ("remember_fact", "recall"):
        figures = result[name]
        print(
            f"{name:13} x{args.calls}: p50 {figures['p50_ms']:.1f} ms, "
            f"p95 {figures['p95_ms']:.1f} ms"
        )
    write_json(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
