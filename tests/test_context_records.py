"""Context records: a short message stored with the end of the turn before it, fused with it."""

from __future__ import annotations

import pytest

from sagewai.agent._recall import by_source, verbatim
from sagewai.context import MemoryBridge
from sagewai.context._ranking import (
    CONTEXT_MARK,
    RankedCandidate,
    SearchConfig,
    group_by_source,
    is_context_record,
)
from sagewai.context.bridge._turns import context_prefix
from sagewai.core._conversation import Conversation
from sagewai.core._ids import context_record_id
from sagewai.core._records import Fact, FactKind, Provenance
from sagewai.errors import ConfigurationError
from sagewai.extraction._rules import RuleBasedFactExtractor
from tests.helpers import memory_engine

QUESTION = "Did you finally visit the pottery studio in Lisbon?"
REPLY = "Yes, last Friday, it was wonderful."
CHAT = [
    {"role": "user", "content": "Hi there!", "id": "m0"},
    {"role": "assistant", "content": QUESTION, "id": "m1"},
    {"role": "user", "content": REPLY, "id": "m2"},
]


def bridge_for(engine: object, **options: object) -> MemoryBridge:
    return MemoryBridge(
        context_engine=engine,  # type: ignore[arg-type]
        fact_extractor=RuleBasedFactExtractor(),
        save_episodes=False,
        **options,  # type: ignore[arg-type]
    )


async def test_a_reply_is_stored_with_the_turn_before_it() -> None:
    async with memory_engine() as ctx:
        bridge = bridge_for(ctx)
        await bridge.bridge_conversation(Conversation.of(CHAT, session_id="s1"))
        messages = await ctx.list(kinds=["message"])
        around = [m for m in messages if is_context_record(m)]
        # m0 has no earlier turn; m1 and m2 have one.
        assert sorted(m.sources[0].message_id for m in around) == ["m1", "m2"]
        reply = next(m for m in around if m.sources[0].message_id == "m2")
        assert reply.id == context_record_id(ctx.project_id, "s1", "m2")
        assert reply.content == f"{QUESTION}\n{REPLY}"
        assert verbatim(reply).content == REPLY
        assert reply.sources[0].session_id == "s1"
        assert reply.sources[0].turn_index == 2
        # Bridging the same conversation again stores nothing twice.
        await bridge.bridge_conversation(Conversation.of(CHAT, session_id="s1"))
        assert len(await ctx.list(kinds=["message"])) == len(messages) == 5


async def test_search_by_the_question_finds_the_reply_as_one_source() -> None:
    async with memory_engine() as ctx:
        await bridge_for(ctx).bridge_conversation(Conversation.of(CHAT, session_id="s1"))
        results = await ctx.search("pottery studio Lisbon", top_k=5)
        keys = [(r.fact.sources[0].session_id, r.fact.sources[0].message_id) for r in results]
        assert len(keys) == len(set(keys))  # one result per source
        reply = next(r for r in results if r.fact.sources[0].message_id == "m2")
        # The result shows the message itself; the context record that found it is related.
        assert reply.fact.content == REPLY
        assert not is_context_record(reply.fact)
        assert any(is_context_record(f) for f in reply.related)
        # The agent's block shows the reply verbatim, never the earlier turn's words as its own.
        shown = [r.fact.content for r in by_source(results)]
        assert REPLY in shown
        assert all(not s.startswith(QUESTION + "\n") for s in shown)


async def test_context_records_can_be_switched_off() -> None:
    async with memory_engine() as ctx:
        bridge = bridge_for(ctx, context_records=False)
        await bridge.bridge_conversation(Conversation.of(CHAT, session_id="s1"))
        messages = await ctx.list(kinds=["message"])
        assert len(messages) == 3
        assert not any(is_context_record(m) for m in messages)


async def test_context_records_only_after_the_roles_asked_for() -> None:
    """``context_after=("user",)``: a message gets the turn before it only when a user said it."""
    async with memory_engine() as ctx:
        bridge = bridge_for(ctx, context_after=["user"])
        await bridge.bridge_conversation(Conversation.of(CHAT, session_id="s1"))
        around = [m for m in await ctx.list(kinds=["message"]) if is_context_record(m)]
        # m1 follows the user's m0; m2 follows the assistant's m1 and gets no record.
        assert [m.sources[0].message_id for m in around] == ["m1"]


