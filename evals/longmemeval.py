"""LongMemEval: turn-level retrieval recall on its published format.

Usage (from the repository root):
    python -m evals.longmemeval --data $DATA/longmemeval/longmemeval_s.json [--limit 50]
        [--top-k 5,10] [--out evals/results/longmemeval.json]

Data (not in this repository): ``longmemeval_s.json`` (or ``_m`` / ``_oracle``) of LongMemEval
(Wu et al., ICLR 2025), from https://github.com/xiaowu0162/LongMemEval. The file is a list of
questions, each with its own haystack: ``question_id``, ``question_type``, ``question``,
``answer``, ``question_date``, ``haystack_session_ids``, ``haystack_dates`` and
``haystack_sessions`` (a list of sessions, each a list of turns ``{role, content, has_answer?}``).

Method: each question is one dialogue (its haystack, one session per haystack session, turn ids
``<session id>:<index>``); its evidence is the turns marked ``has_answer``. Abstention questions
(``question_id`` ending in ``_abs``) and questions without a marked turn are left out of recall.
Every turn is stored verbatim as a ``message`` record; recall@k is the share of the evidence
turns among the source turns of the top-k results.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evals._common import RESULTS, HashCachingEmbedder, write_json
from evals.agent_recall import Asked, Dialogue, Said, Tally, engine_sources, message_record
from evals.datasets import where_to_get
from sagewai import ContextEngine
from sagewai.embeddings import Embedder

DEFAULT_OUT = RESULTS / "longmemeval.json"


def turn_id(session_id: str, index: int) -> str:
    """The id of one turn of a haystack session.

    >>> turn_id("answer_4be1b6b4_2", 3)
    'answer_4be1b6b4_2:3'
    """
    return f"{session_id}:{index}"


def dialogue_of(item: Mapping[str, Any]) -> Dialogue:
    """One LongMemEval question with its haystack, as a dialogue of sessions and one question."""
    messages: list[Said] = []
    evidence: list[str] = []
    sessions = item.get("haystack_sessions") or []
    ids = item.get("haystack_session_ids") or [f"s{n}" for n in range(len(sessions))]
    for session_id, session in zip(ids, sessions, strict=True):
        for index, turn in enumerate(session):
            said = Said(
                turn_id(str(session_id), index),
                str(session_id),
                index,
                str(turn.get("role", "user")),
                str(turn.get("content", "")),
            )
            messages.append(said)
            if turn.get("has_answer"):
                evidence.append(said.message_id)
    question_id = str(item["question_id"])
    questions: tuple[Asked, ...] = ()
    if evidence and not question_id.endswith("_abs"):
        questions = (
            Asked(
                str(item["question"]),
                str(item["question_type"]),
                tuple(evidence),
                str(item.get("answer", "")),
            ),
        )
    return Dialogue("longmemeval", question_id, tuple(messages), questions)


def _items(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise SystemExit(f"{path}: expected LongMemEval's list of questions")
    return data


def load_dialogues(path: Path, limit: int | None = None) -> list[Dialogue]:
    """The scored questions of a LongMemEval file (the first ``limit`` ones, if given)."""
    out = [dialogue_of(item) for item in _items(path)]
    out = [d for d in out if d.questions]
    return out[:limit] if limit else out


async def raw_recall(dialogues: Sequence[Dialogue], embedder: Embedder, tally: Tally) -> None:
    """Store each haystack verbatim and score its question's retrieval."""
    top = max(tally.ks)
    for dialogue in dialogues:
        project = f"longmemeval-{dialogue.name}"
        async with ContextEngine.in_memory(project_id=project, embedder=embedder) as engine:
            await engine.add_many([message_record(dialogue, m) for m in dialogue.messages])
            for question in dialogue.questions:
                tally.add(dialogue, question, await engine_sources(engine, question, top))


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, required=True, help="longmemeval_s.json")
    parser.add_argument("--limit", type=int, default=None, help="first N scored questions")
    parser.add_argument("--top-k", default="5,10")
    parser.add_argument("--embedding-cache", type=Path, default=None, help=".npz vector cache")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    return parser.parse_args(argv)


async def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the evaluation and write the JSON report; returns the report."""
    args = parse_args(argv)
    if not args.data.is_file():
        raise SystemExit(f"{args.data} not found; {where_to_get(('longmemeval',))}")
    from sagewai.embeddings import MiniLMEmbedder

    ks = tuple(sorted({int(k) for k in args.top_k.split(",") if k.strip()}))
    dialogues = load_dialogues(args.data, args.limit)
    embedder = HashCachingEmbedder(MiniLMEmbedder(), args.embedding_cache)
    tally = Tally(ks)
    started = time.perf_counter()
    await raw_recall(dialogues, embedder, tally)
    embedder.save()
    summary = tally.summary("longmemeval", {})
    report = {
        "benchmark": "longmemeval",
        "data": args.data.name,
        "questions": len(dialogues),
        "systems": {"sagewai_raw": summary},
        "seconds": round(time.perf_counter() - started, 1),
    }
    print("sagewai_raw " + "  ".join(f"R@{k} {summary['overall'][f'R@{k}']}" for k in ks))
    write_json(args.out, report)
    print(f"{len(dialogues)} questions", file=sys.stderr)
    return report


if __name__ == "__main__":
    asyncio.run(main())
