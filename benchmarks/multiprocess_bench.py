"""One embedded folder, many processes: agents writing, searchers, cron consolidation and MCP.

The scenario the docs promise on ``ContextEngine.local(path)``: two agent processes write through
``MemoryBridge.process_message`` (each its own conversations), two processes search, ``sagewai
consolidate`` runs every second, and a ``sagewai mcp`` server answers a real MCP client over
stdio (remember, then recall), all on one folder for ``--seconds`` (default 120).

Printed and written as JSON (``--out``, default ``benchmarks/results/multiprocess_bench.json``):

* writes: accepted and refused per writer, writes/s per writer and in total;
* search: p50/p95 of every search the searchers ran during the run;
* staleness: from a write's return in its writer to the end of the first search of another
  process that found it (searchers learn of a write from the writer's log, right after it
  returns, and search for it until found): p50, p95 and max. A searcher follows the newest
  write only (and any it searched for and did not find yet; ``not_followed`` counts the ones
  it let go), so that a searcher
  slower than the writers measures visibility, not its own queue; the share of writes found by
  the first search made for them (``found_by_the_first_search``) is given too, and
  ``staleness_to_search_start``, from a write's return to the start of the search that found
  it (when the first search finds every write, a bound on visibility without the search's own
  time);
* consolidation: runs, exit codes, durations;
* MCP: remembers, recalls that found the fact just remembered, errors;
* check: after everything stopped, each accepted message is stored exactly once (lost,
  duplicated) with its vector, and each fact remembered through MCP likewise.

Run: ``python -m benchmarks.multiprocess_bench [--seconds 120] [--writers 2] [--searchers 2]``.
``tests/test_multiprocess.py`` runs the same roles for a few seconds in CI. Each role is this
module run with ``--role`` (:data:`ROLE_COMMAND`); they coordinate through files in the work
folder only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

from benchmarks._common import RESULTS, write_json

PROJECT = "shared"
MCP_USER = "mcp-user"
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ROLE_COMMAND = ("-m", "benchmarks.multiprocess_bench")
"""The arguments after ``sys.executable`` that start this module in a role of its own."""

_SUBJECTS = ["Alice", "Bob", "Carol", "Dana", "Eve", "Frank", "Grace", "Hana", "Ivan", "Jo"]
_PLACES = ["Lisbon", "Kyoto", "Berlin", "Oslo", "Porto", "Quito", "Hanoi", "Lima", "Accra"]
_THINGS = ["green tea", "the violin", "sourdough", "pottery", "jazz", "kubernetes", "chess"]


def message_text(writer: str, n: int) -> str:
    """A distinct, realistic message: something the rule extractor finds facts in."""
    rng = random.Random(f"{writer}:{n}")
    who, place, thing = rng.choice(_SUBJECTS), rng.choice(_PLACES), rng.choice(_THINGS)
    return (
        f"{who} moved to {place} and now prefers {thing}; "
        f"ticket {writer.upper()}-{n:05d} tracks it."
    )


def _child_env() -> dict[str, str]:
    path = os.environ.get("PYTHONPATH")
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT) if not path else f"{ROOT}{os.pathsep}{path}",
        "HF_HUB_OFFLINE": "1",
    }


def _wait_until(moment: float) -> None:
    delay = moment - time.time()
    if delay > 0:
        time.sleep(delay)


# -- roles (each a process of its own) --------------------------------------------------------


async def run_writer(
    folder: Path,
    name: str,
    start: float,
    until: float,
    log: Path,
    user: str | None = None,
    at_least: int = 1,
) -> None:
    """An agent process: messages through the bridge until ``until`` (and ``at_least`` of
    them, however late the process came up), each logged on return."""
    from sagewai import ContextEngine
    from sagewai.context import MemoryBridge

    ctx = ContextEngine.local(folder, project_id=PROJECT)
    async with ctx, MemoryBridge(context_engine=ctx) as bridge:
        await ctx.port.embedder.embed_query("warm up")
        _wait_until(start)
        n = 0
        user_id = user or f"user-{name}"
        with log.open("a", encoding="utf-8") as out:
            while time.time() < until or n < at_least:
                session = f"{name}-s{n // 20}"
                text = message_text(name, n)
                began = time.time()
                try:
                    await bridge.process_message(text, session_id=session, user_id=user_id)
                except Exception as exc:  # counted as refused: the run's figure to hold at 0
                    line: dict[str, Any] = {"refused": f"{type(exc).__name__}: {exc}"}
                else:
                    line = {"text": text, "session_id": session, "user_id": user_id}
                    line |= {"began": began, "returned": time.time()}
                out.write(json.dumps(line) + "\n")
                out.flush()
                n += 1
            out.write(json.dumps({"done": True}) + "\n")


def _found(results: Any, text: str) -> bool:
    return any(
        record.content == text for result in results for record in (result.fact, *result.related)
    )


_FOLLOWED: Final = 1
"""New writes a searcher follows at once, the newest (see :func:`run_searcher`)."""


async def run_searcher(
    folder: Path, start: float, until: float, logs: list[Path], out_path: Path
) -> None:
    """A reader process: searches for the newest writes it learns of until it finds them, and
    meanwhile searches at random; records each search's time and each followed write's
    staleness."""
    from sagewai import ContextEngine

    ctx = ContextEngine.local(folder, project_id=PROJECT)
    offsets = dict.fromkeys(logs, 0)
    pending: list[dict[str, Any]] = []
    latencies: list[float] = []
    staleness: list[float] = []
    asked: list[float] = []
    """Per write found: from its return to the start of the search that found it."""
    missed: list[int] = []
    """Per write found: the searches for it that ran before and did not find it."""
    unseen_at_end = 0
    not_followed = 0
    rng = random.Random(os.getpid())
    async with ctx:
        await ctx.search("warm up")
        _wait_until(start)
        # Every write is followed until it is found (for at most half a minute after the end).
        finished: set[Path] = set()
        while time.time() < until or (
            (pending or len(finished) < len(logs)) and time.time() < until + 30
        ):
            for log in logs:
                if not log.exists():
                    continue
                with log.open("rb") as source:
                    source.seek(offsets[log])
                    chunk = source.read()
                complete = chunk[: chunk.rfind(b"\n") + 1]
                offsets[log] += len(complete)
                for raw in complete.splitlines():
                    line = json.loads(raw)
                    if "text" in line:
                        pending.append(line)
                    elif "done" in line:
                        finished.add(log)
            if len(pending) > _FOLLOWED:
                # Follow the newest write (and any searched for and not found yet): a searcher
                # slower than the writers would otherwise measure its own queue (every write
                # waiting for the ones before it), not how soon a write becomes visible. The
                # writes let go are counted; the check at the end reads every write anyway.
                kept = [line for line in pending[:-_FOLLOWED] if line.get("missed")]
                not_followed += len(pending) - _FOLLOWED - len(kept)
                pending = kept + pending[-_FOLLOWED:]
            if pending:
                for line in reversed(pending):
                    began, began_at = time.perf_counter(), time.time()
                    results = await ctx.search(
                        line["text"],
                        top_k=5,
                        user_id=line["user_id"],
                        session_id=line["session_id"],
                    )
                    latencies.append((time.perf_counter() - began) * 1000)
                    if _found(results, line["text"]):
                        staleness.append((time.time() - line["returned"]) * 1000)
                        asked.append((began_at - line["returned"]) * 1000)
                        missed.append(line.get("missed", 0))
                        pending.remove(line)
                    else:
                        line["missed"] = line.get("missed", 0) + 1
            else:
                began = time.perf_counter()
                query = f"{rng.choice(_SUBJECTS)} {rng.choice(_THINGS)} {rng.choice(_PLACES)}"
                await ctx.search(query, top_k=5)
                latencies.append((time.perf_counter() - began) * 1000)
                await asyncio.sleep(0.005)
        unseen_at_end = len(pending)
    report = {
        "latencies_ms": latencies,
        "staleness_ms": staleness,
        "asked_ms": asked,
        "missed": missed,
        "unseen": unseen_at_end,
        "not_followed": not_followed,
    }
    await asyncio.to_thread(out_path.write_text, json.dumps(report), encoding="utf-8")


# -- the conductor ----------------------------------------------------------------------------


async def consolidate_every_second(
    folder: Path, until: float, writing: asyncio.Event, at_least: int = 2
) -> list[dict[str, Any]]:
    """``sagewai consolidate`` started every second (or as soon as the last run ended), until
    ``until`` and the writers are done, ``at_least`` times."""
    runs: list[dict[str, Any]] = []
    while time.time() < until or not writing.is_set() or len(runs) < at_least:
        began = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "sagewai",
            "consolidate",
            "--store",
            str(folder),
            "--project",
            PROJECT,
            "--scope",
            "all",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            env=_child_env(),
        )
        _, err = await process.communicate()
        took = time.perf_counter() - began
        run: dict[str, Any] = {"exit": process.returncode, "seconds": round(took, 3)}
        if process.returncode != 0:
            run["stderr"] = err.decode("utf-8", "replace")[-2000:]
        runs.append(run)
        await asyncio.sleep(max(0.0, 1.0 - took))
    return runs


def mcp_parameters(folder: Path, user: str = MCP_USER) -> Any:
    """How an MCP client starts ``sagewai mcp`` on ``folder`` over stdio."""
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "sagewai", "mcp", "--store", str(folder), "--project", PROJECT, "--user", user],
        env=_child_env(),
        cwd=str(folder.parent),
    )


async def mcp_client(
    folder: Path, start: float, until: float, writing: asyncio.Event, *, at_least: int = 3
) -> dict[str, Any]:
    """A real MCP client over stdio: remember a fact, recall it, every half second (at least
    ``at_least`` times, however late the server came up)."""
    from mcp import Client

    remembered: list[str] = []
    found = errors = 0
    error_texts: list[str] = []
    latencies: list[float] = []
    async with Client(mcp_parameters(folder), read_timeout_seconds=120) as client:
        await asyncio.sleep(max(0.0, start - time.time()))
        n = 0
        while time.time() < until or not writing.is_set() or n < at_least:
            text = f"The MCP user keeps spare key number {n:05d} in the blue drawer."
            stored = await client.call_tool("remember", {"text": text, "mode": "fact"})
            if stored.is_error:
                errors += 1
                error_texts.append(str(stored.content)[:300])
            else:
                remembered.append(text)
                began = time.perf_counter()
                recalled = await client.call_tool("recall", {"query": text, "top_k": 3})
                latencies.append((time.perf_counter() - began) * 1000)
                content = recalled.structured_content or {}
                if any(r["content"] == text for r in content.get("results", [])):
                    found += 1
                elif recalled.is_error:
                    errors += 1
                    error_texts.append(str(recalled.content)[:300])
            n += 1
            await asyncio.sleep(0.5)
    return {
        "remembered": remembered,
        "recalled_at_once": found,
        "errors": errors,
        "error_texts": error_texts[:5],
        "recall_latencies_ms": latencies,
    }


async def check_folder(
    folder: Path, accepted: list[dict[str, Any]], mcp_facts: list[str], mcp_user: str = MCP_USER
) -> dict[str, Any]:
    """After every process stopped: each accepted message stored exactly once, with a vector."""
    from sagewai import ContextEngine

    lost: list[str] = []
    duplicated: list[str] = []
    without_vector: list[str] = []
    ctx = ContextEngine.local(folder, project_id=PROJECT)
    async with ctx:
        by_session: dict[tuple[str, str], dict[str, list[Any]]] = {}
        for line in accepted:
            key = (line["user_id"], line["session_id"])
            if key not in by_session:
                texts: dict[str, list[Any]] = {}
                after = None
                while True:
                    page = await ctx.list(
                        user_id=key[0],
                        session_id=key[1],
                        kinds=["message"],
                        statuses=None,
                        limit=500,
                        after=after,
                    )
                    for fact in page:
                        texts.setdefault(fact.content, []).append(fact)
                    if len(page) < 500:
                        break
                    after = (page[-1].created_at, page[-1].id)
                by_session[key] = texts
            records = by_session[key].get(line["text"], [])
            if not records:
                lost.append(line["text"])
            elif len(records) > 1:
                duplicated.append(line["text"])
            elif not await ctx.port.vectors.get_vectors([records[0].id]):
                without_vector.append(line["text"])
        mcp_listing: dict[str, int] = {}
        after = None
        while True:
            page = await ctx.list(user_id=mcp_user, statuses=None, limit=500, after=after)
            for fact in page:
                mcp_listing[fact.content] = mcp_listing.get(fact.content, 0) + 1
            if len(page) < 500:
                break
            after = (page[-1].created_at, page[-1].id)
    return {
        "messages_checked": len(accepted),
        "lost": len(lost),
        "duplicated": len(duplicated),
        "without_vector": len(without_vector),
        "examples": (lost + duplicated + without_vector)[:5],
        "mcp_facts_checked": len(mcp_facts),
        "mcp_lost": sum(1 for text in mcp_facts if mcp_listing.get(text, 0) == 0),
        "mcp_duplicated": sum(1 for text in mcp_facts if mcp_listing.get(text, 0) > 1),
    }


def _summary(samples: list[float]) -> dict[str, float]:
    if not samples:
        return {"count": 0}
    ordered = sorted(samples)

    def pick(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)

    return {
        "count": len(ordered),
        "p50_ms": pick(0.50),
        "p95_ms": pick(0.95),
        "max_ms": round(ordered[-1], 2),
        "mean_ms": round(statistics.fmean(ordered), 2),
    }


async def conduct(
    folder: Path,
    seconds: float,
    writers: int,
    searchers: int,
    startup: float,
    *,
    at_least: int = 1,
) -> dict[str, Any]:
    """The whole scenario on ``folder``; returns the report (see the module)."""
    from sagewai import ContextEngine

    await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
    async with ContextEngine.local(folder, project_id=PROJECT) as ctx:  # made before the run
        await ctx.add("The shared folder was created for the multi-process run.")
    work = folder.parent / f"{folder.name}-work"
    work.mkdir(exist_ok=True)
    start = time.time() + startup
    until = start + seconds
    names = [f"w{n + 1}" for n in range(writers)]
    logs = [work / f"{name}.jsonl" for name in names]
    outs = [work / f"searcher{n + 1}.json" for n in range(searchers)]
    common = ["--folder", str(folder), "--start", str(start), "--until", str(until)]
    writing = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            *ROLE_COMMAND,
            "--role",
            "writer",
            "--name",
            name,
            "--log",
            str(log),
            "--at-least",
            str(at_least),
            *common,
            env=_child_env(),
        )
        for name, log in zip(names, logs, strict=True)
    ]
    searching = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            *ROLE_COMMAND,
            "--role",
            "searcher",
            "--out",
            str(out),
            *(arg for log in logs for arg in ("--log", str(log))),
            *common,
            env=_child_env(),
        )
        for out in outs
    ]
    written = asyncio.Event()

    async def writers_done() -> list[int]:
        codes = [await child.wait() for child in writing]
        written.set()
        return codes

    await asyncio.sleep(max(0.0, start - time.time()))
    writer_codes, consolidations, mcp = await asyncio.gather(
        writers_done(),
        consolidate_every_second(folder, until, written),
        mcp_client(folder, start, until, written),
    )
    codes = writer_codes + [await child.wait() for child in searching]
    elapsed = max(time.time() - start, 1e-9)
    lines = [
        [json.loads(raw) for raw in log.read_text(encoding="utf-8").splitlines()]
        if log.exists()
        else []
        for log in logs
    ]
    accepted = [line for per_writer in lines for line in per_writer if "text" in line]
    unfinished = [
        str(log) for log, per in zip(logs, lines, strict=True) if {"done": True} not in per
    ]
    refused = [line for per_writer in lines for line in per_writer if "refused" in line]
    searched = [json.loads(out.read_text(encoding="utf-8")) for out in outs if out.exists()]
    check = await check_folder(folder, accepted, mcp["remembered"])
    per_writer = {
        name: {
            "accepted": sum(1 for line in per if "text" in line),
            "refused": sum(1 for line in per if "refused" in line),
            "writes_per_s": round(sum(1 for line in per if "text" in line) / seconds, 2),
            "write_latency": _summary(
                [(line["returned"] - line["began"]) * 1000 for line in per if "text" in line]
            ),
        }
        for name, per in zip(names, lines, strict=True)
    }
    return {
        "seconds": seconds,
        "elapsed_s": round(elapsed, 1),
        "load_average_after": [round(v, 2) for v in os.getloadavg()],
        "child_exit_codes": codes,
        "writers": per_writer,
        "writes_total": len(accepted),
        "writes_per_s_total": round(len(accepted) / seconds, 2),
        "refused": len(refused),
        "writers_unfinished": unfinished,
        "refused_examples": [line["refused"] for line in refused[:5]],
        "search": _summary([v for s in searched for v in s["latencies_ms"]]),
        "staleness": _summary([v for s in searched for v in s["staleness_ms"]]),
        # The start of the search that found a write, from its return: since the first search
        # made for a write finds it (``found_by_the_first_search``), a bound on how long the
        # write took to become visible, without the finding search's own duration.
        "staleness_to_search_start": _summary([v for s in searched for v in s["asked_ms"]]),
        "never_seen_by_a_searcher": sum(s["unseen"] for s in searched),
        "not_followed": sum(s.get("not_followed", 0) for s in searched),
        # Staleness counts the searcher's own queue (under load, its searches wait for the CPU);
        # this is how often the first search for a write, started after it returned, found it.
        "found_by_the_first_search": round(
            sum(1 for s in searched for m in s["missed"] if m == 0)
            / max(1, sum(len(s["missed"]) for s in searched)),
            4,
        ),
        "searches_that_missed_a_returned_write": sum(m for s in searched for m in s["missed"]),
        "consolidation": {
            "runs": len(consolidations),
            "exit_codes": sorted({run["exit"] for run in consolidations}),
            "failed": [run for run in consolidations if run["exit"] != 0][:3],
            "seconds": _summary([run["seconds"] * 1000 for run in consolidations]),
        },
        "mcp": {
            "remembered": len(mcp["remembered"]),
            "recalled_at_once": mcp["recalled_at_once"],
            "errors": mcp["errors"],
            "error_examples": mcp["error_texts"],
            "recall": _summary(mcp["recall_latencies_ms"]),
        },
        "check": check,
    }


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--searchers", type=int, default=2)
    parser.add_argument("--startup", type=float, default=15.0, help="seconds for processes to load")
    parser.add_argument("--folder", type=Path, default=None, help="default: a temporary folder")
    parser.add_argument("--out", type=Path, default=RESULTS / "multiprocess_bench.json")
    parser.add_argument("--role", choices=("writer", "searcher"), default=None)
    parser.add_argument("--name", default="w")
    parser.add_argument("--user", default=None, help="the writer's user (default: user-NAME)")
    parser.add_argument("--log", type=Path, action="append", default=[])
    parser.add_argument("--at-least", type=int, default=1, help="messages per writer, at least")
    parser.add_argument("--start", type=float, default=0.0)
    parser.add_argument("--until", type=float, default=0.0)
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    if args.role == "writer":
        asyncio.run(
            run_writer(
                args.folder,
                args.name,
                args.start,
                args.until,
                args.log[0],
                args.user,
                args.at_least,
            )
        )
        return
    if args.role == "searcher":
        asyncio.run(run_searcher(args.folder, args.start, args.until, args.log, args.out))
        return
    with tempfile.TemporaryDirectory(prefix="sagewai-multiprocess-") as scratch:
        folder = args.folder or Path(scratch) / "memory"
        report = asyncio.run(
            conduct(folder, args.seconds, args.writers, args.searchers, args.startup)
        )
    print(json.dumps(report, indent=2))
    write_json(args.out, {"benchmark": "multiprocess", **report})


if __name__ == "__main__":
    main()
