"""Run every benchmark one after another and write ``benchmarks/results/summary.json``.

Usage (from the repository root)::

    python benchmarks/run_all.py            # full profile (the sizes the issues ask for)
    python benchmarks/run_all.py --quick    # small sizes: the suite takes a few minutes
    python benchmarks/run_all.py --quick --only vector_bench,consolidation_bench

Each benchmark runs as a subprocess (``sys.executable``, cwd = repository root, ``PYTHONPATH`` =
repository root) and writes its JSON to ``benchmarks/results/<name>.json``. A benchmark whose
script is missing is reported as "not run"; one that fails (non-zero exit, timeout) is recorded
and the suite carries on, then exits with status 1 at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"
RESULTS = BENCHMARKS / "results"
LOCOMO = Path("/work/shared/data/locomo/locomo_dev.json")
LOCOMO_DATA = Path(os.environ.get("SAGEWAI_LOCOMO", str(LOCOMO)))


@dataclass(frozen=True)
class Benchmark:
    """One benchmark script and its arguments (``--out`` is added by the runner)."""

    name: str
    script: str
    args: tuple[str, ...]
    needs_locomo: bool = False


def _profile(quick: bool) -> list[Benchmark]:
    """The benchmarks of a profile, in the order they run."""
    locomo = str(LOCOMO_DATA)
    if quick:
        return [
            Benchmark("vector_bench", "vector_bench.py", ("--sizes", "1000", "10000",
                      "--queries", "50", "--slow-queries", "5")),
            Benchmark("metadata_bench", "metadata_bench.py", ("--sizes", "1000", "10000",
                      "--repeats", "50", "--no-postgres")),
            Benchmark("consolidation_bench", "consolidation_bench.py", ("--sizes", "10000")),
            Benchmark("store_bench", "store_bench.py", ("--sizes", "1000,3000",
                      "--add-sample", "200", "--queries", "50", "--slow-queries", "10")),
            Benchmark("embed_bench", "embed_bench.py", ("--sentences", "128",
                      "--batch-sizes", "32", "--repeats", "1")),
            Benchmark("extraction_eval", "extraction_eval.py", ()),
            Benchmark("graph_bench", "graph_bench.py", ("--data", locomo), needs_locomo=True),
            Benchmark("locomo_recall", "locomo_recall.py", ("--data", locomo,
                      "--conversations", "conv-26", "--modes", "raw"), needs_locomo=True),
            Benchmark("bridge_bench", "bridge_bench.py", ("--embedder", "fake",
                      "--messages", "200", "--sessions", "5")),
        ]  # fmt: skip
    return [
        Benchmark("vector_bench", "vector_bench.py", ("--sizes", "10000", "100000")),
        Benchmark("metadata_bench", "metadata_bench.py", ("--sizes", "10000", "100000")),
        Benchmark("consolidation_bench", "consolidation_bench.py",
                  ("--sizes", "10000,100000,1000000")),
        Benchmark("store_bench", "store_bench.py", ("--sizes", "1000,10000,100000")),
        Benchmark("embed_bench", "embed_bench.py", ("--data", locomo), needs_locomo=True),
        Benchmark("extraction_eval", "extraction_eval.py", ("--locomo", locomo),
                  needs_locomo=True),
        Benchmark("graph_bench", "graph_bench.py", ("--data", locomo), needs_locomo=True),
        Benchmark("locomo_recall", "locomo_recall.py", ("--data", locomo, "--modes",
                  "raw,facts,both"), needs_locomo=True),
        Benchmark("bridge_bench", "bridge_bench.py", ("--locomo", locomo), needs_locomo=True),
    ]  # fmt: skip


@dataclass
class Outcome:
    """What happened to one benchmark; one entry of ``summary.json``."""

    name: str
    status: str  # "ok", "failed" or "not run"
    command: list[str]
    exit_code: int | None
    wall_seconds: float | None
    json: str | None
    note: str = ""


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def run_one(bench: Benchmark, results: Path, timeout: float | None) -> Outcome:
    """Run one benchmark as a subprocess, streaming its output."""
    script = BENCHMARKS / bench.script
    out = results / f"{bench.name}.json"
    command = [sys.executable, _relative(script), *bench.args, "--out", _relative(out)]
    if not script.is_file():
        return Outcome(bench.name, "not run", command, None, None, None, f"{script} missing")
    if bench.needs_locomo and not LOCOMO_DATA.is_file():
        note = f"LoCoMo data not found at {LOCOMO_DATA} (set SAGEWAI_LOCOMO)"
        return Outcome(bench.name, "not run", command, None, None, None, note)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
           os.environ.get("PYTHONPATH", "")]))}  # fmt: skip
    before = out.stat().st_mtime if out.exists() else None
    started = time.perf_counter()
    note = ""
    try:
        completed = subprocess.run(command, cwd=ROOT, env=env, timeout=timeout, check=False)
        code: int | None = completed.returncode
    except subprocess.TimeoutExpired:
        code, note = None, f"timed out after {timeout:.0f} s"
    except OSError as exc:
        code, note = None, f"could not start: {exc}"
    wall = round(time.perf_counter() - started, 2)
    fresh = out.exists() and (before is None or out.stat().st_mtime > before)
    status = "ok" if code == 0 else "failed"
    if code == 0 and not fresh:
        note = "exited 0 but wrote no JSON"
    return Outcome(bench.name, status, command, code, wall, _relative(out) if fresh else None, note)


def write_summary(path: Path, profile: str, outcomes: list[Outcome], started: str) -> None:
    """Write the summary JSON (rewritten after every benchmark, so a crash keeps what ran)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "profile": profile,
        "started": started,
        "python": sys.executable,
        "cpus": os.cpu_count(),
        "benchmarks": [asdict(outcome) for outcome in outcomes],
    }
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes (a few minutes)")
    parser.add_argument("--only", default="", help="comma list of benchmark names to run")
    parser.add_argument("--results", type=Path, default=RESULTS, help="folder for the JSON")
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds per benchmark (default: 1200 with --quick, none otherwise)",
    )
    args = parser.parse_args(argv)
    profile = "quick" if args.quick else "full"
    timeout: float | None = args.timeout
    if timeout is None and args.quick:
        timeout = 1200.0
    benches = _profile(args.quick)
    if args.only:
        wanted = {name.strip() for name in args.only.split(",") if name.strip()}
        unknown = wanted - {bench.name for bench in benches}
        if unknown:
            parser.error(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
        benches = [bench for bench in benches if bench.name in wanted]
    results: Path = args.results.resolve()
    summary_path = results / "summary.json"
    started = datetime.now(UTC).isoformat(timespec="seconds")
    outcomes: list[Outcome] = []
    for bench in benches:
        print(f"\n=== {bench.name} ({profile}) ===", flush=True)
        outcome = run_one(bench, results, timeout)
        outcomes.append(outcome)
        write_summary(summary_path, profile, outcomes, started)
        print(f"=== {bench.name}: {outcome.status} {outcome.note}".rstrip(), flush=True)
    print(f"\n{'benchmark':<22} {'status':<8} {'exit':>5} {'wall s':>9}  json / note")
    for o in outcomes:
        code = "-" if o.exit_code is None else str(o.exit_code)
        wall = "-" if o.wall_seconds is None else f"{o.wall_seconds:.1f}"
        print(f"{o.name:<22} {o.status:<8} {code:>5} {wall:>9}  {o.json or ''} {o.note}".rstrip())
    print(f"wrote {_relative(summary_path)}")
    return 1 if any(o.status == "failed" for o in outcomes) else 0


if __name__ == "__main__":
    raise SystemExit(main())
