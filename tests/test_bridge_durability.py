"""Nothing accepted is lost, with no close call; what was said is recalled from the next turn.

The first two tests run the seed's wiring exactly as a user types it, in child processes that
exit without ``aclose()`` (or are killed with SIGKILL right after a ``chat()`` returned), and a
second process on the same folder recalls everything. No model is reachable: the agent answers
offline and must still learn.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sagewai import ContextEngine, UniversalAgent
from sagewai.context import MemoryBridge
from sagewai.context._ranking import is_context_record
from sagewai.core import message_record_id
from sagewai.core._records import FactKind, FactStatus
from sagewai.intelligence import (
    HybridFactExtractor,
    LLMFactExtractor,
    MemoryConsolidator,
    RuleBasedFactExtractor,
)
from sagewai.testing import FakeEmbedder
from sagewai.testing._llm import ScriptedLLM

ROOT = Path(__file__).resolve().parent.parent
STATEMENTS = (
    "We decided to migrate to Postgres next quarter.",
    "My name is Dana and I lead the platform team.",
    "I prefer short answers.",
)
# What a user would ask about each statement later, and the word the answer must show.
QUESTIONS = (
    ("database migration", "Postgres"),
    ("who leads the platform team", "Dana"),
    ("how long should answers be", "short answers"),
)
KILL_TURNS = (
    "We decided to migrate to Postgres next quarter.",
    "Grandma taught me knitting when I was small.",  # the rules cannot read it: the model's turn
    "I prefer short answers.",
)


def _run_child(folder: Path, mode: str, **kwargs: object) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("OPENAI_API_KEY", None)
    return subprocess.Popen(
        [sys.executable, "-m", "tests.test_bridge_durability", str(folder), mode],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,  # type: ignore[call-overload]
    )


def _finish(child: subprocess.Popen[str], timeout: float = 240) -> dict[str, object]:
    out, err = child.communicate(timeout=timeout)
    assert child.returncode == 0, err
    return dict(json.loads(out.strip().splitlines()[-1]))


# --------------------------------------------------------------------------- child processes


async def _seed(folder: Path, turns: tuple[str, ...], *, announce: bool) -> list[str]:
    """The seed's wiring as written; returns the replies. Never closes anything."""
    ctx = ContextEngine.local(folder, project_id="prod")
    bridge = MemoryBridge(context_engine=ctx, fact_extractor=HybridFactExtractor())
    agent = UniversalAgent(name="helper", model="gpt-4o", context=ctx, memory_bridge=bridge)
    replies = []
    for number, text in enumerate(turns):
        replies.append(await agent.chat(text))
        if announce:
            print(f"RETURNED {number}", flush=True)
    return replies


async def _recall(folder: Path) -> dict[str, object]:
    """A later process on the same folder: search, and the agent's memory block."""
    ctx = ContextEngine.local(folder, project_id="prod")
    bridge = MemoryBridge(context_engine=ctx, fact_extractor=HybridFactExtractor())
    agent = UniversalAgent(name="helper", model="gpt-4o", context=ctx, memory_bridge=bridge)
    await bridge.start()  # what the agent's first turn does: replay what was left
    assert bridge.journal is not None
    pending = bridge.journal.pending_count
    searched: dict[str, list[str]] = {}
    blocks: dict[str, str] = {}
    tokens: list[int] = []
    for question, _ in QUESTIONS:
        found = await ctx.search(question, top_k=5)
        searched[question] = [r.fact.content for r in found] + [
            f.content for r in found for f in r.related
        ]
        reply = await agent.respond(question)
        blocks[question] = reply.memory.text
        tokens.append(reply.memory.tokens)
    records = await ctx.list(limit=1000, statuses=None)
    return {
        "searched": searched,
        "blocks": blocks,
        "tokens": tokens,
        "replayed": bridge.stats.messages_replayed,
        "pending": pending,
        "records": [
            [
                r.kind.value,
                r.status.value,
                r.content,
                r.sources[0].message_id if r.sources else None,
            ]
            for r in records
        ],
    }


