"""LoCoMo retrieval recall: how often sagewai's search finds the turns that answer a question.

Usage:
    python -m evals.locomo_recall --data $DATA/locomo/locomo_dev.json
        [--modes raw,facts,both] [--extractor rules|hybrid] [--store memory|local|postgres]
        [--top-k 5,10,20] [--conversations conv-26] [--config '{"neighbour_weight": 0.2}']
        [--embedding-cache PATH] [--no-baselines] [--out evals/results/locomo_recall.json]

Method (``docs/benchmarks-locomo.md`` has the figures):

* Each LoCoMo conversation is ingested into a fresh project. ``raw``: every turn is one fact
  ``"Speaker: text"`` (plus ``[image: caption]`` when the turn shared a photo), with
  ``Provenance(session_id, message_id=dia_id, turn_index, speaker, timestamp=session date)``.
  ``facts``: facts made by ``MemoryBridge`` with the chosen extractor (or, when the bridge is not
  importable, the extractor called per turn and the facts stored with the turn's provenance).
  ``both``: the two together.
* Every question of categories 1-4 with at least one evidence id that resolves to a turn is asked
  with ``ContextEngine.search``. Recall@k of a question is the share of its evidence dia_ids among
  the ``message_id`` of the top-k results' provenance; the figures are means over questions.
  Evidence strings are split on ``;``, ``,`` and spaces, and ids that name no turn are dropped.
* Tokens per query: the words (whitespace split) and the MiniLM WordPiece tokens of the retrieved
  items' contents at each k, averaged over questions.
* Baselines over raw turns ``"Speaker: text"`` (no caption, as in the dataset's reference figures):
  BM25 Okapi as in ``rank-bm25`` (k1 1.5, b 0.75, epsilon 0.25; the tokens of
  ``keyword_terms``), MiniLM dense cosine, and their reciprocal-rank fusion (k=60) over the full
  rankings.

Embeddings are cached by text within a run (and across runs with ``--embedding-cache``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from evals._common import RESULTS, HashCachingEmbedder, write_json
from sagewai import ContextEngine, Provenance, SearchConfig, SearchResult
from sagewai.core import keyword_terms
from sagewai.embeddings import Embedder

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DEFAULT_OUT = RESULTS / "locomo_recall.json"
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")
_SESSION_KEY = re.compile(r"session_(\d+)$")
_RAW_NAMESPACE = uuid.UUID("3b0f7f0e-2c4e-5d8a-9a43-6c1e0d5b7a21")


# ---------------------------------------------------------------------------------- the data


@dataclass(frozen=True, slots=True)
class Turn:
    """One dialogue turn of a LoCoMo conversation."""

    dia_id: str
    session: int
    index: int
    """Position of the turn inside its session (0-based)."""
    speaker: str
    text: str
    caption: str | None
    date: datetime | None

    @property
    def plain(self) -> str:
        """``"Speaker: text"``: how the reference baselines index a turn."""
        return f"{self.speaker}: {self.text}"

    @property
    def with_caption(self) -> str:
        """The plain turn, with the shared image's caption when there was one."""
        return self.plain if not self.caption else f"{self.plain} [image: {self.caption}]"


@dataclass(frozen=True, slots=True)
class Question:
    """A question of categories 1-4 with its resolved evidence turns (and its reference answer,
    for a judge)."""

    text: str
    category: int
    evidence: tuple[str, ...]
    answer: str = ""


@dataclass(frozen=True, slots=True)
class Conversation:
    """One LoCoMo sample: its turns and its answerable questions."""

    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    dropped_questions: int
    """Questions of categories 1-4 left out because no evidence id names a turn."""


