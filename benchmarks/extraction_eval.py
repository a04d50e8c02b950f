"""Fact-extraction evaluation: the labelled set, LoCoMo coverage and throughput.

Usage (from the repository root):
    python benchmarks/extraction_eval.py [--extractor rules|llm|hybrid] [--split dev|heldout]
        [--locomo ../shared/data/locomo/locomo_dev.json]
        [--out benchmarks/results/extraction_eval.json]

The same as ``sagewai eval extraction``; see ``sagewai/cli/_eval.py`` and ``docs/extraction.md``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sagewai.cli._main import main

if __name__ == "__main__":
    raise SystemExit(main(["eval", "extraction", *sys.argv[1:]]))