async def _child(folder: Path, mode: str) -> None:
    from sagewai.llm import allow_model_requests

    allow_model_requests(False)  # no key and no network: every model call is refused at once
    if mode == "seed":
        replies = await _seed(folder, STATEMENTS, announce=False)
        print(json.dumps({"replies": replies}), flush=True)
    elif mode == "kill":
        await _seed(folder, KILL_TURNS[:2], announce=True)
        await asyncio.sleep(3600)  # killed here, right after the second chat() returned
    else:
        print(json.dumps(await _recall(folder)), flush=True)


# --------------------------------------------------------------------------- the tests


@pytest.mark.slow
def test_the_seed_wiring_is_recalled_by_the_next_process_without_a_close(tmp_path: Path) -> None:
    first = _finish(_run_child(tmp_path, "seed"))
    replies = first["replies"]
    assert isinstance(replies, list)
    assert len(replies) == 3
    # A journal in the folder and a stored record: the offline reply may say it was saved.
    assert all("I saved your message to memory." in reply for reply in replies)
    assert (tmp_path / "bridge-prod.journal").exists()

    later = _finish(_run_child(tmp_path, "recall"))
    searched, blocks = later["searched"], later["blocks"]
    assert isinstance(searched, dict)
    assert isinstance(blocks, dict)
    for question, word in QUESTIONS:
        assert any(word in text for text in searched[question]), (question, searched[question])
        assert word in blocks[question], (question, blocks[question])
    records = later["records"]
    assert isinstance(records, list)
    messages = [r for r in records if r[0] == FactKind.MESSAGE.value]
    assert sorted(r[2] for r in messages if r[2] in STATEMENTS) == sorted(STATEMENTS)
    assert later["pending"] == 0
    tokens = later["tokens"]
    assert isinstance(tokens, list)
    assert max(tokens) <= 400


@pytest.mark.slow
def test_a_chat_that_returned_survives_sigkill_once_and_only_once(tmp_path: Path) -> None:
    child = _run_child(tmp_path, "kill")
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "RETURNED 0"
        assert child.stdout.readline().strip() == "RETURNED 1"
        child.send_signal(signal.SIGKILL)  # right after chat() returned: nothing flushed
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
        child.communicate()

    later = _finish(_run_child(tmp_path, "recall"))
    records = later["records"]
    assert isinstance(records, list)
    said = [r[2] for r in records if r[0] == FactKind.MESSAGE.value and r[2] in KILL_TURNS]
    assert Counter(said) == Counter(KILL_TURNS[:2])  # each accepted message once, none missing
    live = [r for r in records if r[0] == FactKind.FACT.value and r[1] == "active"]
    assert live, "the rules' facts of the first turn were stored at once"
    assert len({r[2] for r in live}) == len(live)  # no fact stored twice
    assert later["replayed"] >= 1  # the model's turn waited in the journal, and was replayed
    assert later["pending"] == 0
    searched = later["searched"]
    assert isinstance(searched, dict)
    assert any("Postgres" in text for text in searched["database migration"])


async def test_a_fact_of_one_turn_is_in_the_memory_block_of_the_next(tmp_path: Path) -> None:
    ctx = ContextEngine.local(tmp_path, project_id="prod", embedder=FakeEmbedder())
    bridge = MemoryBridge(
        context_engine=ctx, extract_every_n_turns=5, fact_extractor=HybridFactExtractor()
    )
    agent = UniversalAgent(name="helper", model="gpt-4o", context=ctx, memory_bridge=bridge)
    await agent.chat("We decided to migrate to Postgres next quarter.", session_id="s1")
    report = await MemoryConsolidator(context_engine=ctx).consolidate()
    assert report.total_processed >= 1  # the decision is a fact already, not in a buffer
    reply = await agent.respond("When do we migrate to Postgres?", session_id="s1")
    assert "decided to migrate to Postgres next quarter" in reply.memory.text
    assert reply.memory.fact_ids
    # One line per source: the fact with its date, not the same message again beside it.
    fact_lines = [line for line in reply.memory.text.splitlines() if "Postgres" in line]
    assert len(fact_lines) == 1, reply.memory.text
    assert datetime.now(UTC).date().isoformat() in fact_lines[0]
    # In a later session too (same process).
    other = await agent.respond("What did we decide about Postgres?", session_id="s2")
    assert "Postgres" in other.memory.text
    await agent.aclose()
    await ctx.close()


