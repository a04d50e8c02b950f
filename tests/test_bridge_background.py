"""MemoryBridge, non-blocking API: submit, backpressure, failures, and a real crash and replay.

The crash test runs this module as a child process (``python -m tests.test_bridge_background``):
the child accepts messages through a slow extractor and is killed with SIGKILL while most of
them are still unwritten; a second child restarts on the same folder and journal.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from sagewai.context import MemoryBridge
from sagewai.context._engine import ContextEngine
from sagewai.context.bridge._journal import WriteAheadJournal
from sagewai.core._queries import WriteBatch
from sagewai.core._records import Fact, FactStatus, FactType
from sagewai.errors import BackendError, ConfigurationError, SagewaiTimeoutError
from sagewai.extraction._base import ExtractedFact, ExtractionContext
from sagewai.extraction._exact_values import find_exact_values
from sagewai.stores.memory._metadata import InMemoryMetadataStore
from sagewai.testing import FakeEmbedder
from tests.helpers import memory_engine

ROOT = Path(__file__).resolve().parent.parent


class LineExtractor:
    """One fact per message, its text verbatim; optionally slow or gated."""

    def __init__(self, delay: float = 0.0, gate: asyncio.Event | None = None) -> None:
        self.delay = delay
        self.gate = gate

    async def extract(
        self, text: str, context: ExtractionContext | None = None
    ) -> list[ExtractedFact]:
        if self.gate is not None:
            await self.gate.wait()
        if self.delay:
            await asyncio.sleep(self.delay)
        return [
            ExtractedFact(
                content=text,
                fact_type=FactType.GENERAL,
                confidence=0.9,
                exact_values=find_exact_values(text),
                extractor="lines",
            )
        ]


class FlakyMetadataStore(InMemoryMetadataStore):
    """Fault injection: the first ``failures`` batches fail with ``error``."""

    def __init__(self, failures: int, error: Exception) -> None:
        super().__init__()
        self.failures = failures
        self.error = error

    async def apply(self, batch: WriteBatch) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise self.error
        await super().apply(batch)


def message_text(session: int, index: int) -> str:
    return f"Session {session} note {index} records order {session * 1000 + index}."


def facts_per_message(facts: list[Fact]) -> Counter[tuple[str | None, str | None]]:
    return Counter((f.sources[0].session_id, f.sources[0].message_id) for f in facts)


async def test_fifty_sessions_of_twenty_messages_lose_and_duplicate_nothing(
    tmp_path: Path,
) -> None:
    async with memory_engine() as ctx:
        bridge = MemoryBridge(
            context_engine=ctx,
            fact_extractor=LineExtractor(),
            journal_path=tmp_path / "bridge.journal",
            extract_every_n_turns=5,
            workers=4,
            queue_size=64,
        )

        async def talk(session: int) -> list[str]:
            return [
                await bridge.submit(
                    {"role": "user", "content": message_text(session, i), "id": f"m{i}"},
                    session_id=f"s{session}",
                )
                for i in range(20)
            ]

        accepted = await asyncio.gather(*(talk(s) for s in range(50)))
        await bridge.aclose()
        assert sum(len(ids) for ids in accepted) == 1000
        facts = await ctx.list(kinds=["fact"], limit=5000)
        per_message = facts_per_message(facts)
        assert len(per_message) == 1000
        assert set(per_message.values()) == {1}
        assert {f.content for f in facts} == {
            message_text(s, i) for s in range(50) for i in range(20)
        }
        assert await ctx.count(kinds=["fact"]) == 1000  # nothing superseded, merged or doubled
        assert bridge.stats.messages_processed == 1000
    journal = WriteAheadJournal(tmp_path / "bridge.journal", fsync="never")
    assert journal.open().pending == []
    journal.close()


async def test_turn_order_within_a_session_is_kept_in_the_background() -> None:
    async with memory_engine() as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, fact_extractor=LineExtractor(), extract_every_n_turns=2, workers=3
        )
        for i in range(9):
            await bridge.submit(message_text(1, i), session_id="s1")
        await bridge.flush()
        facts = sorted(await ctx.list(kinds=["fact"]), key=lambda f: f.sources[0].turn_index or 0)
        assert [f.sources[0].turn_index for f in facts] == list(range(9))
        assert [f.content for f in facts] == [message_text(1, i) for i in range(9)]
        await bridge.aclose()


async def test_a_full_queue_blocks_then_refuses_without_accepting(tmp_path: Path) -> None:
    gate = asyncio.Event()
    async with memory_engine() as ctx:
        bridge = MemoryBridge(
            context_engine=ctx,
            fact_extractor=LineExtractor(gate=gate),
            journal_path=tmp_path / "bridge.journal",
            extract_every_n_turns=1,
            workers=1,
            queue_size=2,
            submit_timeout=0.05,
        )
        accepted: list[str] = []
        refusal: SagewaiTimeoutError | None = None
        for i in range(20):
            try:
                accepted.append(await bridge.submit(message_text(1, i), session_id="s1"))
            except SagewaiTimeoutError as exc:
                refusal = exc
                break
        assert refusal is not None
        refused = message_text(1, len(accepted))
        assert 2 <= len(accepted) < 20
        gate.set()
        await bridge.aclose()
        stored = {f.content for f in await ctx.list(kinds=["fact"])}
        assert stored == {message_text(1, i) for i in range(len(accepted))}
        assert refused not in stored
        assert bridge.stats.messages_accepted == len(accepted)


async def test_transient_store_failures_are_retried() -> None:
    store = FlakyMetadataStore(failures=2, error=BackendError("connection reset"))
    embedder = FakeEmbedder()
    from sagewai.stores.memory._vector import InMemoryVectorStore

    async with ContextEngine(
        metadata_store=store,
        vector_store=InMemoryVectorStore(embedder.dimension),
        project_id="p1",
        embedder=embedder,
    ) as ctx:
        bridge = MemoryBridge(context_engine=ctx, fact_extractor=LineExtractor())
        await bridge.submit(message_text(1, 1), session_id="s1")
        await bridge.aclose()
        assert [f.content for f in await ctx.list(kinds=["fact"])] == [message_text(1, 1)]
        assert bridge.stats.batches_failed == 0


async def test_a_failed_batch_stays_in_the_journal_for_the_next_start(tmp_path: Path) -> None:
    journal = tmp_path / "bridge.journal"
    embedder = FakeEmbedder()
    from sagewai.stores.memory._vector import InMemoryVectorStore

    healthy = InMemoryMetadataStore()
    broken = FlakyMetadataStore(failures=1, error=ConfigurationError("schema missing"))
    vectors = InMemoryVectorStore(embedder.dimension)
    ctx = ContextEngine(
        metadata_store=broken, vector_store=vectors, project_id="p1", embedder=embedder
    )
    bridge = MemoryBridge(context_engine=ctx, fact_extractor=LineExtractor(), journal_path=journal)
    await bridge.submit(message_text(1, 1), session_id="s1")
    with pytest.raises(BackendError, match="stay in the journal"):
        await bridge.flush()
    await bridge.aclose()
    assert bridge.stats.batches_failed == 1
    assert await ctx.count(kinds=["fact"]) == 0

    ctx2 = ContextEngine(
        metadata_store=healthy, vector_store=vectors, project_id="p1", embedder=embedder
    )
    restarted = MemoryBridge(
        context_engine=ctx2, fact_extractor=LineExtractor(), journal_path=journal
    )
    await restarted.start()
    assert restarted.stats.messages_replayed == 1
    assert [f.content for f in await ctx2.list(kinds=["fact"])] == [message_text(1, 1)]
    await restarted.aclose()


async def test_idle_sessions_are_extracted_without_a_flush() -> None:
    async with memory_engine() as ctx:
        bridge = MemoryBridge(
            context_engine=ctx,
            fact_extractor=LineExtractor(),
            extract_every_n_turns=5,
            idle_flush_seconds=0.05,
        )
        await bridge.submit(message_text(1, 1), session_id="s1")
        for _ in range(500):  # up to 10 s on a loaded machine; usually ~0.1 s
            await asyncio.sleep(0.02)
            if await ctx.count(kinds=["fact"]):
                break
        assert await ctx.count(kinds=["fact"]) == 1
        await bridge.aclose()


# --------------------------------------------------------------------------- crash and replay

SESSIONS, PER_SESSION = 4, 10


def _engine(folder: Path) -> ContextEngine:
    return ContextEngine.local(folder / "memory", embedder=FakeEmbedder(), project_id="crash")


async def _child(folder: Path, mode: str) -> None:
    async with _engine(folder) as ctx:
        bridge = MemoryBridge(
            context_engine=ctx,
            fact_extractor=LineExtractor(delay=0.3 if mode == "accept" else 0.0),
            journal_path=folder / "bridge.journal",
            extract_every_n_turns=2,
            workers=1,
        )
        if mode == "accept":
            for session in range(SESSIONS):
                for i in range(PER_SESSION):
                    await bridge.submit(
                        {"role": "user", "content": message_text(session, i), "id": f"m{i}"},
                        session_id=f"s{session}",
                    )
            print("ACCEPTED", flush=True)
            await asyncio.sleep(3600)  # killed here, with most batches still unwritten
        await bridge.start()
        await bridge.aclose()
        facts = await ctx.list(kinds=["fact"], limit=1000, statuses=None)
        print(
            json.dumps(
                {
                    "replayed": bridge.stats.messages_replayed,
                    "facts": [[f.sources[0].session_id, f.sources[0].message_id] for f in facts],
                    "statuses": sorted({f.status.value for f in facts}),
                }
            ),
            flush=True,
        )


@pytest.mark.slow
def test_accepted_messages_survive_sigkill_and_are_stored_exactly_once(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "tests.test_bridge_background", str(tmp_path)]
    child = subprocess.Popen(
        [*command, "accept"], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ACCEPTED"
        # Let the slow worker commit a batch or two, then kill it between accept and write.
        subprocess.run([sys.executable, "-c", "import time; time.sleep(1.0)"], check=True)
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
    pending = WriteAheadJournal(tmp_path / "bridge.journal", fsync="never")
    unwritten = len(pending.open().pending)
    pending.close()
    assert 0 < unwritten <= SESSIONS * PER_SESSION

    done = subprocess.run(
        [*command, "replay"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["replayed"] == unwritten
    assert report["statuses"] == [FactStatus.ACTIVE.value]
    stored = Counter(tuple(pair) for pair in report["facts"])
    expected = {(f"s{s}", f"m{i}") for s in range(SESSIONS) for i in range(PER_SESSION)}
    assert set(stored) == expected
    assert set(stored.values()) == {1}


if __name__ == "__main__":
    asyncio.run(_child(Path(sys.argv[1]), sys.argv[2]))
