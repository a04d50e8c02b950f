"""Tools: schemas from type hints, and a tool loop that survives every kind of bad tool call."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from sagewai.agent import AgentReply, Tool, ToolBox, UniversalAgent, tool, tool_pairing_problems
from sagewai.context._engine import ContextEngine
from sagewai.errors import ConfigurationError
from sagewai.llm import LLMResponse, ToolCall
from sagewai.testing import FakeEmbedder
from sagewai.testing._llm import ScriptedLLM


class Address(BaseModel):
    city: str
    country: str = "PT"


def plan_trip(
    destination: str,
    days: int,
    mode: Literal["train", "plane"] = "train",
    stops: list[str] | None = None,
    home: Address | None = None,
) -> str:
    """Plan a trip.

    Longer explanation that the model does not need.

    Args:
        destination: Where to go.
        days: How many days,
            at least one.
        mode: How to travel.
        stops: Places on the way.
        home: Where the trip starts.
    """
    return f"{days} days in {destination} by {mode} via {stops or []} from {home}"


def test_schema_is_made_from_type_hints_and_docstring() -> None:
    planned = Tool.from_function(plan_trip)
    assert planned.description == "Plan a trip."
    params = planned.parameters
    assert params["required"] == ["destination", "days"]
    props = params["properties"]
    assert props["destination"] == {"type": "string", "description": "Where to go."}
    assert props["days"]["type"] == "integer"
    assert props["days"]["description"] == "How many days, at least one."
    assert props["mode"]["enum"] == ["train", "plane"]
    assert props["mode"]["default"] == "train"
    assert "Address" in json.dumps(params["$defs"])
    assert planned.schema()["function"]["name"] == "plan_trip"


async def test_arguments_are_validated_and_converted() -> None:
    planned = Tool.from_function(plan_trip)
    text = await planned.invoke(
        {"destination": "Porto", "days": "3", "home": {"city": "Lisbon"}, "stops": ["Coimbra"]}
    )
    assert text == "3 days in Porto by train via ['Coimbra'] from city='Lisbon' country='PT'"


def test_functions_that_cannot_be_described_are_refused() -> None:
    def untyped(x):  # type: ignore[no-untyped-def]
        return x

    def star(*values: int) -> int:
        return sum(values)

    for bad in (untyped, star):
        with pytest.raises(ConfigurationError):
            Tool.from_function(bad)
    with pytest.raises(ConfigurationError):
        Tool.from_function(plan_trip, name="has spaces")
    with pytest.raises(ConfigurationError):
        ToolBox([plan_trip, plan_trip])


def boom(reason: str) -> str:
    """Always fails."""
    raise ValueError(f"exploded: {reason}")


async def slow(seconds: float) -> str:
    """Sleeps."""
    await asyncio.sleep(seconds)
    return "late"


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def call(name: str, arguments: str, call_id: str = "c1") -> LLMResponse:
    return LLMResponse(
        tool_calls=[ToolCall(id=call_id, name=name, arguments=arguments)],
        finish_reason="tool_calls",
    )


@pytest.fixture
async def engine() -> AsyncIterator[ContextEngine]:
    async with ContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
        yield ctx


async def run(
    engine: ContextEngine, script: list[Any], **options: Any
) -> tuple[AgentReply, ScriptedLLM]:
    llm = ScriptedLLM(script)
    options.setdefault("memory_tools", False)
    options.setdefault("learn", False)
    async with UniversalAgent(
        name="t", context=engine, llm=llm, tools=[add, boom, slow], **options
    ) as agent:
        reply = await agent.respond("go", session_id="s1")
        follow = ScriptedLLM(["ok"])
        agent.llm = follow
        await agent.chat("next", session_id="s1")
    # Whatever happened in the turn, the history shown next is a valid conversation.
    assert tool_pairing_problems(follow.calls[0].messages) == []
    return reply, llm


def tool_messages(llm: ScriptedLLM, index: int) -> list[dict[str, Any]]:
    return [m for m in llm.calls[index].messages if m["role"] == "tool"]


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        (call("add", '{"a": 1, "b": '), "not valid JSON"),
        (call("add", "[1, 2]"), "must be a JSON object"),
        (call("subtract", '{"a": 1}'), "there is no tool named 'subtract'; available: add, boom"),
        (call("add", '{"a": "one", "b": 2}'), "invalid arguments for add: a:"),
        (call("add", '{"a": 1, "b": 2, "c": 3}'), "invalid arguments for add: c:"),
        (call("boom", '{"reason": "on purpose"}'), "boom failed: ValueError: exploded: on purpose"),
        (call("slow", '{"seconds": 5}'), "slow did not finish within 0.05 s"),
    ],
)
async def test_a_bad_tool_call_becomes_an_error_result_and_the_turn_goes_on(
    engine: ContextEngine, step: LLMResponse, expected: str
) -> None:
    reply, llm = await run(engine, [step, "recovered"], tool_timeout=0.05)
    assert reply.answer == "recovered"
    [result] = tool_messages(llm, 1)
    assert result["tool_call_id"] == "c1"
    assert result["content"].startswith("error: ")
    assert expected in result["content"]
    assert reply.tool_results[0].error is not None


async def test_good_calls_run_in_order_and_pair_with_their_results(engine: ContextEngine) -> None:
    both = LLMResponse(
        tool_calls=[
            ToolCall(id="x", name="add", arguments='{"a": 1, "b": 2}'),
            ToolCall(id="x", name="add", arguments='{"a": 3, "b": 4}'),  # a repeated id
        ]
    )
    reply, llm = await run(engine, [both, "3 and 7"])
    results = tool_messages(llm, 1)
    assert [m["content"] for m in results] == ["3", "7"]
    assert len({m["tool_call_id"] for m in results}) == 2
    assert tool_pairing_problems(llm.calls[1].messages) == []
    assert reply.answer == "3 and 7"
    assert reply.steps == 2


async def test_the_step_cap_ends_with_a_call_without_tools(engine: ContextEngine) -> None:
    again = call("add", '{"a": 1, "b": 1}')
    partial = LLMResponse(content="2, I think", tool_calls=again.tool_calls)
    reply, llm = await run(engine, [again, again, partial], max_steps=3)
    assert [c.tools is not None for c in llm.calls] == [True, True, False]
    assert "Answer the user now" in llm.calls[2].messages[-1]["content"]
    assert reply.answer == "2, I think"  # tool calls on the last step are ignored
    assert reply.reached_step_cap
    assert reply.steps == 3


async def test_an_empty_final_answer_gets_a_plain_reply(engine: ContextEngine) -> None:
    reply, _ = await run(engine, [LLMResponse(content="")], max_steps=1)
    assert reply.answer.startswith("I could not produce an answer")


async def test_results_are_rendered_for_the_model() -> None:
    def structured() -> dict[str, Any]:
        """Gives a mapping."""
        return {"a": [1, 2]}

    def nothing() -> None:
        """Gives nothing."""

    def huge() -> str:
        """Gives a lot."""
        return "x" * 20_000

    box = ToolBox([structured, nothing, huge])
    results = [await box.run(ToolCall(id=n, name=n, arguments="")) for n in box.names]
    assert results[0].content == '{"a": [1, 2]}'
    assert results[1].content == "done"
    assert len(results[2].content) < 8_100
    assert "cut" in results[2].content
