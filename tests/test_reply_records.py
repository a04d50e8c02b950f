"""Reply records: the bridge marks its records of an assistant's messages, and the ranking
weighs them below the user's own words unless the query asks what the assistant said."""

from __future__ import annotations

from datetime import UTC, datetime

from sagewai.context import MemoryBridge
from sagewai.context._query import analyse_query, asks_about_replies
from sagewai.context._ranking import (
    REPLY_MARK,
    SearchConfig,
    fuse,
    is_context_record,
    is_reply_record,
)
from sagewai.core._conversation import Conversation
from sagewai.core._records import Fact, FactKind, Provenance
from sagewai.extraction._base import ExtractedFact, ExtractionContext
from sagewai.extraction._rules import RuleBasedFactExtractor
from tests.helpers import memory_engine

USER_SAYS = "My budget tracker keeps its expenses in PostgreSQL 15."
ASSISTANT_SAYS = (
    "Your Flask budget tracker's expense tables: a database index on the expense tables of "
    "the Flask budget tracker keeps the database fast."
)
CHAT = [
    {"role": "user", "content": USER_SAYS, "id": "m0"},
    {"role": "assistant", "content": ASSISTANT_SAYS, "id": "m1"},
]


def bridge_for(engine: object) -> MemoryBridge:
    return MemoryBridge(
        context_engine=engine,  # type: ignore[arg-type]
        fact_extractor=RuleBasedFactExtractor(),
        save_episodes=False,
    )


async def test_the_bridge_marks_the_assistants_records_only() -> None:
    async with memory_engine() as ctx:
        await bridge_for(ctx).bridge_conversation(Conversation.of(CHAT, session_id="s1"))
        messages = await ctx.list(kinds=["message"])
        marked = {
            (m.sources[0].message_id, is_context_record(m)) for m in messages if is_reply_record(m)
        }
        # The assistant's verbatim record and its context record; nothing of the user's.
        assert marked == {("m1", False), ("m1", True)}
        assert all(m.sources[0].role == "assistant" for m in messages if is_reply_record(m))


class OneFactPerMessage:
    """Draws one fact, the message's first words, from every message."""

    async def extract(
        self, text: str, context: ExtractionContext | None = None
    ) -> list[ExtractedFact]:
        return [ExtractedFact(content=f"Said: {text[:40]}", fact_type="general", confidence=0.9)]


async def test_facts_drawn_from_a_reply_are_marked_too() -> None:
    async with memory_engine() as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, fact_extractor=OneFactPerMessage(), save_episodes=False
        )
        await bridge.bridge_conversation(Conversation.of(CHAT, session_id="s1"))
        facts = await ctx.list(kinds=["fact"])
        assert sorted((f.sources[0].message_id, is_reply_record(f)) for f in facts) == [
            ("m0", False),
            ("m1", True),
        ]


async def test_a_users_words_outrank_a_reply_that_repeats_them() -> None:
    async with memory_engine() as ctx:
        await bridge_for(ctx).bridge_conversation(Conversation.of(CHAT, session_id="s1"))
        query = "Which database do my expense tables of the Flask budget tracker use?"

        async def first(config: SearchConfig) -> str | None:
            results = await ctx.search(query, top_k=2, search_config=config)
            return results[0].fact.sources[0].message_id

        # Without the weight the reply, which repeats more of the query's words, comes first.
        assert await first(SearchConfig(reply_weight=1.0)) == "m1"
        assert await first(SearchConfig(reply_weight=0.3)) == "m0"
        # Asked what the assistant said, the reply keeps its place.
        asked = "What did you recommend for the database of my Flask budget tracker's tables?"
        results = await ctx.search(asked, top_k=2, search_config=SearchConfig(reply_weight=0.3))
        assert results[0].fact.sources[0].message_id == "m1"
        assert SearchConfig().reply_weight < 1.0


def _fused(query: str, config: SearchConfig, *, marked: bool = True) -> dict[str, float]:
    facts = {
        "reply": Fact(
            id="reply",
            project_id="p",
            content="reply",
            kind=FactKind.MESSAGE,
            metadata={REPLY_MARK: True} if marked else {},
            sources=(Provenance(session_id="s", message_id="m1", role="assistant"),),
        ),
        "user": Fact(
            id="user",
            project_id="p",
            content="user",
            kind=FactKind.MESSAGE,
            sources=(Provenance(session_id="s", message_id="m0", role="user"),),
        ),
    }
    dense = [("reply", 0.9), ("user", 0.9)]
    ranked = fuse(
        facts, dense, [], config=config, now=datetime.now(UTC), query=analyse_query(query)
    )
    return {c.fact.id: c.score for c in ranked}


def test_reply_weight_scales_marked_records_unless_the_query_asks_for_replies() -> None:
    config = SearchConfig(reply_weight=0.5, neighbour_weight=0)
    plain = _fused("How much does my subscription cost?", config)
    assert abs(plain["reply"] - plain["user"] / 2) < 1e-9
    asked = _fused("What approach did you recommend for my subscription?", config)
    assert abs(asked["reply"] - asked["user"]) < 1e-9


def test_an_unmarked_assistant_record_is_never_scaled() -> None:
    # Raw messages stored by hand carry the role in their provenance, not the bridge's mark.
    scores = _fused("How much?", SearchConfig(reply_weight=0.5, neighbour_weight=0), marked=False)
    assert abs(scores["reply"] - scores["user"]) < 1e-9


def test_questions_about_the_assistants_words() -> None:
    assert asks_about_replies("How did you recommend managing the flow of requests?")
    assert asks_about_replies("Summarize what we've covered about triangles.")
    assert asks_about_replies("What steps have you suggested so far?")
    assert not asks_about_replies("Could you show me how to implement a login feature?")
    assert not asks_about_replies("How should I organize the information about my past jobs?")
    assert analyse_query("What did you say about caching?").asks_replies
    assert not analyse_query("What did I say about caching?").asks_replies
