"""BEAM knowledge updates: is the updated statement found, and ranked above the original?

Usage:
    python -m evals.beam_updates --data $DATA/beam/100K [--conversations 1,2]
        [--out evals/results/beam_updates.json]

BEAM's ``knowledge_update`` questions (two per conversation) name their evidence as
``{"original_info": [ids], "updated_info": [ids]}``: the message that stated a value and the later
one that changed it ("the dashboard API's response time ... has improved to 250ms"). Each
conversation is ingested as ``beam_recall.py --modes facts`` does (what ``MemoryBridge`` stores by
default); each question is asked with ``ContextEngine.search`` (top 10), three times in the same
run: with the default ranking (what holds now first, and the later statement of a value first),
without the later-value rule (``later_values=False``), and without either. A question passes
when an updated message is in the top 10 and ranks above every original message found there.
Issue 37's goal: 90% of the questions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evals._common import HashCachingEmbedder
from evals.beam_recall import ingest_facts, load_conversations, result_sources
from sagewai import ContextEngine, SearchConfig
from sagewai.embeddings import MiniLMEmbedder

RESULTS = Path(__file__).resolve().parent / "results"


def update_questions(folder: Path) -> list[dict[str, Any]]:
    """The knowledge-update questions of one conversation with their two kinds of evidence.

    A question that names one message as both its original and its updated evidence is left
    out: no ranking can put a message above itself.
    """
    data = json.loads((folder / "probing_questions.json").read_text(encoding="utf-8"))
    out = []
    for item in data.get("knowledge_update", []):
        ids = item.get("source_chat_ids")
        if isinstance(ids, dict) and ids.get("original_info") and ids.get("updated_info"):
            if set(map(str, ids["original_info"])) & set(map(str, ids["updated_info"])):
                continue  # one message as both (conversation 8): no order to check, left out
            out.append(
                {
                    "question": item["question"],
                    "original": [str(i) for i in ids["original_info"]],
                    "updated": [str(i) for i in ids["updated_info"]],
                }
            )
    return out


def verdict(ranked_sources: Sequence[Sequence[str]], item: dict[str, Any]) -> dict[str, Any]:
    """Where the updated and original messages rank in the top 10, and whether it passes."""

    def rank(ids: Sequence[str]) -> int | None:
        for position, sources in enumerate(ranked_sources[:10]):
            if set(ids) & set(sources):
                return position
        return None

    updated, original = rank(item["updated"]), rank(item["original"])
    passed = updated is not None and (original is None or updated < original)
    return {"updated_rank": updated, "original_rank": original, "passed": passed}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    wanted = [c for c in args.conversations.split(",") if c]
    conversations = load_conversations(args.data, wanted)
    embedder = HashCachingEmbedder(MiniLMEmbedder(), args.embedding_cache)
    settings = {
        "prefer_current": SearchConfig(),
        "no_later_values": SearchConfig(later_values=False),
        "before": SearchConfig(prefer_current=False, later_values=False),
    }
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for conversation in conversations:
            questions = update_questions(args.data / conversation.name)
            if not questions:
                continue
            engine = ContextEngine.local(
                Path(tmp) / conversation.name,
                project_id=f"beam-{conversation.name}",
                embedder=embedder,
            )
            async with engine:
                await ingest_facts(engine, conversation, "rules")
                for item in questions:
                    row: dict[str, Any] = {
                        "conversation": conversation.name,
                        "question": item["question"],
                    }
                    for name, config in settings.items():
                        results = await engine.search(
                            item["question"], top_k=10, search_config=config
                        )
                        row[name] = verdict([result_sources(r) for r in results], item)
                    rows.append(row)
                    print(
                        f"{conversation.name:>3} {row['before']['passed']!s:5} -> "
                        f"{row['prefer_current']['passed']!s:5} {item['question'][:70]}",
                        flush=True,
                    )
            # A long run keeps what it has: the vectors and the rows so far, per conversation.
            embedder.save()
            report(rows, settings, args.out, quiet=True)
    return report(rows, settings, args.out)


def report(
    rows: Sequence[dict[str, Any]], settings: Mapping[str, Any], out: Path, *, quiet: bool = False
) -> dict[str, Any]:
    """The pass rates of ``rows`` under each setting, written to ``out`` (and printed)."""
    summary = {
        name: round(sum(r[name]["passed"] for r in rows) / max(len(rows), 1), 3)
        for name in settings
    }
    found = {
        name: round(sum(r[name]["updated_rank"] is not None for r in rows) / max(len(rows), 1), 3)
        for name in settings
    }
    made = {"questions": len(rows), "passed": summary, "updated_in_top10": found, "rows": rows}
    if not quiet:
        print(json.dumps({k: v for k, v in made.items() if k != "rows"}, indent=2))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(made, indent=2), encoding="utf-8")
    return made


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="BEAM folder (e.g. beam/100K)")
    parser.add_argument("--conversations", default="", help="comma list of folder names (all)")
    parser.add_argument("--embedding-cache", type=Path, default=None, help=".npz vector cache")
    parser.add_argument("--out", type=Path, default=RESULTS / "beam_updates.json")
    asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
