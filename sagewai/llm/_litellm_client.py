"""The :class:`LLMClient` for every provider litellm knows (OpenAI, Anthropic, Ollama, ...).

litellm is an optional dependency (``pip install "sagewai[llm]"``) that takes seconds to import,
so it is imported on the first call, in a worker thread, never at ``import sagewai``. Its
exceptions are translated at this boundary into :mod:`sagewai.llm._errors`, which tell an
unreachable or unconfigured model (fall back) from a transient failure (retry).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from sagewai._optional import require
from sagewai.errors import InvalidInputError, SagewaiError
from sagewai.llm._base import LLMResponse, Message, ToolCall, Usage
from sagewai.llm._errors import (
    LLMCallError,
    ModelNotConfiguredError,
    ModelRateLimitError,
    ModelRequestError,
    ModelServerError,
    ModelTimeoutError,
    ModelUnreachableError,
)
from sagewai.llm._guard import ensure_model_requests_allowed
from sagewai.llm._retry import Sleep, call_with_retries

__all__ = ["LiteLLMClient", "response_from_litellm", "translate_litellm_error"]

_import_lock = threading.Lock()
_litellm: ModuleType | None = None

# Words in an error (or its cause chain) that mean "no model can answer in this setup".
_NOT_CONFIGURED_HINTS = ("missing credentials", "api_key", "api key", "no api key", "unauthorized")
_UNREACHABLE_HINTS = (
    "connection error",
    "cannot connect",
    "connect call failed",
    "connection refused",
    "name or service not known",
    "nodename nor servname",
    "temporary failure in name resolution",
    "network is unreachable",
    "no route to host",
    "failed to establish",
)
_REQUEST_ERRORS = {
    "BadRequestError",
    "ContextWindowExceededError",
    "ContentPolicyViolationError",
    "UnprocessableEntityError",
    "UnsupportedParamsError",
    "JSONSchemaValidationError",
    "InvalidRequestError",
}


def _load_litellm() -> ModuleType:
    """Import litellm once, without its network fetch of the price list."""
    global _litellm
    with _import_lock:
        if _litellm is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            _litellm = require("litellm", extra="llm", feature="LiteLLMClient")
            # litellm prints a "Give Feedback / Get Help" banner to stdout on every error.
            setattr(_litellm, "suppress_debug_info", True)  # noqa: B010 - untyped module
        return _litellm


class LiteLLMClient:
    """Chat completions through ``litellm.acompletion``, with timeout, retries and typed errors.

    Args:
        model: A litellm model name (``"gpt-4o-mini"``, ``"anthropic/claude-3-5-haiku-latest"``,
            ``"openai/<alias>"`` with ``api_base`` for an OpenAI-compatible local server).
        api_base: Base URL of the provider or local server; ``None`` for the provider default.
        api_key: API key; ``None`` lets litellm read the provider's usual environment variable
            at call time.
        timeout: Seconds one attempt may take.
        max_retries: Retries on transient errors (rate limit, timeout, 5xx), with exponential
            backoff and jitter. Unreachable or unconfigured models are never retried.
        temperature: Sampling temperature; ``None`` for the provider default.
        max_tokens: Output token limit; ``None`` for the provider default.
        extra_params: More keyword arguments for ``litellm.acompletion`` (``mock_response``,
            ``seed``, provider options).
        sleep: The awaitable sleep between retries (tests inject a recorder).

    Example:
        >>> import asyncio
        >>> from sagewai.llm import allow_model_requests
        >>> client = LiteLLMClient("gpt-4o-mini", extra_params={"mock_response": "hi"})
        >>> with allow_model_requests(True):  # litellm answers the mock itself, offline
        ...     asyncio.run(client.complete([{"role": "user", "content": "hello"}])).content
        'hi'
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        temperature: float | None = None,
        max_tokens: int | None = None,
        extra_params: Mapping[str, Any] | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise InvalidInputError("model must be a non-empty string")
        if timeout <= 0:
            raise InvalidInputError("timeout must be > 0")
        if max_retries < 0:
            raise InvalidInputError("max_retries must be >= 0")
        self._model = model
        self._api_base = api_base
        self._api_key = api_key
        self._timeout = float(timeout)
        self._max_retries = max_retries
        self._temperature = temperature
        self._max_tokens = max_tokens
        self._extra = dict(extra_params or {})
        self._sleep = sleep

    @property
    def model(self) -> str:
        """The litellm model name this client calls."""
        return self._model

    def __repr__(self) -> str:
        return f"LiteLLMClient(model={self._model!r}, api_base={self._api_base!r})"

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        response_format: Mapping[str, Any] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the deadline is part of the protocol
    ) -> LLMResponse:
        """Ask the model; see :class:`~sagewai.llm.LLMClient`.

        Raises:
            ModelRequestsForbiddenError: model requests are switched off.
            MissingDependencyError: litellm is not installed.
            ModelNotConfiguredError: no API key, or the key was refused.
            ModelUnreachableError: the server cannot be reached.
            ModelTimeoutError / ModelRateLimitError / ModelServerError: after the retries.
            ModelRequestError: the provider rejected the request itself.
        """
        ensure_model_requests_allowed(repr(self))
        if not messages:
            raise InvalidInputError("messages must not be empty")
        litellm = _litellm if _litellm is not None else await asyncio.to_thread(_load_litellm)
        limit = self._timeout if timeout is None else float(timeout)
        kwargs: dict[str, Any] = {
            "model": self._model,
            "messages": [dict(message) for message in messages],
            "timeout": limit,
            "num_retries": 0,  # retries happen here, once, with our backoff
            **self._extra,
        }
        optional = {
            "api_base": self._api_base,
            "api_key": self._api_key,
            "temperature": self._temperature,
            "max_tokens": self._max_tokens,
            "tools": [dict(tool) for tool in tools] if tools else None,
            "response_format": dict(response_format) if response_format else None,
        }
        kwargs.update({key: value for key, value in optional.items() if value is not None})

        async def attempt() -> LLMResponse:
            try:
                async with asyncio.timeout(limit):
                    raw = await litellm.acompletion(**kwargs)
            except SagewaiError:
                raise
            except Exception as exc:
                raise translate_litellm_error(exc, self._model) from exc
            return response_from_litellm(raw)

        return await call_with_retries(attempt, max_retries=self._max_retries, sleep=self._sleep)


