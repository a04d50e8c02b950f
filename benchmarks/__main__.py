"""``python -m benchmarks``: list the perf scenarios, or run them against the baseline.

Examples:
    python -m benchmarks list
    python -m benchmarks run                          # every scenario, quick profile
    python -m benchmarks run store vector --json out.json
    python -m benchmarks run --full store             # the sizes the issues quote
    python -m benchmarks run --write-baseline         # re-measure benchmarks/baseline.json
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from benchmarks._common import RESULTS
from benchmarks._runner import BASELINE, SCENARIOS, missing, run


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit status (1 when a scenario failed)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="the scenarios and what each needs")
    runner = commands.add_parser("run", help="run scenarios, compare with the baseline")
    runner.add_argument("names", nargs="*", help="scenario names (all when none)")
    runner.add_argument("--json", type=Path, default=None, help="write the figures here")
    runner.add_argument("--full", action="store_true", help="the full profile (slow)")
    runner.add_argument("--baseline", type=Path, default=BASELINE, help="figures to compare")
    runner.add_argument(
        "--write-baseline", action="store_true", help="store this run's figures as the baseline"
    )
    runner.add_argument("--timeout", type=float, default=1200.0, help="seconds per scenario")
    runner.add_argument(
        "--results", type=Path, default=RESULTS, help="folder of each scenario's JSON"
    )
    args = parser.parse_args(argv)
    if args.command == "list":
        for scenario in SCENARIOS:
            why = missing(scenario)
            print(f"{scenario.name:<14} {scenario.what}" + (f"  [{why}]" if why else ""))
        return 0
    return run(
        args.names,
        full=args.full,
        json_out=args.json,
        baseline=args.baseline,
        write_baseline=args.write_baseline,
        timeout=args.timeout,
        results=args.results,
    )


if __name__ == "__main__":
    raise SystemExit(main())
