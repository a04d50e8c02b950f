"""ScriptedLLM: the test double every LLM-backed part is tested with."""

from __future__ import annotations

import asyncio

import pytest

from sagewai.llm import LLMClient, LLMResponse, ModelRateLimitError, ToolCall
from sagewai.testing._llm import ScriptedLLM, ScriptExhaustedError

MESSAGES = [{"role": "user", "content": "hello"}]


async def test_plays_the_script_in_order_and_records_calls() -> None:
    async def later(messages: list[dict[str, object]]) -> str:
        await asyncio.sleep(0)
        return f"seen {len(messages)}"

    tool_answer = LLMResponse(
        content=None,
        tool_calls=[ToolCall(id="c1", name="search", arguments='{"q": "tea"}')],
        finish_reason="tool_calls",
    )
    llm = ScriptedLLM(["text", tool_answer, lambda messages: messages[-1]["content"], later])
    assert isinstance(llm, LLMClient)
    tools = [{"type": "function", "function": {"name": "search", "parameters": {}}}]
    first = await llm.complete(MESSAGES, response_format={"type": "json_object"}, timeout=3.0)
    second = await llm.complete(MESSAGES, tools=tools)
    third = await llm.complete([{"role": "user", "content": "echo me"}])
    fourth = await llm.complete(MESSAGES)
    assert (first.content, first.finish_reason) == ("text", "stop")
    assert second.tool_calls[0].name == "search"
    assert third.content == "echo me"
    assert fourth.content == "seen 1"
    assert llm.remaining == 0
    assert llm.calls[0].response_format == {"type": "json_object"}
    assert llm.calls[0].timeout == 3.0
    assert llm.calls[1].tools == tools
    assert llm.calls[2].prompt == "echo me"


async def test_raises_scripted_exceptions() -> None:
    llm = ScriptedLLM([ModelRateLimitError("slow down"), TimeoutError, "fine"])
    with pytest.raises(ModelRateLimitError):
        await llm.complete(MESSAGES)
    with pytest.raises(TimeoutError):
        await llm.complete(MESSAGES)
    assert (await llm.complete(MESSAGES)).content == "fine"


async def test_running_out_of_script_is_a_clear_error() -> None:
    llm = ScriptedLLM(["only one"])
    await llm.complete(MESSAGES)
    with pytest.raises(ScriptExhaustedError, match="called 2 times but only 1"):
        await llm.complete([{"role": "user", "content": "second prompt"}])
    llm.add("more")
    assert (await llm.complete(MESSAGES)).content == "more"


def test_truncated_flag() -> None:
    assert LLMResponse(content="{", finish_reason="length").truncated
    assert not LLMResponse(content="{}").truncated
