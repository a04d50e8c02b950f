"""``sagewai mcp``: serve a project's memory to MCP clients (Claude Desktop, Cursor, IDE agents).

Why a command: an MCP client starts its servers as commands (stdio) or reaches them at a URL
(streamable HTTP). The server is scoped at start: one project and one user, plus the projects
and users named with ``--allow-project`` / ``--allow-user``; a tool call naming anything else is
refused. The store is resolved as ``sagewai consolidate`` resolves it. Exit codes: 0 the server
stopped normally, 1 it failed while running, 2 the command line or the store is wrong.

Example (a Claude Desktop ``mcpServers`` entry runs this command):
    sagewai mcp --store ~/.sagewai --project personal --user me
    sagewai mcp --store ./sagewai-data --project demo --user alice --http 127.0.0.1:8765
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from sagewai.cli._stores import DEFAULT_STORE, open_engine, store_arguments
from sagewai.core._scope import validate_identifier
from sagewai.errors import ConfigurationError, SagewaiError

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine

__all__ = ["exposure_warning", "first_sagewai_error", "parse_http", "register", "run_mcp"]

EXIT_OK = 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``mcp`` command."""
    parser = subparsers.add_parser(
        "mcp",
        help="serve a project's memory over the Model Context Protocol (stdio or HTTP)",
        description=(
            "Run an MCP server with the tools remember, recall, forget, history, revert and "
            "list_facts and the resource sagewai://facts, scoped to one project and user. "
            "Serves stdio by default. Exit codes: 0 ok, 1 runtime failure, 2 usage or "
            "configuration error."
        ),
    )
    parser.add_argument("--project", required=True, help="project id")
    parser.add_argument("--user", required=True, help="the user every call acts for")
    store_arguments(parser, created=True)
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        default=None,
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio",
    )
    parser.add_argument(
        "--allow-project",
        dest="allow_projects",
        action="append",
        default=[],
        metavar="PROJECT",
        help="another project a call may name (repeatable; default: none)",
    )
    parser.add_argument(
        "--allow-user",
        dest="allow_users",
        action="append",
        default=[],
        metavar="USER",
        help="another user a call may name (repeatable; default: none)",
    )
    parser.set_defaults(handler=run_mcp)


def parse_http(value: str) -> tuple[str, int]:
    """``HOST:PORT`` as a host and a port.

    Raises:
        ConfigurationError: not of the form HOST:PORT with a port from 1 to 65535.

    Example:
        >>> parse_http("127.0.0.1:8765")
        ('127.0.0.1', 8765)
    """
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigurationError(f"--http wants HOST:PORT, got {value!r}")
    return host.strip("[]"), int(port)


def exposure_warning(host: str) -> str | None:
    """The warning printed before MCP is served on ``host``: ``None`` on a loopback address.

    The MCP server has no authentication: on any other address every machine that reaches it
    reads and writes the served memory.

    Example:
        >>> exposure_warning("127.0.0.1") is None
        True
        >>> exposure_warning("0.0.0.0").startswith("sagewai: WARNING")
        True
    """
    from sagewai.cli._serve import is_loopback

    if is_loopback(host):
        return None
    return (
        f"sagewai: WARNING: serving MCP on {host} with NO authentication: anyone who can reach "
        "this address reads and changes this memory. Serve on 127.0.0.1 behind an "
        "authenticating proxy, or use 'sagewai serve' (API keys and roles) instead."
    )


def run_mcp(args: argparse.Namespace) -> int:
    """Serve until the client disconnects (stdio) or the process is stopped (HTTP)."""
    from sagewai._optional import require
    from sagewai.integrations.mcp import build_mcp_server

    # Without the extra nothing is made: the store folder is created only for a server that runs.
    require("mcp", extra="mcp", feature="the MCP server")
    http = None if args.http is None else parse_http(args.http)
    for value, what in ((args.project, "--project"), (args.user, "--user")):
        validate_identifier(value, what)
    store = args.store or os.environ.get("SAGEWAI_STORE") or DEFAULT_STORE
    if "://" not in store and not Path(store).exists():
        Path(store).mkdir(parents=True)
        print(f"sagewai: created the embedded store {store}", file=sys.stderr)
    # The server opens the store when a session starts (stdio: at once; HTTP: at start-up,
    # where the web server would log a failure as a traceback): a store that cannot be opened
    # is reported here first, in one line, by an engine of its own.
    asyncio.run(_opens(open_engine(store, args.project, vectors=args.vectors)))
    engine = open_engine(store, args.project, vectors=args.vectors)
    server = build_mcp_server(
        engine,
        user_id=args.user,
        allowed_projects=args.allow_projects,
        allowed_users=args.allow_users,
    )
    try:
        if http is None:
            server.run()
        else:
            host, port = http
            warning = exposure_warning(host)
            if warning is not None:
                print(warning, file=sys.stderr)
            print(f"sagewai: serving MCP at http://{host}:{port}/mcp", file=sys.stderr)
            server.run("streamable-http", host=host, port=port)
    except BaseExceptionGroup as group:
        # The server's task group wraps what failed (the store could not be opened when the
        # session started): the command prints that one error, not the group's traceback.
        cause = first_sagewai_error(group)
        if cause is None:
            raise
        raise cause from None
    return EXIT_OK


async def _opens(engine: ContextEngine) -> None:
    async with engine:
        pass


def first_sagewai_error(error: BaseException) -> SagewaiError | None:
    """The first :class:`~sagewai.errors.SagewaiError` inside ``error`` (nested groups too).

    Example:
        >>> group = ExceptionGroup("serving", [ValueError("x"), ConfigurationError("bad")])
        >>> str(first_sagewai_error(group))
        'bad'
    """
    if isinstance(error, SagewaiError):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = first_sagewai_error(inner)
            if found is not None:
                return found
    return None
