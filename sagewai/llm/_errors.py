"""Errors of model calls, each placed in sagewai's one exception tree.

Every class derives from a class of :mod:`sagewai.errors` (so ``except SagewaiError`` still
catches all of them) and from :class:`LLMCallError`, which carries two flags a caller needs:

* ``unreachable``: no model can answer here (no API key, authentication refused, connection
  refused, litellm not installed, model requests switched off). Retrying will not help; an
  extractor falls back to its offline path.
* ``retryable``: a transient failure (rate limit, timeout, 5xx); retry with backoff.

```
LLMCallError (mixin)
├── ModelNotConfiguredError      ConfigurationError      unreachable
│   └── ModelRequestsForbiddenError                      unreachable
├── ModelUnreachableError        BackendUnavailableError unreachable
├── ModelRateLimitError          BackendError            retryable
├── ModelServerError             BackendError            retryable
├── ModelTimeoutError            SagewaiTimeoutError     retryable
├── ModelRequestError            BackendError            (the request itself was refused)
└── MalformedOutputError         ExtractionError, ValueError
```
"""

from __future__ import annotations

from typing import ClassVar

from sagewai.errors import (
    BackendError,
    BackendUnavailableError,
    ConfigurationError,
    ExtractionError,
    MissingDependencyError,
    ModelNotAvailableError,
    SagewaiError,
    SagewaiTimeoutError,
)

__all__ = [
    "LLMCallError",
    "MalformedOutputError",
    "ModelNotConfiguredError",
    "ModelRateLimitError",
    "ModelRequestError",
    "ModelRequestsForbiddenError",
    "ModelServerError",
    "ModelTimeoutError",
    "ModelUnreachableError",
    "is_model_unreachable",
    "is_retryable",
]


class LLMCallError(SagewaiError):
    """Mixin root of model-call errors; the class flags say what the caller should do next."""

    unreachable: ClassVar[bool] = False
    """No model can answer in this configuration: fall back, do not retry."""
    retryable: ClassVar[bool] = False
    """A transient failure: retrying after a backoff may succeed."""


class ModelNotConfiguredError(LLMCallError, ConfigurationError):
    """No usable credentials or model name: a missing API key, an authentication error."""

    unreachable = True


class ModelRequestsForbiddenError(ModelNotConfiguredError):
    """Real model calls are switched off (``sagewai.llm.allow_model_requests(False)``)."""


class ModelUnreachableError(LLMCallError, BackendUnavailableError):
    """The model's server cannot be reached: connection refused, DNS failure, no network."""

    unreachable = True


class ModelRateLimitError(LLMCallError, BackendError):
    """The provider refused the call for now (HTTP 429); ``retry_after`` in seconds when given."""

    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ModelServerError(LLMCallError, BackendError):
    """The provider failed on its side (HTTP 5xx, overloaded)."""

    retryable = True


class ModelTimeoutError(LLMCallError, SagewaiTimeoutError):
    """The model did not answer within the timeout."""

    retryable = True


class ModelRequestError(LLMCallError, BackendError):
    """The provider rejected this request (bad parameters, context too long, content policy)."""


class MalformedOutputError(LLMCallError, ExtractionError, ValueError):
    """A model's output could not be read as what was asked for (no JSON found, wrong shape)."""


def is_model_unreachable(error: BaseException) -> bool:
    """True when ``error`` means no model can answer here, so an offline fallback is right.

    Covers the flagged :class:`LLMCallError` classes plus a missing optional dependency
    (litellm not installed) and a model that is not available on this machine.

    Example:
        >>> is_model_unreachable(ModelUnreachableError("connection refused"))
        True
        >>> is_model_unreachable(ModelRateLimitError("slow down"))
        False
    """
    if isinstance(error, LLMCallError):
        return error.unreachable
    return isinstance(error, MissingDependencyError | ModelNotAvailableError)


def is_retryable(error: BaseException) -> bool:
    """True when ``error`` is transient: a rate limit, a timeout or a server-side failure."""
    if isinstance(error, LLMCallError):
        return error.retryable
    return isinstance(error, TimeoutError)
