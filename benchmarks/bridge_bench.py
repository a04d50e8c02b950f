"""MemoryBridge throughput and latency on the embedded default (``ContextEngine.local``).

Usage:
    python -m benchmarks.bridge_bench [--messages 2000] [--sessions 20]
        [--locomo $DATA/locomo/locomo_dev.json] [--embedder minilm|fake]
        [--fsync interval|always|never] [--ratio-only]
        [--out benchmarks/results/bridge_bench.json]

What is measured (rule extractor, reconciliation on, one fresh folder per part):

* ``ratio`` (first, and alone with ``--ratio-only``): ingest through the bridge against the
  embedder's own rate on the same texts, before and after in one run. The embedder embeds the
  turns' texts one call per conversation (as the bridge sends them), then
  ``bridge_conversation`` stores the same turns with ``share_vectors=False`` (every record's
  text embedded: the path before issue 38) and with the default (each message embedded once),
  then the embedder runs again; ``ratio`` is turns/s over the mean sentences/s (goal 0.7),
  ``cpu_ratio`` the same in CPU seconds of the process, and ``texts_per_turn`` counts what was
  embedded. For the ``--messages`` synthetic turns and, with LoCoMo, its 1,451 dev turns (no
  episodes: an episode is one more, long, text per session).

* ``accept_burst`` / ``accept_steady``: the latency of ``await bridge.submit(...)`` in
  non-blocking mode with the write-ahead journal on (each accepted message is journaled before
  ``submit`` returns), over ``--messages`` synthetic turns spread over ``--sessions`` sessions;
  the queue is sized so that it never fills (backpressure is a policy, not a latency). A burst
  submits back to back; steady yields to the event loop after each submit, so the workers
  extract, embed and commit between the accepts (and compete for the GIL). Wall-clock times
  include waiting for a CPU (on a shared, loaded machine the scheduler's 4 ms ticks show in the
  p99); ``cpu`` is the CPU time the calling thread spent in ``submit`` (``thread_time``), what
  the call itself costs.
* ``end_to_end`` / ``end_to_end_steady``: messages per second from the first ``submit`` until
  ``flush()`` returns, i.e. until every message is extracted, reconciled, embedded and committed.
* ``blocking``: messages per second through ``process_message`` (the work is done before each
  call returns), the same turns.
* ``remember``: latency and messages per second of ``remember`` (what ``UniversalAgent`` calls
  after each turn: the message is journaled, stored verbatim and its rule facts stored before
  the call returns), the same turns.
* Every part runs with the bridge's default journal (``bridge-<project>.journal`` in the
  engine's folder): no ``journal_path`` is passed.
* ``locomo``: the time to ingest the three LoCoMo dev conversations with ``bridge_conversation``,
  one call per session; speaker names as speakers, session dates as timestamps (turn ``i`` of a
  session at the session time plus ``i`` seconds, to keep the order), ``dia_id`` as message id;
  each session is also saved as an episode in the folder's ``episodes.sqlite3``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks._common import RESULTS, locomo_file, percentiles, synthetic_sentences, write_json
from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.core import Conversation
from sagewai.embeddings import Embedder, Vector, Vectors
from sagewai.extraction import RuleBasedFactExtractor
from sagewai.stores import SqliteEpisodeStore


def make_embedder(name: str) -> Embedder:
    """The embedded default (MiniLM, offline) or the fake hashing embedder."""
    if name == "fake":
        from sagewai.testing import FakeEmbedder

        return FakeEmbedder(384)
    from sagewai.embeddings import MiniLMEmbedder

    return MiniLMEmbedder()


def turns(n: int, sessions: int) -> list[tuple[str, str]]:
    """``n`` first-person turns, round-robin over ``sessions``: ``(session_id, text)``."""
    sentences = synthetic_sentences(n)
    out = []
    for i, sentence in enumerate(sentences):
        subject, _, rest = sentence.partition(" ")
        out.append((f"s{i % sessions}", f"I {rest} ({subject} told me)."))
    return out


async def bench_background(
    folder: Path,
    embedder: Embedder,
    messages: list[tuple[str, str]],
    fsync: str,
    *,
    steady: bool,
) -> dict[str, Any]:
    """Accept latency of ``submit`` and end-to-end throughput of ``submit`` + ``flush``.

    ``steady=False`` submits back to back (a burst: the workers start once the loop yields);
    ``steady=True`` yields to the event loop after each submit, so extraction, embedding and
    commits run between the accepts, as in an agent loop.
    """
    async with ContextEngine.local(folder, embedder=embedder, project_id="bench") as ctx:
        await embedder.embed_documents(["warm up the model"])
        bridge = MemoryBridge(
            context_engine=ctx,
            fact_extractor=RuleBasedFactExtractor(),
            fsync=fsync,  # type: ignore[arg-type]
            queue_size=len(messages) + 1,
            workers=2,
        )
        await bridge.start()
        assert bridge.journal is not None  # the default journal, in the engine's folder
        latencies: list[float] = []
        cpu: list[float] = []
        started = time.perf_counter()
        for session_id, text in messages:
            before, before_cpu = time.perf_counter_ns(), time.thread_time_ns()
            await bridge.submit({"role": "user", "content": text}, session_id=session_id)
            cpu.append((time.thread_time_ns() - before_cpu) / 1e6)
            latencies.append((time.perf_counter_ns() - before) / 1e6)
            if steady:
                await asyncio.sleep(0)
        accepted = time.perf_counter() - started
        await bridge.flush()
        elapsed = time.perf_counter() - started
        await bridge.aclose()
        stats = bridge.stats
        return {
            "accept": {
                **percentiles(latencies),
                "max_ms": round(max(latencies), 3),
                "cpu": {**percentiles(cpu), "max_ms": round(max(cpu), 3)},
                "messages": len(latencies),
                "fsync": fsync,
                "accepted_per_s": round(len(latencies) / accepted, 1),
            },
            "end_to_end": {
                "messages": len(messages),
                "seconds": round(elapsed, 3),
                "messages_per_s": round(len(messages) / elapsed, 1),
                "facts_added": stats.facts_added,
                "facts_updated": stats.facts_updated,
                "facts_reinforced": stats.facts_reinforced,
            },
        }


async def bench_remember(
    folder: Path, embedder: Embedder, messages: list[tuple[str, str]]
) -> dict[str, Any]:
    """Latency and throughput of ``remember`` (the agent's path: journaled and recorded, i.e.
    stored verbatim with the rules' facts, before it returns)."""
    async with ContextEngine.local(folder, embedder=embedder, project_id="bench") as ctx:
        await embedder.embed_documents(["warm up the model"])
        bridge = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor())
        await bridge.start()
        latencies: list[float] = []
        started = time.perf_counter()
        for session_id, text in messages:
            before = time.perf_counter_ns()
            await bridge.remember({"role": "user", "content": text}, session_id=session_id)
            latencies.append((time.perf_counter_ns() - before) / 1e6)
        await bridge.flush()
        elapsed = time.perf_counter() - started
        await bridge.aclose()
        return {
            **percentiles(latencies),
            "messages": len(messages),
            "seconds": round(elapsed, 3),
            "messages_per_s": round(len(messages) / elapsed, 1),
        }