async def test_messages_are_stored_verbatim_with_provenance_and_facts_point_to_them() -> None:
    said_at = datetime(2024, 3, 13, 9, 30, tzinfo=UTC)
    async with ContextEngine.in_memory(project_id="p", embedder=FakeEmbedder()) as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=5, fact_extractor=RuleBasedFactExtractor()
        )
        message = {
            "role": "user",
            "content": "I met Bob yesterday.",
            "name": "alice",
            "id": "D1:3",
            "timestamp": said_at.isoformat(),
        }
        await bridge.process_message(message, session_id="s1")
        await bridge.process_message(message, session_id="s1")  # a replay: nothing twice
        record = await ctx.get(message_record_id("p", "s1", "D1:3"))
        assert record.kind is FactKind.MESSAGE
        assert record.content == "I met Bob yesterday."
        (source,) = record.sources
        assert (source.session_id, source.message_id, source.turn_index) == ("s1", "D1:3", 0)
        assert (source.role, source.speaker, source.timestamp) == ("user", "alice", said_at)
        (fact,) = await ctx.list(kinds=["fact"])
        assert (fact.session_id, fact.sources[0].message_id) == ("s1", "D1:3")
        assert "2024-03-12" in fact.content  # "yesterday", grounded in the message's time
        assert len(await ctx.list(kinds=["message"])) == 1
        # Searchable at once, before any extraction batch ran.
        found = await ctx.search("Bob", top_k=5)
        assert {r.fact.id for r in found} | {f.id for r in found for f in r.related} >= {
            record.id,
            fact.id,
        }


async def test_the_rules_run_at_once_and_the_model_every_n_turns() -> None:
    answer = {"content": "Grandma taught the user to knit.", "fact_type": "event",
              "confidence": 0.8, "subject": "user", "predicate": None, "object": None,
              "negated": False, "exact_values": [], "event_time": None}  # fmt: skip
    llm = ScriptedLLM([json.dumps({"facts": [answer]})] * 2)
    extractor = HybridFactExtractor(llm_extractor=LLMFactExtractor(client=llm))
    async with ContextEngine.in_memory(project_id="p", embedder=FakeEmbedder()) as ctx:
        bridge = MemoryBridge(context_engine=ctx, extract_every_n_turns=2, fact_extractor=extractor)
        first = await bridge.process_message("I prefer short answers.", session_id="s1")
        assert [f.content for f in first] == ["The user prefers short answers."]
        await bridge.process_message(
            "Grandma taught me knitting when I was small.", session_id="s1"
        )
        assert llm.calls == []  # one turn for the model is buffered: the model waits for two
        verbatim = [m for m in await ctx.list(kinds=["message"]) if not is_context_record(m)]
        assert len(verbatim) == 2  # but both turns are memory already
        later = await bridge.process_message(
            "Knitting calms me down after long days.", session_id="s1"
        )
        assert len(llm.calls) == 2  # the batch of two, each turn with its context
        assert "Grandma taught the user to knit." in [f.content for f in later]
        assert bridge.stats.messages_processed == 3


async def test_a_models_relative_dates_are_grounded_in_the_message_time() -> None:
    said_at = datetime(2024, 3, 13, 9, 30, tzinfo=UTC)
    answer = {"content": "The user ships the release in two weeks.", "fact_type": "action",
              "confidence": 0.8, "subject": "user", "predicate": None, "object": None,
              "negated": False, "exact_values": [], "event_time": None}  # fmt: skip
    extractor = LLMFactExtractor(client=ScriptedLLM([json.dumps({"facts": [answer]})]))
    async with ContextEngine.in_memory(project_id="p", embedder=FakeEmbedder()) as ctx:
        bridge = MemoryBridge(context_engine=ctx, extract_every_n_turns=1, fact_extractor=extractor)
        message = {"role": "user", "content": "We ship it in two weeks.", "timestamp": said_at}
        await bridge.process_message(message, session_id="s1")
        (fact,) = await ctx.list(kinds=["fact"])
        assert fact.content == "The user ships the release in two weeks (2024-03-27)."


