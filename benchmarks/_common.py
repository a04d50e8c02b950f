"""Small helpers shared by the benchmark scripts: timing summaries, JSON output, text corpora."""

from __future__ import annotations

from pathlib import Path

# One home for the figures' plumbing: the perf scenarios write and summarise as the evals do.
from evals._common import machine, percentiles, synthetic_sentences, write_json

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
