"""``python -m evals``: run the evaluations and write one scoreboard.

Examples:
    python -m evals run --data DIR                         # every data set found, dev splits
    python -m evals run --data DIR --quick --json board.json --markdown board.md
    python -m evals run --data DIR --datasets locomo --model gpt-4o-mini   # with answers judged
    python -m evals where                                  # where to get the data sets

``DIR`` holds ``locomo/``, ``beam/100K/`` and ``longmemeval/`` (``evals/datasets.py``);
``SAGEWAI_EVAL_DATA`` stands in for ``--data``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from evals._common import RESULTS
from evals.datasets import DATA_ENV, DATASETS, data_folder, where_to_get

QUALITY = ("consolidation", "extraction")


def _names(text: str, known: Sequence[str], what: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown {what}: {', '.join(unknown)}; known: {', '.join(known)}")
    return names


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m evals", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("where", help="where to get each data set")
    runner = commands.add_parser("run", help="run the evaluations, write the scoreboard")
    runner.add_argument("--data", default=None, help=f"data folder (or ${DATA_ENV})")
    runner.add_argument("--datasets", default=",".join(DATASETS), help="comma list")
    runner.add_argument("--quality", default=",".join(QUALITY), help="comma list ('' for none)")
    runner.add_argument("--quick", action="store_true", help="one conversation per data set")
    runner.add_argument("--conversations", default="", help="LoCoMo sample ids / BEAM folders")
    runner.add_argument("--limit", type=int, default=None, help="LongMemEval questions")
    runner.add_argument("--no-baselines", action="store_true", help="skip BM25 / dense / RRF")
    runner.add_argument("--embedding-cache", type=Path, default=None, help="folder of .npz")
    runner.add_argument("--model", default=None, help="litellm model: answer and judge")
    runner.add_argument("--judge-model", default=None, help="litellm model of the judge")
    runner.add_argument("--json", type=Path, default=RESULTS / "scoreboard.json")
    runner.add_argument("--markdown", type=Path, default=RESULTS / "scoreboard.md")
    args = parser.parse_args(argv)
    if args.command == "where":
        for part in where_to_get().split("; "):
            print(part)
        return 0
    folder = data_folder(args.data)
    if folder is None or not folder.is_dir():
        print(
            f"no data folder: pass --data DIR or set {DATA_ENV} (get the data: {where_to_get()})",
            file=sys.stderr,
        )
        return 2
    from evals._scoreboard import markdown, run

    board = asyncio.run(
        run(
            folder,
            datasets=_names(args.datasets, list(DATASETS), "data set"),
            quality=_names(args.quality, QUALITY, "quality evaluation"),
            quick=args.quick,
            conversations=[c.strip() for c in args.conversations.split(",") if c.strip()],
            limit=args.limit,
            embedding_cache=args.embedding_cache,
            model=args.model,
            judge_model=args.judge_model,
            baselines=not args.no_baselines,
        )
    )
    table = markdown(board)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(board, indent=2) + "\n", encoding="utf-8")
    args.markdown.parent.mkdir(parents=True, exist_ok=True)
    args.markdown.write_text(table, encoding="utf-8")
    print("\n" + table)
    print(f"wrote {args.json} and {args.markdown}")
    return 0 if board["rows"] or board["quality"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
