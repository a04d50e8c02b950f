"""The FastAPI application: routes, key checks, problem details, limits, CORS and the dashboard.

A request goes: body size check (413) → CORS (only when origins are configured) → route →
key check, rate limit and scoping (401, 429, 403) → the project's engine → one JSON response.
Every error on the way becomes an RFC 9457 problem (:mod:`sagewai.server._problems`).
"""

from __future__ import annotations

import base64
import hashlib
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from typing import TYPE_CHECKING, Any

from sagewai._optional import require
from sagewai.server._settings import ServerSettings

if TYPE_CHECKING:
    from fastapi import FastAPI

    from sagewai.intelligence import FactExtractor
    from sagewai.server._state import ServerState
    from sagewai.stores import ProjectStores

__all__ = ["create_app"]


class _RequestGate:
    """Refuse a request body larger than ``limit`` bytes with a 413, declared or streamed, and
    say how long the server worked on each request (``Server-Timing: app;dur=<ms>``)."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = next((v for k, v in scope["headers"] if k == b"content-length"), None)
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await self._too_large(scope, receive, send)
            return
        seen = 0

        async def counted() -> Any:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge
            return message

        started = False
        began = time.perf_counter()

        async def sending(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                # How long the server worked on the request, for clients and benchmarks.
                spent = (time.perf_counter() - began) * 1000
                headers = [*message.get("headers", ()), (b"server-timing", b"app;dur=%.3f" % spent)]
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, counted, sending)
        except _TooLarge:
            if not started:
                await self._too_large(scope, receive, send)

    async def _too_large(self, scope: Any, receive: Any, send: Any) -> None:
        from sagewai.server._problems import problem

        refused = problem(413, "RequestTooLarge", f"the body is larger than {self.limit} bytes")
        await refused(scope, receive, send)


class _TooLarge(Exception):
    pass


def _graph_script_hash() -> str:
    """The CSP hash of the graph page's inline script: the dashboard shows that page in a
    sandboxed frame and allows that one script, nothing else inline."""
    from sagewai.graph import graph_to_html

    page = graph_to_html("x", [], [])
    scripts = re.findall(r"<script>(.*?)</script>", page, flags=re.DOTALL)
    digests = [
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
        for s in scripts
    ]
    return " ".join(digests)


def _references(node: Any) -> set[str]:
    """The component schemas ``node`` refers to, directly."""
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            found.add(ref.rsplit("/", 1)[1])
        for value in node.values():
            found |= _references(value)
    elif isinstance(node, list):
        for value in node:
            found |= _references(value)
    return found


def complete_responses(schema: dict[str, Any]) -> dict[str, Any]:
    """Mark every field of the response-only schemas as required: the server always sends
    every field (``null`` included), so a client may rely on it (the TypeScript types do).

    Schemas reachable from a request body keep their optional fields.
    """
    components: dict[str, Any] = schema.get("components", {}).get("schemas", {})
    bodies = [
        operation.get("requestBody", {})
        for item in schema.get("paths", {}).values()
        for operation in item.values()
        if isinstance(operation, dict)
    ]
    pending, inputs = set(_references(bodies)), set()
    while pending:
        name = pending.pop()
        if name not in inputs:
            inputs.add(name)
            pending |= _references(components.get(name, {}))
    for name, component in components.items():
        properties = component.get("properties")
        if name not in inputs and properties:
            component["required"] = sorted(properties)
    return schema


def _version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("sagewai")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def _static(name: str) -> bytes:
    return resources.files("sagewai.server").joinpath("static", name).read_bytes()


def create_app(
    stores: ProjectStores,
    state: ServerState,
    *,
    settings: ServerSettings | None = None,
    fact_extractor: FactExtractor | None = None,
) -> FastAPI:
    """The memory server as an ASGI app: serve it with uvicorn (``sagewai serve`` does).

    Args:
        stores: The stores every project's engine is built on (opened at startup).
        state: Where the API keys and consolidation runs live (``open_state``).
        settings: Rate limits, CORS, the key cache, body size, the dashboard.
        fact_extractor: What ``/v1/memories`` extracts with (default: the offline rules).

    Raises:
        MissingDependencyError: the ``server`` extra is not installed.

    Example:
        >>> import tempfile
        >>> from sagewai.stores import ProjectStores
        >>> from sagewai.server import SqliteServerState, create_app
        >>> from sagewai.testing import FakeEmbedder
        >>> folder = tempfile.mkdtemp()
        >>> app = create_app(ProjectStores.in_memory(embedder=FakeEmbedder()),
        ...                  SqliteServerState(f"{folder}/server.sqlite3"))
        >>> app.openapi()["openapi"]
        '3.1.0'
    """
    require("fastapi", extra="server", feature="the memory server")
    from fastapi import FastAPI
    from starlette.responses import Response

    from sagewai.server import _memory_routes, _project_routes
    from sagewai.server._auth import Authenticator
    from sagewai.server._engines import EngineCache
    from sagewai.server._jobs import ConsolidationJobs
    from sagewai.server._models import Health
    from sagewai.server._problems import install_problem_handlers
    from sagewai.server._ratelimit import RateLimiter
    from sagewai.server._runtime import Runtime, respond

    settings = settings or ServerSettings()
    version = _version()
    runtime = Runtime(
        settings=settings,
        state=state,
        engines=EngineCache(stores, fact_extractor=fact_extractor),
        auth=Authenticator(
            state,
            RateLimiter(rate=settings.rate_limit, burst=settings.rate_burst),
            cache_seconds=settings.key_cache_seconds,
        ),
        jobs=ConsolidationJobs(state),
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await state.open()
        await runtime.engines.open()
        try:
            yield
        finally:
            await runtime.jobs.close()
            await runtime.engines.close()
            await state.close()

    app = FastAPI(
        title="sagewai memory server",
        version=version,
        summary="Memory for LLM agents: facts with provenance, search, forgetting, consolidation.",
        openapi_url="/v1/openapi.json",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.sagewai = runtime
    plain_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = complete_responses(plain_openapi())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    install_problem_handlers(app)
    app.include_router(_memory_routes.router)
    app.include_router(_project_routes.router)

    @app.get("/v1/health", response_model=Health, tags=["health"], summary="Liveness")
    async def health() -> Response:
        """The process answers (no key needed)."""
        return respond(Health(status="ok", version=version))

    @app.get("/v1/ready", response_model=Health, tags=["health"], summary="Readiness")
    async def ready() -> Response:
        """The stores and the key table answer (no key needed); 503 when they do not."""
        from sagewai.errors import SagewaiError

        try:
            await runtime.engines.open()
            await state.key("000000000000")
        except SagewaiError as exc:
            body = Health(status="unavailable", version=version, detail=str(exc))
            return respond(body, status=503)
        return respond(Health(status="ok", version=version))

    if settings.dashboard:
        csp = (
            "default-src 'none'; script-src 'self' "
            + _graph_script_hash()
            + "; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
            "frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
        headers = {
            "Content-Security-Policy": csp,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-cache",
        }
        types = {"app.js": "text/javascript", "app.css": "text/css"}

        @app.get("/", include_in_schema=False)
        async def dashboard() -> Response:
            return Response(_static("index.html"), media_type="text/html", headers=headers)

        @app.get("/static/{name}", include_in_schema=False)
        async def asset(name: str) -> Response:
            if name not in types:
                from starlette.exceptions import HTTPException

                raise HTTPException(404, "no such file")
            return Response(_static(name), media_type=types[name], headers=headers)

    if settings.cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["authorization", "x-api-key", "content-type"],
            max_age=600,
        )
    app.add_middleware(_RequestGate, limit=settings.max_body_bytes)
    return app
