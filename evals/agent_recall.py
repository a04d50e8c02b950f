"""Agent-level recall: what an agent fed by the bridge finds, and what its memory block shows.

Usage:
    python -m evals.agent_recall --locomo $DATA/locomo/locomo_dev.json
        --beam $DATA/beam/100K [--beam-conversations 1,2,...,10]
        [--locomo-conversations conv-26] [--top-k 5,10,20] [--embedding-cache DIR]
        [--out evals/results/agent_recall.json]

Method (``docs/benchmarks-agent.md`` has the figures):

* Each conversation (LoCoMo: one per sample; BEAM: one per folder) is played through a
  ``MemoryBridge`` exactly as ``UniversalAgent`` feeds it: the bridge the agent builds by
  default (offline: the rule extractor), given every message with its role, text and id through
  ``remember`` as the agent's learner does, one session per LoCoMo session or BEAM batch, for
  one user. The bridge is flushed after each session (as ending a
  session does).
* Engine recall@k, side by side in one run, per question (share of the evidence message ids among
  the source message ids of the top-k results, a result's related records included):
  ``raw`` (every message stored verbatim as a ``message`` record, nothing else), ``facts`` (the
  bridge's engine searched for facts only), ``bridge`` (the bridge's engine as it is, the default
  memory), ``both`` (the bridge's engine plus the raw message records, when the bridge does not
  store messages itself; otherwise the same as ``bridge``), and BM25 / MiniLM dense / RRF over the
  raw messages.
* The memory block: per question, a ``UniversalAgent`` with ``AgentSettings()`` (learning off)
  answers the question through a scripted model, in a session of the same user; its reply's
  ``memory`` is the block its prompt held (``recall_top_k``, ``memory_token_budget``, the
  agent's default token estimate). Scored: the evidence recall of the message ids of the
  records the block shows, and its size (estimated tokens, and MiniLM WordPiece tokens).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evals import beam_recall, locomo_recall
from evals._common import RESULTS, HashCachingEmbedder, write_json
from evals.beam_recall import result_sources
from evals.locomo_recall import baseline_rankings, recall_at
from sagewai import ContextEngine, FactKind, Provenance, UniversalAgent
from sagewai.agent import AgentSettings, estimate_tokens
from sagewai.context import MemoryBridge
from sagewai.embeddings import Embedder
from sagewai.extraction import RuleBasedFactExtractor
from sagewai.testing import ScriptedLLM

DEFAULT_OUT = RESULTS / "agent_recall.json"
USER = "user-1"
QUESTION_SESSION = "questions"


@dataclass(frozen=True, slots=True)
class Said:
    """One message as the agent hands it to the bridge."""

    message_id: str
    session_id: str
    index: int
    role: str
    content: str


@dataclass(frozen=True, slots=True)
class Asked:
    """A question with its evidence message ids (and its reference answer, for a judge)."""

    text: str
    category: str
    evidence: tuple[str, ...]
    answer: str = ""


@dataclass(frozen=True, slots=True)
class Dialogue:
    """A conversation of either dataset in one shape: sessions of messages, questions."""

    dataset: str
    name: str
    messages: tuple[Said, ...]
    questions: tuple[Asked, ...]

    def sessions(self) -> list[list[Said]]:
        grouped: dict[str, list[Said]] = {}
        for message in self.messages:
            grouped.setdefault(message.session_id, []).append(message)
        return list(grouped.values())


def locomo_dialogues(path: Path, wanted: Iterable[str]) -> list[Dialogue]:
    """LoCoMo samples; both speakers are users, so a turn is ``"Speaker: text"``."""
    names = set(wanted)
    out = []
    for conv in locomo_recall.load_conversations(path):
        if names and conv.sample_id not in names:
            continue
        messages = tuple(
            Said(t.dia_id, f"{conv.sample_id}-s{t.session}", t.index, "user", t.with_caption)
            for t in conv.turns
        )
        questions = tuple(
            Asked(q.text, locomo_recall.CATEGORIES[q.category], q.evidence, q.answer)
            for q in conv.questions
        )
        out.append(Dialogue("locomo", conv.sample_id, messages, questions))
    return out


def beam_dialogues(path: Path, wanted: Iterable[str]) -> list[Dialogue]:
    """BEAM conversations; a batch is a session."""
    out = []
    for conv in beam_recall.load_conversations(path, wanted):
        messages = tuple(
            Said(m.id, f"beam-{conv.name}-b{m.batch}", m.index, m.role, m.content)
            for m in conv.messages
        )
        questions = tuple(Asked(q.text, q.category, q.evidence, q.answer) for q in conv.questions)
        out.append(Dialogue("beam", conv.name, messages, questions))
    return out


# ---------------------------------------------------------------------------------- scoring


@dataclass(slots=True)
class Tally:
    """Recall per question, per (dataset, conversation, k); and block sizes."""

    ks: tuple[int, ...]
    recalls: dict[tuple[str, str, int], list[float]] = field(default_factory=dict)
    tokens: dict[str, list[int]] = field(default_factory=dict)
    """``estimate`` / ``wordpieces`` -> block size per question (memory blocks only)."""
    sizes: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)
    """(dataset, conversation, unit) -> block size per question, for the per-split means."""

    def size(self, dialogue: Dialogue, unit: str, tokens: int) -> None:
        self.tokens.setdefault(unit, []).append(tokens)
        self.sizes.setdefault((dialogue.dataset, dialogue.name, unit), []).append(tokens)

    def mean_size(self, dataset: str, names: Iterable[str], unit: str) -> float | None:
        chosen = set(names)
        values = [
            v
            for (ds, n, u), vs in self.sizes.items()
            if ds == dataset and n in chosen and u == unit
            for v in vs
        ]
        return round(statistics.fmean(values), 1) if values else None

    def add(self, dialogue: Dialogue, question: Asked, sources: Sequence[Sequence[str]]) -> None:
        for k in self.ks:
            key = (dialogue.dataset, dialogue.name, k)
            self.recalls.setdefault(key, []).append(recall_at(sources, question.evidence, k))

    def mean(self, k: int, dataset: str, names: Iterable[str] | None = None) -> float | None:
        chosen = None if names is None else set(names)
        values = [
            v
            for (ds, name, kk), vs in self.recalls.items()
            if ds == dataset and kk == k and (chosen is None or name in chosen)
            for v in vs
        ]
        return round(statistics.fmean(values), 4) if values else None

    def summary(self, dataset: str, splits: Mapping[str, Sequence[str]]) -> dict[str, Any]:
        names = sorted({n for ds, n, _ in self.recalls if ds == dataset})
        out: dict[str, Any] = {
            "overall": {f"R@{k}": self.mean(k, dataset) for k in self.ks},
            "per_split": {
                split: {f"R@{k}": self.mean(k, dataset, members) for k in self.ks}
                for split, members in splits.items()
                if set(members) & set(names)
            },
            "per_conversation": {
                name: {f"R@{k}": self.mean(k, dataset, [name]) for k in self.ks} for name in names
            },
        }
        for unit, values in self.tokens.items():
            if values:
                out[f"tokens_{unit}"] = round(statistics.fmean(values), 1)
                for split, members in splits.items():
                    mean = self.mean_size(dataset, members, unit)
                    if mean is not None:
                        out["per_split"][split][f"tokens_{unit}"] = mean
        return out


# ---------------------------------------------------------------------------------- playing


def message_record(dialogue: Dialogue, message: Said) -> dict[str, Any]:
    """The verbatim record of one message, with the provenance the bridge gives its facts."""
    return {
        "content": message.content,
        "kind": FactKind.MESSAGE,
        "user_id": USER,
        "source": Provenance(
            session_id=message.session_id,
            message_id=message.message_id,
            turn_index=message.index,
            role=message.role,
            speaker=message.role,
        ),
    }


async def play(engine: ContextEngine, dialogue: Dialogue) -> MemoryBridge:
    """Feed every session through the bridge an agent builds by default (rules, no model) as the
    agent's learner does: each message with its role, text and id; returns the bridge."""
    bridge = MemoryBridge(
        context_engine=engine, model="gpt-4o-mini", fact_extractor=RuleBasedFactExtractor()
    )
    for session in dialogue.sessions():
        for message in session:
            await bridge.remember(
                {"role": message.role, "content": message.content, "id": message.message_id},
                session_id=message.session_id,
                user_id=USER,
            )
        await bridge.flush(session[0].session_id)
    await bridge.flush()
    return bridge


