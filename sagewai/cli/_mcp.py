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
import os
import sys
from pathlib import Path

from sagewai.cli._stores import DEFAULT_STORE, open_engine
from sagewai.core._scope import validate_identifier
from sagewai.errors import ConfigurationError

__all__ = ["exposure_warning", "parse_http", "register", "run_mcp"]

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
    parser.add_argument(
        "--store",
        default=None,
        help=(
            "embedded store folder (created when missing), or postgresql://... "
            f"(default: $SAGEWAI_STORE or {DEFAULT_STORE})"
        ),
    )
    parser.add_argument(
        "--vectors",
        default=None,
        help="with a postgresql:// store: a Qdrant URL or edge folder (as in consolidate)",
    )
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
    engine = open_engine(store, args.project, vectors=args.vectors)
    server = build_mcp_server(
        engine,
        user_id=args.user,
        allowed_projects=args.allow_projects,
        allowed_users=args.allow_users,
    )
    if http is None:
        server.run()
    else:
        host, port = http
        warning = exposure_warning(host)
        if warning is not None:
            print(warning, file=sys.stderr)
        print(f"sagewai: serving MCP at http://{host}:{port}/mcp", file=sys.stderr)
        server.run("streamable-http", host=host, port=port)
    return EXIT_OK
