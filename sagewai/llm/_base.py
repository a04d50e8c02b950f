"""The chat-model protocol every LLM-backed part of sagewai talks to.

One narrow method, :meth:`LLMClient.complete`, covers the three uses sagewai has for a model:
plain text (episode summaries), structured JSON output (fact extraction, through
``response_format``) and tool calls (the agent loop, through ``tools``). Messages and tools use
the OpenAI chat format, which litellm accepts for every provider, so a client is a thin adapter
and a test double (:class:`sagewai.testing._llm.ScriptedLLM`) is a few lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["LLMClient", "LLMResponse", "Message", "ToolCall", "Usage"]

Message = Mapping[str, Any]
"""One chat message in the OpenAI format: ``{"role": "user", "content": "..."}``."""


class ToolCall(BaseModel):
    """A function call the model asked for; ``arguments`` is the raw JSON text the model wrote.

    The arguments stay a string because models write invalid JSON often enough that parsing
    belongs to the caller (see :func:`sagewai.llm.parse_json_lenient`).
    """

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str = "{}"


class Usage(BaseModel):
    """Token counts of one call, as reported by the provider (0 when it reports none)."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class LLMResponse(BaseModel):
    """What a model answered: text, tool calls, or both.

    Example:
        >>> LLMResponse(content="hello").finish_reason
        'stop'
    """

    model_config = ConfigDict(frozen=True)

    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = "stop"
    """``stop``, ``length`` (output cut by the token limit), ``tool_calls``, ... as reported."""
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None

    @property
    def truncated(self) -> bool:
        """True when the model stopped because it hit its output token limit."""
        return self.finish_reason == "length"


@runtime_checkable
class LLMClient(Protocol):
    """Anything that can answer a chat: litellm, a scripted fake, a custom adapter.

    Implementations raise errors from :mod:`sagewai.llm._errors` (all inside the
    :class:`~sagewai.errors.SagewaiError` tree) so callers can tell an unreachable or
    unconfigured model (fall back) from a transient failure (retry).
    """

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        response_format: Mapping[str, Any] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the deadline is part of the protocol
    ) -> LLMResponse:
        """Send ``messages`` (with optional tool definitions / output schema); return the answer."""
        ...