async def test_a_long_message_is_stored_whole_never_refused() -> None:
    text = " ".join(
        f"Paragraph {n} of the design review notes for service blue." for n in range(700)
    )
    text += " The rollback token is ZX-9913."
    assert len(text) > 40_000
    async with ContextEngine.in_memory(project_id="p", embedder=FakeEmbedder()) as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=5, fact_extractor=RuleBasedFactExtractor()
        )
        await bridge.process_message({"role": "user", "content": text, "id": "m1"}, session_id="s")
        parts = sorted(
            await ctx.list(kinds=["message"]), key=lambda p: int(str(p.metadata.get("part", 0)))
        )
        assert "".join(p.content for p in parts) == text  # in parts if a record holds less
        assert {p.sources[0].message_id for p in parts} == {"m1"}
        found = await ctx.search("rollback token ZX-9913", top_k=10)
        assert any("ZX-9913" in f.content for r in found for f in (r.fact, *r.related))


async def test_consolidation_never_merges_or_decays_a_message() -> None:
    long_ago = datetime(2020, 1, 1, tzinfo=UTC)
    async with ContextEngine.in_memory(project_id="p", embedder=FakeEmbedder()) as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=1, fact_extractor=RuleBasedFactExtractor()
        )
        for session in ("s1", "s2"):  # the same words twice, years ago
            said = {"role": "user", "content": "The deploy key is 7f3a-22.", "timestamp": long_ago}
            await bridge.process_message(said, session_id=session)
        report = await MemoryConsolidator(context_engine=ctx).consolidate()
        assert report.total_processed >= 1
        messages = await ctx.list(kinds=["message"], statuses=None)
        assert len(messages) == 2
        assert all(m.status is FactStatus.ACTIVE and m.strength == 1.0 for m in messages)


async def test_forgetting_a_session_or_a_subject_removes_its_messages_too() -> None:
    async with ContextEngine.in_memory(project_id="p", embedder=FakeEmbedder()) as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=1, fact_extractor=RuleBasedFactExtractor()
        )
        await bridge.process_message("I work at Initech.", session_id="s1", user_id="ana")
        await bridge.process_message("I live in Porto.", session_id="s2", user_id="ana")
        await bridge.process_message("Porto is lovely in May.", session_id="s2", user_id="ana")
        await ctx.forget(session_id="s1")
        left = await ctx.list(user_id="ana", statuses=None)
        assert not any("Initech" in f.content for f in left)
        await ctx.forget(subject="Porto")
        left = await ctx.list(user_id="ana", statuses=None)
        assert not any("Porto" in f.content for f in left), [f.content for f in left]


async def test_an_engine_without_a_folder_says_so_and_the_agent_claims_no_save() -> None:
    async with ContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
        bridge = MemoryBridge(context_engine=ctx)
        assert bridge.journal is None
        assert not bridge.durable
        agent = UniversalAgent(name="helper", context=ctx, memory_bridge=bridge)
        answer = await agent.chat("I prefer short answers.")
        assert "I saved your message" not in answer
        assert "not saved to disk" in answer
        await agent.aclose()


async def test_the_default_journal_can_be_switched_off_or_moved(tmp_path: Path) -> None:
    ctx = ContextEngine.local(tmp_path / "mem", project_id="prod", embedder=FakeEmbedder())
    assert MemoryBridge(context_engine=ctx, journal=False).journal is None
    moved = MemoryBridge(context_engine=ctx, journal_path=tmp_path / "elsewhere.journal")
    assert moved.journal is not None
    assert moved.journal.path == tmp_path / "elsewhere.journal"
    # Two bridges on one folder each get a journal (the second a sibling file).
    first = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor())
    second = MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor())
    await first.process_message("I live in Porto.", session_id="a")
    await second.process_message("I work at Initech.", session_id="b")
    assert first.journal is not None
    assert second.journal is not None
    assert first.journal.path != second.journal.path
    await first.aclose()
    await second.aclose()
    facts = await ctx.list(kinds=["fact"], statuses=[FactStatus.ACTIVE])
    assert {f.content for f in facts} == {"The user lives in Porto.", "The user works at Initech."}
    await ctx.close()


if __name__ == "__main__":
    asyncio.run(_child(Path(sys.argv[1]), sys.argv[2]))
