"""The bounded tool loop: ask the model, run the tools it asks for, repeat; the last step has none.

The loop is written once, as an async generator of events, and serves both
:meth:`UniversalAgent.chat` (which keeps only the final event) and :meth:`UniversalAgent.stream`
(which forwards the text as it comes). With ``max_steps=N`` the model may call tools in the first
``N - 1`` steps; the N-th step is sent without tools, so every turn ends with an answer.

A model call that fails (no key, no network, a timeout after the retries) ends the loop with the
error in the result instead of raising: the agent decides what to tell the user.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from sagewai.agent._tools import ToolBox, ToolResult
from sagewai.errors import MissingDependencyError, ModelNotAvailableError
from sagewai.llm._base import LLMClient, LLMResponse, Message, ToolCall, Usage
from sagewai.llm._errors import LLMCallError

__all__ = ["LoopResult", "StreamingLLMClient", "TextChunk", "run_tool_loop"]

logger = logging.getLogger("sagewai.agent")

STEP_CAP_NOTE = (
    "You have used every tool step of this turn. Answer the user now from what you have, "
    "without calling tools."
)


@runtime_checkable
class StreamingLLMClient(Protocol):
    """An :class:`~sagewai.llm.LLMClient` that can also stream.

    ``stream`` yields text deltas as they arrive, then one :class:`~sagewai.llm.LLMResponse`
    holding the whole answer (content and tool calls). Clients without it are used through
    ``complete`` and their answer arrives as one chunk.
    """

    def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[str | LLMResponse]:
        """Text deltas, then the complete response."""
        ...


@dataclass(frozen=True, slots=True)
class TextChunk:
    """A piece of the answer, as the model produced it."""

    text: str


@dataclass(slots=True)
class LoopResult:
    """How a turn's loop ended.

    ``exchanges`` are the assistant tool-call messages, each with its results, in order: the
    history keeps them as unbreakable blocks.
    """

    answer: str = ""
    steps: int = 0
    exchanges: list[tuple[dict[str, Any], list[dict[str, Any]]]] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    error: Exception | None = None
    """The model call failure that ended the loop early (an :class:`LLMCallError` or a missing
    dependency/model); ``None`` when the model answered."""
    reached_step_cap: bool = False


def _call_message(response: LLMResponse) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": response.content,
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in response.tool_calls
        ],
    }


def _unique_ids(calls: Sequence[ToolCall], step: int) -> list[ToolCall]:
    """Give calls with a repeated or empty id a fresh one, so each result pairs with one call."""
    seen: set[str] = set()
    fixed: list[ToolCall] = []
    for index, call in enumerate(calls):
        call_id = call.id
        if not call_id or call_id in seen:
            call_id = f"call_{step}_{index}"
        seen.add(call_id)
        fixed.append(call if call_id == call.id else call.model_copy(update={"id": call_id}))
    return fixed


def _add_usage(total: Usage, more: Usage) -> Usage:
    return Usage(
        prompt_tokens=total.prompt_tokens + more.prompt_tokens,
        completion_tokens=total.completion_tokens + more.completion_tokens,
        total_tokens=total.total_tokens + more.total_tokens,
    )


async def _ask(
    llm: LLMClient,
    messages: Sequence[Message],
    tools: list[dict[str, Any]] | None,
    timeout: float | None,  # noqa: ASYNC109 - the per-call model deadline
    stream: bool,
) -> AsyncIterator[str | LLMResponse]:
    if stream and isinstance(llm, StreamingLLMClient):
        async for event in llm.stream(messages, tools=tools, timeout=timeout):
            yield event
        return
    yield await llm.complete(messages, tools=tools, timeout=timeout)


async def run_tool_loop(
    llm: LLMClient,
    messages: Sequence[Message],
    toolbox: ToolBox,
    *,
    max_steps: int,
    timeout: float | None = None,  # noqa: ASYNC109 - the per-call model deadline
    stream: bool = False,
) -> AsyncIterator[TextChunk | LoopResult]:
    """Run one turn's loop; yields text chunks (when streaming) and finally a :class:`LoopResult`.

    Args:
        llm: The model.
        messages: The system message, the history and the user's message.
        toolbox: The tools the model may call (none: a single step without tools).
        max_steps: Model calls at most; the last one is sent without tools.
        timeout: Seconds one model call may take (the client's default when ``None``).
        stream: Forward text deltas of a :class:`StreamingLLMClient` as they arrive.
    """
    working = [dict(message) for message in messages]
    result = LoopResult()
    for step in range(1, max_steps + 1):
        last = step == max_steps or not len(toolbox)
        if last and result.exchanges:
            # Said inside the last tool result: a system message in mid-conversation is refused
            # by some providers and chat templates, and a fake user message would be a lie.
            result.reached_step_cap = step == max_steps
            final = dict(working[-1])
            final["content"] = f"{final.get('content') or ''}\n\n[{STEP_CAP_NOTE}]"
            working[-1] = final
        response: LLMResponse | None = None
        try:
            async for event in _ask(
                llm, working, None if last else toolbox.schemas(), timeout, stream
            ):
                if isinstance(event, LLMResponse):
                    response = event
                elif event:
                    yield TextChunk(event)
        except (LLMCallError, MissingDependencyError, ModelNotAvailableError) as exc:
            result.error = exc
            result.steps = step
            yield result
            return
        if response is None:  # a streaming client that never sent its final response
            response = LLMResponse(content="")
        result.steps = step
        result.usage = _add_usage(result.usage, response.usage)
        if response.tool_calls and not last:
            calls = _unique_ids(response.tool_calls, step)
            response = response.model_copy(update={"tool_calls": calls})
            outcomes = await toolbox.run_all(calls)
            call_message = _call_message(response)
            result_messages = [outcome.message() for outcome in outcomes]
            working.append(call_message)
            working.extend(result_messages)
            result.exchanges.append((call_message, result_messages))
            result.tool_results.extend(outcomes)
            continue
        if response.tool_calls:
            logger.info("the model asked for tools on its last step; the calls were ignored")
        answer = response.content or ""
        streamed = stream and isinstance(llm, StreamingLLMClient)
        if answer and not streamed:
            yield TextChunk(answer)
        result.answer = answer
        yield result
        return
    yield result  # max_steps < 1 is refused by the agent; kept for completeness