async def engine_sources(
    engine: ContextEngine, question: Asked, top: int, kinds: Sequence[str] | None = None
) -> list[list[str]]:
    results = await engine.search(
        question.text, top, user_id=USER, session_id=QUESTION_SESSION, kinds=kinds
    )
    return [result_sources(r) for r in results]


async def block_scores(
    engine: ContextEngine, question: Asked, count_wordpieces: Callable[[str], int]
) -> tuple[list[list[str]], int, int]:
    """The agent's memory block for the question: shown records' sources, token sizes.

    A ``UniversalAgent`` with default settings (learning off, so asking leaves the memory as it
    was) answers through a scripted model; its reply says which records the block showed.
    """
    agent = UniversalAgent(
        name="eval",
        context=engine,
        settings=AgentSettings(learn=False, memory_tools=False),
        llm=ScriptedLLM(["noted"]),
    )
    reply = await agent.respond(question.text, session_id=QUESTION_SESSION, user_id=USER)
    await agent.aclose()
    block = reply.memory
    shown = await engine.stores.metadata.get(engine.project_id, list(block.fact_ids))
    by_id = {fact.id: fact for fact in shown}
    sources = [
        [s.message_id for s in by_id[i].sources if s.message_id is not None]
        for i in block.fact_ids
        if i in by_id
    ]
    return (
        [[m for ids in sources for m in ids]],
        estimate_tokens(block.text),
        count_wordpieces(block.text),
    )