def parse_session_date(text: str) -> datetime | None:
    """``"1:56 pm on 8 May, 2023"`` as a UTC datetime; ``None`` when the text does not parse."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        return None


def resolve_evidence(evidence: Iterable[str], known: Mapping[str, Turn] | set[str]) -> list[str]:
    """Evidence dia_ids that name a turn, in order, without repeats.

    Malformed strings such as ``"D8:6; D9:17"`` are split on ``;``, ``,`` and spaces; ids that do
    not resolve (``"D:11:26"``) are dropped.
    """
    out: list[str] = []
    for item in evidence:
        for part in _EVIDENCE_SPLIT.split(str(item)):
            if part and part in known and part not in out:
                out.append(part)
    return out


def load_conversations(path: Path) -> list[Conversation]:
    """Read the LoCoMo JSON (a list of samples) into turns and answerable questions."""
    samples = json.loads(path.read_text(encoding="utf-8"))
    conversations = []
    for sample in samples:
        body = sample["conversation"]
        sessions = sorted(
            (int(match.group(1)), key)
            for key in body
            if (match := _SESSION_KEY.match(key)) and isinstance(body[key], list)
        )
        turns: list[Turn] = []
        for number, key in sessions:
            date = parse_session_date(str(body.get(f"{key}_date_time", "")))
            for index, turn in enumerate(body[key]):
                turns.append(
                    Turn(
                        dia_id=str(turn["dia_id"]),
                        session=number,
                        index=index,
                        speaker=str(turn["speaker"]),
                        text=str(turn["text"]),
                        caption=turn.get("blip_caption") or None,
                        date=date,
                    )
                )
        known = {turn.dia_id: turn for turn in turns}
        questions: list[Question] = []
        dropped = 0
        for qa in sample["qa"]:
            category = int(qa["category"])
            if category not in CATEGORIES:
                continue
            evidence = resolve_evidence(qa.get("evidence", []), known)
            if not evidence:
                dropped += 1
                continue
            answer = str(qa.get("answer", ""))
            questions.append(Question(str(qa["question"]), category, tuple(evidence), answer))
        conversations.append(
            Conversation(str(sample["sample_id"]), tuple(turns), tuple(questions), dropped)
        )
    return conversations


# ---------------------------------------------------------------------------------- scoring


def recall_at(retrieved: Sequence[Iterable[str]], evidence: Sequence[str], k: int) -> float:
    """Share of ``evidence`` dia_ids among the source ids of the first ``k`` retrieved items."""
    found: set[str] = set()
    for sources in retrieved[:k]:
        found.update(sources)
    return sum(1 for dia_id in evidence if dia_id in found) / len(evidence)


def result_text(result: SearchResult) -> str:
    """What a result puts in front of a reader: its record and the related records' texts."""
    return "\n".join(fact.content for fact in (result.fact, *result.related, *result.repeats))


def source_ids(result: SearchResult) -> list[str]:
    """The dia_ids a search result came from: its record's and its related records' sources."""
    return list(
        dict.fromkeys(
            source.message_id
            for fact in (result.fact, *result.related, *result.repeats)
            for source in fact.sources
            if source.message_id is not None
        )
    )


@dataclass(slots=True)
class Tally:
    """Recall and token figures of one system, accumulated question by question."""

    ks: tuple[int, ...]
    recalls: dict[tuple[str, int, int], list[float]] = field(default_factory=dict)
    """``(conversation, category, k) -> recall per question``."""
    words: dict[int, list[int]] = field(default_factory=dict)
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
            texts = [content for _, content in retrieved[:k]]
            self.words.setdefault(k, []).append(sum(len(t.split()) for t in texts))
            self.wordpieces.setdefault(k, []).append(sum(count_wordpieces(t) for t in texts))

    def mean_recall(
        self, k: int, *, conversation: str | None = None, category: int | None = None
    ) -> float | None:
        """Mean recall@k over the questions of one conversation and/or category (or all)."""
        values = [
            value
            for (conv, cat, kk), recalls in self.recalls.items()
            if kk == k
            and (conversation is None or conv == conversation)
            and (category is None or cat == category)
            for value in recalls
        ]
        return round(statistics.fmean(values), 4) if values else None

    def summary(self) -> dict[str, Any]:
        """Mean recall@k overall, per category and per conversation, and tokens per query."""
        first = self.ks[0]
        conversations = sorted({conv for conv, _, _ in self.recalls})
        return {
            "overall": {f"R@{k}": self.mean_recall(k) for k in self.ks},
            "questions": sum(len(v) for (_, _, k), v in self.recalls.items() if k == first),
            "per_category": {
                f"{cat} {name}": {f"R@{k}": self.mean_recall(k, category=cat) for k in self.ks}
                for cat, name in CATEGORIES.items()
            },
            "per_conversation": {
                conv: {f"R@{k}": self.mean_recall(k, conversation=conv) for k in self.ks}
                for conv in conversations
            },
            "tokens_per_query": {
                f"@{k}": {
                    "words": round(statistics.fmean(self.words[k]), 1),
                    "wordpieces": round(statistics.fmean(self.wordpieces[k]), 1),
                }
                for k in self.ks
            },
            "seconds": round(self.seconds, 2),
        }


