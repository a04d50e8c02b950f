"""The OpenAI Agents SDK on sagewai: the real ``Runner`` with the SDK's own ScriptedModel.

No network: the model is ``agents.testing.ScriptedModel`` and tracing is off.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
agents = pytest.importorskip("agents")

from agents import Agent, Runner, set_tracing_disabled  # noqa: E402
from agents.memory import Session, SessionSettings  # noqa: E402
from agents.testing import ScriptedModel, assistant_message, function_call  # noqa: E402

from sagewai import ContextEngine  # noqa: E402
from sagewai.context import MemoryBridge  # noqa: E402
from sagewai.errors import InvalidInputError  # noqa: E402
from sagewai.integrations.openai_agents import SagewaiSession, conversation_item_text, memory_tools  # noqa: E402
from sagewai.intelligence import RuleBasedFactExtractor  # noqa: E402
from sagewai.testing import FakeEmbedder  # noqa: E402

set_tracing_disabled(True)


@pytest.fixture
async def engine() -> Any:
    async with ContextEngine.in_memory(embedder=FakeEmbedder(), project_id="agents") as ctx:
        yield ctx


def tool_outputs(model: ScriptedModel) -> list[str]:
    """The function-call outputs the model was shown on its last call."""
    last = model.last_call
    assert last is not None
    return [
        str(item["output"])
        for item in last.input
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]


def shown_texts(model: ScriptedModel, call: int) -> list[str]:
    return [
        conversation_item_text(item) for item in model.calls[call].input if isinstance(item, dict)
    ]


async def test_the_session_protocol_is_implemented(engine: ContextEngine) -> None:
    session = SagewaiSession("s1", engine, user_id="maya")
    assert isinstance(session, Session)
    assert await session.get_items() == []
    assert await session.pop_item() is None
    items: list[Any] = [
        {"role": "user", "content": "I'm Maya"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "Hello Maya"}]},
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "42"},
    ]
    await session.add_items(items[:2])
    await session.add_items(items[2:])
    assert await session.get_items() == items
    assert await session.get_items(limit=2) == items[2:]
    assert (
        await SagewaiSession(
            "s1", engine, user_id="maya", session_settings=SessionSettings(limit=1)
        ).get_items()
        == items[3:]
    )
    assert await session.pop_item() == items[3]
    assert await session.get_items() == items[:3]
    # Another user with the same session id, and the same user in another session: empty.
    assert await SagewaiSession("s1", engine, user_id="leo").get_items() == []
    assert await SagewaiSession("s2", engine, user_id="maya").get_items() == []
    # The items are sagewai records of that session only.
    found = await engine.search("Maya", user_id="maya", session_id="s1")
    assert "I'm Maya" in [r.fact.content for r in found]
    assert await engine.search("Maya", user_id="maya") == []  # not the user's other sessions
    await session.clear_session()
    assert await session.get_items() == []
    with pytest.raises(InvalidInputError):
        await session.get_items(limit=-1)
    with pytest.raises(InvalidInputError):
        SagewaiSession("", engine)


async def test_a_runner_keeps_history_in_the_session(engine: ContextEngine) -> None:
    model = ScriptedModel(
        [[assistant_message("Nice to meet you, Maya.")], [assistant_message("You're Maya.")]]
    )
    agent = Agent(name="helper", instructions="Be brief.", model=model)
    session = SagewaiSession("chat-1", engine, user_id="maya")
    first = await Runner.run(agent, "Hi, I'm Maya.", session=session)
    assert first.final_output == "Nice to meet you, Maya."
    # A new session object (a new process would build one) reads the history from the store.
    again = SagewaiSession("chat-1", engine, user_id="maya")
    second = await Runner.run(agent, "Who am I?", session=again)
    assert second.final_output == "You're Maya."
    assert shown_texts(model, 1) == ["Hi, I'm Maya.", "Nice to meet you, Maya.", "Who am I?"]
    assert len(await again.get_items()) == 4


async def test_two_users_never_see_each_others_memory(engine: ContextEngine) -> None:
    """The SDK's own notions: the run context names the user, the session holds the chat."""
    tools = memory_tools(engine)
    model = ScriptedModel(
        [
            # maya, run 1: the model remembers her diet
            [function_call("remember", {"content": "Maya is vegetarian"}, call_id="r1")],
            [assistant_message("Noted.")],
            # maya, run 2: the model searches
            [function_call("search_memory", {"query": "vegetarian diet"}, call_id="s1")],
            [assistant_message("You're vegetarian.")],
            # leo, same question, same session id: nothing of Maya's
            [function_call("search_memory", {"query": "vegetarian diet"}, call_id="s2")],
            [assistant_message("I don't know your diet.")],
        ]
    )
    agent = Agent(name="helper", instructions="Use memory.", model=model, tools=tools)
    maya = {"user_id": "maya"}
    await Runner.run(
        agent, "I'm vegetarian.", context=maya, session=SagewaiSession("t", engine, user_id="maya")
    )
    await Runner.run(
        agent, "What do I eat?", context=maya, session=SagewaiSession("t2", engine, user_id="maya")
    )
    assert any("Maya is vegetarian" in out for out in tool_outputs(model))
    leo_session = SagewaiSession("t", engine, user_id="leo")
    result = await Runner.run(
        agent, "What do I eat?", context={"user_id": "leo"}, session=leo_session
    )
    assert result.final_output == "I don't know your diet."
    assert tool_outputs(model)[-1] == "nothing remembered about that"
    # Leo's session holds only Leo's conversation.
    leo_texts = [conversation_item_text(i) for i in await leo_session.get_items()]
    assert "I'm vegetarian." not in leo_texts
    assert all("Maya" not in text for text in leo_texts)
    # And sagewai's own recall agrees.
    assert [r.fact.content for r in await engine.search("vegetarian", user_id="leo")] == []
    assert model.remaining_steps == 0


