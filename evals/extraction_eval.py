"""Fact-extraction evaluation: the labelled set, LoCoMo coverage and throughput.

Usage (from the repository root):
    python -m evals.extraction_eval [--extractor rules|llm|hybrid] [--split dev|heldout]
        [--locomo $DATA/locomo/locomo_dev.json] [--out evals/results/extraction_eval.json]

The same as ``sagewai eval extraction --data evals/data/extraction_labelled.jsonl``: it runs that
command (the public door) with the labelled set of this folder; see ``docs/extraction.md``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from evals._common import RESULTS

LABELLED = Path(__file__).resolve().parent / "data" / "extraction_labelled.jsonl"
DEFAULT_OUT = RESULTS / "extraction_eval.json"


def command(argv: Sequence[str]) -> list[str]:
    """The ``sagewai eval extraction`` command line for ``argv`` (data and out filled in)."""
    arguments = list(argv)
    if "--data" not in arguments:
        arguments += ["--data", str(LABELLED)]
    if "--out" not in arguments:
        arguments += ["--out", str(DEFAULT_OUT)]
    return [sys.executable, "-m", "sagewai", "eval", "extraction", *arguments]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the evaluation; returns its exit status."""
    return subprocess.run(command(sys.argv[1:] if argv is None else argv), check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main())