# ---------------------------------------------------------------------------------- baselines


class BM25Okapi:
    """BM25 Okapi exactly as the ``rank-bm25`` package computes it (version 0.2.2).

    ``idf = ln(N - n + 0.5) - ln(n + 0.5)``; a negative idf (a term in more than half the
    documents) is replaced by ``epsilon`` times the mean idf; ``k1`` 1.5, ``b`` 0.75.
    """

    def __init__(
        self,
        corpus: Sequence[Sequence[str]],
        *,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
    ) -> None:
        self.k1 = k1
        self.b = b
        self.frequencies = [Counter(document) for document in corpus]
        self.lengths = np.array([len(document) for document in corpus], dtype=np.float64)
        self.average_length = float(self.lengths.mean()) if len(corpus) else 0.0
        document_frequency: Counter[str] = Counter()
        for counts in self.frequencies:
            document_frequency.update(counts.keys())
        size = len(corpus)
        self.idf = {
            term: math.log(size - n + 0.5) - math.log(n + 0.5)
            for term, n in document_frequency.items()
        }
        floor = epsilon * (sum(self.idf.values()) / len(self.idf)) if self.idf else 0.0
        self.idf = {term: (floor if idf < 0 else idf) for term, idf in self.idf.items()}

    def scores(self, query: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float64]]:
        """The score of every document for ``query`` (a list of tokens)."""
        out = np.zeros(len(self.frequencies), dtype=np.float64)
        norm = self.k1 * (1 - self.b + self.b * self.lengths / max(self.average_length, 1e-9))
        for term in query:
            tf = np.array([counts.get(term, 0) for counts in self.frequencies], dtype=np.float64)
            out += self.idf.get(term, 0.0) * tf * (self.k1 + 1) / (tf + norm)
        return out


def _descending(scores: np.ndarray[Any, np.dtype[Any]]) -> list[int]:
    return [int(i) for i in np.argsort(-scores, kind="stable")]


