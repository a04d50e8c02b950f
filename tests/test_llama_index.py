"""LlamaIndex on sagewai: the real ``Memory``, ``FunctionAgent`` and retriever machinery.

The model is LlamaIndex's own ``MockFunctionCallingLLM`` with a scripted response function that
records what it was shown; nothing leaves the machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms import MockFunctionCallingLLM
from llama_index.core.memory import Memory
from llama_index.core.query_engine import RetrieverQueryEngine

from sagewai import ContextEngine
from sagewai.context import MemoryBridge
from sagewai.integrations.llama_index import (
    SagewaiMemoryBlock,
    SagewaiRetriever,
    message_text,
)
from sagewai.intelligence import RuleBasedFactExtractor
from sagewai.testing import FakeEmbedder


@pytest.fixture
async def engine() -> Any:
    async with ContextEngine.in_memory(embedder=FakeEmbedder(), project_id="llama") as ctx:
        yield ctx


class ScriptedLlm:
    """Answers with the next scripted text and records every prompt it was shown."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[list[ChatMessage]] = []
        self.llm = MockFunctionCallingLLM(response_generator=self.answer)

    def answer(self, messages: Sequence[ChatMessage], **_: Any) -> ChatMessage:
        self.prompts.append(list(messages))
        return ChatMessage(role="assistant", content=self.answers.pop(0))

    def system_text(self, call: int) -> str:
        return "\n".join(
            message_text(m) for m in self.prompts[call] if m.role == MessageRole.SYSTEM
        )


def user_memory(engine: ContextEngine, user: str, **block: Any) -> Memory:
    """LlamaIndex's Memory with a short window, so older turns flow into the sagewai block."""
    return Memory.from_defaults(
        session_id=f"{user}-chat",
        token_limit=60,
        chat_history_token_ratio=0.5,
        token_flush_size=20,
        memory_blocks=[SagewaiMemoryBlock(engine=engine, user_id=user, **block)],
    )


async def test_an_agent_recalls_from_the_block_and_users_stay_apart(
    engine: ContextEngine,
) -> None:
    model = ScriptedLlm("Noted.", "Noted.", "Noted.", "You keep bees on the roof.", "I don't know.")
    agent = FunctionAgent(tools=[], llm=model.llm, system_prompt="Be brief.")
    maya = user_memory(engine, "maya")
    for text in [
        "I keep three bee hives on the roof of my flat.",
        "The hives are painted yellow and blue.",
        "My neighbour Otto helps with the honey harvest.",
    ]:
        await agent.run(text, memory=maya)
    # The older turns left LlamaIndex's short window and went to sagewai, as Maya's.
    stored = await engine.list(user_id="maya", scope="user")
    assert any("bee hives" in fact.content for fact in stored)
    assert all(fact.user_id == "maya" for fact in stored)

    answer = await agent.run("Where are my bee hives?", memory=maya)
    assert str(answer) == "You keep bees on the roof."
    assert "three bee hives on the roof" in model.system_text(3)

    # Leo asks the same in his own memory (his own LlamaIndex session, his own block).
    await agent.run("Where are my bee hives?", memory=user_memory(engine, "leo"))
    assert "bee" not in model.system_text(4)
    assert await engine.search("bee hives", user_id="leo") == []


async def test_the_block_reads_the_user_named_at_read_time(engine: ContextEngine) -> None:
    await engine.add("Ana's desk is by the window", user_id="ana")
    block = SagewaiMemoryBlock(engine=engine)
    question = [ChatMessage(role="user", content="Where is the desk?")]
    assert await block.aget(question) == ""  # no user: the project's memory only
    assert "window" in await block.aget(question, user_id="ana")
    assert await block.aget(question, user_id="ben") == ""
    assert await block.aget([]) == ""
    assert await block.aget([ChatMessage(role="assistant", content="hm")], user_id="ana") == ""


async def test_the_block_learns_through_a_bridge(engine: ContextEngine) -> None:
    bridge = MemoryBridge(context_engine=engine, fact_extractor=RuleBasedFactExtractor())
    block = SagewaiMemoryBlock(engine=engine, user_id="ravi", bridge=bridge)
    await block.aput(
        [ChatMessage(role="user", content="I moved to Lisbon last month")], session_id="s1"
    )
    await bridge.flush()
    facts = await engine.list(user_id="ravi", scope="user", kinds=["fact"])
    assert any("Lisbon" in f.content for f in facts)
    await bridge.aclose()


async def test_the_retriever_reads_one_users_scope(engine: ContextEngine) -> None:
    await engine.add("Refunds over 500 EUR need a manager's approval")
    await engine.add("Maya's refund REF-77 was approved", user_id="maya")
    await engine.add("Leo's refund REF-91 is pending", user_id="leo")
    maya = SagewaiRetriever(engine, user_id="maya", top_k=5)
    texts = [n.node.get_content() for n in await maya.aretrieve("refund")]
    assert "Maya's refund REF-77 was approved" in texts
    assert "Refunds over 500 EUR need a manager's approval" in texts
    assert not any("REF-91" in t for t in texts)
    nodes = await SagewaiRetriever(engine).aretrieve("refund")
    assert [n.node.get_content() for n in nodes] == [
        "Refunds over 500 EUR need a manager's approval"
    ]
    assert nodes[0].node.metadata["scope"] == "project"
    assert nodes[0].node.node_id == (await engine.list())[0].id
    # Inside a real query engine; the mock model's completion echoes the prompt it was given.
    query_engine = RetrieverQueryEngine.from_args(maya, llm=MockFunctionCallingLLM())
    response = await query_engine.aquery("What happened to my refund?")
    assert "Maya's refund REF-77 was approved" in str(response)
    assert "REF-91" not in str(response)
    assert {n.node.get_content() for n in response.source_nodes} == set(texts)


def test_the_sync_retriever_works_without_a_loop() -> None:
    engine = ContextEngine.in_memory(embedder=FakeEmbedder())
    from sagewai.sync import wrap

    ctx = wrap(engine)
    ctx.add("Build artefacts live in bucket ci-artifacts-eu", user_id="ops")
    found = SagewaiRetriever(engine, user_id="ops").retrieve("where are build artefacts?")
    assert [n.node.get_content() for n in found] == [
        "Build artefacts live in bucket ci-artifacts-eu"
    ]
    ctx.close()