async def test_forget_acts_only_on_the_runs_user(engine: ContextEngine) -> None:
    fact = await engine.add("Maya's locker code is 4411", user_id="maya")
    tools = memory_tools(engine)
    model = ScriptedModel(
        [
            [function_call("forget_memory", {"memory_id": fact.id}, call_id="f1")],
            [assistant_message("done")],
            [function_call("forget_memory", {"memory_id": fact.id}, call_id="f2")],
            [assistant_message("done")],
            [function_call("search_memory", {"query": "locker"}, call_id="f3")],
            [assistant_message("no user")],
        ]
    )
    agent = Agent(name="helper", model=model, tools=tools)
    await Runner.run(agent, "forget it", context={"user_id": "leo"})
    assert tool_outputs(model) == [f"no memory {fact.id!r}"]
    assert (await engine.get(fact.id)).status.value == "active"
    await Runner.run(agent, "forget it", context={"user_id": "maya"})
    assert tool_outputs(model)[0].startswith("forgot")
    assert (await engine.get(fact.id)).status.value == "archived"
    await Runner.run(agent, "what's my code?")  # no user named: refused, nothing shown
    assert tool_outputs(model)[0].startswith("memory unavailable: memory tools act for one user")


async def test_tools_fixed_to_a_user_refuse_a_run_for_another(engine: ContextEngine) -> None:
    model = ScriptedModel(
        [[function_call("remember", {"content": "x"}, call_id="m")], [assistant_message("ok")]]
    )
    agent = Agent(name="helper", model=model, tools=memory_tools(engine, user_id="maya"))
    await Runner.run(agent, "remember x", context={"user_id": "leo"})
    assert "the run names 'leo'" in tool_outputs(model)[0]
    assert await engine.count() == 0


async def test_a_bridge_learns_the_users_facts_for_later_sessions(engine: ContextEngine) -> None:
    bridge = MemoryBridge(context_engine=engine, fact_extractor=RuleBasedFactExtractor())
    model = ScriptedModel([[assistant_message("Noted, Berlin.")]])
    agent = Agent(name="helper", model=model)
    session = SagewaiSession("move", engine, user_id="ana", bridge=bridge)
    await Runner.run(agent, "I moved to Berlin last month.", session=session)
    await bridge.flush()
    later = [r.fact.content for r in await engine.search("Where does Ana live?", user_id="ana")]
    assert any("Berlin" in text for text in later)
    assert await engine.search("Berlin", user_id="ben") == []
    await bridge.aclose()


def test_items_hold_only_json(engine: ContextEngine) -> None:
    session = SagewaiSession("s", engine)
    import asyncio

    with pytest.raises(InvalidInputError, match="JSON"):
        asyncio.run(session.add_items([{"role": "user", "content": object()}]))  # type: ignore[list-item]
    assert json.dumps(conversation_item_text({"type": "reasoning"})) == '"(reasoning)"'


async def test_a_line_said_twice_is_two_items(engine: ContextEngine) -> None:
    session = SagewaiSession("s", engine, user_id="maya")
    yes: Any = {"role": "user", "content": "yes"}
    await session.add_items([yes])
    await session.add_items([yes])
    assert await session.get_items() == [yes, yes]
    assert await session.pop_item() == yes
    assert await session.get_items() == [yes]
