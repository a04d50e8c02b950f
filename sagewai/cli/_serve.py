"""``sagewai serve``: the memory server (HTTP API and dashboard) over a store.

Why a command: a TypeScript or Go agent, a browser, or an operator reaches memory over HTTP.
The server serves every project of one store; each request is scoped by its API key
(``sagewai keys create``). It refuses to listen on anything but a loopback address while no
key exists, so a first try on a laptop cannot open a store to the network. Exit codes: 0 the
server stopped normally, 1 it failed while running, 2 the command line or the store is wrong.

Example:
    sagewai keys create --store ./sagewai-data --project demo --role admin
    sagewai serve --store ./sagewai-data --port 8780
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import os
import sys
from typing import Any

from sagewai.cli._stores import DEFAULT_STORE, store_arguments
from sagewai.errors import ConfigurationError

__all__ = ["DEFAULT_PORT", "is_loopback", "openapi_schema", "register", "store_options"]

DEFAULT_PORT = 8780
EXIT_OK = 0
EXIT_USAGE = 2


def store_options(parser: argparse.ArgumentParser) -> None:
    """``--store``, ``--vectors`` and ``--schema``, as ``serve``, ``keys`` and ``projects`` read
    them."""
    store_arguments(parser, created=True, vectors=None)
    parser.add_argument(
        "--schema",
        default="sagewai",
        help="with a postgresql:// store: the schema of its tables (default: sagewai)",
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``serve`` command."""
    parser = subparsers.add_parser(
        "serve",
        help="serve memory over HTTP: a REST API with API keys and roles, and a dashboard",
        description=(
            "Run the memory server: the API at /v1 (OpenAPI at /v1/openapi.json) and the "
            "dashboard at /. Every request needs an API key (sagewai keys create). Exit codes: "
            "0 ok, 1 runtime failure, 2 usage or configuration error."
        ),
    )
    store_options(parser)
    parser.add_argument(
        "--vectors",
        default=None,
        help="with a postgresql:// store: a Qdrant URL, 'pgvector', or an edge folder",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port ({DEFAULT_PORT})")
    parser.add_argument(
        "--cors-origin",
        dest="cors_origins",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser origin allowed to call the API (repeatable; default: CORS off)",
    )
    parser.add_argument(
        "--rate-limit", type=float, default=20.0, help="requests per second per key (0: none)"
    )
    parser.add_argument("--rate-burst", type=int, default=60, help="burst per key (60)")
    parser.add_argument(
        "--key-cache-seconds",
        type=float,
        default=2.0,
        help="a revoked key is refused within this many seconds (2)",
    )
    parser.add_argument("--no-dashboard", action="store_true", help="serve the API only")
    parser.add_argument(
        "--openapi",
        action="store_true",
        help="print the API's OpenAPI schema (JSON) and exit (the TypeScript client's types)",
    )
    parser.add_argument(
        "--log-level", default="warning", choices=("critical", "error", "warning", "info", "debug")
    )
    parser.set_defaults(handler=run_serve)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (``localhost`` counts; any name else does not).

    Example:
        >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("0.0.0.0")
        (True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def openapi_schema() -> dict[str, Any]:
    """The server's OpenAPI 3.1 schema, without opening a store (nothing is read or created)."""
    from sagewai.server import SqliteServerState, create_app
    from sagewai.stores import ProjectStores

    app = create_app(ProjectStores.in_memory(), SqliteServerState(os.devnull))
    schema: dict[str, Any] = app.openapi()
    return schema


def run_serve(args: argparse.Namespace) -> int:
    """Serve until stopped (Ctrl-C, SIGTERM)."""
    from sagewai._optional import require
    from sagewai.server import ServerSettings, create_app, open_state
    from sagewai.stores import resolve_stores

    uvicorn = require("uvicorn", extra="server", feature="sagewai serve")
    if args.openapi:
        print(json.dumps(openapi_schema(), indent=2, sort_keys=True))
        return EXIT_OK
    if not 0 < args.port < 65536:
        raise ConfigurationError(f"--port must be between 1 and 65535, got {args.port}")
    store = args.store or os.environ.get("SAGEWAI_STORE") or DEFAULT_STORE
    state = open_state(store, schema=args.schema, create=True)

    async def keys() -> int:
        await state.open()
        try:
            return await state.active_keys()
        finally:
            await state.close()

    active = asyncio.run(keys())
    if active == 0 and not is_loopback(args.host):
        print(
            f"sagewai: refusing to serve on {args.host} with no API key; create one first: "
            f"sagewai keys create --store {store} --project PROJECT --role admin",
            file=sys.stderr,
        )
        return EXIT_USAGE
    settings = ServerSettings(
        rate_limit=args.rate_limit,
        rate_burst=args.rate_burst,
        cors_origins=tuple(args.cors_origins),
        key_cache_seconds=args.key_cache_seconds,
        dashboard=not args.no_dashboard,
    )
    vectors = args.vectors or os.environ.get("SAGEWAI_VECTORS")
    stores = resolve_stores(store, vectors=vectors, schema=args.schema, must_exist=False)
    app = create_app(stores, state, settings=settings)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(
        f"sagewai: serving {store} at http://{shown}:{args.port} (API /v1, dashboard /) "
        f"with {active} active API key{'s' if active != 1 else ''}",
        file=sys.stderr,
    )
    if active == 0:
        print(
            "sagewai: no API key yet: every request will be refused; make one with "
            f"sagewai keys create --store {store} --project PROJECT --role admin",
            file=sys.stderr,
        )
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return EXIT_OK