async def bench_blocking(
    folder: Path, embedder: Embedder, messages: list[tuple[str, str]]
) -> dict[str, Any]:
    """Throughput of ``process_message`` (extract every 5 turns, work done before returning)."""
    async with ContextEngine.local(folder, embedder=embedder, project_id="bench") as ctx:
        bridge = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor())
        started = time.perf_counter()
        for session_id, text in messages:
            await bridge.process_message(text, session_id=session_id)
        await bridge.flush()
        elapsed = time.perf_counter() - started
        return {
            "messages": len(messages),
            "seconds": round(elapsed, 3),
            "messages_per_s": round(len(messages) / elapsed, 1),
        }


def locomo_sessions(path: Path) -> list[Conversation]:
    """Every session of every LoCoMo dev conversation as a :class:`Conversation`."""
    samples = json.loads(path.read_text(encoding="utf-8"))
    out: list[Conversation] = []
    for sample in samples:
        conversation = sample["conversation"]
        number = 1
        while f"session_{number}" in conversation:
            when = datetime.strptime(
                conversation[f"session_{number}_date_time"], "%I:%M %p on %d %B, %Y"
            ).replace(tzinfo=UTC)
            messages = [
                {
                    "role": "user",
                    "content": turn["text"],
                    "speaker": turn["speaker"],
                    "id": turn["dia_id"],
                    "timestamp": when + timedelta(seconds=index),
                }
                for index, turn in enumerate(conversation[f"session_{number}"])
                if turn.get("text", "").strip()
            ]
            out.append(Conversation.of(messages, session_id=f"{sample['sample_id']}-s{number}"))
            number += 1
    return out


