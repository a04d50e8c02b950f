"""UniversalAgent end to end on in-memory stores: recall, learning across sessions, forgetting.

The model is a ScriptedLLM, which records every call, so each test asserts on what the model was
actually shown (the memory block of the system message, the history).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from sagewai.agent import UniversalAgent, tool_pairing_problems
from sagewai.context import MemoryBridge
from sagewai.context._engine import ContextEngine
from sagewai.context._ranking import is_context_record
from sagewai.context.episodes import EpisodeStore
from sagewai.core._records import FactStatus
from sagewai.errors import ConfigurationError, InvalidInputError, ScopeError
from sagewai.extraction import RuleBasedFactExtractor
from sagewai.intelligence._graph_builder import ConversationGraphBuilder
from sagewai.llm import (
    LLMResponse,
    ModelNotConfiguredError,
    ModelRateLimitError,
    ModelUnreachableError,
    ToolCall,
    allow_model_requests,
)
from sagewai.testing import FakeEmbedder
from sagewai.testing._agent import memory_lines
from sagewai.testing._llm import ScriptedLLM


@pytest.fixture
async def engine() -> AsyncIterator[ContextEngine]:
    async with ContextEngine.in_memory(project_id="p1", embedder=FakeEmbedder()) as ctx:
        yield ctx


def make_agent(ctx: ContextEngine, llm: Any, **options: Any) -> UniversalAgent:
    """An agent on the rules extractor, in-memory episodes and a graph builder."""
    options.setdefault(
        "memory_bridge",
        MemoryBridge(context_engine=ctx, fact_extractor=RuleBasedFactExtractor()),
    )
    options.setdefault("episode_store", EpisodeStore(embedder=FakeEmbedder()))
    options.setdefault("graph_builder", ConversationGraphBuilder(graph_store=ctx.graph_store))
    return UniversalAgent(name="helper", context=ctx, llm=llm, **options)


def current(lines: list[str]) -> list[str]:
    """The content of fact lines without their notes (what is shown as true now)."""
    return [line.split("] ", 1)[-1].rsplit(" (", 1)[0] for line in lines]


def forget_what_mentions(word: str) -> Any:
    """A script step calling forget_memory on the facts of the memory block naming ``word``."""

    def step(messages: list[dict[str, Any]]) -> LLMResponse:
        refs = [
            line[1 : line.index("]")]
            for line in memory_lines(messages, "facts")
            if word in line.lower()
        ]
        assert refs, f"nothing about {word!r} in memory: {memory_lines(messages, 'facts')}"
        call = ToolCall(id="f1", name="forget_memory", arguments=json.dumps({"memory_ids": refs}))
        return LLMResponse(tool_calls=[call], finish_reason="tool_calls")

    return step


async def test_a_fact_told_in_session_1_is_recalled_in_session_2(engine: ContextEngine) -> None:
    llm = ScriptedLLM(["Nice, noted.", "Green tea, you told me."])
    async with make_agent(engine, llm) as agent:
        await agent.chat("My favourite drink is green tea.", session_id="s1", user_id="ana")
        await agent.end_session("s1")
        answer = await agent.chat("What is my favourite drink?", session_id="s2", user_id="ana")
    assert answer == "Green tea, you told me."
    shown = llm.calls[1].messages
    assert any("green tea" in line for line in current(memory_lines(shown, "facts")))
    # Session 2 starts fresh: the fact reached the model through memory, not through history.
    assert [m["role"] for m in shown] == ["system", "user"]


async def test_a_changed_preference_is_recalled_as_changed(engine: ContextEngine) -> None:
    llm = ScriptedLLM(["Noted.", "Green tea.", "Noted, espresso now.", "Espresso."])
    async with make_agent(engine, llm) as agent:
        await agent.chat("My favourite drink is green tea.", session_id="s1", user_id="ana")
        await agent.end_session("s1")
        await agent.chat("What is my favourite drink?", session_id="s2", user_id="ana")
        await agent.end_session("s2")
        await agent.chat("My favourite drink is espresso now.", session_id="s3", user_id="ana")
        await agent.end_session("s3")
        await agent.chat("What is my favourite drink?", session_id="s4", user_id="ana")
    before = current(memory_lines(llm.calls[1].messages, "facts"))
    assert any("green tea" in line for line in before)
    after = memory_lines(llm.calls[3].messages, "facts")
    now_true = current(after)
    assert any("espresso" in line for line in now_true)
    assert not any("green tea" in line for line in now_true)  # the old value is not current
    changed = [line for line in after if "espresso" in line]
    assert "was: The user's favourite drink is green tea" in changed[0]
    old = await engine.list(user_id="ana", statuses=[FactStatus.SUPERSEDED])
    assert [f.object for f in old] == ["green tea"]


async def test_a_forgotten_fact_is_never_shown_to_the_model_again(engine: ContextEngine) -> None:
    llm = ScriptedLLM(
        [
            "Noted.",
            "You like green tea.",
            forget_what_mentions("green tea"),
            "I have forgotten it.",
            "I don't know your favourite drink.",
            "You live in Porto.",
            "I don't know.",
        ]
    )
    async with make_agent(engine, llm) as agent:
        await agent.chat(
            "My favourite drink is green tea. I live in Porto.", session_id="s1", user_id="ana"
        )
        await agent.end_session("s1")
        await agent.chat("What is my favourite drink?", session_id="s2", user_id="ana")
        reply = await agent.respond(
            "Forget that my favourite drink is green tea.", session_id="s2", user_id="ana"
        )
        assert [r.content for r in reply.tool_results] == ["forgot 1 fact(s)"]
        forget_call = len(llm.calls)
        await agent.chat("What is my favourite drink?", session_id="s2", user_id="ana")
        await agent.end_session("s2")
        await agent.chat("Where do I live?", session_id="s3", user_id="ana")
        await agent.chat("Do I like green tea?", session_id="s4", user_id="ana")
    for call in llm.calls[forget_call:-1]:
        assert "green tea" not in call.prompt.lower()
    last = llm.calls[-1].messages  # the user may name it; memory must not bring it back
    assert "green tea" not in "\n".join(m["content"] for m in last if m["role"] != "user")
    assert "Porto" in llm.calls[-2].prompt  # the other fact of the same message is kept
    stored = await engine.list(user_id="ana", statuses=None)
    # Said after the forgetting (new, the user's own words) is the only message naming it (with
    # the context record of the reply to it); no record of before the forgetting names it.
    said = [f.content for f in stored if "green tea" in f.content and not is_context_record(f)]
    assert said == ["Do I like green tea?"]
    assert all(f.session_id == "s4" for f in stored if "green tea" in f.content)
    store = agent.episode_store
    assert store is not None
    for episode in await store.list_episodes(project_id="p1"):
        if episode.session_id == "s4":
            continue  # said after the forgetting: new, and the user's own words
        assert "green tea" not in " ".join(m.content for m in episode.messages).lower()
        assert "green tea" not in episode.summary.lower()


async def test_the_memory_tools_save_and_search(engine: ContextEngine) -> None:
    save = ToolCall(
        id="s1",
        name="save_memory",
        arguments=json.dumps({"content": "The user's locker code is 4471.", "subject": "user"}),
    )
    search = ToolCall(id="q1", name="search_memory", arguments='{"query": "locker code"}')
    llm = ScriptedLLM(
        [
            LLMResponse(tool_calls=[save], finish_reason="tool_calls"),
            "Saved.",
            LLMResponse(tool_calls=[search], finish_reason="tool_calls"),
            "It is 4471.",
        ]
    )
    async with make_agent(engine, llm) as agent:
        first = await agent.respond(
            "Remember my locker code: 4471.", session_id="s1", user_id="ana"
        )
        assert first.tool_results[0].content.startswith("saved as [m")
        await agent.end_session("s1")
        second = await agent.respond("What's my locker code?", session_id="s2", user_id="ana")
    assert second.answer == "It is 4471."
    assert "4471" in second.tool_results[0].content
    assert "4471" in "\n".join(memory_lines(llm.calls[2].messages, "facts"))
    [fact] = [f for f in await engine.list(user_id="ana", kinds=["fact"]) if "locker" in f.content]
    assert fact.user_id == "ana"
    assert fact.sources[0].extractor == "agent.save_memory"


async def test_users_never_see_each_others_memory(engine: ContextEngine) -> None:
    llm = ScriptedLLM(["Noted.", "I don't know."])
    async with make_agent(engine, llm) as agent:
        await agent.chat("My favourite drink is green tea.", session_id="a1", user_id="ana")
        await agent.end_session("a1")
        await agent.chat("What is my favourite drink?", session_id="b1", user_id="bob")
        with pytest.raises(ScopeError):
            await agent.chat("hello", session_id="b1", user_id="ana")
        ana_facts = await engine.list(user_id="ana", kinds=["fact"])
        refused = await agent.forget([f.id for f in ana_facts], user_id="bob")
    assert "green tea" not in llm.calls[1].prompt
    assert refused.facts_deleted == 0
    assert len(refused.refused) == len(ana_facts) == 1


async def test_the_graph_around_named_entities_is_recalled(engine: ContextEngine) -> None:
    llm = ScriptedLLM(["Noted.", "Initech, yes."])
    async with make_agent(engine, llm) as agent:
        await agent.chat("I work at Initech.", session_id="s1", user_id="ana")
        await agent.end_session("s1")
        await agent.chat("What do you know about Initech?", session_id="s2", user_id="ana")
    graph_lines = memory_lines(llm.calls[1].messages, "graph")
    assert any("ana works_at Initech" in line for line in graph_lines)


async def test_history_window_and_resumed_session(engine: ContextEngine) -> None:
    llm = ScriptedLLM(["one", "two", "three", "four"])
    async with make_agent(engine, llm, history_window=2) as agent:
        await agent.chat("first message", session_id="s1", user_id="ana")
        await agent.chat("second message", session_id="s1")  # the session's user is kept
        assert [m["content"] for m in llm.calls[1].messages[1:]] == [
            "first message",
            "one",
            "second message",
        ]
        episode_id = await agent.end_session("s1")
        assert episode_id is not None
        await agent.chat("third message", session_id="s1", user_id="ana")  # resumed
        assert [m["content"] for m in llm.calls[2].messages[1:]] == [
            "second message",
            "two",
            "third message",
        ]
        assert await agent.end_session("s1") == episode_id
    store = agent.episode_store
    assert store is not None
    episode = await store.get_episode(episode_id)
    assert episode is not None
    assert [m.content for m in episode.messages] == [
        "first message",
        "one",
        "second message",
        "two",
        "third message",
        "three",
    ]


async def test_aclose_saves_open_sessions_and_refuses_new_turns(engine: ContextEngine) -> None:
    llm = ScriptedLLM(["hi"])
    agent = make_agent(engine, llm)
    await agent.chat("I live in Porto.", session_id="s1", user_id="ana")
    await agent.aclose()
    await agent.aclose()  # idempotent
    store = agent.episode_store
    assert store is not None
    assert [e.session_id for e in await store.list_episodes(project_id="p1")] == ["s1"]
    assert [f.content for f in await engine.list(user_id="ana", kinds=["fact"])] == [
        "The user lives in Porto."
    ]
    with pytest.raises(ConfigurationError):
        await agent.chat("hello again", session_id="s2", user_id="ana")


async def test_no_model_reachable_does_not_break_the_conversation(
    engine: ContextEngine, caplog: pytest.LogCaptureFixture
) -> None:
    await engine.add("The user lives in Porto.", user_id="ana")
    caplog.set_level(logging.WARNING, logger="sagewai.agent")
    with allow_model_requests(False):  # the default litellm client, refused before any I/O
        async with UniversalAgent(
            name="helper",
            context=engine,
            memory_bridge=MemoryBridge(
                context_engine=engine, fact_extractor=RuleBasedFactExtractor()
            ),
        ) as agent:
            first = await agent.respond("Where do I live?", session_id="s1", user_id="ana")
            second = await agent.respond("I work at Initech.", session_id="s1")
    assert first.offline
    assert first.model_error is not None
    assert first.answer.startswith("I can't reach a language model right now")
    assert "The user lives in Porto." in first.answer
    assert second.offline
    offline_logs = [r for r in caplog.records if "no language model is reachable" in r.message]
    assert len(offline_logs) == 1  # said once, not on every turn
    # It kept learning from what the user said while offline.
    assert "The user works at Initech." in [
        f.content for f in await engine.list(user_id="ana", kinds=["fact"])
    ]


@pytest.mark.parametrize(
    "error",
    [
        ModelNotConfiguredError("no key"),
        ModelUnreachableError("refused"),
        ModelRateLimitError("429"),
    ],
)
async def test_model_failures_become_a_reply(engine: ContextEngine, error: Exception) -> None:
    llm = ScriptedLLM([error, "back again"])
    async with make_agent(engine, llm) as agent:
        failed = await agent.respond("hello", session_id="s1", user_id="ana")
        ok = await agent.respond("hello?", session_id="s1")
    assert failed.model_error is not None
    assert type(error).__name__ in failed.answer
    assert failed.offline is isinstance(error, ModelNotConfiguredError | ModelUnreachableError)
    assert ok.answer == "back again"
    # The failure notice is kept in the history (the user saw it) but not learned as a fact.
    assert tool_pairing_problems(llm.calls[1].messages) == []


async def test_stream_yields_the_answer_and_records_the_turn(engine: ContextEngine) -> None:
    class StreamingScript(ScriptedLLM):
        async def stream(
            self,
            messages: Any,
            *,
            tools: Any = None,
            timeout: float | None = None,  # noqa: ASYNC109 - the client protocol
        ) -> AsyncIterator[str | LLMResponse]:
            response = await self.complete(messages, tools=tools, timeout=timeout)
            for word in (response.content or "").split(" "):
                yield word + " "
            yield response

    llm = StreamingScript(["Porto is lovely", "yes"])
    async with make_agent(engine, llm) as agent:
        chunks = [c async for c in agent.stream("I live in Porto.", session_id="s1", user_id="a")]
        assert chunks == ["Porto ", "is ", "lovely "]
        plain = ScriptedLLM(["one chunk"])
        agent.llm = plain
        assert [c async for c in agent.stream("and?", session_id="s1")] == ["one chunk"]
    assert plain.calls[0].messages[-2] == {"role": "assistant", "content": "Porto is lovely"}


async def test_invalid_input_and_configuration(engine: ContextEngine) -> None:
    llm = ScriptedLLM([])
    agent = make_agent(engine, llm)
    for bad in ("", "   ", "a\x00b"):
        with pytest.raises(InvalidInputError):
            await agent.chat(bad, session_id="s1")
    assert llm.calls == []
    with pytest.raises(ConfigurationError):
        UniversalAgent(name="x", context=engine, llm=llm, max_steps=0)
    other = ContextEngine.in_memory(project_id="p2", embedder=FakeEmbedder())
    with pytest.raises(ConfigurationError):
        UniversalAgent(
            name="x", context=engine, llm=llm, memory_bridge=MemoryBridge(context_engine=other)
        )

    def search_memory(query: str) -> str:
        return query

    with pytest.raises(ConfigurationError):
        UniversalAgent(name="x", context=engine, llm=llm, tools=[search_memory])
    await agent.aclose()


async def test_a_turn_racing_end_session_lands_in_the_resumed_session(
    engine: ContextEngine,
) -> None:
    llm = ScriptedLLM(["one", "two"])
    async with make_agent(engine, llm) as agent:
        await agent.chat("first", session_id="s1", user_id="ana")
        ended, answer = await asyncio.gather(
            agent.end_session("s1"), agent.chat("second", session_id="s1", user_id="ana")
        )
        assert ended is not None
        assert answer == "two"
        assert agent.sessions == ["s1"]  # resumed after it ended
        assert await agent.end_session("s1") == ended
    store = agent.episode_store
    assert store is not None
    episode = await store.get_episode(ended)
    assert episode is not None
    assert [m.content for m in episode.messages] == ["first", "one", "second", "two"]


async def test_forgetting_removes_only_the_forgotten_relation_from_the_graph(
    engine: ContextEngine,
) -> None:
    llm = ScriptedLLM(["Noted.", forget_what_mentions("initech"), "Forgotten."])
    async with make_agent(engine, llm) as agent:
        await agent.chat("I live in Porto and I work at Initech.", session_id="s1", user_id="ana")
        await agent.end_session("s1")
        await agent.chat("Forget where I work: Initech.", session_id="s2", user_id="ana")
    graph = engine.graph_store
    assert graph is not None
    names = {e.id: e.name for e in await graph.entities()}
    said = {(names[r.subject_id], r.predicate, names[r.object_id]) for r in await graph.relations()}
    assert ("ana", "lives_in", "Porto") in said
    assert not any("Initech" in triple for triple in said)
    assert [f.content for f in await engine.list(user_id="ana", kinds=["fact"])] == [
        "The user lives in Porto."
    ]


@pytest.mark.parametrize("learn_from_answers", [True, False])
async def test_answers_are_learned_only_when_asked(
    engine: ContextEngine, learn_from_answers: bool
) -> None:
    llm = ScriptedLLM(["I booked your table at Casa Nostra for Friday at 8pm."])
    async with make_agent(engine, llm, learn_from_answers=learn_from_answers) as agent:
        await agent.chat("I live in Porto.", session_id="s1", user_id="ana")
    stored = [f.content for f in await engine.list(user_id="ana", kinds=["fact"])]
    assert "The user lives in Porto." in stored
    assert any("Friday" in fact for fact in stored) is learn_from_answers