def rrf(rankings: Sequence[Sequence[int]], k: float = 60.0) -> list[int]:
    """Plain reciprocal-rank fusion of full rankings (ties keep the first list's order)."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank + 1)
    return sorted(fused, key=lambda item: -fused[item])


async def baseline_rankings(
    texts: Sequence[str], queries: Sequence[str], embedder: Embedder, *, term_limit: int = 10_000
) -> list[tuple[dict[str, list[int]], float]]:
    """Per query: the plain BM25, dense and RRF rankings of ``texts``, and seconds per system.

    Shared by the LoCoMo, BEAM and agent benchmarks, so every baseline is the same code.
    """
    bm25 = BM25Okapi([keyword_terms(text, limit=term_limit) for text in texts])
    matrix = await embedder.embed_documents(texts)
    out: list[tuple[dict[str, list[int]], float]] = []
    for query in queries:
        started = time.perf_counter()
        by_keyword = _descending(bm25.scores(keyword_terms(query, limit=10_000)))
        by_dense = _descending(matrix @ await embedder.embed_query(query))
        rankings = {
            "baseline_bm25": by_keyword,
            "baseline_dense": by_dense,
            "baseline_rrf": rrf([by_keyword, by_dense]),
        }
        out.append((rankings, (time.perf_counter() - started) / len(rankings)))
    return out


async def score_baselines(
    name: str,
    texts: Sequence[str],
    ids: Sequence[str],
    questions: Sequence[Any],
    embedder: Embedder,
    tallies: Mapping[str, Any],
    count_wordpieces: Callable[[str], int],
    *,
    term_limit: int = 10_000,
) -> None:
    """Score the baselines over ``texts`` (one per id) for every question into ``tallies``.

    A question has ``.text``; a tally ``.ks``, ``.seconds`` and
    ``.add(conversation, question, retrieved, count_wordpieces)``.
    """
    ranked = await baseline_rankings(
        texts, [q.text for q in questions], embedder, term_limit=term_limit
    )
    for question, (rankings, elapsed) in zip(questions, ranked, strict=True):
        for system, ranking in rankings.items():
            retrieved = [([ids[i]], texts[i]) for i in ranking[: max(tallies[system].ks)]]
            tallies[system].add(name, question, retrieved, count_wordpieces)
            tallies[system].seconds += elapsed


async def run_baselines(
    conversation: Conversation,
    embedder: Embedder,
    tallies: Mapping[str, Tally],
    count_wordpieces: Callable[[str], int],
) -> None:
    """Score the raw-turn BM25, dense and RRF baselines on one conversation."""
    await score_baselines(
        conversation.sample_id,
        [turn.plain for turn in conversation.turns],
        [turn.dia_id for turn in conversation.turns],
        conversation.questions,
        embedder,
        tallies,
        count_wordpieces,
    )


# ---------------------------------------------------------------------------------- sagewai


def turn_provenance(conversation: Conversation, turn: Turn, extractor: str | None) -> Provenance:
    """Where a fact made from ``turn`` came from."""
    return Provenance(
        session_id=f"{conversation.sample_id}-s{turn.session}",
        message_id=turn.dia_id,
        turn_index=turn.index,
        speaker=turn.speaker,
        timestamp=turn.date,
        extractor=extractor,
    )


def raw_items(conversation: Conversation, *, captions: bool = True) -> list[dict[str, Any]]:
    """One fact per turn: ``"Speaker: text"`` with the image caption, and its provenance.

    Fact ids are derived from the turn, so ties in the ranking (broken by id) fall the same way
    in every run and the figures are reproducible.
    """
    return [
        {
            "fact_id": str(uuid.uuid5(_RAW_NAMESPACE, f"{conversation.sample_id}/{turn.dia_id}")),
            "content": turn.with_caption if captions else turn.plain,
            "source": turn_provenance(conversation, turn, "raw-turn"),
            "subject": turn.speaker,
        }
        for turn in conversation.turns
    ]


def make_extractor(name: str) -> Any:
    """The fact extractor named on the command line (``rules`` or ``hybrid``), default settings.

    Looked up where the design puts it (``sagewai.intelligence``), then in the extraction
    package and its module.

    Raises:
        RuntimeError: the extractor is not available in this checkout.
    """
    import importlib

    class_name = {"rules": "RuleBasedFactExtractor", "hybrid": "HybridFactExtractor"}[name]
    places = (
        "sagewai.intelligence",
        "sagewai.extraction",
        f"sagewai.extraction.{'rules' if name == 'rules' else 'hybrid'}",
    )
    for place in places:
        try:
            module = importlib.import_module(place)
        except ImportError:
            continue
        extractor_class = getattr(module, class_name, None)
        if extractor_class is not None:
            return extractor_class()
    raise RuntimeError(f"facts mode needs {class_name}, not found in {', '.join(places)}")


def session_messages(conversation: Conversation, session: int) -> list[dict[str, Any]]:
    """One session's turns as chat messages: both speakers are people, so both are ``user``."""
    return [
        {
            "role": "user",
            "content": turn.with_caption,
            "speaker": turn.speaker,
            "id": turn.dia_id,
            "timestamp": turn.date,
        }
        for turn in conversation.turns
        if turn.session == session
    ]


