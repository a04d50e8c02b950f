"""Model calls: one small protocol, a litellm client, lenient JSON, retries, a test switch.

Importing this package does not import litellm; :class:`LiteLLMClient` imports it on its first
call. The fact extractor, the agent loop and episode summaries all talk to an
:class:`LLMClient`, so any of them can run against :class:`sagewai.testing._llm.ScriptedLLM`.

Example:
    >>> from sagewai.llm import LLMResponse, parse_json_lenient
    >>> parse_json_lenient('```json\\n{"ok": true}\\n```')
    {'ok': True}
"""

from __future__ import annotations

from sagewai.llm._base import LLMClient, LLMResponse, Message, ToolCall, Usage
from sagewai.llm._errors import (
    LLMCallError,
    MalformedOutputError,
    ModelNotConfiguredError,
    ModelRateLimitError,
    ModelRequestError,
    ModelRequestsForbiddenError,
    ModelServerError,
    ModelTimeoutError,
    ModelUnreachableError,
    is_model_unreachable,
    is_retryable,
)
from sagewai.llm._guard import allow_model_requests, model_requests_allowed
from sagewai.llm._jsonparse import parse_json_lenient
from sagewai.llm._litellm_client import LiteLLMClient
from sagewai.llm._retry import backoff_delay, call_with_retries

__all__ = [
    "LLMCallError",
    "LLMClient",
    "LLMResponse",
    "LiteLLMClient",
    "MalformedOutputError",
    "Message",
    "ModelNotConfiguredError",
    "ModelRateLimitError",
    "ModelRequestError",
    "ModelRequestsForbiddenError",
    "ModelServerError",
    "ModelTimeoutError",
    "ModelUnreachableError",
    "ToolCall",
    "Usage",
    "allow_model_requests",
    "backoff_delay",
    "call_with_retries",
    "is_model_unreachable",
    "is_retryable",
    "model_requests_allowed",
    "parse_json_lenient",
]
