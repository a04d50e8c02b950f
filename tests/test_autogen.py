"""AutoGen AgentChat on sagewai: a real ``AssistantAgent`` with AutoGen's own replay model."""

from __future__ import annotations

import os
from typing import Any

import pytest

os.environ.setdefault("AUTOGEN_DISABLE_RUNTIME_TRACING", "true")
pytest.importorskip("autogen_agentchat")
pytest.importorskip("autogen_ext.models.replay")

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import MemoryQueryEvent
from autogen_core.memory import Memory, MemoryContent, MemoryMimeType
from autogen_core.model_context import BufferedChatCompletionContext
from autogen_core.models import SystemMessage, UserMessage
from autogen_ext.models.replay import ReplayChatCompletionClient

from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.errors import InvalidInputError
from sagewai.integrations.autogen import SagewaiMemory
from sagewai.intelligence import RuleBasedFactExtractor
from sagewai.testing import FakeEmbedder


@pytest.fixture
async def engine() -> Any:
    async with ContextEngine.in_memory(embedder=FakeEmbedder(), project_id="autogen") as ctx:
        yield ctx


def recalled(messages: Any) -> list[str]:
    """The memory texts an agent run put before its model."""
    return [
        str(item.content)
        for event in messages
        if isinstance(event, MemoryQueryEvent)
        for item in event.content
    ]


async def test_two_users_agents_never_see_each_others_memory(engine: ContextEngine) -> None:
    maya_memory = SagewaiMemory(engine, user_id="maya")
    leo_memory = SagewaiMemory(engine, user_id="leo")
    assert isinstance(maya_memory, Memory)
    await maya_memory.add(
        MemoryContent(content="Maya is allergic to peanuts", mime_type=MemoryMimeType.TEXT)
    )
    await engine.add("The canteen serves lunch from 12:00 to 14:00")  # the project's

    maya_model = ReplayChatCompletionClient(["Skip the satay: it has peanuts."])
    maya = AssistantAgent("chef", model_client=maya_model, memory=[maya_memory])
    result = await maya.run(task="Can I eat the peanut satay at lunch?")
    assert result.messages[-1].content == "Skip the satay: it has peanuts."
    assert "Maya is allergic to peanuts" in recalled(result.messages)

    leo_model = ReplayChatCompletionClient(["Enjoy it."])
    leo = AssistantAgent("chef", model_client=leo_model, memory=[leo_memory])
    result = await leo.run(task="Can I eat the peanut satay at lunch?")
    seen = recalled(result.messages)
    assert "Maya is allergic to peanuts" not in seen
    assert "The canteen serves lunch from 12:00 to 14:00" in seen  # project memory is shared
    assert [m.content for m in (await leo_memory.query("peanuts allergy")).results] == [
        "The canteen serves lunch from 12:00 to 14:00"
    ]


async def test_update_context_adds_one_system_message(engine: ContextEngine) -> None:
    memory = SagewaiMemory(engine, user_id="ana")
    await memory.add(MemoryContent(content="Ana's flight is LH 1234", mime_type="text/plain"))
    context = BufferedChatCompletionContext(buffer_size=10)
    await context.add_message(UserMessage(content="When is my flight?", source="user"))
    result = await memory.update_context(context)
    assert [m.content for m in result.memories.results] == ["Ana's flight is LH 1234"]
    messages = await context.get_messages()
    assert isinstance(messages[-1], SystemMessage)
    assert "Ana's flight is LH 1234" in messages[-1].content
    empty = BufferedChatCompletionContext(buffer_size=10)
    assert (await memory.update_context(empty)).memories.results == []


async def test_add_takes_text_markdown_and_json_and_refuses_the_rest(
    engine: ContextEngine,
) -> None:
    memory = SagewaiMemory(engine, user_id="ana")
    await memory.add(
        MemoryContent(content={"editor": "helix"}, mime_type=MemoryMimeType.JSON, metadata={"k": 1})
    )
    await memory.add(MemoryContent(content="**Ana** uses Helix", mime_type="text/markdown"))
    stored = await engine.list(user_id="ana", scope="user")
    assert sorted(f.content for f in stored) == ["**Ana** uses Helix", '{"editor": "helix"}']
    with pytest.raises(InvalidInputError):
        await memory.add(MemoryContent(content=b"\x00\x01", mime_type=MemoryMimeType.BINARY))
    with pytest.raises(InvalidInputError):
        await memory.add(MemoryContent(content="  ", mime_type=MemoryMimeType.TEXT))


async def test_clear_forgets_only_what_this_memory_stored(engine: ContextEngine) -> None:
    notes = SagewaiMemory(engine, user_id="ana", name="notes")
    other = SagewaiMemory(engine, user_id="ana", name="other")
    leo = SagewaiMemory(engine, user_id="leo", name="notes")
    for memory, text in [(notes, "Ana likes jazz"), (other, "Ana likes chess"), (leo, "Leo")]:
        await memory.add(MemoryContent(content=text, mime_type="text/plain"))
    await notes.clear()
    left = sorted(f.content for f in await engine.list(statuses=None, limit=100))
    assert "Ana likes jazz" not in left
    assert [m.content for m in (await other.query("chess")).results] == ["Ana likes chess"]
    assert [m.content for m in (await leo.query("Leo")).results] == ["Leo"]
    await notes.close()


async def test_a_bridge_learns_from_what_is_added(engine: ContextEngine) -> None:
    bridge = MemoryBridge(context_engine=engine, fact_extractor=RuleBasedFactExtractor())
    memory = SagewaiMemory(engine, user_id="ravi", bridge=bridge)
    await memory.add(MemoryContent(content="I moved to Lisbon last month", mime_type="text/plain"))
    await bridge.flush()
    found = [m.content for m in (await memory.query("Where does Ravi live?")).results]
    assert any("Lisbon" in text for text in found)
    assert (await SagewaiMemory(engine, user_id="ben").query("Lisbon")).results == []
    await bridge.aclose()


async def test_two_memories_holding_the_same_text_keep_their_own(engine: ContextEngine) -> None:
    first = SagewaiMemory(engine, user_id="ana", name="first")
    second = SagewaiMemory(engine, user_id="ana", name="second")
    for memory in (first, second):
        await memory.add(MemoryContent(content="Ana likes jazz", mime_type="text/plain"))
    await first.clear()
    assert [m.content for m in (await second.query("jazz")).results] == ["Ana likes jazz"]
