"""Small helpers shared by the benchmark scripts: timing summaries, JSON output, text corpora."""

from __future__ import annotations

import json
import platform
import random
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
"""Where a scenario writes its JSON when no ``--out`` is given (git ignores it)."""

DATA_ENV = "SAGEWAI_EVAL_DATA"
"""The environment variable naming the data folder (``locomo/``, ``beam/``), as for ``evals``."""


def locomo_file() -> Path | None:
    """LoCoMo's dev split under ``$SAGEWAI_EVAL_DATA`` (``locomo/locomo_dev.json``), if set."""
    import os

    folder = os.environ.get(DATA_ENV)
    return Path(folder) / "locomo" / "locomo_dev.json" if folder else None


_SUBJECTS = ["Alice", "Bob", "Carol", "Dana", "Eve", "Frank", "Grace", "Hana", "Ivan", "Jo"]
_VERBS = [
    "likes",
    "visited",
    "decided to use",
    "is learning",
    "bought",
    "recommended",
    "moved to",
    "works with",
    "cooked",
    "wrote about",
]
_OBJECTS = [
    "green tea",
    "Lisbon",
    "PostgreSQL",
    "the violin",
    "a red bicycle",
    "sourdough",
    "Kyoto",
    "the billing team",
    "a mystery novel",
    "rust",
    "hiking boots",
    "jazz",
    "the quarterly report",
    "a rescue dog",
    "Berlin",
    "kubernetes",
    "pottery",
]
_TAILS = [
    "last week",
    "in May",
    "with friends",
    "for the third time",
    "after work",
    "on Sunday",
    "because it was cheaper",
    "again",
    "at the conference",
    "",
]


def synthetic_sentences(n: int, seed: int = 7) -> list[str]:
    """``n`` varied, realistic short facts (deterministic for a seed)."""
    rng = random.Random(seed)
    return [
        f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} "
        f"{rng.choice(_TAILS)} (note {i})".replace("  ", " ")
        for i in range(n)
    ]


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