async def ingest_facts(
    engine: ContextEngine,
    conversation: Conversation,
    extractor: str,
    bridge_options: Mapping[str, Any] | None = None,
) -> int:
    """Store the facts ``MemoryBridge`` extracts from every session; returns how many.

    Each session is one bridged conversation (``session_id`` as in raw mode), so every fact
    carries the provenance of the turn it came from.
    """
    try:
        from sagewai.context import MemoryBridge
        from sagewai.core import Conversation as ChatConversation
    except ImportError as exc:  # pragma: no cover - depends on the checkout
        raise RuntimeError(f"facts mode needs sagewai.context.bridge: {exc}") from exc
    bridge = MemoryBridge(
        context_engine=engine,
        fact_extractor=make_extractor(extractor),
        save_episodes=False,
        **(bridge_options or {}),
    )
    stored = 0
    for session in sorted({turn.session for turn in conversation.turns}):
        chat = ChatConversation.of(
            session_messages(conversation, session),
            session_id=f"{conversation.sample_id}-s{session}",
        )
        stored += await bridge.bridge_conversation(chat)
    return stored


async def build_graph(engine: ContextEngine, conversation: Conversation) -> int:
    """Fill the project's knowledge graph from every session (default offline extractors).

    Graph expansion (``--graph-hops``) reads this graph; returns the relations added.
    """
    from sagewai.intelligence import ConversationGraphBuilder

    builder = ConversationGraphBuilder(graph_store=engine.graph_store)
    added = 0
    for session in sorted({turn.session for turn in conversation.turns}):
        result = await builder.process_conversation(
            session_messages(conversation, session),
            session_id=f"{conversation.sample_id}-s{session}",
        )
        added += result.relations_added
    return added


def make_engine(
    store: str,
    project_id: str,
    embedder: Embedder,
    config: SearchConfig,
    folder: Path,
    postgres_dsn: str = "",
) -> ContextEngine:
    """A fresh engine for one conversation on the chosen store.

    ``postgres``: facts in PostgreSQL (a fresh schema per project, dropped by
    :func:`drop_postgres_schema`), vectors in a Qdrant edge folder as in the embedded default, so
    the two runs differ only in the metadata store (and its keyword search).
    """
    if store == "postgres":
        from sagewai.stores import PostgresMetadataStore, QdrantEdgeVectorStore

        schema = "locomo_" + re.sub(r"[^a-z0-9_]", "_", project_id.lower())
        return ContextEngine(
            metadata_store=PostgresMetadataStore(postgres_dsn, schema=schema),
            vector_store=QdrantEdgeVectorStore(folder / project_id, embedder.dimension),
            project_id=project_id,
            embedder=embedder,
            search_config=config,
        )
    if store == "memory":
        return ContextEngine.in_memory(
            project_id=project_id, embedder=embedder, search_config=config
        )
    return ContextEngine.local(
        folder / project_id, project_id=project_id, embedder=embedder, search_config=config
    )


async def reset_postgres_schema(engine: ContextEngine, dsn: str) -> None:
    """Drop and re-create the engine's PostgreSQL schema, so every run starts empty."""
    import asyncpg

    from sagewai.stores import PostgresMetadataStore

    store = engine.stores.metadata
    assert isinstance(store, PostgresMetadataStore)
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(f'DROP SCHEMA IF EXISTS "{store.schema}" CASCADE')
    finally:
        await connection.close()
    await store.open()
    await store.migrate()


ABLATION: dict[str, dict[str, Any]] = {
    "1 rrf, full query": {
        "fusion": "rrf",
        "dense_weight": 1.0,
        "keyword_weight": 1.0,
        "strip_stopwords": False,
        "speaker_bonus": 0.0,
        "time_bonus": 0.0,
        "neighbour_weight": 0.0,
    },
    "2 + keyword query without stopwords": {
        "fusion": "rrf",
        "dense_weight": 1.0,
        "keyword_weight": 1.0,
        "speaker_bonus": 0.0,
        "time_bonus": 0.0,
        "neighbour_weight": 0.0,
    },
    "3 + convex fusion 0.3/0.7": {"speaker_bonus": 0.0, "time_bonus": 0.0, "neighbour_weight": 0.0},
    "4 + speaker bonus": {"time_bonus": 0.0, "neighbour_weight": 0.0},
    "5 + time bonus": {"neighbour_weight": 0.0},
    "6 + neighbours, window 1": {"neighbour_window": 1},
    "7 + neighbours, window 2 (defaults)": {},
}
"""Cumulative steps from plain RRF to the default ranking (``--ablation``), as overrides of the
``--config`` settings."""


