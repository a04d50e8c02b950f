"""The one runner of the perf scenarios: run them, collect their figures, compare to a baseline.

Each scenario is a module of this package run as a subprocess (``python -m benchmarks.<module>
<arguments> --out <file>``, so one scenario's memory and threads never touch the next). The
runner reads the JSON it wrote and keeps its *figures*: every number whose name says what it
measures (``_ms``, ``seconds``, ``per_s``, ``p50``...), flattened to dotted keys. It compares
them with the committed ``benchmarks/baseline.json`` (the same quick profile, measured on the
machine named in it) and prints each figure with its change, better or worse.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks._common import DATA_ENV, RESULTS, locomo_file, machine

PACKAGE = Path(__file__).resolve().parent
BASELINE = PACKAGE / "baseline.json"


@dataclass(frozen=True)
class Scenario:
    """One perf scenario: its module and the arguments of each profile (``--out`` added)."""

    name: str
    module: str
    quick: tuple[str, ...]
    full: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    """What must be at hand: ``"locomo"`` (``$SAGEWAI_EVAL_DATA``), ``"postgres"``
    (``$SAGEWAI_TEST_POSTGRES_DSN``), ``"kept"`` (a folder kept by ``scale_bench``; such a
    scenario runs by hand only)."""
    what: str = ""


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("vector", "vector_bench",
             ("--sizes", "1000", "10000", "--queries", "50", "--slow-queries", "5"),
             ("--sizes", "10000", "100000"), what="vector stores: build, search p50/p95"),
    Scenario("metadata", "metadata_bench",
             ("--sizes", "1000", "10000", "--repeats", "50", "--no-postgres"),
             ("--sizes", "10000", "100000"), what="metadata stores: filters, keyword search"),
    Scenario("store", "store_bench",
             ("--sizes", "1000,3000", "--add-sample", "200", "--queries", "50",
              "--slow-queries", "10"),
             ("--sizes", "1000,10000,100000"), what="engine add and search per deployment"),
    Scenario("consolidation", "consolidation_bench", ("--sizes", "10000",),
             ("--sizes", "10000,100000,1000000"), what="consolidation pass speed"),
    Scenario("embed", "embed_bench",
             ("--sentences", "128", "--batch-sizes", "32", "--repeats", "1"), (),
             what="MiniLM embedding throughput"),
    Scenario("bridge", "bridge_bench",
             ("--embedder", "fake", "--messages", "200", "--sessions", "5"), (),
             what="bridge ingest: remember latency, flush"),
    Scenario("jsonparse", "jsonparse_bench", ("--repeat", "2"), (),
             what="lenient JSON parsing of 1 MB replies"),
    Scenario("migrate", "migrate_bench", ("--facts", "2000"), ("--facts", "100000"),
             what="archive export and import"),
    Scenario("server", "server_bench",
             ("--facts", "2000", "--queries", "50", "--seconds", "2", "--concurrency", "1,8"),
             (), what="HTTP server: add and search under concurrency"),
    Scenario("mcp", "mcp_bench", ("--starts", "1", "--calls", "20"), (),
             what="MCP server start and tool calls"),
    Scenario("scale", "scale_bench",
             ("--sizes", "2000", "--backends", "local", "--pool", "2000", "--queries", "50",
              "--included", "20", "--seconds", "1", "--no-side-by-side"),
             ("--sizes", "10000,100000"), what="search at scale, embedded deployment"),
    Scenario("graph", "graph_bench", (), (), needs=("locomo",),
             what="graph building on LoCoMo turns"),
    Scenario("forget", "forget_bench", (), ("--turns", "419"), needs=("locomo",),
             what="forget(subject=...) on a LoCoMo-filled folder: receipt, wall time"),
    Scenario("multiprocess", "multiprocess_bench", ("--seconds", "15"), ("--seconds", "120"),
             what="one folder, many processes: writers, searchers, consolidate, MCP"),
    Scenario("search_stages", "search_stages", (), (), needs=("kept",),
             what="CPU per search stage on a kept scale_bench folder (by hand)"),
)  # fmt: skip
"""Every scenario the runner knows, in the order they run. A new perf scenario is a module of
this package with ``--out`` and one line here (``benchmarks/README.md``)."""

_FIGURE = re.compile(
    r"(_ms|_us|_s|seconds|per_s|per_second|per_cpu_second|_rate|throughput|p50|p95|p99"
    r"|_mb|_bytes|speedup|ratio)$"
)
_HIGHER_IS_BETTER = re.compile(r"(per_s|per_second|per_cpu_second|_rate|throughput|speedup)$")
_SKIPPED_TOP = frozenset({"machine", "generated_at", "started", "command", "config"})


def figures(report: Mapping[str, Any]) -> dict[str, float]:
    """The measured numbers of a scenario's JSON, flattened to dotted keys.

    >>> figures({"machine": {"cpus": 2}, "sizes": [{"n": 10, "search": {"p50_ms": 1.5}}],
    ...          "add_per_s": 900, "note": "x"})
    {'sizes.0.search.p50_ms': 1.5, 'add_per_s': 900.0}
    """
    out: dict[str, float] = {}

    def walk(value: Any, key: str) -> None:
        if isinstance(value, bool):
            return
        if isinstance(value, int | float):
            if _FIGURE.search(key.rsplit(".", 1)[-1]):
                out[key] = float(value)
        elif isinstance(value, Mapping):
            for name, item in value.items():
                walk(item, f"{key}.{name}" if key else str(name))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, f"{key}.{index}")

    for name, value in report.items():
        if name not in _SKIPPED_TOP:
            walk(value, str(name))
    return out


def change(key: str, now: float, before: float) -> tuple[float, bool] | None:
    """Relative change of a figure and whether it is better (None when the baseline is 0).

    >>> change("search.p50_ms", 1.2, 1.0)
    (0.19999999999999996, False)
    >>> change("add_per_s", 1200.0, 1000.0)
    (0.2, True)
    """
    if before == 0:
        return None
    relative = (now - before) / abs(before)
    higher = bool(_HIGHER_IS_BETTER.search(key.rsplit(".", 1)[-1]))
    return relative, (relative > 0) == higher or relative == 0


@dataclass
class Outcome:
    """What happened to one scenario."""

    name: str
    status: str  # "ok", "failed" or "not run"
    seconds: float | None = None
    note: str = ""
    figures: dict[str, float] = field(default_factory=dict)
    load: float = 0.0
    """The 1-min load average when it started."""


def missing(scenario: Scenario) -> str:
    """Why a scenario cannot run here ('' when it can)."""
    for need in scenario.needs:
        if need == "kept":
            return "needs a folder kept by scale_bench; run it by hand (see its --help)"
        if need == "locomo":
            path = locomo_file()
            if path is None or not path.is_file():
                return f"needs LoCoMo: set {DATA_ENV} to the folder holding locomo/locomo_dev.json"
        if need == "postgres" and not os.environ.get("SAGEWAI_TEST_POSTGRES_DSN"):
            return "needs PostgreSQL: set SAGEWAI_TEST_POSTGRES_DSN"
    return ""


def arguments(scenario: Scenario, full: bool) -> list[str]:
    """The scenario's arguments for a profile (data paths filled in from the environment)."""
    chosen = list(scenario.full if full and scenario.full else scenario.quick)
    if "locomo" in scenario.needs and "--data" not in chosen:
        chosen += ["--data", str(locomo_file())]
    return chosen


