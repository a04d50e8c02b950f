"""Errors as RFC 9457 problem details, and JSON that never fails to encode.

Every error leaves the server as ``application/problem+json``::

    {"type": "urn:sagewai:error:FactNotFoundError", "title": "Not Found", "status": 404,
     "detail": "no fact with id 'x' in this project", "instance": "/v1/facts/x",
     "error": "FactNotFoundError"}

``type`` names the :class:`~sagewai.errors.SagewaiError` subclass (``error`` repeats the bare
name for clients that switch on it). Bad input of any kind (a wrong type, a hostile string, a
time out of range) is a 422 ``InvalidInputError``, never a 500; a 500 means a bug, and its body
says nothing of the internals.
"""

from __future__ import annotations

import json
import logging
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from sagewai.errors import (
    AuthenticationError,
    BackendUnavailableError,
    ConfigurationError,
    ExtractionError,
    FactNotFoundError,
    IntegrityError,
    InvalidInputError,
    LockedError,
    MissingDependencyError,
    ModelNotAvailableError,
    PermissionDeniedError,
    RateLimitedError,
    SagewaiError,
    SagewaiTimeoutError,
)

if TYPE_CHECKING:
    from fastapi import FastAPI, Request
    from starlette.responses import Response

__all__ = ["PROBLEM_TYPE", "install_problem_handlers", "json_bytes", "problem", "status_of"]

logger = logging.getLogger("sagewai.server")

PROBLEM_TYPE = "urn:sagewai:error:"
"""The prefix of every problem ``type``; the error's class name follows."""
_MAX_DETAIL = 2_000

# Most specific first: the first class an error is an instance of decides its status.
_STATUSES: tuple[tuple[type[SagewaiError], int], ...] = (
    (AuthenticationError, 401),
    (PermissionDeniedError, 403),
    (FactNotFoundError, 404),
    (InvalidInputError, 422),
    (MissingDependencyError, 501),
    (ModelNotAvailableError, 503),
    (ConfigurationError, 400),
    (RateLimitedError, 429),
    (LockedError, 409),
    (IntegrityError, 409),
    (BackendUnavailableError, 503),
    (SagewaiTimeoutError, 504),
    (ExtractionError, 502),
)


def status_of(error: SagewaiError) -> int:
    """The HTTP status of a sagewai error.

    Example:
        >>> status_of(FactNotFoundError("x")), status_of(InvalidInputError("bad"))
        (404, 422)
    """
    for kind, status in _STATUSES:
        if isinstance(error, kind):
            return status
    return 500


def json_bytes(content: Any) -> bytes:
    """``content`` as UTF-8 JSON; text that UTF-8 cannot hold (a lone surrogate echoed back
    from a request) is written as a ``\\u`` escape instead of failing the response.

    Example:
        >>> json_bytes({"a": "tea \\ud800"})
        b'{"a":"tea \\\\ud800"}'
    """
    text = json.dumps(content, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _shown(text: str) -> str:
    text = text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 1] + "…"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def problem(
    status: int,
    error: str,
    detail: str,
    *,
    instance: str | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """A ``problem+json`` response for the error class named ``error``."""
    from starlette.responses import Response

    try:
        title = HTTPStatus(status).phrase
    except ValueError:
        title = "Error"
    body: dict[str, Any] = {
        "type": PROBLEM_TYPE + error,
        "title": title,
        "status": status,
        "detail": _shown(detail),
        "error": error,
    }
    if instance is not None:
        body["instance"] = _shown(instance)
    return Response(
        json_bytes(body),
        status_code=status,
        media_type="application/problem+json",
        headers=headers,
    )


def _validation_detail(errors: Any) -> str:
    """A request validation error in words, without the (maybe huge or hostile) input."""
    parts = []
    for error in list(errors)[:5]:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "request"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(parts) or "the request is not valid"


def install_problem_handlers(app: FastAPI) -> None:
    """Turn every error the app can meet into a problem response."""
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException

    async def sagewai_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, SagewaiError)
        status = status_of(exc)
        headers = None
        if isinstance(exc, RateLimitedError):
            headers = {"Retry-After": str(max(1, round(exc.retry_after + 0.5)))}
        elif isinstance(exc, AuthenticationError):
            headers = {"WWW-Authenticate": 'Bearer realm="sagewai"'}
        if status >= 500:
            logger.warning("%s %s: %r", request.method, request.url.path, exc)
        return problem(
            status, type(exc).__name__, str(exc), instance=request.url.path, headers=headers
        )

    async def invalid_request(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        return problem(
            422,
            InvalidInputError.__name__,
            _validation_detail(exc.errors()),
            instance=request.url.path,
        )

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        name = {404: "NotFound", 405: "MethodNotAllowed", 413: "RequestTooLarge"}.get(
            exc.status_code, "HTTPError"
        )
        return problem(exc.status_code, name, str(exc.detail), instance=request.url.path)

    async def refused_value(request: Request, exc: Exception) -> Response:
        # Input the validation let through and a library refused: still bad input, logged so
        # that the check can move where it belongs.
        logger.warning("%s %s refused late: %r", request.method, request.url.path, exc)
        return problem(422, InvalidInputError.__name__, str(exc), instance=request.url.path)

    async def unexpected(request: Request, exc: Exception) -> Response:
        logger.exception("unexpected error on %s %s", request.method, request.url.path)
        return problem(
            500, "InternalError", "the server failed; see its log", instance=request.url.path
        )

    app.add_exception_handler(SagewaiError, sagewai_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(HTTPException, http_error)
    for kind in (ValueError, TypeError, UnicodeError, OverflowError):
        app.add_exception_handler(kind, refused_value)
    app.add_exception_handler(Exception, unexpected)
