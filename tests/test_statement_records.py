"""Statement records: the sentences of a user's long message, fused with the message."""

from __future__ import annotations

from datetime import UTC, datetime

from sagewai.agent._recall import by_source
from sagewai.context._bridge import MemoryBridge
from sagewai.context._bridge_turns import statement_record_id
from sagewai.context._ranking import (
    STATEMENT_MARK,
    SearchConfig,
    fuse,
    is_context_record,
    is_statement_record,
)
from sagewai.core._conversation import Conversation
from sagewai.core._records import Fact, FactKind, Provenance
from sagewai.core._statements import MAX_STATEMENTS, STATEMENT_MIN_CHARS, statement_texts
from sagewai.intelligence.extraction._rules import RuleBasedFactExtractor
from tests.helpers import memory_engine

LONG = (
    "I'm trying to classify triangles by sides and angles, and I've completed 10 classification "
    "problems, scoring 8/10 correct in identifying triangle types, but I'm having trouble "
    "understanding how to apply this to harder problems. My cousin Ingrid recommended the "
    "orchard workbook to me last spring. Can you help me use the Law of Cosines to find an "
    "unknown angle in a triangle with sides 7, 9 and 12 cm?"
)
CHAT = [
    {"role": "user", "content": LONG, "id": "m0"},
    {"role": "assistant", "content": "Sure. " + LONG, "id": "m1"},
    {"role": "user", "content": "Thanks, that helps.", "id": "m2"},
]


def bridge_for(engine: object, **options: object) -> MemoryBridge:
    return MemoryBridge(
        context_engine=engine,  # type: ignore[arg-type]
        fact_extractor=RuleBasedFactExtractor(),
        save_episodes=False,
        **options,  # type: ignore[arg-type]
    )


def test_a_long_message_splits_into_its_sentences_and_clauses() -> None:
    parts = statement_texts(LONG)
    assert len(parts) == 3
    assert parts[-1].startswith("Can you help me use the Law of Cosines")
    assert "My cousin Ingrid recommended the orchard workbook to me last spring." in parts
    # Every word of the message is in some statement, in order, and each is short.
    assert " ".join(parts).split() == LONG.split()
    assert all(len(p) <= 300 for p in parts)


def test_short_or_single_statement_messages_have_none() -> None:
    assert statement_texts("Thanks, that helps.") == []
    assert statement_texts("word " * (STATEMENT_MIN_CHARS // 5)) == []  # short enough
    assert statement_texts("x" * (STATEMENT_MIN_CHARS + 50)) == []  # one statement
    many = " ".join(f"Sentence number {n} says one more thing about it." for n in range(40))
    assert len(statement_texts(many)) == MAX_STATEMENTS


async def test_the_users_long_message_gets_statement_records_of_its_source() -> None:
    async with memory_engine() as ctx:
        bridge = bridge_for(ctx)
        await bridge.bridge_conversation(Conversation.of(CHAT, session_id="s1"))
        records = await ctx.list(kinds=["message"])
        statements = [r for r in records if is_statement_record(r)]
        # Only the user's long message: not the assistant's reply, not the short thanks.
        assert {r.sources[0].message_id for r in statements} == {"m0"}
        ordered = sorted(statements, key=lambda r: r.metadata[STATEMENT_MARK])
        assert [r.content for r in ordered] == statement_texts(LONG)
        first = next(r for r in statements if r.metadata[STATEMENT_MARK] == 0)
        assert first.id == statement_record_id(ctx.project_id, "s1", "m0", 0)
        assert not any(is_context_record(r) for r in statements)
        # Bridging the same conversation again stores nothing twice.
        await bridge.bridge_conversation(Conversation.of(CHAT, session_id="s1"))
        assert len(await ctx.list(kinds=["message"])) == len(records)


async def test_search_returns_the_message_once_found_by_its_statement() -> None:
    async with memory_engine() as ctx:
        await bridge_for(ctx).bridge_conversation(Conversation.of(CHAT, session_id="s1"))
        results = await ctx.search("Ingrid orchard workbook", top_k=5)
        keys = [(r.fact.sources[0].session_id, r.fact.sources[0].message_id) for r in results]
        assert len(keys) == len(set(keys))  # one result per source
        assert keys[0] == ("s1", "m0") or keys[0] == ("s1", "m1")
        found = next(r for r in results if r.fact.sources[0].message_id == "m0")
        texts = [f.content for f in (found.fact, *found.related)]
        assert LONG in texts
        assert "My cousin Ingrid recommended the orchard workbook to me last spring." in texts
        # The agent's block shows one entry for the source.
        assert len([r for r in by_source(results) if r.fact.sources[0].message_id == "m0"]) == 1


async def test_statement_records_can_be_switched_off_and_are_forgotten_with_the_message() -> None:
    async with memory_engine() as ctx:
        await bridge_for(ctx, statement_records=False).bridge_conversation(
            Conversation.of(CHAT, session_id="s1")
        )
        assert not [r for r in await ctx.list(kinds=["message"]) if is_statement_record(r)]
    async with memory_engine() as ctx:
        await bridge_for(ctx).bridge_conversation(Conversation.of(CHAT, session_id="s1"))
        await ctx.forget(session_id="s1")
        assert await ctx.list(kinds=["message"]) == []


def test_statement_weight_scales_a_statement_record_only() -> None:
    def record(fact_id: str, statement: bool) -> Fact:
        return Fact(
            id=fact_id,
            project_id="p",
            content=fact_id,
            kind=FactKind.MESSAGE,
            metadata={STATEMENT_MARK: 0} if statement else {},
            sources=(Provenance(session_id="s", message_id="m1"),),
        )

    facts = {"st": record("st", True), "msg": record("msg", False)}
    now = datetime.now(UTC)
    dense = [("st", 0.9), ("msg", 0.9)]
    full = {c.fact.id: c.score for c in fuse(facts, dense, [], config=SearchConfig(), now=now)}
    half = fuse(facts, dense, [], config=SearchConfig(statement_weight=0.5), now=now)
    scaled = {c.fact.id: c.score for c in half}
    assert scaled["msg"] == full["msg"]
    assert abs(scaled["st"] - full["st"] / 2) < 1e-12
