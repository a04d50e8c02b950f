"""The planted scenario of issue 15: 400 distinct facts and 100 restatements, no triples.

400 distinct plain facts "<person> <verb> <thing>." (verbs uses / likes / studies / recommends)
and 100 restatements of some of them ("Ben really likes ramen.", "Ana is using Rust.", "Eli
keeps recommending chess."), written with ``ctx.add(content)`` into ``ContextEngine.local(...)``
with the default MiniLM embedder, then ``MemoryConsolidator(ctx, similarity_threshold=0.92)``:
a dry run, then the real run. It reports how many planted restatements merged, how many merges
joined two different facts, the rule of each merge, and whether the dry run reported exactly
what the real run did (counts and the set of actions); it writes JSON (``--out``).

Run from the repository root::

    python -m evals.consolidation_planted
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from evals._common import RESULTS, write_json
from sagewai import ChangeAction, ContextEngine, FactStatus
from sagewai.intelligence import MemoryConsolidator

PEOPLE = (  # noqa: SIM905
    "Ben Ana Eli Chen Maya Omar Lena Ravi Sofia Jonas Priya Tom Nadia Kenji Olga Carlos Mia "
    "Ahmed Lucia Felix"
).split()
THINGS = (  # noqa: SIM905
    "ramen Rust chess yoga sushi Python tennis jazz Kafka poetry Docker tea physics Linux "
    "piano hiking Spanish Redis curry opera"
).split()
VERBS = {"uses": "using", "likes": "liking", "studies": "studying", "recommends": "recommending"}


def planted(seed: int = 15) -> list[tuple[str, tuple[str, str, str]]]:
    """500 (content, statement) pairs: 400 distinct statements, then 100 restatements."""
    rng = random.Random(seed)
    every = [(p, v, t) for p in PEOPLE for v in VERBS for t in THINGS]
    distinct = rng.sample(every, 400)
    facts = [(f"{p} {v} {t}.", (p, v, t)) for p, v, t in distinct]
    for p, v, t in rng.sample(distinct, 100):
        form = rng.randrange(4)
        if form == 0:
            text = f"{p} {rng.choice(['really', 'truly', 'definitely'])} {v} {t}."
        elif form == 1:
            text = f"{p} is {VERBS[v]} {t}."
        elif form == 2:
            text = f"{p} keeps {VERBS[v]} {t}."
        else:
            text = f"{p} currently {v} {t}."
        facts.append((text, (p, v, t)))
    return facts


def action_set(report: Any) -> set[tuple[str, str, tuple[str, ...], str | None]]:
    return {(a.kind.value, a.rule, tuple(sorted(a.fact_ids)), a.target_id) for a in report.actions}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    facts = planted(args.seed)
    with tempfile.TemporaryDirectory(prefix="sagewai-planted-") as folder:
        async with ContextEngine.local(Path(folder) / "memory", project_id="planted") as ctx:
            started = time.perf_counter()
            stored = await ctx.add_many([content for content, _ in facts])
            load_s = time.perf_counter() - started
            statement = {fact.id: key for fact, (_, key) in zip(stored, facts, strict=True)}
            consolidator = MemoryConsolidator(ctx, similarity_threshold=args.threshold)
            dry = await consolidator.consolidate(dry_run=True)
            started = time.perf_counter()
            real = await consolidator.consolidate()
            run_s = time.perf_counter() - started
            merges: list[dict[str, Any]] = []
            rules: Counter[str] = Counter()
            for fact in stored:
                current = await ctx.get(fact.id)
                if current.status is not FactStatus.MERGED or current.merged_into is None:
                    continue
                history = await ctx.history(fact.id)
                change = next(c for c in history if c.action is ChangeAction.MERGED)
                rules[change.rule] += 1
                target = await ctx.get(current.merged_into)
                merges.append(
                    {
                        "absorbed": current.content,
                        "into": target.content,
                        "same_fact": statement[fact.id] == statement[target.id],
                        "rule": change.rule,
                    }
                )
    planted_merged = sum(1 for m in merges if m["same_fact"])
    wrong = [m for m in merges if not m["same_fact"]]
    return {
        "benchmark": "consolidation_planted",
        "facts": len(facts),
        "planted_restatements": len(facts) - 400,
        "similarity_threshold": args.threshold,
        "merges": len(merges),
        "planted_merged": planted_merged,
        "wrong_merges": len(wrong),
        "wrong": wrong,
        "rules": dict(rules),
        "precision": round(planted_merged / len(merges), 4) if merges else 1.0,
        "recall": round(planted_merged / 100, 4),
        "dry_run_equals_real_run": (
            dry.duplicates_removed == real.duplicates_removed
            and dry.contradictions_resolved == real.contradictions_resolved
            and dry.facts_decayed == real.facts_decayed
            and action_set(dry) == action_set(real)
        ),
        "load_s": round(load_s, 2),
        "run_s": round(run_s, 2),
        "missed": [
            content for content, _ in facts[400:] if content not in {m["absorbed"] for m in merges}
        ][:20],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--threshold", type=float, default=0.92)
    parser.add_argument("--out", default=str(RESULTS / "consolidation_planted.json"))
    args = parser.parse_args()
    result = asyncio.run(run(args))
    print(
        f"{result['facts']} facts ({result['planted_restatements']} planted restatements), "
        f"threshold {args.threshold}: {result['merges']} merges, {result['planted_merged']} "
        f"planted, {result['wrong_merges']} of two different facts "
        f"(precision {result['precision']:.3f}, recall {result['recall']:.3f}); rules "
        f"{result['rules']}; dry run equals the real run: {result['dry_run_equals_real_run']}"
    )
    for wrong in result["wrong"]:
        print(f"  wrong: {wrong['absorbed']!r} into {wrong['into']!r} ({wrong['rule']})")
    for missed in result["missed"]:
        print(f"  missed: {missed!r}")
    write_json(Path(args.out), result)


if __name__ == "__main__":
    main()
