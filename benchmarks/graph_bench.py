"""Graph building over the LoCoMo development conversations, on the embedded SQLite graph store.

For each conversation it runs :class:`~sagewai.intelligence._graph_builder.ConversationGraphBuilder`
with its defaults (rule-based entities, heuristic relations) over every turn, in order, with the
speaker, the dialogue id as message id, the session as session id and the session's date as the
timestamp; then it reports entities, relations, merges, supersessions, wall time and turns per
second, prints them and writes JSON.

Usage:
    python -m benchmarks.graph_bench [--data PATH] [--out benchmarks/results/graph_bench.json]
        [--store FOLDER] [--embedder none|fake]

The data is not part of the repository (CC BY-NC 4.0): ``--data`` defaults to
``$DATA/locomo/locomo_dev.json`` next to the repository.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import re
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks._common import locomo_file
from sagewai.graph import graph_file
from sagewai.intelligence import ConversationGraphBuilder, GraphUpdateResult
from sagewai.stores import SqliteGraphStore

ROOT = Path(__file__).resolve().parent
DEFAULT_OUT = ROOT / "results" / "graph_bench.json"
_SESSION = re.compile(r"^session_(\d+)$")


def session_time(text: str) -> datetime | None:
    """LoCoMo's "1:56 pm on 8 May, 2023" as an aware datetime (``None`` if unreadable)."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        return None


def turns_of(sample: dict[str, Any]) -> list[dict[str, Any]]:
    """Every turn of a sample, in session order, as builder messages."""
    conversation = sample["conversation"]
    sessions = sorted((int(m.group(1)), key) for key in conversation if (m := _SESSION.match(key)))
    out = []
    for number, key in sessions:
        when = session_time(str(conversation.get(f"{key}_date_time", "")))
        for turn in conversation[key]:
            out.append(
                {
                    "role": "user",
                    "speaker": turn["speaker"],
                    "content": turn["text"],
                    "id": turn["dia_id"],
                    "session_id": f"{sample['sample_id']}:session_{number}",
                    "timestamp": when,
                }
            )
    return out


async def run(
    samples: list[dict[str, Any]], store_folder: Path, embedder_name: str
) -> dict[str, Any]:
    embedder = None
    if embedder_name == "fake":
        from sagewai.testing import FakeEmbedder

        embedder = FakeEmbedder()
    rows = []
    total = GraphUpdateResult()
    started = time.perf_counter()
    async with SqliteGraphStore(graph_file(store_folder)) as store:
        for sample in samples:
            project = f"locomo-{sample['sample_id']}"
            await store.delete_project(project)
            graph = store.for_project(project)
            builder = ConversationGraphBuilder(graph_store=graph, embedder=embedder)
            turns = turns_of(sample)
            t0 = time.perf_counter()
            result = await builder.process_conversation(turns)
            seconds = time.perf_counter() - t0
            counts = await graph.counts()
            relations = await graph.relations()
            labels = Counter(e.label for e in await graph.entities())
            rows.append(
                {
                    "sample_id": sample["sample_id"],
                    "turns": len(turns),
                    **result.model_dump(),
                    "entities": counts.entities,
                    "relations": counts.relations,
                    "active_relations": counts.active_relations,
                    "top_predicates": Counter(r.predicate for r in relations).most_common(8),
                    "entity_labels": dict(labels.most_common()),
                    "seconds": round(seconds, 3),
                    "turns_per_second": round(len(turns) / seconds, 1),
                }
            )
            total += result
    wall = time.perf_counter() - started
    turns = sum(r["turns"] for r in rows)
    return {
        "benchmark": "graph_bench",
        "store": "SqliteGraphStore",
        "extractors": "RuleBasedEntityExtractor + HeuristicRelationExtractor",
        "embedder": embedder_name,
        "conversations": rows,
        "total": {
            "turns": turns,
            **total.model_dump(),
            "entities": sum(r["entities"] for r in rows),
            "relations": sum(r["relations"] for r in rows),
            "wall_seconds": round(wall, 3),
            "turns_per_second": round(turns / wall, 1),
        },
        "machine": {"python": sys.version.split()[0], "platform": platform.platform()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, default=locomo_file(), help="LoCoMo JSON ($SAGEWAI_EVAL_DATA)"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--store", type=Path, default=None, help="keep the graph in this folder")
    parser.add_argument("--embedder", choices=("none", "fake"), default="none")
    args = parser.parse_args(argv)
    if args.data is None or not args.data.is_file():
        print(f"LoCoMo data not found at {args.data}; pass --data", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.store or Path(scratch)
        samples = json.loads(args.data.read_text(encoding="utf-8"))
        report = asyncio.run(run(samples, folder, args.embedder))
        report["data"] = str(args.data)
    for row in report["conversations"]:
        print(
            f"{row['sample_id']}: {row['turns']} turns, {row['entities']} entities, "
            f"{row['relations']} relations ({row['active_relations']} active), "
            f"merged {row['entities_merged']}, superseded {row['relations_superseded']}, "
            f"reinforced {row['relations_reinforced']}, {row['seconds']} s, "
            f"{row['turns_per_second']} turns/s"
        )
    total = report["total"]
    print(
        f"total: {total['turns']} turns, {total['entities']} entities, {total['relations']} "
        f"relations, merged {total['entities_merged']}, superseded "
        f"{total['relations_superseded']}, {total['wall_seconds']} s, "
        f"{total['turns_per_second']} turns/s"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