async def run_sagewai(
    conversation: Conversation,
    mode: str,
    *,
    store: str,
    extractor: str,
    embedder: Embedder,
    config: SearchConfig,
    folder: Path,
    tally: Tally,
    count_wordpieces: Callable[[str], int],
    variants: Mapping[str, tuple[SearchConfig, Tally]] | None = None,
    captions: bool = True,
    graph_hops: int = 0,
    postgres_dsn: str = "",
    bridge_options: Mapping[str, Any] | None = None,
    reflect_tallies: Mapping[str, Tally] | None = None,
    syntheses: dict[str, dict[str, float]] | None = None,
) -> int:
    """Ingest one conversation in ``mode``, ask every question, score; returns the fact count.

    ``variants`` are further ranking settings asked on the same ingested project (ablations).
    ``reflect_tallies`` (``consolidated``, ``reflection``): after those, the project is
    consolidated without reflection and asked again, then consolidated with reflection (which
    then only writes syntheses) and asked again, so the two differ by the syntheses alone.
    """
    project_id = f"locomo-{conversation.sample_id}-{mode}"
    top = max(tally.ks)
    engine = make_engine(store, project_id, embedder, config, folder, postgres_dsn)
    if store == "postgres":
        await reset_postgres_schema(engine, postgres_dsn)
    async with engine:
        stored = 0
        # Bridged facts go first: the bridge reconciles against what the project holds, and
        # must not rewrite the raw turns of "both" mode.
        if mode in ("facts", "both"):
            stored += await ingest_facts(engine, conversation, extractor, bridge_options)
        if mode in ("raw", "both"):
            stored += len(await engine.add_many(raw_items(conversation, captions=captions)))
        if graph_hops:
            await build_graph(engine, conversation)
        runs = [(config, tally), *(variants or {}).values()]
        for search_config, run_tally in runs:
            await ask_all(
                engine, conversation, search_config, run_tally, count_wordpieces, top, graph_hops
            )
        for step, run_tally in (reflect_tallies or {}).items():
            from sagewai.intelligence import MemoryConsolidator

            report = await MemoryConsolidator(
                engine, decay_halflife_days=NO_DECAY, reflect=step == "reflection"
            ).consolidate(scope=None)
            shown = await ask_all(
                engine, conversation, config, run_tally, count_wordpieces, top, graph_hops
            )
            if syntheses is not None and step == "reflection":
                syntheses[project_id] = {
                    **synthesis_figures(report.syntheses_written, shown),
                    **await subject_queries(engine),
                }
    return stored


async def subject_queries(engine: ContextEngine) -> dict[str, float]:
    """Whether each synthesis comes up when its subject does: "What do you know about X?"."""
    ranks: list[int | None] = []
    for synthesis in await engine.get_all(kinds=["synthesis"]):
        results = await engine.search(f"What do you know about {synthesis.subject}?", top_k=10)
        ids = [r.fact.id for r in results]
        ranks.append(ids.index(synthesis.id) + 1 if synthesis.id in ids else None)
    asked = max(len(ranks), 1)
    return {
        "subject_queries": len(ranks),
        "subject_query_top1": round(sum(1 for r in ranks if r == 1) / asked, 4),
        "subject_query_top10": round(sum(1 for r in ranks if r is not None) / asked, 4),
    }


def synthesis_figures(written: int, shown: Sequence[int]) -> dict[str, float]:
    """How many syntheses a run wrote, and how often they were in the first 10 results."""
    return {
        "written": written,
        "questions_with_one_in_top10": round(sum(1 for n in shown if n) / max(len(shown), 1), 4),
        "mean_in_top10": round(sum(shown) / max(len(shown), 1), 4),
    }