async def bench_locomo(folder: Path, embedder: Embedder, path: Path) -> dict[str, Any]:
    """Time to bridge the three LoCoMo dev conversations (facts and episodes)."""
    sessions = locomo_sessions(path)
    async with ContextEngine.local(folder, embedder=embedder, project_id="locomo") as ctx:
        if ctx.episodes.store is None:  # ContextEngine.local keeps one in its folder
            ctx.episodes.attach(SqliteEpisodeStore(folder / "episodes.sqlite3", embedder=embedder))
        bridge = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor())
        started = time.perf_counter()
        stored = 0
        for conversation in sessions:
            stored += await bridge.bridge_conversation(conversation)
        elapsed = time.perf_counter() - started
        n_turns = sum(len(c.messages) for c in sessions)
        return {
            "conversations": len(
                {c.session_id.rsplit("-s", 1)[0] for c in sessions if c.session_id}
            ),
            "sessions": len(sessions),
            "turns": n_turns,
            "seconds": round(elapsed, 2),
            "turns_per_s": round(n_turns / elapsed, 1),
            "facts_stored": stored,
            "facts_reinforced": bridge.stats.facts_reinforced,
            "active_facts": await ctx.count(statuses=["active"]),
        }


class CountingEmbedder:
    """An embedder that remembers the texts it embeds (and counts its calls) for another one
    (also ``tests/test_bridge_vectors.py``'s)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.texts: list[str] = []
        self.calls = 0

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def name(self) -> str:
        return self.inner.name

    async def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        self.calls += 1
        return await self.inner.embed_documents(texts)

    async def embed_query(self, text: str) -> Vector:
        return await self.inner.embed_query(text)


async def embedder_rate(embedder: Embedder, batches: Sequence[Sequence[str]]) -> dict[str, Any]:
    """The embedder's own sentences per second on ``batches`` (one call each, as the bridge
    sends them)."""
    await embedder.embed_documents(["warm up the model"])
    sentences = sum(len(batch) for batch in batches)
    started, cpu = time.perf_counter(), time.process_time()
    for batch in batches:
        await embedder.embed_documents(list(batch))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "sentences": sentences,
        "seconds": round(elapsed, 2),
        "sentences_per_s": round(sentences / elapsed, 1),
        "cpu_seconds": round(cpu, 2),
        "sentences_per_cpu_s": round(sentences / cpu, 1),
    }


async def bridge_rate(
    folder: Path, embedder: Embedder, sessions: Sequence[Conversation], *, share: bool
) -> dict[str, Any]:
    """Turns per second of ``bridge_conversation`` over ``sessions`` (rules, no episodes), with
    the shared vectors (``share``) or every record's text embedded (the path before)."""
    counting = CountingEmbedder(embedder)
    async with ContextEngine.local(folder, embedder=counting, project_id="ratio") as ctx:
        await ctx.open()  # making the folder's stores is not ingest (the model is warm too)
        bridge = MemoryBridge(
            context_engine=ctx,
            fact_extractor=RuleBasedFactExtractor(),
            save_episodes=False,
            share_vectors=share,
        )
        n_turns = sum(len(c.messages) for c in sessions)
        started, cpu = time.perf_counter(), time.process_time()
        for conversation in sessions:
            await bridge.bridge_conversation(conversation)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        await bridge.aclose()
        return {
            "turns": n_turns,
            "seconds": round(elapsed, 2),
            "turns_per_s": round(n_turns / elapsed, 1),
            "cpu_seconds": round(cpu, 2),
            "turns_per_cpu_s": round(n_turns / cpu, 1),
            "texts_embedded": len(counting.texts),
            "texts_per_turn": round(len(counting.texts) / n_turns, 3),
            "embed_calls": counting.calls,
            "facts_added": bridge.stats.facts_added,
            "facts_reinforced": bridge.stats.facts_reinforced,
        }


