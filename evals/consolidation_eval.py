"""Consolidation quality on a labelled set of fact pairs: precision and recall per rule.

The set (evals/data/consolidation_labelled.jsonl, written for this project) holds pairs of
facts, each labelled with what consolidation should do to them:

* ``duplicate`` -> ``merge``: restatements of one fact (paraphrases, same triples);
* ``exact_value`` -> ``none``: the same sentence with another IP, port, version, date, amount ...;
* ``contradiction`` -> ``supersede``: a single-valued predicate with two values, or a statement
  followed by its negation (the older fact must be superseded by the newer);
* ``multi_valued`` -> ``none``: two values of a predicate that holds many (likes tea, likes coffee);
* ``near_neither`` -> ``none``: same topic, different facts (other subject, other system, a
  negation written in words).

Each pair is consolidated alone, in its own project, with the default embedder (MiniLM,
``sagewai.embeddings._minilm.MiniLMEmbedder``) and decay switched off, so only the dedup and
contradiction rules act. The script prints precision/recall for merges and for supersessions,
accuracy per category, the mistakes, and a sweep of the similarity threshold; it writes JSON
(``--out``, default evals/results/consolidation_eval.json).

Run from the repository root::

    python -m evals.consolidation_eval
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from evals._common import RESULTS, write_json
from sagewai import ContextEngine, FactStatus
from sagewai.embeddings import Vector, Vectors
from sagewai.intelligence import MemoryConsolidator
from sagewai.stores import InMemoryMetadataStore, InMemoryVectorStore

DATA = Path(__file__).resolve().parent / "data" / "consolidation_labelled.jsonl"
NOW = datetime(2025, 6, 1, tzinfo=UTC)
THRESHOLDS = (0.80, 0.85, 0.88, 0.90, 0.92, 0.94, 0.96)


class CachedEmbedder:
    """Wraps an embedder so a sweep embeds each text once (same protocol, same vectors)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.cache: dict[str, Vector] = {}

    @property
    def dimension(self) -> int:
        return int(self.inner.dimension)

    @property
    def name(self) -> str:
        return str(self.inner.name)

    async def embed_documents(self, texts: Sequence[str]) -> Vectors:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            vectors = await self.inner.embed_documents(missing)
            self.cache.update(zip(missing, vectors, strict=True))
        return np.stack([self.cache[t] for t in texts]).astype(np.float32)

    async def embed_query(self, text: str) -> Vector:
        vector: Vector = (await self.embed_documents([text]))[0]
        return vector


def default_embedder() -> tuple[Any, str]:
    try:
        from sagewai.embeddings import MiniLMEmbedder
    except ImportError:  # pragma: no cover - the default install has it
        from sagewai.testing import FakeEmbedder

        print("MiniLMEmbedder is not available: using FakeEmbedder", file=sys.stderr)
        return FakeEmbedder(), "FakeEmbedder (MiniLM unavailable)"
    return MiniLMEmbedder(), "MiniLMEmbedder (all-MiniLM-L6-v2, int8 ONNX)"


def fact_fields(spec: dict[str, Any], age_days: float) -> dict[str, Any]:
    fields = {k: v for k, v in spec.items() if k != "content" and k != "negated"}
    fields["created_at"] = NOW - timedelta(days=age_days)
    return fields


async def judge(
    pairs: list[dict[str, Any]], embedder: CachedEmbedder, threshold: float
) -> list[dict[str, Any]]:
    """Consolidate every pair alone; return what happened to each."""
    metadata = InMemoryMetadataStore()
    vectors = InMemoryVectorStore(embedder.dimension)
    outcomes = []
    for pair in pairs:
        ctx = ContextEngine(
            metadata_store=metadata,
            vector_store=vectors,
            project_id=pair["id"],
            embedder=embedder,
        )
        a = await ctx.add(pair["a"]["content"], **fact_fields(pair["a"], 30))
        b = await ctx.add(pair["b"]["content"], **fact_fields(pair["b"], 2))
        await MemoryConsolidator(
            ctx, similarity_threshold=threshold, decay_halflife_days=36_500
        ).consolidate(now=NOW)
        fa, fb = await ctx.get(a.id), await ctx.get(b.id)
        if FactStatus.MERGED in (fa.status, fb.status):
            outcome = "merge"
        elif fa.status is FactStatus.SUPERSEDED and fa.superseded_by == fb.id:
            outcome = "supersede"
        elif FactStatus.SUPERSEDED in (fa.status, fb.status):
            outcome = "supersede_newer"
        else:
            outcome = "none"
        stored = await ctx.port.vectors.get_vectors([a.id, b.id])  # the project's view
        cosine = float(stored[a.id] @ stored[b.id])
        outcomes.append({**pair, "outcome": outcome, "cosine": round(cosine, 4)})
    return outcomes