async def ask_all(
    engine: ContextEngine,
    conversation: Conversation,
    search_config: SearchConfig,
    run_tally: Tally,
    count_wordpieces: Callable[[str], int],
    top: int,
    graph_hops: int,
) -> list[int]:
    """Ask every question of ``conversation`` and score the results in ``run_tally``; returns
    how many syntheses each question's first 10 results held."""
    started = time.perf_counter()
    shown: list[int] = []
    for question in conversation.questions:
        results = await engine.search(
            question.text, top_k=top, search_config=search_config, graph_hops=graph_hops
        )
        retrieved = [(source_ids(r), result_text(r)) for r in results]
        run_tally.add(conversation.sample_id, question, retrieved, count_wordpieces)
        shown.append(sum(1 for r in results[:10] if r.fact.kind.value == "synthesis"))
    run_tally.seconds += time.perf_counter() - started
    return shown


NO_DECAY = 36_500.0
"""The half-life of ``--reflect``'s consolidation: the conversations are years old, and with the
default 30 days decay archives most of their facts, which is not what is measured here."""


# ---------------------------------------------------------------------------------- main


def wordpiece_counter() -> Callable[[str], int]:
    """Count MiniLM WordPiece tokens (no special tokens, no truncation); words if unavailable."""
    try:
        from tokenizers import Tokenizer
    except ImportError:  # pragma: no cover - tokenizers is a core dependency
        return lambda text: len(text.split())
    path = resources.files("sagewai.embeddings") / "data" / "tokenizer.json"
    tokenizer = Tokenizer.from_str(path.read_text(encoding="utf-8"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    counted: dict[str, int] = {}

    def count(text: str) -> int:
        if text not in counted:
            counted[text] = len(tokenizer.encode(text, add_special_tokens=False).ids)
        return counted[text]

    return count


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo JSON (locomo10 format)")
    parser.add_argument("--modes", default="raw", help="comma list of raw,facts,both")
    parser.add_argument("--extractor", choices=("rules", "hybrid"), default="rules")
    parser.add_argument("--store", choices=("memory", "local", "postgres"), default="memory")
    parser.add_argument(
        "--postgres-dsn",
        default="postgresql://postgres@127.0.0.1:5432/test",
        help="with --store postgres: the database (a schema per conversation and mode)",
    )
    parser.add_argument("--top-k", default="5,10,20", help="comma list of k")
    parser.add_argument("--conversations", default="", help="comma list of sample ids (all)")
    parser.add_argument("--config", default="{}", help="SearchConfig fields as JSON")
    parser.add_argument("--embedding-cache", type=Path, default=None, help=".npz vector cache")
    parser.add_argument("--no-baselines", action="store_true")
    parser.add_argument(
        "--no-captions", action="store_true", help="raw mode: leave image captions out"
    )
    parser.add_argument(
        "--ablation", action="store_true", help="also score the cumulative ranking steps"
    )
    parser.add_argument(
        "--variants", default="{}", help='more rankings on the same data: {"name": {fields}}'
    )
    parser.add_argument(
        "--graph-hops",
        type=int,
        default=0,
        choices=(0, 1, 2),
        help="build each project's knowledge graph and search with graph expansion",
    )
    parser.add_argument(
        "--bridge", default="{}", help="facts/both modes: MemoryBridge options as JSON"
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
    """A compact text table of overall and per-category recall@k."""
    header = f"{'system':<44}" + "".join(f"{'R@' + str(k):>8}" for k in ks)
    header += "".join(
        f"{'c' + str(c) + '@' + str(ks[1 if len(ks) > 1 else 0]):>8}" for c in CATEGORIES
    )
    header += f"{'words@' + str(ks[1 if len(ks) > 1 else 0]):>10}"
    print(header)
    middle = ks[1 if len(ks) > 1 else 0]
    for name, summary in systems.items():
        row = f"{name:<44}" + "".join(f"{summary['overall'][f'R@{k}']:>8.3f}" for k in ks)
        for cat, cat_name in CATEGORIES.items():
            value = summary["per_category"][f"{cat} {cat_name}"][f"R@{middle}"]
            row += f"{value:>8.3f}" if value is not None else f"{'-':>8}"
        row += f"{summary['tokens_per_query'][f'@{middle}']['words']:>10.1f}"
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
    conversations = load_conversations(args.data)
    if args.conversations:
        wanted = {c.strip() for c in args.conversations.split(",")}
        conversations = [c for c in conversations if c.sample_id in wanted]
    from sagewai.embeddings import MiniLMEmbedder

    embedder = HashCachingEmbedder(MiniLMEmbedder(), args.embedding_cache)
    count_wordpieces = wordpiece_counter()
    tallies: dict[str, Tally] = {}
    if not args.no_baselines:
        for name in ("baseline_bm25", "baseline_dense", "baseline_rrf"):
            tallies[name] = Tally(ks)
    for mode in modes:
        tallies[f"sagewai_{mode}"] = Tally(ks)
    variants: dict[str, dict[str, tuple[SearchConfig, Tally]]] = {mode: {} for mode in modes}
    if args.ablation:
        for mode in modes:
            for step, overrides in ABLATION.items():
                step_config = config.model_copy(update=overrides)
                variants[mode][step] = (step_config, Tally(ks))
                tallies[f"ablation_{mode}/{step}"] = variants[mode][step][1]
    for mode in modes:
        for step, overrides in json.loads(args.variants).items():
            variants[mode][step] = (config.model_copy(update=overrides), Tally(ks))
            tallies[f"variant_{mode}/{step}"] = variants[mode][step][1]
    reflected: dict[str, dict[str, Tally]] = {mode: {} for mode in modes}
    if args.reflect:
        for mode in modes:
            if mode != "raw":
                for step in ("consolidated", "reflection"):
                    reflected[mode][step] = tallies[f"sagewai_{mode}+{step}"] = Tally(ks)
    syntheses: dict[str, dict[str, float]] = {}
    facts_stored: dict[str, int] = {}
    errors: dict[str, str] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="locomo-") as tmp:
        for conversation in conversations:
            if not args.no_baselines:
                await run_baselines(conversation, embedder, tallies, count_wordpieces)
            for mode in modes:
                name = f"sagewai_{mode}"
                if name in errors:
                    continue
                try:
                    stored = await run_sagewai(
                        conversation,
                        mode,
                        store=args.store,
                        extractor=args.extractor,
                        embedder=embedder,
                        config=config,
                        folder=Path(tmp),
                        tally=tallies[name],
                        count_wordpieces=count_wordpieces,
                        variants=variants[mode],
                        captions=not args.no_captions,
                        graph_hops=args.graph_hops,
                        postgres_dsn=args.postgres_dsn,
                        bridge_options=json.loads(args.bridge),
                        reflect_tallies=reflected[mode],
                        syntheses=syntheses,
                    )
                except RuntimeError as exc:
                    errors[name] = str(exc)
                    print(f"skipping {name}: {exc}", file=sys.stderr)
                    continue
                facts_stored[f"{name}/{conversation.sample_id}"] = stored
    embedder.save()
    systems = {name: t.summary() for name, t in tallies.items() if t.recalls}
    report: dict[str, Any] = {
        "benchmark": "locomo_recall",
        "data": str(args.data),
        "conversations": [c.sample_id for c in conversations],
        "questions": sum(len(c.questions) for c in conversations),
        "questions_dropped_no_evidence": sum(c.dropped_questions for c in conversations),
        "turns": sum(len(c.turns) for c in conversations),
        "store": args.store,
        "modes": modes,
        "extractor": args.extractor,
        "search_config": config.model_dump(),
        "captions": not args.no_captions,
        "graph_hops": args.graph_hops,
        "tokens": "words = whitespace split; wordpieces = MiniLM WordPiece tokens (no specials)",
        "systems": systems,
        "facts_stored": facts_stored,
        "syntheses_written": syntheses,
        "errors": errors,
        "texts_embedded": embedder.embedded,
        "seconds": round(time.perf_counter() - started, 1),
    }
    print_table(systems, ks)
    write_json(args.out, report)
    return report


if __name__ == "__main__":
    asyncio.run(main())
