"""Does consolidation cost retrieval? LoCoMo dev recall before and after one consolidation run.

Each LoCoMo conversation is written into a fresh project through ``MemoryBridge`` (mode
``facts``: the facts the rule extractor draws from every session; ``both``: those and every turn
verbatim), every question of categories 1-4 is asked (recall@k as in
``evals/locomo_recall.py``, whose loaders and scoring this script imports), then
``MemoryConsolidator(ctx).consolidate()`` runs with its defaults (threshold 0.92) as of the day
after the conversation's last session (a nightly run; decay is measured from there), and every
question is asked again on the same project. The script reports R@k before and after, what the
run did (merges by rule, supersessions, decay), and the questions whose recall dropped; it writes
JSON (``--out``).

Run from the repository root::

    python -m evals.consolidation_locomo --data $DATA/locomo/locomo_dev.json
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

from evals._common import RESULTS, HashCachingEmbedder, write_json
from evals.locomo_recall import (
    Conversation,
    Tally,
    ingest_facts,
    load_conversations,
    make_engine,
    raw_items,
    source_ids,
    wordpiece_counter,
)
from sagewai import ContextEngine, SearchConfig
from sagewai.embeddings import MiniLMEmbedder
from sagewai.intelligence import MemoryConsolidator


async def ask(
    engine: ContextEngine, conversation: Conversation, tally: Tally, count: Any, top: int
) -> list[float]:
    """Ask every question; return its recall at the largest k, in question order."""
    per_question = []
    for question in conversation.questions:
        results = await engine.search(question.text, top_k=top)
        retrieved = [(source_ids(r), r.fact.content) for r in results]
        tally.add(conversation.sample_id, question, retrieved, count)
        found = {i for ids, _ in retrieved[:top] for i in ids}
        per_question.append(
            sum(1 for e in question.evidence if e in found) / len(question.evidence)
        )
    return per_question


async def run(args: argparse.Namespace) -> dict[str, Any]:
    conversations = load_conversations(Path(args.data))
    ks = tuple(sorted({int(k) for k in args.top_k.split(",")}))
    embedder = HashCachingEmbedder(MiniLMEmbedder(), args.embedding_cache)
    count = wordpiece_counter()
    before, after = Tally(ks), Tally(ks)
    did: Counter[str] = Counter()
    drops: list[dict[str, Any]] = []
    facts = 0
    seconds = 0.0
    with tempfile.TemporaryDirectory(prefix="sagewai-locomo-consolidation-") as tmp:
        for conversation in conversations:
            project = f"locomo-{conversation.sample_id}-{args.mode}"
            engine = make_engine(args.store, project, embedder, SearchConfig(), Path(tmp))
            async with engine:
                if args.mode in ("facts", "both"):
                    facts += await ingest_facts(engine, conversation, args.extractor)
                if args.mode in ("raw", "both"):
                    facts += len(await engine.add_many(raw_items(conversation)))
                top = max(ks)
                first = await ask(engine, conversation, before, count, top)
                dates = [t.date for t in conversation.turns if t.date is not None]
                now = max(dates) + timedelta(days=1) if dates else None
                started = time.perf_counter()
                report = await MemoryConsolidator(engine).consolidate(now=now)
                seconds += time.perf_counter() - started
                for action in report.actions:
                    did[f"{action.kind.value} {action.rule}"] += len(action.fact_ids)
                second = await ask(engine, conversation, after, count, top)
                for question, was, now_is in zip(
                    conversation.questions, first, second, strict=True
                ):
                    if now_is < was:
                        drops.append(
                            {
                                "conversation": conversation.sample_id,
                                "question": question.text,
                                f"R@{top} before": was,
                                f"R@{top} after": now_is,
                            }
                        )
    embedder.save()
    return {
        "benchmark": "consolidation_locomo",
        "data": Path(args.data).name,
        "mode": args.mode,
        "store": args.store,
        "extractor": args.extractor,
        "facts": facts,
        "before": before.summary()["overall"],
        "after": after.summary()["overall"],
        "questions": before.summary()["questions"],
        "consolidation": dict(did),
        "consolidation_seconds": round(seconds, 2),
        "questions_with_lower_recall": drops,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="LoCoMo JSON (locomo10 format)")
    parser.add_argument("--mode", choices=("facts", "both", "raw"), default="facts")
    parser.add_argument("--store", choices=("memory", "local"), default="local")
    parser.add_argument("--extractor", choices=("rules", "hybrid"), default="rules")
    parser.add_argument("--top-k", default="5,10,20")
    parser.add_argument("--embedding-cache", type=Path, default=None)
    parser.add_argument("--out", default=str(RESULTS / "consolidation_locomo.json"))
    args = parser.parse_args()
    result = asyncio.run(run(args))
    print(
        f"LoCoMo {result['data']} through the bridge ({args.mode}, {args.store}): "
        f"{result['facts']} facts, {result['questions']} questions"
    )
    print(f"  before consolidation: {result['before']}")
    print(f"  after consolidation:  {result['after']}")
    print(f"  consolidation ({result['consolidation_seconds']} s): {result['consolidation']}")
    print(f"  questions whose recall dropped: {len(result['questions_with_lower_recall'])}")
    for drop in result["questions_with_lower_recall"][:10]:
        print(f"    {drop}")
    write_json(Path(args.out), result)


if __name__ == "__main__":
    main()
