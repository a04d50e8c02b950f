"""Forgetting a subject on a store filled from a LoCoMo dev conversation: the receipt and its cost.

Fills an embedded folder (``ContextEngine.local``) the way a user does: ``MemoryBridge`` with the
rule extractor (whole sessions saved as episodes; the last session turn by turn, journaled) and a
knowledge graph built from the same turns. Then ``forget(subject=...)`` as a dry run and for real,
and reports the receipt (counts per store), whether the dry run's receipt equals the run's, how
many records still name the subject (none expected), and the wall time of each call.

Usage:
    python -m benchmarks.forget_bench [--data PATH] [--sample conv-26] [--turns 150]
        [--subject Melanie] [--out benchmarks/results/forget_bench.json]

The data is not part of the repository (CC BY-NC 4.0): ``--data`` defaults to
``$SAGEWAI_EVAL_DATA/locomo/locomo_dev.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._common import DATA_ENV, RESULTS, locomo_file, write_json
from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.core import Conversation, FactQuery
from sagewai.intelligence import ConversationGraphBuilder, RuleBasedFactExtractor
from sagewai.testing import FakeEmbedder


def sessions(path: Path, sample: str, turns: int) -> list[tuple[str, list[dict[str, Any]]]]:
    """The first ``turns`` turns of ``sample``, as chat messages per session."""
    data = json.loads(path.read_text(encoding="utf-8"))
    body = next(s for s in data if s["sample_id"] == sample)["conversation"]
    out: list[tuple[str, list[dict[str, Any]]]] = []
    number, left = 1, turns
    while left > 0 and f"session_{number}" in body:
        chosen = body[f"session_{number}"][:left]
        messages = [
            {
                "role": "user",
                "content": turn["text"],
                "speaker": turn["speaker"],
                "id": turn["dia_id"],
            }
            for turn in chosen
        ]
        out.append((f"{sample}-s{number}", messages))
        left -= len(chosen)
        number += 1
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="forget-bench-") as scratch:
        folder = Path(scratch)
        engine = ContextEngine.local(folder, project_id="bench", embedder=FakeEmbedder(64))
        word = re.compile(rf"(?<!\w){re.escape(args.subject)}(?!\w)", re.IGNORECASE)
        async with engine:
            bridge = MemoryBridge(context_engine=engine, fact_extractor=RuleBasedFactExtractor())
            builder = ConversationGraphBuilder(graph_store=engine.graph_store)
            chats = sessions(args.data, args.sample, args.turns)
            for session_id, messages in chats[:-1]:
                await bridge.bridge_conversation(Conversation.of(messages, session_id=session_id))
                await builder.process_conversation(messages, session_id=session_id)
            session_id, messages = chats[-1]
            for message in messages:
                await bridge.process_message(message, session_id=session_id)
            await builder.process_conversation(messages, session_id=session_id)
            await bridge.aclose()
            records = await engine.count()
            started = time.perf_counter()
            preview = await engine.forget(subject=args.subject, dry_run=True)
            dry_seconds = time.perf_counter() - started
            started = time.perf_counter()
            done = await engine.forget(subject=args.subject)
            seconds = time.perf_counter() - started
            left = [
                fact.id
                async for fact in engine.port.iter_facts(FactQuery(project_id=engine.project_id))
                if word.search(fact.model_dump_json())
            ]
    return {
        "sample": args.sample,
        "turns": args.turns,
        "subject": args.subject,
        "records_before": records,
        "receipt": done.as_dict(),
        "dry_run_equals_run": preview == done,
        "records_still_naming_it": len(left),
        "dry_run_seconds": round(dry_seconds, 3),
        "forget_seconds": round(seconds, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data", type=Path, default=None, help=f"default: ${DATA_ENV}/locomo/locomo_dev.json"
    )
    parser.add_argument("--sample", default="conv-26")
    parser.add_argument("--turns", type=int, default=150)
    parser.add_argument("--subject", default="Melanie")
    parser.add_argument("--out", type=Path, default=RESULTS / "forget_bench.json")
    args = parser.parse_args(argv)
    args.data = args.data or locomo_file()
    if args.data is None or not args.data.exists():
        print(
            f"LoCoMo data not found at {args.data} (pass --data or set {DATA_ENV})", file=sys.stderr
        )
        return 2
    result = asyncio.run(run(args))
    print(json.dumps(result, indent=2))
    write_json(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
