"""BEAM retrieval recall: how often sagewai's search finds the messages that answer a question.

Usage:
    python -m evals.beam_recall --data $DATA/beam/100K
        [--modes raw,facts,both] [--extractor rules|hybrid] [--conversations 1,2,3]
        [--top-k 5,10,20] [--config '{"dense_weight": 0.5}'] [--variants '{"name": {...}}']
        [--embedding-cache PATH] [--no-baselines] [--raw-reply-marks]
        [--out evals/results/beam_recall.json]

Method (``docs/benchmarks-beam.md`` has the figures):

* BEAM (long user-assistant chats, ``$DATA/beam/README.md``): each conversation folder
  ``<n>/`` holds ``chat.json`` and ``probing_questions.json``. Each conversation is ingested into a
  fresh project. ``raw``: every message is one record of kind ``message``, its text verbatim, with
  ``Provenance(session_id=<conversation>-b<batch>, message_id=<id>, turn_index, role, speaker,
  timestamp)``. ``facts``: the facts ``MemoryBridge`` draws from each batch with the chosen
  extractor. ``both``: the two together (a message and its facts share the source ids, so search
  returns them as one result).
* Every question with evidence (``source_chat_ids``: a list, or a dict of lists; abstention
  questions have none and are left out) is asked with ``ContextEngine.search``. Recall@k of a
  question is the share of its evidence message ids among the source message ids of the top-k
  results (a result's own record and its related records); the figures are means over questions.
* Splits: conversations 1-10 are the tuning split (``dev``), 11-20 the held-out split
  (``held_out``); figures are given per split and per conversation.
* Baselines over the raw messages in the same run: BM25 Okapi (as ``rank-bm25``), MiniLM dense
  cosine (with the default embedder, which reads a long message in windows) and their
  reciprocal-rank fusion (k=60).

Embeddings are cached by the text's sha256 (``--embedding-cache``): BEAM holds about 12 million
characters, which take minutes to embed on a loaded machine.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evals._common import RESULTS, HashCachingEmbedder, write_json
from evals.locomo_recall import (
    make_extractor,
    recall_at,
    result_text,
    score_baselines,
    synthesis_figures,
    wordpiece_counter,
)
from sagewai import ContextEngine, FactKind, Provenance, SearchConfig, SearchResult
from sagewai.embeddings import Embedder

DEFAULT_OUT = RESULTS / "beam_recall.json"
REPLY_KEY = "reply"
"""The metadata key the bridge sets on an assistant's reply (replies rank below statements)."""
ANSWER_FIELDS = ("answer", "ideal_answer", "ideal_response", "ideal_summary")
"""Where a BEAM question keeps its reference answer (the field differs by category)."""
TUNING_SPLIT = frozenset(str(n) for n in range(1, 11))
"""Conversations the ranking may be tuned on; the others are the held-out split."""
_RAW_NAMESPACE = uuid.UUID("6a1d3c52-8f0e-4b7a-9c2d-5e4f3a2b1c0d")
_ANCHOR_FORMATS = ("%B-%d-%Y", "%b-%d-%Y", "%B %d, %Y")


# ---------------------------------------------------------------------------------- the data


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a BEAM conversation."""

    id: str
    batch: int
    index: int
    """Position of the message inside its batch (0-based)."""
    role: str
    content: str
    date: datetime | None


@dataclass(frozen=True, slots=True)
class Question:
    """A question with its evidence message ids (and its reference answer, for a judge)."""

    text: str
    category: str
    evidence: tuple[str, ...]
    answer: str = ""


@dataclass(frozen=True, slots=True)
class Conversation:
    """One BEAM conversation: its messages and its questions with evidence."""

    name: str
    messages: tuple[Message, ...]
    questions: tuple[Question, ...]
    skipped_questions: int
    """Questions without evidence (abstention) or whose evidence names no message."""

    @property
    def split(self) -> str:
        return "dev" if self.name in TUNING_SPLIT else "held_out"


def parse_anchor(text: object) -> datetime | None:
    """``"March-15-2024"`` as a UTC datetime; ``None`` when absent or unreadable."""
    if not isinstance(text, str):
        return None
    for pattern in _ANCHOR_FORMATS:
        try:
            return datetime.strptime(text.strip(), pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def evidence_ids(value: object) -> list[str]:
    """Message ids of ``source_chat_ids``: a list, a dict of lists, or their text form."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return []
    if isinstance(value, Mapping):
        value = [item for part in value.values() for item in _as_list(part)]
    out: list[str] = []
    for item in _as_list(value):
        if (
            isinstance(item, int | str)
            and str(item).strip().isdigit()
            and str(int(item)) not in out
        ):
            out.append(str(int(item)))
    return out


