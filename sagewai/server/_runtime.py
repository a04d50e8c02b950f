"""What every request handler reaches: the engines, the key checks, the runs, the settings.

One :class:`Runtime` per app, kept on ``app.state.sagewai``; the handlers get it, and the caller
of the request, through the two FastAPI dependencies defined here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, Request
from pydantic_core import PydanticSerializationError
from starlette.responses import Response

from sagewai.server._auth import Authenticator, Caller
from sagewai.server._engines import EngineCache
from sagewai.server._problems import json_bytes
from sagewai.server._settings import ServerSettings
from sagewai.server._state import ServerState

if TYPE_CHECKING:
    from pydantic import BaseModel

    from sagewai.context import ContextEngine
    from sagewai.server._jobs import ConsolidationJobs

__all__ = ["CallerDep", "Runtime", "caller_of", "respond", "runtime_of"]


@dataclass(slots=True)
class Runtime:
    """The server's parts, built once by :func:`~sagewai.server.create_app`."""

    settings: ServerSettings
    state: ServerState
    engines: EngineCache
    auth: Authenticator
    jobs: ConsolidationJobs

    async def engine(self, caller: Caller) -> ContextEngine:
        """The engine of the caller's project."""
        return await self.engines.engine(caller.key.org_id, caller.project_id)


def runtime_of(request: Request) -> Runtime:
    """The app's runtime."""
    runtime: Runtime = request.app.state.sagewai
    return runtime


async def caller_of(request: Request) -> Caller:
    """The FastAPI dependency that authenticates a request (401, 429) and returns its caller."""
    runtime = runtime_of(request)
    caller = await runtime.auth.caller(
        request.headers.get("authorization"), request.headers.get("x-api-key")
    )
    request.state.caller = caller
    return caller


CallerDep = Annotated[Caller, Depends(caller_of)]
"""A handler parameter of this type receives the authenticated caller."""


def respond(body: BaseModel | dict[str, Any], *, status: int = 200) -> Response:
    """A JSON response of a model (or a plain dict), serialised once, without re-validation.

    A model goes to JSON bytes in pydantic's own serialiser, in one step; text UTF-8 cannot
    hold (a lone surrogate echoed back from a request) takes the slower way that escapes it.
    """
    if isinstance(body, dict):
        content = json_bytes(body)
    else:
        try:
            content = body.__pydantic_serializer__.to_json(body)
        except PydanticSerializationError:
            content = json_bytes(body.model_dump(mode="json"))
    return Response(content, status_code=status, media_type="application/json")
