"""A scripted chat model for tests: answers from a list, records what it was shown.

:class:`ScriptedLLM` implements :class:`sagewai.llm.LLMClient` with no network and no model.
Each call consumes the next script entry:

* a ``str``: answered as the message content;
* an :class:`~sagewai.llm.LLMResponse`: returned as is (tool calls, ``finish_reason="length"``);
* an exception instance or class: raised (rate limits, timeouts, unreachable servers);
* a callable taking the messages: its result (str, LLMResponse, or an awaitable of either) is
  the answer, so a test can compute the answer or sleep past a timeout.

Every call is recorded in :attr:`ScriptedLLM.calls`, so a test can assert what the model was shown.
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from sagewai.llm._base import LLMResponse, Message

__all__ = ["RecordedCall", "ScriptExhaustedError", "ScriptStep", "ScriptedLLM"]

ScriptStep: TypeAlias = (
    str
    | LLMResponse
    | BaseException
    | type[BaseException]
    | Callable[[list[dict[str, Any]]], "str | LLMResponse | Awaitable[str | LLMResponse]"]
)
"""One scripted answer: text, a response, an error to raise, or a function of the messages."""


class ScriptExhaustedError(AssertionError):
    """The code under test made more model calls than the test scripted."""


@dataclass(frozen=True)
class RecordedCall:
    """What one call showed the model."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    response_format: dict[str, Any] | None
    timeout: float | None

    @property
    def prompt(self) -> str:
        """All message contents joined, for ``assert "..." in call.prompt``."""
        return "\n".join(str(message.get("content") or "") for message in self.messages)


@dataclass
class ScriptedLLM:
    """An :class:`~sagewai.llm.LLMClient` that plays back a script.

    Args:
        script: The answers, one per call, in order.

    Example:
        >>> import asyncio
        >>> llm = ScriptedLLM(['{"facts": []}'])
        >>> asyncio.run(llm.complete([{"role": "user", "content": "hi"}])).content
        '{"facts": []}'
        >>> llm.calls[0].prompt
        'hi'
    """

    script: Iterable[ScriptStep] = ()
    calls: list[RecordedCall] = field(default_factory=list, init=False)
    _queue: deque[ScriptStep] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._queue = deque(self.script)

    @property
    def remaining(self) -> int:
        """Script entries not yet consumed."""
        return len(self._queue)

    def add(self, *steps: ScriptStep) -> None:
        """Append more answers to the script."""
        self._queue.extend(steps)

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        response_format: Mapping[str, Any] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the deadline is part of the protocol
    ) -> LLMResponse:
        """Record the call, then play the next script entry."""
        shown = [dict(message) for message in messages]
        self.calls.append(
            RecordedCall(
                messages=shown,
                tools=[dict(tool) for tool in tools] if tools else None,
                response_format=dict(response_format) if response_format else None,
                timeout=timeout,
            )
        )
        if not self._queue:
            raise ScriptExhaustedError(
                f"ScriptedLLM was called {len(self.calls)} times but only "
                f"{len(self.calls) - 1} answers were scripted; last prompt: "
                f"{self.calls[-1].prompt[:200]!r}"
            )
        step = self._queue.popleft()
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, type) and issubclass(step, BaseException):
            raise step("scripted failure")
        if isinstance(step, str | LLMResponse):
            return _as_response(step)
        answer: Callable[[list[dict[str, Any]]], object] = step
        result = answer(shown)
        if inspect.isawaitable(result):
            result = await result
        return _as_response(result)


def _as_response(value: object) -> LLMResponse:
    if isinstance(value, LLMResponse):
        return value
    if isinstance(value, str):
        return LLMResponse(content=value, finish_reason="stop")
    raise TypeError(f"a script step must give str or LLMResponse, got {type(value).__name__}")
