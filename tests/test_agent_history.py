"""History trimming never separates a tool call from its result (property tests)."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagewai.agent import ConversationHistory, UniversalAgent, tool_pairing_problems
from sagewai.agent._history import HistoryBlock, trim_blocks
from sagewai.context._engine import ContextEngine
from sagewai.llm import LLMResponse, ToolCall
from sagewai.testing import FakeEmbedder
from sagewai.testing._llm import ScriptedLLM

# A turn: how many tool exchanges the model made, and how many calls in each.
turns = st.lists(st.lists(st.integers(min_value=1, max_value=3), max_size=3), max_size=12)


def fill(history: ConversationHistory, shape: list[list[int]]) -> None:
    for turn, exchanges in enumerate(shape):
        history.add_user(f"question {turn}", message_id=f"u{turn}")
        for step, calls in enumerate(exchanges):
            ids = [f"t{turn}-{step}-{n}" for n in range(calls)]
            history.add_tool_exchange(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}}
                        for i in ids
                    ],
                },
                [{"role": "tool", "tool_call_id": i, "content": "ok"} for i in ids],
            )
        history.add_assistant(f"answer {turn}", message_id=f"a{turn}")


@given(shape=turns, window=st.integers(min_value=0, max_value=30))
def test_trimming_keeps_calls_and_results_together(shape: list[list[int]], window: int) -> None:
    history = ConversationHistory(window=window)
    fill(history, shape)
    messages = history.messages()
    assert tool_pairing_problems(messages) == []
    assert len(messages) <= window
    if messages:
        assert messages[0]["role"] == "user"
    # What is kept is the newest part of the conversation, in order.
    full = ConversationHistory(window=10_000)
    fill(full, shape)
    everything = full.messages()
    assert everything[len(everything) - len(messages) :] == messages


@given(shape=turns, window=st.integers(min_value=0, max_value=30), data=st.data())
def test_redaction_keeps_the_pairs_intact(
    shape: list[list[int]], window: int, data: st.DataObject
) -> None:
    history = ConversationHistory(window=window)
    fill(history, shape)
    doomed = data.draw(st.sets(st.integers(min_value=0, max_value=len(history.blocks))))
    blocks = history.blocks
    history.redact(lambda block: any(block is blocks[i] for i in doomed if i < len(blocks)))
    assert tool_pairing_problems(history.messages()) == []


def test_pairing_problems_are_reported() -> None:
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}, {"id": "c2"}]}
    answer = {"role": "tool", "tool_call_id": "c1", "content": "x"}
    assert tool_pairing_problems([call, answer]) == ["tool call(s) ['c2'] have no result"]
    assert tool_pairing_problems([{"role": "user", "content": "hi"}, answer]) == [
        "tool result 'c1' at position 1 has no matching call"
    ]
    assert trim_blocks([HistoryBlock(({"role": "assistant", "content": "x"},))], 5) == []


def echo(value: str) -> str:
    """Echo a value."""
    return value


def scripted_turn(exchanges: list[int], turn: int) -> list[Any]:
    steps: list[Any] = []
    for step, calls in enumerate(exchanges):
        steps.append(
            LLMResponse(
                tool_calls=[
                    ToolCall(id=f"c{n}", name="echo", arguments=f'{{"value": "{turn}-{step}"}}')
                    for n in range(calls)
                ]
            )
        )
    steps.append(f"answer {turn}")
    return steps


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=turns, window=st.integers(min_value=0, max_value=12))
def test_every_prompt_the_agent_sends_is_well_paired(shape: list[list[int]], window: int) -> None:
    script = [
        step for turn, exchanges in enumerate(shape) for step in scripted_turn(exchanges, turn)
    ]
    llm = ScriptedLLM(script)

    async def converse() -> None:
        async with ContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
            agent = UniversalAgent(
                name="t",
                context=ctx,
                llm=llm,
                tools=[echo],
                memory_tools=False,
                learn=False,
                history_window=window,
                max_steps=5,
            )
            async with agent:
                for turn in range(len(shape)):
                    await agent.chat(f"question {turn}", session_id="s1")

    asyncio.run(converse())
    assert len(llm.calls) == len(script)
    for recorded in llm.calls:
        assert tool_pairing_problems(recorded.messages) == []
        current = max(i for i, m in enumerate(recorded.messages) if m["role"] == "user")
        history = recorded.messages[1:current]  # before this turn's own messages
        assert len(history) <= window