def _as_list(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else [value]


def load_conversation(folder: Path) -> Conversation:
    """Read one BEAM conversation folder (``chat.json``, ``probing_questions.json``)."""
    batches = json.loads((folder / "chat.json").read_text(encoding="utf-8"))
    messages: list[Message] = []
    date: datetime | None = None
    for batch in batches:
        number = int(batch.get("batch_number", len(messages)))
        date = parse_anchor(batch.get("time_anchor")) or date
        index = 0
        for turn in batch.get("turns", []):
            for message in turn:
                date = parse_anchor(message.get("time_anchor")) or date
                content = str(message.get("content") or "")
                if content.strip():
                    messages.append(
                        Message(
                            str(message["id"]), number, index, str(message["role"]), content, date
                        )
                    )
                index += 1
    known = {m.id for m in messages}
    questions: list[Question] = []
    skipped = 0
    probing = json.loads((folder / "probing_questions.json").read_text(encoding="utf-8"))
    for category, items in probing.items():
        for item in items:
            evidence = [i for i in evidence_ids(item.get("source_chat_ids")) if i in known]
            if not evidence:
                skipped += 1
                continue
            answer = next(
                (str(item[key]) for key in ANSWER_FIELDS if item.get(key) is not None), ""
            )
            questions.append(Question(str(item["question"]), category, tuple(evidence), answer))
    return Conversation(folder.name, tuple(messages), tuple(questions), skipped)


def load_conversations(root: Path, wanted: Iterable[str] = ()) -> list[Conversation]:
    """Every conversation folder under ``root`` (numeric order), or only the ``wanted`` ones."""
    names = set(wanted)
    folders = sorted(
        (p for p in root.iterdir() if (p / "chat.json").is_file()),
        key=lambda p: (not p.name.isdigit(), int(p.name) if p.name.isdigit() else 0, p.name),
    )
    return [load_conversation(p) for p in folders if not names or p.name in names]


# ---------------------------------------------------------------------------------- scoring


@dataclass(slots=True)
class Tally:
    """Recall and token figures of one system, accumulated question by question."""

    ks: tuple[int, ...]
    recalls: dict[tuple[str, str, int], list[float]] = field(default_factory=dict)
    """``(conversation, category, k) -> recall per question``."""
    wordpieces: dict[int, list[int]] = field(default_factory=dict)
    seconds: float = 0.0

    def add(
        self,
        conversation: str,
        question: Question,
        retrieved: Sequence[tuple[Sequence[str], str]],
        count_wordpieces: Callable[[str], int],
    ) -> None:
        """Score one question given the retrieved ``(source ids, content)`` items, best first."""
        sources = [ids for ids, _ in retrieved]
        for k in self.ks:
            value = recall_at(sources, question.evidence, k)
            self.recalls.setdefault((conversation, question.category, k), []).append(value)
            self.wordpieces.setdefault(k, []).append(
                sum(count_wordpieces(text[:20_000]) for _, text in retrieved[:k])
            )

    def mean(
        self, k: int, *, conversations: Iterable[str] | None = None, category: str | None = None
    ) -> float | None:
        """Mean recall@k over the questions of some conversations and/or one category."""
        chosen = None if conversations is None else set(conversations)
        values = [
            value
            for (conv, cat, kk), recalls in self.recalls.items()
            if kk == k
            and (chosen is None or conv in chosen)
            and (category is None or cat == category)
            for value in recalls
        ]
        return round(statistics.fmean(values), 4) if values else None

    def summary(self, splits: Mapping[str, Sequence[str]]) -> dict[str, Any]:
        """Recall@k overall, per split, per category and per conversation."""
        conversations = sorted({c for c, _, _ in self.recalls}, key=_numeric)
        categories = sorted({cat for _, cat, _ in self.recalls})
        return {
            "overall": {f"R@{k}": self.mean(k) for k in self.ks},
            "per_split": {
                split: {f"R@{k}": self.mean(k, conversations=names) for k in self.ks}
                for split, names in splits.items()
                if names
            },
            "per_category": {
                cat: {f"R@{k}": self.mean(k, category=cat) for k in self.ks} for cat in categories
            },
            "per_conversation": {
                conv: {f"R@{k}": self.mean(k, conversations=[conv]) for k in self.ks}
                for conv in conversations
            },
            "wordpieces_per_query": {
                f"@{k}": round(statistics.fmean(v), 1) for k, v in self.wordpieces.items()
            },
            "seconds": round(self.seconds, 2),
        }


def _numeric(name: str) -> tuple[int, str]:
    return (int(name), name) if name.isdigit() else (1 << 30, name)


def result_sources(result: SearchResult) -> list[str]:
    """Message ids a result stands for: its own record's and its related records'."""
    return [
        source.message_id
        for fact in (result.fact, *result.related, *result.repeats)
        for source in fact.sources
        if source.message_id is not None
    ]


# ---------------------------------------------------------------------------------- embeddings


# ---------------------------------------------------------------------------------- systems


async def run_baselines(
    conversation: Conversation,
    embedder: Embedder,
    tallies: Mapping[str, Tally],
    count_wordpieces: Callable[[str], int],
) -> None:
    """Score the raw-message BM25, dense and RRF baselines on one conversation."""
    await score_baselines(
        conversation.name,
        [m.content for m in conversation.messages],
        [m.id for m in conversation.messages],
        conversation.questions,
        embedder,
        tallies,
        count_wordpieces,
        term_limit=1_000_000,
    )


def message_provenance(conversation: Conversation, message: Message) -> Provenance:
    """Where a record made from ``message`` came from."""
    return Provenance(
        session_id=f"beam-{conversation.name}-b{message.batch}",
        message_id=message.id,
        turn_index=message.index,
        role=message.role,
        speaker=message.role,
        timestamp=message.date,
        extractor="raw-message",
    )


def raw_items(conversation: Conversation, *, reply_marks: bool = False) -> list[dict[str, Any]]:
    """One record of kind ``message`` per message, verbatim, with a reproducible id.

    ``reply_marks`` (an ablation): the assistant's messages carry the mark the bridge gives its
    records of replies (``REPLY_KEY``), so raw mode ranks them as the bridge does.
    """
    return [
        {
            "fact_id": str(uuid.uuid5(_RAW_NAMESPACE, f"{conversation.name}/{message.id}")),
            "content": message.content,
            "kind": FactKind.MESSAGE,
            "source": message_provenance(conversation, message),
            "metadata": {REPLY_KEY: True} if reply_marks and message.role == "assistant" else {},
        }
        for message in conversation.messages
    ]


def batch_messages(conversation: Conversation, batch: int) -> list[dict[str, Any]]:
    """One batch's messages as chat messages with their ids and times."""
    return [
        {"role": m.role, "content": m.content, "id": m.id, "timestamp": m.date}
        for m in conversation.messages
        if m.batch == batch
    ]


async def ingest_facts(
    engine: ContextEngine,
    conversation: Conversation,
    extractor: str,
    bridge_options: Mapping[str, Any] | None = None,
) -> int:
    """Store what ``MemoryBridge`` makes of every batch; returns how many records it stored."""
    from sagewai.context import MemoryBridge
    from sagewai.core import Conversation as ChatConversation

    bridge = MemoryBridge(
        context_engine=engine,
        fact_extractor=make_extractor(extractor),
        save_episodes=False,
        **(bridge_options or {}),
    )
    stored = 0
    for batch in sorted({m.batch for m in conversation.messages}):
        chat = ChatConversation.of(
            batch_messages(conversation, batch),
            session_id=f"beam-{conversation.name}-b{batch}",
        )
        stored += await bridge.bridge_conversation(chat)
    return stored


async def run_sagewai(
    conversation: Conversation,
    mode: str,
    *,
    extractor: str,
    embedder: Embedder,
    runs: Sequence[tuple[SearchConfig, Tally]],
    count_wordpieces: Callable[[str], int],
    store: str,
    folder: Path,
    bridge_options: Mapping[str, Any] | None = None,
    reply_marks: bool = False,
    reflect_tallies: Mapping[str, Tally] | None = None,
    syntheses: dict[str, dict[str, float]] | None = None,
) -> int:
    """Ingest one conversation in ``mode``, ask every question per ranking setting, score.

    ``reflect_tallies`` (``consolidated``, ``reflection``): then consolidate without reflection
    and ask again, then with reflection (which then only writes syntheses) and ask again.
    """
    project_id = f"beam-{conversation.name}-{mode}"
    top = max(max(tally.ks) for _, tally in runs)
    if store == "memory":
        engine = ContextEngine.in_memory(project_id=project_id, embedder=embedder)
    else:
        engine = ContextEngine.local(folder / project_id, project_id=project_id, embedder=embedder)
    async with engine:
        stored = 0
        if mode in ("facts", "both"):
            stored += await ingest_facts(engine, conversation, extractor, bridge_options)
        if mode in ("raw", "both"):
            stored += len(await engine.add_many(raw_items(conversation, reply_marks=reply_marks)))
        asked = [*runs]
        asked.extend((runs[0][0], tally) for tally in (reflect_tallies or {}).values())
        for index, (config, tally) in enumerate(asked):
            if index >= len(runs):
                from sagewai.intelligence import MemoryConsolidator

                reflect = tally is (reflect_tallies or {}).get("reflection")
                report = await MemoryConsolidator(
                    engine, decay_halflife_days=NO_DECAY, reflect=reflect
                ).consolidate(scope=None)
            started = time.perf_counter()
            shown: list[int] = []
            for question in conversation.questions:
                results = await engine.search(question.text, top_k=top, search_config=config)
                retrieved = [(result_sources(r), result_text(r)) for r in results]
                tally.add(conversation.name, question, retrieved, count_wordpieces)
                shown.append(sum(1 for r in results[:10] if r.fact.kind is FactKind.SYNTHESIS))
            tally.seconds += time.perf_counter() - started
            if index >= len(runs) and syntheses is not None and reflect:
                syntheses[project_id] = synthesis_figures(report.syntheses_written, shown)
    return stored


NO_DECAY = 36_500.0
"""The half-life of ``--reflect``'s consolidation: the conversations are years old, and with the
default 30 days decay archives most of their facts, which is not what is measured here."""


# ---------------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, required=True, help="BEAM folder (e.g. beam/100K)")
    parser.add_argument("--modes", default="raw", help="comma list of raw,facts,both")
    parser.add_argument("--extractor", choices=("rules", "hybrid"), default="rules")
    parser.add_argument("--store", choices=("memory", "local"), default="memory")
    parser.add_argument("--top-k", default="5,10,20", help="comma list of k")
    parser.add_argument("--conversations", default="", help="comma list of folder names (all)")
    parser.add_argument("--config", default="{}", help="SearchConfig fields as JSON")
    parser.add_argument(
        "--variants", default="{}", help='more rankings on the same data: {"name": {fields}}'
    )
    parser.add_argument("--embedding-cache", type=Path, default=None, help=".npz vector cache")
    parser.add_argument("--no-baselines", action="store_true")
    parser.add_argument(
        "--raw-reply-marks",
        action="store_true",
        help="ablation: raw mode's assistant messages carry the bridge's reply mark",
    )
    parser.add_argument(
        "--bridge", default="{}", help="facts/both modes: MemoryBridge options as JSON"
    )
    parser.add_argument(
        "--bridge-variants",
        default="{}",
        help='more bridges on the same data: {"name": {MemoryBridge options}} (system '
        "sagewai_facts/<name>)",
    )
    parser.add_argument(
        "--reflect",
        action="store_true",
        help="facts/both modes: also score after consolidation without and then with reflection"
        " (systems sagewai_<mode>+consolidated, sagewai_<mode>+reflection)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    return parser.parse_args(argv)


def print_table(systems: Mapping[str, Mapping[str, Any]], ks: Sequence[int]) -> None:
    """Overall and per-split recall@k, one system per row."""
    splits = sorted({s for summary in systems.values() for s in summary["per_split"]})
    header = f"{'system':<40}" + "".join(f"{'R@' + str(k):>8}" for k in ks)
    header += "".join(f"{s[:8] + '@' + str(k):>13}" for s in splits for k in ks)
    print(header)
    for name, summary in systems.items():
        row = f"{name:<40}" + "".join(f"{summary['overall'][f'R@{k}'] or 0:>8.3f}" for k in ks)
        for split in splits:
            figures = summary["per_split"].get(split, {})
            row += "".join(f"{figures.get(f'R@{k}') or 0:>13.3f}" for k in ks)
        print(row)


async def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the benchmark and write the JSON report; returns the report."""
    args = parse_args(argv)
    ks = tuple(sorted({int(k) for k in args.top_k.split(",") if k.strip()}))
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    for mode in modes:
        if mode not in ("raw", "facts", "both"):
            raise SystemExit(f"unknown mode {mode!r}")
    config = SearchConfig(**json.loads(args.config))
    variants = {
        name: config.model_copy(update=overrides)
        for name, overrides in json.loads(args.variants).items()
    }
    wanted = [c.strip() for c in args.conversations.split(",") if c.strip()]
    conversations = load_conversations(args.data, wanted)
    from sagewai.embeddings import MiniLMEmbedder

    embedder = HashCachingEmbedder(MiniLMEmbedder(), args.embedding_cache)
    count_wordpieces = wordpiece_counter()
    tallies: dict[str, Tally] = {}
    if not args.no_baselines:
        for name in ("baseline_bm25", "baseline_dense", "baseline_rrf"):
            tallies[name] = Tally(ks)
    runs: dict[str, list[tuple[SearchConfig, Tally]]] = {}
    bridges: dict[str, dict[str, Any]] = {"facts": json.loads(args.bridge)}
    for name, options in json.loads(args.bridge_variants).items():
        if "facts" in modes:
            bridges[f"facts/{name}"] = {**bridges["facts"], **options}
            tallies[f"sagewai_facts/{name}"] = Tally(ks)
            runs[f"facts/{name}"] = [(config, tallies[f"sagewai_facts/{name}"])]
    for mode in modes:
        tallies[f"sagewai_{mode}"] = Tally(ks)
        runs[mode] = [(config, tallies[f"sagewai_{mode}"])]
        for name, variant in variants.items():
            tallies[f"variant_{mode}/{name}"] = Tally(ks)
            runs[mode].append((variant, tallies[f"variant_{mode}/{name}"]))
    reflected: dict[str, dict[str, Tally]] = {}
    if args.reflect:
        for mode in modes:
            if mode != "raw":
                reflected[mode] = {}
                for step in ("consolidated", "reflection"):
                    reflected[mode][step] = tallies[f"sagewai_{mode}+{step}"] = Tally(ks)
    syntheses: dict[str, dict[str, float]] = {}
    stored: dict[str, int] = {}
    errors: dict[str, str] = {}
    started = time.perf_counter()
    done: list[Conversation] = []

    def summarise(done: Sequence[Conversation]) -> dict[str, Any]:
        return _summary(
            args,
            done,
            tallies,
            modes=modes,
            bridges=bridges,
            search_config=config.model_dump(),
            variants={name: v.model_dump() for name, v in variants.items()},
            records_stored=stored,
            syntheses_written=syntheses,
            errors=errors,
            texts_embedded=embedder.embedded,
            seconds=round(time.perf_counter() - started, 1),
        )

    with tempfile.TemporaryDirectory(prefix="beam-") as tmp:
        for conversation in conversations:
            step = time.perf_counter()
            if not args.no_baselines:
                await run_baselines(conversation, embedder, tallies, count_wordpieces)
            for mode in [*modes, *(b for b in bridges if b != "facts")]:
                if f"sagewai_{mode}" in errors:
                    continue
                try:
                    stored[f"{mode}/{conversation.name}"] = await run_sagewai(
                        conversation,
                        mode.split("/")[0],
                        extractor=args.extractor,
                        embedder=embedder,
                        runs=runs[mode],
                        count_wordpieces=count_wordpieces,
                        store=args.store,
                        folder=Path(tmp),
                        bridge_options=bridges.get(mode, {}),
                        reply_marks=args.raw_reply_marks,
                        reflect_tallies=reflected.get(mode),
                        syntheses=syntheses,
                    )
                except (RuntimeError, ImportError) as exc:
                    errors[f"sagewai_{mode}"] = str(exc)
                    print(f"skipping {mode}: {exc}", file=sys.stderr)
            embedder.save()
            print(
                f"conversation {conversation.name}: {len(conversation.messages)} messages, "
                f"{len(conversation.questions)} questions, {time.perf_counter() - step:.1f} s",
                file=sys.stderr,
            )
            done.append(conversation)
            # The report so far: a long run stopped early keeps what it measured.
            write_json(args.out, summarise(done))
    report = summarise(done)
    print_table(report["systems"], ks)
    write_json(args.out, report)
    return report


def _summary(
    args: argparse.Namespace,
    done: Sequence[Conversation],
    tallies: Mapping[str, Tally],
    **facts: Any,
) -> dict[str, Any]:
    """The report of the conversations measured so far."""
    conversations = list(done)
    splits = {
        "dev": [c.name for c in conversations if c.split == "dev"],
        "held_out": [c.name for c in conversations if c.split == "held_out"],
    }
    systems = {name: t.summary(splits) for name, t in tallies.items() if t.recalls}
    return {
        "benchmark": "beam_recall",
        "data": str(args.data),
        "conversations": [c.name for c in conversations],
        "splits": splits,
        "questions": sum(len(c.questions) for c in conversations),
        "questions_skipped_no_evidence": sum(c.skipped_questions for c in conversations),
        "messages": sum(len(c.messages) for c in conversations),
        "extractor": args.extractor,
        "store": args.store,
        "systems": systems,
        **facts,
    }


if __name__ == "__main__":
    asyncio.run(main())
