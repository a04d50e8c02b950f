"""MemoryBridge, blocking API: buffering, provenance, scopes, idempotence, episodes."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from sagewai.context import MemoryBridge
from sagewai.context.episodes import EpisodeStore
from sagewai.core import fact_id_for
from sagewai.core._conversation import ChatMessage, Conversation
from sagewai.core._records import FactStatus, FactType
from sagewai.core._scope import ContextScope
from sagewai.errors import ExtractionError, InvalidInputError
from sagewai.extraction._base import ExtractedFact, ExtractionContext
from sagewai.extraction._exact_values import find_exact_values
from sagewai.extraction._hybrid import HybridFactExtractor
from sagewai.extraction._llm import LLMFactExtractor
from sagewai.extraction._rules import RuleBasedFactExtractor
from sagewai.llm import allow_model_requests
from sagewai.testing import FakeEmbedder
from tests.helpers import memory_engine


class SentenceExtractor:
    """Every sentence of every role becomes a fact (as a permissive LLM extractor would)."""

    def __init__(self) -> None:
        self.contexts: list[ExtractionContext | None] = []

    async def extract(
        self, text: str, context: ExtractionContext | None = None
    ) -> list[ExtractedFact]:
        self.contexts.append(context)
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
        return [
            ExtractedFact(
                content=sentence,
                fact_type=FactType.GENERAL,
                confidence=0.9,
                subject=context.speaker if context else None,
                exact_values=find_exact_values(sentence),
                extractor="sentences",
            )
            for sentence in sentences
        ]


class FailingExtractor:
    async def extract(
        self, text: str, context: ExtractionContext | None = None
    ) -> list[ExtractedFact]:
        raise ExtractionError("model exploded")


def contents(facts: Sequence[object]) -> set[str]:
    return {getattr(f, "content", "") for f in facts}


async def test_every_turn_is_extracted_when_buffered_by_n() -> None:
    async with memory_engine() as ctx:
        extractor = SentenceExtractor()
        bridge = MemoryBridge(context_engine=ctx, extract_every_n_turns=3, fact_extractor=extractor)
        texts = [f"Ticket OPS-{n} is about the deploy pipeline." for n in range(7)]
        returned = [await bridge.process_message(t, session_id="s1") for t in texts]
        assert [len(r) for r in returned] == [0, 0, 3, 0, 0, 3, 0]
        assert await bridge.flush() == 1
        stored = await ctx.list(kinds=["fact"], limit=100)
        assert contents(stored) == set(texts)
        # Each turn saw the turns before it as context, across batch boundaries.
        seen = [len(c.previous_turns) for c in extractor.contexts if c is not None]
        assert seen == [0, 1, 2, 3, 4, 5, 6]
        assert bridge.stats.messages_processed == 7


async def test_provenance_and_validity_come_from_the_message() -> None:
    said_at = datetime(2024, 3, 13, 9, 30, tzinfo=UTC)
    async with memory_engine() as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=1, fact_extractor=RuleBasedFactExtractor()
        )
        message = {
            "role": "user",
            "content": "I moved to Berlin last month.",
            "name": "alice",
            "id": "D1:3",
            "timestamp": said_at.isoformat(),
        }
        extracted = await bridge.process_message(message, session_id="s1")
        assert len(extracted) == 1
        (fact,) = await ctx.list(kinds=["fact"])
        assert fact.id == fact_id_for("p1", "s1", "D1:3", 0)
        (source,) = fact.sources
        assert (source.session_id, source.message_id, source.turn_index) == ("s1", "D1:3", 0)
        assert (source.role, source.speaker, source.timestamp) == ("user", "alice", said_at)
        assert source.extractor == "rules"
        assert fact.valid_from == said_at
        assert fact.created_at == said_at
        assert fact.metadata["event_time"] == "2024-02"


async def test_openai_messages_with_content_parts_and_speakers() -> None:
    async with memory_engine() as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=2, fact_extractor=SentenceExtractor()
        )
        await bridge.process_message(
            {"role": "user", "content": [{"type": "text", "text": "Port 5432 is open."}]},
            session_id="s1",
        )
        await bridge.process_message(
            ChatMessage(role="user", content="Build 2.1.0 passed.", speaker="Carol"),
            session_id="s1",
        )
        facts = {f.content: f for f in await ctx.list(kinds=["fact"])}
        assert facts["Port 5432 is open."].sources[0].speaker is None
        assert facts["Build 2.1.0 passed."].sources[0].speaker == "Carol"
        assert facts["Build 2.1.0 passed."].exact_values == ("2.1.0",)


async def test_user_facts_are_recalled_in_later_sessions_of_that_user_only() -> None:
    async with memory_engine() as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=1, fact_extractor=RuleBasedFactExtractor()
        )
        await bridge.process_message(
            "I am allergic to peanuts.", session_id="monday", user_id="alice"
        )
        await bridge.process_message("I am allergic to shellfish.", session_id="x", user_id="bob")
        (fact,) = await ctx.list(kinds=["fact"], user_id="alice", scope="user")
        assert fact.scope is ContextScope.USER
        later = await ctx.search("allergic", session_id="friday", user_id="alice", top_k=5)
        # The fact and the verbatim message it came from (one result or two), never Bob's.
        shown = {r.fact.content for r in later} | {f.content for r in later for f in r.related}
        assert fact.content in shown
        assert shown <= {fact.content, "I am allergic to peanuts."}
        assert all("shellfish" not in r.fact.content for r in later)


async def test_bridge_conversation_counts_and_is_idempotent() -> None:
    episodes = EpisodeStore(embedder=FakeEmbedder())
    async with memory_engine() as ctx:
        ctx.episodes.attach(episodes)
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=2, fact_extractor=RuleBasedFactExtractor()
        )
        conversation = Conversation.of(
            [
                {"role": "user", "content": "I live in Paris.", "name": "alice"},
                {"role": "assistant", "content": "Nice city!"},
                {"role": "user", "content": "I work at Initech.", "name": "alice"},
                {"role": "system", "content": "I live in Rome."},  # not what a user said
                {"role": "user", "content": "I love jazz.", "name": "alice"},
            ],
            session_id="s1",
            user_id="alice",
        )
        assert await bridge.bridge_conversation(conversation, tags=["onboarding"]) == 3
        facts = await ctx.list(kinds=["fact"], user_id="alice", scope="user")
        assert {f.content for f in facts} == {
            "Alice lives in Paris.",
            "Alice works at Initech.",
            "Alice loves jazz.",
        }
        # The caller's tags, and the profile tag on what the user said about themselves.
        assert all(f.tags in {("onboarding",), ("onboarding", "profile")} for f in facts)
        assert {f.sources[0].message_id for f in facts} == {"turn-0", "turn-2", "turn-4"}
        # Bridging the same conversation again stores nothing twice.
        assert await bridge.bridge_conversation(conversation) == 0
        assert (
            len(await ctx.list(kinds=["fact"], user_id="alice", scope="user", statuses=None)) == 3
        )
        assert all(
            f.strength == 1.0 for f in await ctx.list(kinds=["fact"], user_id="alice", scope="user")
        )
        (episode,) = await episodes.list_episodes(project_id="p1")
        assert episode.session_id == "s1"
        assert episode.user_id == "alice"
        assert len(episode.messages) == 5


async def test_flush_of_one_session_leaves_the_others_buffered() -> None:
    async with memory_engine() as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=10, fact_extractor=SentenceExtractor()
        )
        await bridge.process_message("Order 1001 shipped.", session_id="a")
        await bridge.process_message("Order 2002 shipped.", session_id="b")
        await bridge.flush("a")
        assert contents(await ctx.list(kinds=["fact"])) == {"Order 1001 shipped."}
        await bridge.flush()
        assert contents(await ctx.list(kinds=["fact"])) == {
            "Order 1001 shipped.",
            "Order 2002 shipped.",
        }


async def test_a_failing_extractor_never_breaks_the_loop() -> None:
    async with memory_engine() as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=1, fact_extractor=FailingExtractor()
        )
        assert await bridge.process_message("I live in Paris.", session_id="s1") == []
        assert bridge.stats.extraction_failures == 1
        assert await ctx.count(kinds=["fact"]) == 0


@pytest.mark.parametrize(
    "message",
    [{"role": "user"}, {"role": "user", "content": "bad\x00byte"}, 42, {"content": None}],
)
async def test_malformed_messages_are_typed_errors(message: object) -> None:
    async with memory_engine() as ctx:
        bridge = MemoryBridge(context_engine=ctx, fact_extractor=SentenceExtractor())
        with pytest.raises(InvalidInputError):
            await bridge.process_message(message, session_id="s1")  # type: ignore[arg-type]
        with pytest.raises(InvalidInputError):
            await bridge.process_message("fine", session_id="bad\nsession")


async def test_hostile_text_is_stored_verbatim_and_harmless() -> None:
    hostile = "Robert'); DROP TABLE facts;-- lives in Paris."
    async with memory_engine() as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=1, fact_extractor=SentenceExtractor()
        )
        await bridge.process_message(hostile, session_id="s1")
        assert contents(await ctx.list(kinds=["fact"])) == {hostile}


async def test_messages_without_timestamps_are_valid_from_receipt() -> None:
    before = datetime.now(UTC)
    async with memory_engine() as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=1, fact_extractor=SentenceExtractor()
        )
        await bridge.process_message("Invoice 77 is paid.", session_id="s1")
        (fact,) = await ctx.list(kinds=["fact"])
        assert fact.valid_from is not None
        assert before <= fact.valid_from <= datetime.now(UTC) + timedelta(seconds=1)
        assert fact.status is FactStatus.ACTIVE


async def test_the_default_extractor_is_hybrid_and_works_offline() -> None:
    async with memory_engine() as ctx:
        bridge = MemoryBridge(context_engine=ctx, model="gpt-4o-mini", extract_every_n_turns=1)
        extractor = bridge.fact_extractor
        assert isinstance(extractor, HybridFactExtractor)
        assert isinstance(extractor.llm_extractor, LLMFactExtractor)
        with allow_model_requests(False):  # no key, no network: the rules answer
            await bridge.process_message("I work at Initech.", session_id="s1", user_id="bob")
            await bridge.process_message("The quarterly offsite moves to Porto.", session_id="s1")
        assert [f.content for f in await ctx.list(kinds=["fact"], user_id="bob", scope="user")] == [
            "The user works at Initech."
        ]
        assert extractor.stats.sent_to_llm >= 1  # the model was tried, and fell back


async def test_naive_and_epoch_timestamps_are_utc() -> None:
    async with memory_engine() as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=2, fact_extractor=SentenceExtractor()
        )
        naive = datetime(2023, 5, 8, 13, 56)
        await bridge.process_message({"content": "Order 1 shipped.", "timestamp": naive})
        await bridge.process_message({"content": "Order 2 shipped.", "timestamp": 1683554160})
        stamps = sorted(f.valid_from for f in await ctx.list(kinds=["fact"]) if f.valid_from)
        assert stamps == [
            datetime(2023, 5, 8, 13, 56, tzinfo=UTC),
            datetime(2023, 5, 8, 13, 56, tzinfo=UTC),
        ]
