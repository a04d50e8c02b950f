"""Small helpers shared by the benchmark scripts: timing summaries, JSON output, text corpora."""

from __future__ import annotations

import json
import platform
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals._common import synthetic_sentences

__all__ = [
    "DATA_ENV",
    "RESULTS",
    "locomo_file",
    "machine",
    "percentiles",
    "synthetic_sentences",
    "write_json",
]

RESULTS = Path(__file__).resolve().parent / "results"
"""Where a scenario writes its JSON when no ``--out`` is given (git ignores it)."""

DATA_ENV = "SAGEWAI_EVAL_DATA"
"""The environment variable naming the data folder (``locomo/``, ``beam/``), as for ``evals``."""


def locomo_file() -> Path | None:
    """LoCoMo's dev split under ``$SAGEWAI_EVAL_DATA`` (``locomo/locomo_dev.json``), if set."""
    import os

    folder = os.environ.get(DATA_ENV)
    return Path(folder) / "locomo" / "locomo_dev.json" if folder else None


def percentiles(samples_ms: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99/mean of latencies in milliseconds."""
    ordered = sorted(samples_ms)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {
        "p50_ms": round(pick(0.50), 3),
        "p95_ms": round(pick(0.95), 3),
        "p99_ms": round(pick(0.99), 3),
        "mean_ms": round(statistics.fmean(ordered), 3),
    }


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    import os

    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
    }


def write_json(path: Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` (plus the machine facts) as indented JSON, creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"machine": machine(), **payload}
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")