def run_one(scenario: Scenario, out: Path, *, full: bool, timeout: float | None) -> Outcome:
    """Run one scenario as a subprocess, streaming its output; read its figures."""
    why = missing(scenario)
    if why:
        return Outcome(scenario.name, "not run", note=why)
    command = [sys.executable, "-m", f"benchmarks.{scenario.module}",
               *arguments(scenario, full), "--out", str(out)]  # fmt: skip
    root = str(PACKAGE.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [root, os.environ.get("PYTHONPATH", "")]))}  # fmt: skip
    started = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=root, env=env, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Outcome(scenario.name, "failed", timeout, f"timed out after {timeout:.0f} s")
    seconds = round(time.perf_counter() - started, 1)
    if not out.is_file():
        return Outcome(scenario.name, "failed", seconds, f"exit status {done.returncode}, no JSON")
    # A scenario with a target of its own (jsonparse: 100 ms) exits 1 when it misses it; its
    # figures still count, and the note says so.
    note = "" if done.returncode == 0 else f"exit status {done.returncode}: its own target missed"
    report = json.loads(out.read_text(encoding="utf-8"))
    return Outcome(scenario.name, "ok", seconds, note, figures(report))


def select(names: Sequence[str]) -> list[Scenario]:
    """The scenarios named (all when none), in registry order.

    Raises:
        SystemExit: an unknown name (the message lists the known ones).
    """
    known = {s.name: s for s in SCENARIOS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown scenario(s): {', '.join(unknown)}; known: {', '.join(known)}")
    return [s for s in SCENARIOS if not names or s.name in names]


def load_baseline(path: Path) -> dict[str, dict[str, float]]:
    """The figures of a baseline file per scenario ({} when there is none)."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {name: dict(figs) for name, figs in data.get("scenarios", {}).items()}


def baseline_loads(path: Path) -> dict[str, float]:
    """The 1-min load average at the start of each scenario of the baseline."""
    if not path.is_file():
        return {}
    return dict(json.loads(path.read_text(encoding="utf-8")).get("loads", {}))


def comparison(outcome: Outcome, before: Mapping[str, float]) -> Iterator[str]:
    """Lines of one scenario's figures beside its baseline."""
    for key, now in outcome.figures.items():
        old = before.get(key)
        if old is None:
            yield f"  {key:<58} {now:>12.3f}   (not in baseline)"
            continue
        moved = change(key, now, old)
        if moved is None:
            yield f"  {key:<58} {now:>12.3f}   baseline {old:.3f}"
            continue
        relative, better = moved
        word = "same" if abs(relative) < 0.005 else ("better" if better else "worse")
        yield f"  {key:<58} {now:>12.3f}   baseline {old:>12.3f}  {relative:+7.1%} {word}"


def report(outcomes: Sequence[Outcome], profile: str) -> dict[str, Any]:
    """The runner's JSON: each scenario's status and figures."""
    return {
        "profile": profile,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {**machine(), "load_average_1min": round(os.getloadavg()[0], 2)},
        "scenarios": {o.name: o.figures for o in outcomes if o.status == "ok"},
        "loads": {o.name: o.load for o in outcomes if o.status == "ok"},
        "outcomes": [
            {"name": o.name, "status": o.status, "seconds": o.seconds, "note": o.note}
            for o in outcomes
        ],
    }


def run(
    names: Sequence[str],
    *,
    full: bool = False,
    json_out: Path | None = None,
    baseline: Path = BASELINE,
    write_baseline: bool = False,
    timeout: float | None = 1200.0,
    results: Path = RESULTS,
) -> int:
    """Run the scenarios, print the figures beside the baseline; returns the exit status."""
    chosen = select(names)
    profile = "full" if full else "quick"
    before = load_baseline(baseline)
    outcomes: list[Outcome] = []
    results.mkdir(parents=True, exist_ok=True)
    for scenario in chosen:
        print(f"\n=== {scenario.name} ({profile}): {scenario.what}", flush=True)
        out = results / f"{scenario.module}.json"
        out.unlink(missing_ok=True)  # a failed run must not leave the last run's figures
        load = os.getloadavg()[0]
        outcome = run_one(scenario, out, full=full, timeout=timeout)
        outcome.load = round(load, 2)
        outcomes.append(outcome)
        print(f"=== {scenario.name}: {outcome.status} {outcome.note}".rstrip(), flush=True)
    print(f"\nfigures ({profile} profile) beside {baseline.name}:")
    now = os.getloadavg()[0]
    print(f"1-min load average now {now:.2f} on {os.cpu_count()} CPUs (the baseline's per scenario"
          " below): compare on a machine as quiet as the baseline's")  # fmt: skip
    loads = baseline_loads(baseline)
    for outcome in outcomes:
        then = loads.get(outcome.name)
        head = f"\n{outcome.name}: {outcome.status}"
        head += f" in {outcome.seconds:.1f} s" if outcome.seconds is not None else ""
        head += f" ({outcome.note})" if outcome.note else ""
        head += f"; load {outcome.load:.1f}, baseline's {then:.1f}" if then is not None else ""
        print(head)
        for line in comparison(outcome, before.get(outcome.name, {})):
            print(line)
    payload = report(outcomes, profile)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {json_out}")
    if write_baseline:
        if full:
            raise SystemExit("the baseline is the quick profile; drop --full")
        merged = {**before, **payload["scenarios"]}
        merged_loads = {**baseline_loads(baseline), **payload["loads"]}
        written = {**payload, "scenarios": dict(sorted(merged.items())),
                   "loads": dict(sorted(merged_loads.items()))}  # fmt: skip
        written.pop("outcomes")
        baseline.write_text(json.dumps(written, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {baseline}")
    return 1 if any(o.status == "failed" for o in outcomes) else 0
