"""A process-wide switch that forbids real model calls, for test suites.

A test that reaches a real provider by accident is slow, flaky and may cost money. With
``allow_model_requests(False)`` (typically in ``conftest.py``), :class:`~sagewai.llm.LiteLLMClient`
raises :class:`~sagewai.llm._errors.ModelRequestsForbiddenError` before anything leaves the process,
and LLM-backed extractors fall back to their offline path as they would without an API key.
Test doubles such as :class:`sagewai.testing._llm.ScriptedLLM` are not affected.
"""

from __future__ import annotations

from types import TracebackType

from sagewai.llm._errors import ModelRequestsForbiddenError

__all__ = ["allow_model_requests", "ensure_model_requests_allowed", "model_requests_allowed"]

_allowed = True


class _Restore:
    """Returned by :func:`allow_model_requests`; restores the previous value on ``with`` exit."""

    def __init__(self, previous: bool) -> None:
        self._previous = previous

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        global _allowed
        _allowed = self._previous


def allow_model_requests(allowed: bool) -> _Restore:
    """Switch real model calls on or off for the whole process, at once.

    The switch takes effect immediately. Used as a context manager, it also restores the
    previous value on exit.

    Args:
        allowed: False to make every real model call fail fast.

    Example:
        >>> from sagewai.llm import allow_model_requests, model_requests_allowed
        >>> with allow_model_requests(True):
        ...     with allow_model_requests(False):
        ...         inside = model_requests_allowed()
        ...     after = model_requests_allowed()
        >>> inside, after
        (False, True)
    """
    global _allowed
    previous = _allowed
    _allowed = bool(allowed)
    return _Restore(previous)


def model_requests_allowed() -> bool:
    """Whether real model calls are currently allowed."""
    return _allowed


def ensure_model_requests_allowed(what: str) -> None:
    """Raise :class:`ModelRequestsForbiddenError` naming ``what`` when calls are switched off."""
    if not _allowed:
        raise ModelRequestsForbiddenError(
            f"{what}: real model requests are switched off "
            "(sagewai.llm.allow_model_requests(False)); "
            "use sagewai.testing._llm.ScriptedLLM in tests"
        )