async def bench_ratio(
    folder: Path, embedder: Embedder, sessions: Sequence[Conversation]
) -> dict[str, Any]:
    """Ingest through the bridge against the embedder's own rate on the same texts, before
    (``share_vectors=False``) and after, in one run.

    The embedder's rate is measured before and after the two ingests and averaged (the machine's
    load drifts); ``ratio`` is the bridge's turns per second over that rate (wall clock), and
    ``cpu_ratio`` the same in the process's CPU time (all its threads), which the load of other
    processes moves far less.
    """
    batches = [[m.content for m in c.messages] for c in sessions]
    first = await embedder_rate(embedder, batches)
    before = await bridge_rate(folder / "before", embedder, sessions, share=False)
    after = await bridge_rate(folder / "after", embedder, sessions, share=True)
    second = await embedder_rate(embedder, batches)
    rate = (first["sentences_per_s"] + second["sentences_per_s"]) / 2
    cpu_rate = (first["sentences_per_cpu_s"] + second["sentences_per_cpu_s"]) / 2

    def ratios(run: dict[str, Any]) -> dict[str, Any]:
        return {
            **run,
            "ratio": round(run["turns_per_s"] / rate, 3),
            "cpu_ratio": round(run["turns_per_cpu_s"] / cpu_rate, 3),
        }

    return {
        "embedder": {
            "first": first,
            "second": second,
            "sentences_per_s": round(rate, 1),
            "sentences_per_cpu_s": round(cpu_rate, 1),
        },
        "before": ratios(before),
        "after": ratios(after),
        "goal_ratio": 0.7,
    }


def synthetic_sessions(messages: list[tuple[str, str]]) -> list[Conversation]:
    """The synthetic turns as one conversation per session."""
    by_session: dict[str, list[dict[str, Any]]] = {}
    for session_id, text in messages:
        by_session.setdefault(session_id, []).append({"role": "user", "content": text})
    return [Conversation.of(turns, session_id=sid) for sid, turns in by_session.items()]


async def main(args: argparse.Namespace) -> dict[str, Any]:
    """Run every part in its own temporary folder and collect the figures."""
    embedder = make_embedder(args.embedder)
    messages = turns(args.messages, args.sessions)
    results: dict[str, Any] = {
        "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
        "embedder": embedder.name,
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "niceness": os.nice(0),
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        locomo = args.locomo is not None and args.locomo.exists()
        results["ratio"] = {
            "synthetic": await bench_ratio(
                root / "ratio-synthetic", embedder, synthetic_sessions(messages)
            )
        }
        if locomo:
            results["ratio"]["locomo"] = await bench_ratio(
                root / "ratio-locomo", embedder, locomo_sessions(args.locomo)
            )
        if args.ratio_only:
            results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
            return results
        burst = await bench_background(root / "burst", embedder, messages, args.fsync, steady=False)
        steady = await bench_background(
            root / "steady", embedder, messages, args.fsync, steady=True
        )
        results["accept_burst"] = burst["accept"]
        results["accept_steady"] = steady["accept"]
        results["end_to_end"] = burst["end_to_end"]
        results["end_to_end_steady"] = steady["end_to_end"]
        results["blocking"] = await bench_blocking(root / "blocking", embedder, messages)
        results["remember"] = await bench_remember(root / "remember", embedder, messages)
        if locomo:
            results["locomo"] = await bench_locomo(root / "locomo", embedder, args.locomo)
        else:
            results["locomo"] = {"skipped": f"{args.locomo} not found"}
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return results


def parse() -> argparse.Namespace:
    """Command-line arguments."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument(
        "--locomo", type=Path, default=locomo_file(), help="LoCoMo JSON ($SAGEWAI_EVAL_DATA)"
    )
    parser.add_argument("--embedder", choices=["minilm", "fake"], default="minilm")
    parser.add_argument("--fsync", choices=["interval", "always", "never"], default="interval")
    parser.add_argument(
        "--ratio-only", action="store_true", help="only the before/after ingest ratio part"
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "bridge_bench.json")
    return parser.parse_args()


if __name__ == "__main__":
    arguments = parse()
    figures = asyncio.run(main(arguments))
    print(json.dumps(figures, indent=2))
    write_json(arguments.out, figures)