def _chain(error: BaseException) -> list[BaseException]:
    """``error`` and its causes/contexts, at most 8 deep."""
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and len(seen) < 8 and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def translate_litellm_error(error: BaseException, model: str = "") -> LLMCallError:
    """Map a litellm (or transport) exception to the matching :mod:`sagewai.llm._errors` class.

    Classes are matched by name along the MRO, so no litellm import is needed and the mapping
    survives litellm moving its classes. litellm reports a missing OpenAI key and a refused
    connection as HTTP 500, so the messages along the cause chain are read too.

    Example:
        >>> type(translate_litellm_error(TimeoutError("slow"))).__name__
        'ModelTimeoutError'
    """
    chain = _chain(error)
    names = {klass.__name__ for link in chain for klass in type(link).__mro__}
    text = " ".join(str(link) for link in chain).lower()
    label = f"model {model!r}: " if model else ""
    message = f"{label}{type(error).__name__}: {str(error)[:500]}"
    if names & {"AuthenticationError", "PermissionDeniedError"}:
        return ModelNotConfiguredError(message)
    if "RateLimitError" in names:
        return ModelRateLimitError(message, retry_after=_retry_after(error))
    if names & {"Timeout", "APITimeoutError", "TimeoutError", "ReadTimeout", "ConnectTimeout"}:
        return ModelTimeoutError(message)
    if any(hint in text for hint in _NOT_CONFIGURED_HINTS):
        return ModelNotConfiguredError(message)
    if names & {
        "APIConnectionError",
        "ConnectError",
        "ConnectionError",
        "ClientConnectorError",
    } or any(hint in text for hint in _UNREACHABLE_HINTS):
        return ModelUnreachableError(message)
    if "NotFoundError" in names:
        return ModelNotConfiguredError(message)
    if names & _REQUEST_ERRORS:
        return ModelRequestError(message)
    status = getattr(error, "status_code", None)
    try:
        code = int(status) if status is not None else None
    except (TypeError, ValueError):
        code = None
    if names & {"InternalServerError", "ServiceUnavailableError", "BadGatewayError"} or (
        code is not None and code >= 500
    ):
        return ModelServerError(message)
    return ModelRequestError(message)


def _retry_after(error: BaseException) -> float | None:
    """The ``Retry-After`` header of a rate-limit response, in seconds, when present."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("retry-after")
        return float(value) if value is not None else None
    except (TypeError, ValueError, AttributeError):
        return None


def response_from_litellm(raw: Any) -> LLMResponse:
    """Convert a litellm ``ModelResponse`` (OpenAI shape) into an :class:`LLMResponse`.

    Raises:
        ModelRequestError: when the response holds no choice at all.
    """
    choices = getattr(raw, "choices", None) or []
    if not choices:
        raise ModelRequestError("the model returned no choices")
    choice = choices[0]
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    calls: list[ToolCall] = []
    for index, call in enumerate(getattr(message, "tool_calls", None) or []):
        function = getattr(call, "function", None)
        name = getattr(function, "name", None)
        if not name:
            continue
        arguments = getattr(function, "arguments", None)
        calls.append(
            ToolCall(
                id=str(getattr(call, "id", None) or f"call_{index}"),
                name=str(name),
                arguments=arguments if isinstance(arguments, str) else "{}",
            )
        )
    usage = getattr(raw, "usage", None)
    return LLMResponse(
        content=content if isinstance(content, str) else None,
        tool_calls=calls,
        finish_reason=getattr(choice, "finish_reason", None),
        usage=Usage(
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            total_tokens=int(getattr(usage, "total_tokens", 0) or 0),
        ),
        model=getattr(raw, "model", None),
    )
