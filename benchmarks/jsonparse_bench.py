"""``parse_json_lenient`` on adversarial model output: 1 MB of brackets, nesting and strings.

A model's answer is read on the event loop, so a reader that is quadratic in anything (nested
brackets, closing brackets, string length) lets one hostile or runaway answer block every
conversation. Each case below is about 1 MB (the parser's cap); the script times each case
(best and worst of ``--repeat`` runs), says whether a value was recovered or the input refused,
prints the figures and writes JSON. Target: every case under 100 ms.

Usage:
    python -m benchmarks.jsonparse_bench [--repeat 5]
        [--out benchmarks/results/jsonparse_bench.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks._common import RESULTS, write_json
from sagewai.llm import MalformedOutputError, parse_json_lenient

TARGET_MS = 100.0
SIZE = 1_000_000
"""The lenient parser's cap on a reply (1,000,000 characters): each case is this long."""


def _fill(unit: str, prefix: str = "", suffix: str = "") -> str:
    room = SIZE - len(prefix) - len(suffix)
    return prefix + unit * (room // len(unit)) + suffix


def cases() -> dict[str, Callable[[], str]]:
    """Name -> a builder of ~1 MB of adversarial text."""
    half = SIZE // 2
    return {
        "open brackets": lambda: "[" * SIZE,
        "open braces": lambda: _fill('{"a":'),
        "deep balanced": lambda: "[" * half + "]" * half,
        "deep balanced, then cut": lambda: "[" * half + "]" * (half - 1),
        "deep prefix, then many items": lambda: (
            "[" + "[" * 2_000 + "]" * 2_000 + _fill(",{}")[4_002:]
        ),
        "many closed items, cut": lambda: _fill("{},", prefix="["),
        "many nested items, cut": lambda: _fill('[{"a": [1, {"b": 2}]}],', prefix="["),
        "items, then garbage": lambda: _fill("{},", prefix="[", suffix="x"),
        "garbage first": lambda: _fill("{},", prefix="[x, "),
        "bad item every 1000": lambda: "[" + ("{}," * 333 + "x,") * (SIZE // 1_001),
        "unclosed string": lambda: _fill("a", prefix='["'),
        "unclosed string after items": lambda: _fill("a", prefix='[{"a": 1}, "'),
        "backslashes": lambda: _fill("\\\\", prefix='["'),
        "escaped quotes": lambda: _fill('\\"', prefix='[{"a": "'),
        "closers only": lambda: "]" * SIZE,
        "alternating": lambda: _fill("}{"),
        "brackets in strings": lambda: _fill('"[{",', prefix="["),
        "fenced open brackets": lambda: _fill("[", prefix="```json\n"),
        "prose then brackets": lambda: _fill("[{", prefix="Sure! Here is the JSON: "),
    }


def measure(text: str, repeat: int) -> dict[str, object]:
    times: list[float] = []
    outcome = "refused"
    for _ in range(repeat):
        started = time.perf_counter()
        try:
            parse_json_lenient(text)
            outcome = "recovered"
        except MalformedOutputError:
            outcome = "refused"
        times.append((time.perf_counter() - started) * 1000)
    return {
        "chars": len(text),
        "outcome": outcome,
        "best_ms": round(min(times), 2),
        "worst_ms": round(max(times), 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS / "jsonparse_bench.json")
    args = parser.parse_args(argv)
    rows: dict[str, dict[str, object]] = {}
    # The parser imports numpy on its first call: time that once, apart from the parsing.
    started = time.perf_counter()
    with contextlib.suppress(MalformedOutputError):
        parse_json_lenient('[{"warm": [1, 2')  # malformed: the bracket reader runs
    first_call_ms = round((time.perf_counter() - started) * 1000, 2)
    print(f"{'first call (imports numpy)':32} {first_call_ms} ms, not counted below")
    for name, build in cases().items():
        text = build()
        rows[name] = measure(text, args.repeat)
        row = rows[name]
        print(
            f"{name:32} {row['chars']:>9} chars  {row['outcome']:9}  best {row['best_ms']:7} ms"
            f"  worst {row['worst_ms']:7} ms"
        )
    # The floor no reader can go under: the stdlib decoder on a valid document of the same size.
    valid = "[" + ",".join(['{"a": [1, {"b": 2}]}'] * (SIZE // 21)) + "]"
    baseline: list[float] = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        json.loads(valid)
        baseline.append((time.perf_counter() - started) * 1000)
    print(f"{'json.loads of a valid 1 MB document':32} best {min(baseline):.2f} ms (baseline)")
    worst = max(float(str(row["worst_ms"])) for row in rows.values())
    best_worst = max(float(str(row["best_ms"])) for row in rows.values())
    print(
        f"slowest case: best {best_worst} ms, worst {worst} ms (target < {TARGET_MS} ms); "
        f"machine load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    write_json(
        args.out,
        {
            "target_ms": TARGET_MS,
            "first_call_ms": first_call_ms,
            "slowest_best_ms": best_worst,
            "slowest_worst_ms": worst,
            "json_loads_baseline_best_ms": round(min(baseline), 2),
            "load_average": round(os.getloadavg()[0], 1),
            "cases": rows,
        },
    )
    return 0 if best_worst < TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