async def run_dialogue(
    dialogue: Dialogue,
    embedder: Embedder,
    tallies: Mapping[str, Tally],
    count_wordpieces: Callable[[str], int],
) -> dict[str, Any]:
    """Every system on one conversation; returns what was stored."""
    top = max(next(iter(tallies.values())).ks)
    texts = [m.content for m in dialogue.messages]
    ranked = await baseline_rankings(
        texts, [q.text for q in dialogue.questions], embedder, term_limit=1_000_000
    )
    for question, (rankings, _) in zip(dialogue.questions, ranked, strict=True):
        for name, ranking in rankings.items():
            tallies[name].add(
                dialogue, question, [[dialogue.messages[i].message_id] for i in ranking[:top]]
            )
    project = f"agent-{dialogue.dataset}-{dialogue.name}"
    async with ContextEngine.in_memory(project_id=f"{project}-raw", embedder=embedder) as raw:
        await raw.add_many([message_record(dialogue, m) for m in dialogue.messages])
        for question in dialogue.questions:
            tallies["sagewai_raw"].add(dialogue, question, await engine_sources(raw, question, top))
    stored: dict[str, Any] = {}
    async with ContextEngine.in_memory(project_id=project, embedder=embedder) as engine:
        started = time.perf_counter()
        bridge = await play(engine, dialogue)
        stored["bridge_seconds"] = round(time.perf_counter() - started, 1)
        messages_stored = await engine.stores.metadata.count(
            _query(engine, kinds=(FactKind.MESSAGE,))
        )
        stored["bridge_records"] = await engine.count()
        stored["bridge_message_records"] = messages_stored
        for question in dialogue.questions:
            tallies["sagewai_facts"].add(
                dialogue, question, await engine_sources(engine, question, top, kinds=["fact"])
            )
            tallies["sagewai_bridge"].add(
                dialogue, question, await engine_sources(engine, question, top)
            )
            sources, estimate, pieces = await block_scores(engine, question, count_wordpieces)
            tallies["block_bridge"].add(dialogue, question, sources)
            tallies["block_bridge"].size(dialogue, "estimate", estimate)
            tallies["block_bridge"].size(dialogue, "wordpieces", pieces)
        if messages_stored == 0:
            # Simulate the bridge that also keeps every message verbatim (issue 13).
            await engine.add_many([message_record(dialogue, m) for m in dialogue.messages])
        stored["both_records"] = await engine.count()
        for question in dialogue.questions:
            tallies["sagewai_both"].add(
                dialogue, question, await engine_sources(engine, question, top)
            )
            sources, estimate, pieces = await block_scores(engine, question, count_wordpieces)
            tallies["block_both"].add(dialogue, question, sources)
            tallies["block_both"].size(dialogue, "estimate", estimate)
            tallies["block_both"].size(dialogue, "wordpieces", pieces)
        await bridge.aclose()
    return stored