async def test_context_max_chars_bounds_the_messages_that_get_a_context_record() -> None:
    async with memory_engine() as ctx:
        bridge = bridge_for(ctx, context_max_chars=len(REPLY))
        await bridge.bridge_conversation(Conversation.of(CHAT, session_id="s1"))
        around = [m for m in await ctx.list(kinds=["message"]) if is_context_record(m)]
        assert [m.sources[0].message_id for m in around] == ["m2"]  # the question is longer
    with pytest.raises(ConfigurationError):
        bridge_for(ctx, context_max_chars=-1)


async def test_long_messages_and_turns_of_other_roles_get_no_context_record() -> None:
    chat = [
        {"role": "system", "content": "You are terse.", "id": "m0"},
        {"role": "user", "content": "Short question after a system prompt?", "id": "m1"},
        {"role": "assistant", "content": "word " * 400, "id": "m2"},
    ]
    async with memory_engine() as ctx:
        await bridge_for(ctx).bridge_conversation(Conversation.of(chat, session_id="s1"))
        assert not [m for m in await ctx.list(kinds=["message"]) if is_context_record(m)]


def candidate(fact_id: str, score: float, *, context: bool = False) -> RankedCandidate:
    fact = Fact(
        id=fact_id,
        project_id="p",
        content=fact_id,
        kind=FactKind.MESSAGE,
        metadata={CONTEXT_MARK: 0} if context else {},
        sources=(Provenance(session_id="s", message_id="m1"),),
    )
    return RankedCandidate(fact, score)


def test_a_group_shows_its_message_and_scores_as_its_best_record() -> None:
    [group] = group_by_source([candidate("ctx", 0.9, context=True), candidate("msg", 0.5)])
    assert group.best.fact.id == "msg"
    assert group.score == 0.9
    assert [o.fact.id for o in group.others] == ["ctx"]
    [alone] = group_by_source([candidate("ctx", 0.4, context=True)])
    assert alone.best.fact.id == "ctx"


def test_a_restating_fact_that_ties_its_message_to_float_precision_shows_the_message() -> None:
    """The message embedded in a batch and its restating fact alone differ by about 1e-7 in
    cosine: still a tie, and the message (the words as said) is shown."""
    said = candidate("msg", 0.7)
    restated = RankedCandidate(
        said.fact.model_copy(update={"id": "fact", "kind": FactKind.FACT}), 0.7 + 3e-7
    )
    [group] = group_by_source([restated, said])
    assert group.best.fact.id == "msg"
    clearly = RankedCandidate(restated.fact, 0.71)
    [group] = group_by_source([clearly, said])
    assert group.best.fact.id == "fact"


def test_context_weight_scales_a_context_record_only() -> None:
    from datetime import UTC, datetime

    from sagewai.context._ranking import fuse

    facts = {c.fact.id: c.fact for c in (candidate("ctx", 0, context=True), candidate("msg", 0))}
    now = datetime.now(UTC)
    dense = [("ctx", 0.9), ("msg", 0.9)]
    full = fuse(facts, dense, [], config=SearchConfig(context_weight=1.0), now=now)
    half = fuse(facts, dense, [], config=SearchConfig(context_weight=0.5), now=now)
    score = {c.fact.id: c.score for c in full}
    scaled = {c.fact.id: c.score for c in half}
    assert scaled["msg"] == score["msg"]
    assert abs(scaled["ctx"] - score["ctx"] / 2) < 1e-12


def test_context_prefix_keeps_the_end_of_the_turn_at_a_word() -> None:
    assert context_prefix("  short  ") == "short"
    assert context_prefix("alpha beta gamma delta epsilon", 12) == "epsilon"
    assert context_prefix("alpha beta gamma delta epsilon", 13) == "delta epsilon"
    assert len(context_prefix("x" * 1000)) == 300