def precision_recall(outcomes: list[dict[str, Any]], label: str) -> dict[str, float | int]:
    predicted = [o for o in outcomes if o["outcome"] == label]
    expected = [o for o in outcomes if o["expected"] == label]
    correct = [o for o in predicted if o["expected"] == label]
    return {
        "expected": len(expected),
        "predicted": len(predicted),
        "correct": len(correct),
        "precision": round(len(correct) / len(predicted), 4) if predicted else 1.0,
        "recall": round(len(correct) / len(expected), 4) if expected else 1.0,
    }


def per_category(outcomes: list[dict[str, Any]]) -> dict[str, dict[str, float | int]]:
    out: dict[str, dict[str, float | int]] = {}
    for category in dict.fromkeys(o["category"] for o in outcomes):
        rows = [o for o in outcomes if o["category"] == category]
        right = sum(1 for o in rows if o["outcome"] == o["expected"])
        out[category] = {
            "pairs": len(rows),
            "correct": right,
            "accuracy": round(right / len(rows), 4),
        }
    return out


async def evaluate(args: argparse.Namespace) -> dict[str, Any]:
    text = await asyncio.to_thread(Path(args.data).read_text, "utf-8")
    pairs = [json.loads(line) for line in text.splitlines() if line]
    inner, description = default_embedder()
    embedder = CachedEmbedder(inner)
    outcomes = await judge(pairs, embedder, args.threshold)
    sweep = []
    for threshold in THRESHOLDS:
        swept = outcomes if threshold == args.threshold else await judge(pairs, embedder, threshold)
        sweep.append(
            {
                "threshold": threshold,
                "merge": precision_recall(swept, "merge"),
                "supersede": precision_recall(swept, "supersede"),
            }
        )
    mistakes = [
        {k: o[k] for k in ("id", "expected", "outcome", "cosine")}
        | {"a": o["a"]["content"], "b": o["b"]["content"]}
        for o in outcomes
        if o["outcome"] != o["expected"]
    ]
    return {
        "benchmark": "consolidation_eval",
        "data": str(Path(args.data).name),
        "pairs": len(pairs),
        "embedder": description,
        "similarity_threshold": args.threshold,
        "merge": precision_recall(outcomes, "merge"),
        "supersede": precision_recall(outcomes, "supersede"),
        "per_category": per_category(outcomes),
        "threshold_sweep": sweep,
        "mistakes": mistakes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--threshold", type=float, default=0.92)
    parser.add_argument("--out", default=str(RESULTS / "consolidation_eval.json"))
    args = parser.parse_args()
    result = asyncio.run(evaluate(args))
    print(f"{result['pairs']} labelled pairs, {result['embedder']}, threshold {args.threshold}")
    for rule in ("merge", "supersede"):
        r = result[rule]
        print(
            f"  {rule:9s} precision {r['precision']:.3f} recall {r['recall']:.3f} "
            f"({r['correct']} correct of {r['predicted']} predicted, {r['expected']} expected)"
        )
    for category, c in result["per_category"].items():
        print(f"  {category:14s} {c['correct']:3d}/{c['pairs']:<3d} correct")
    print("  threshold sweep (merge precision / recall):")
    for row in result["threshold_sweep"]:
        m = row["merge"]
        print(f"    {row['threshold']:.2f}: {m['precision']:.3f} / {m['recall']:.3f}")
    for mistake in result["mistakes"]:
        print(
            f"  miss {mistake['id']}: expected {mistake['expected']}, got {mistake['outcome']} "
            f"(cos {mistake['cosine']}): {mistake['a']!r} / {mistake['b']!r}"
        )
    write_json(Path(args.out), result)


if __name__ == "__main__":
    main()