def _query(engine: ContextEngine, kinds: tuple[FactKind, ...]) -> Any:
    from sagewai.core import FactQuery

    return FactQuery(project_id=engine.project_id, kinds=kinds)


SYSTEMS = (
    "baseline_bm25",
    "baseline_dense",
    "baseline_rrf",
    "sagewai_raw",
    "sagewai_facts",
    "sagewai_bridge",
    "sagewai_both",
    "block_bridge",
    "block_both",
)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--locomo", type=Path, default=None, help="LoCoMo JSON")
    parser.add_argument("--beam", type=Path, default=None, help="BEAM folder (beam/100K)")
    parser.add_argument("--locomo-conversations", default="", help="comma list (all)")
    parser.add_argument(
        "--beam-conversations", default=",".join(str(n) for n in range(1, 11)), help="comma list"
    )
    parser.add_argument("--top-k", default="5,10,20")
    parser.add_argument("--embedding-cache", type=Path, default=None, help=".npz vector cache")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    return parser.parse_args(argv)


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


async def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the benchmark and write the JSON report; returns the report."""
    args = parse_args(argv)
    if args.locomo is None and args.beam is None:
        raise SystemExit("give --locomo and/or --beam")
    ks = tuple(sorted({int(k) for k in args.top_k.split(",") if k.strip()}))
    dialogues: list[Dialogue] = []
    if args.locomo is not None:
        dialogues += locomo_dialogues(args.locomo, _names(args.locomo_conversations))
    if args.beam is not None:
        dialogues += beam_dialogues(args.beam, _names(args.beam_conversations))
    from sagewai.embeddings import MiniLMEmbedder

    embedder = HashCachingEmbedder(MiniLMEmbedder(), args.embedding_cache)
    count_wordpieces = locomo_recall.wordpiece_counter()
    tallies = {name: Tally(ks) for name in SYSTEMS}
    stored: dict[str, Any] = {}
    started = time.perf_counter()
    for dialogue in dialogues:
        step = time.perf_counter()
        stored[f"{dialogue.dataset}/{dialogue.name}"] = await run_dialogue(
            dialogue, embedder, tallies, count_wordpieces
        )
        embedder.save()
        print(
            f"{dialogue.dataset} {dialogue.name}: {len(dialogue.messages)} messages, "
            f"{len(dialogue.questions)} questions, {time.perf_counter() - step:.1f} s",
            file=sys.stderr,
        )
    datasets = sorted({d.dataset for d in dialogues})
    splits = {
        "locomo": {"tune": ["conv-26"], "held_out": ["conv-30", "conv-41"]},
        "beam": {
            "dev": sorted(beam_recall.TUNING_SPLIT),
            "held_out": [str(n) for n in range(11, 21)],
        },
    }
    report: dict[str, Any] = {
        "benchmark": "agent_recall",
        "conversations": [f"{d.dataset}/{d.name}" for d in dialogues],
        "questions": {
            ds: sum(len(d.questions) for d in dialogues if d.dataset == ds) for ds in datasets
        },
        "systems": {
            ds: {name: tallies[name].summary(ds, splits[ds]) for name in SYSTEMS} for ds in datasets
        },
        "stored": stored,
        "texts_embedded": embedder.embedded,
        "seconds": round(time.perf_counter() - started, 1),
    }
    for ds in datasets:
        print(f"\n{ds}")
        print(f"{'system':<18}" + "".join(f"{'R@' + str(k):>8}" for k in ks) + f"{'tokens':>9}")
        for name, summary in report["systems"][ds].items():
            row = f"{name:<18}" + "".join(f"{summary['overall'][f'R@{k}'] or 0:>8.3f}" for k in ks)
            if "tokens_estimate" in summary:
                row += f"{summary['tokens_estimate']:>9.1f}"
            print(row)
    write_json(args.out, report)
    return report


if __name__ == "__main__":
    asyncio.run(main())
