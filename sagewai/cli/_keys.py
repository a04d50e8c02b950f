"""``sagewai keys create | list | revoke`` and ``sagewai projects``: who may reach a store.

Why: every request to ``sagewai serve`` carries an API key bound to a project (and optionally a
user) with a role. The key is printed once, when it is made; the store keeps only its hash
(``<folder>/server.sqlite3``, or the ``api_keys`` table of a PostgreSQL schema), so a lost key
is revoked and replaced, never recovered. ``sagewai projects`` lists the projects a store holds.
Exit codes: 0 ok, 1 runtime failure (an unknown key id), 2 usage or configuration error.

Example:
    sagewai keys create --store ./sagewai-data --project demo --role write --user alice
    sagewai keys list --store ./sagewai-data
    sagewai keys revoke 3fa85f64a1b2 --store ./sagewai-data
    sagewai projects --store ./sagewai-data
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from sagewai.cli._inspector import format_table
from sagewai.cli._serve import store_options
from sagewai.cli._stores import DEFAULT_STORE
from sagewai.errors import SagewaiRuntimeError

if TYPE_CHECKING:
    from sagewai.server import ServerState

__all__ = ["register"]

EXIT_OK = 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``keys`` (with ``create``, ``list``, ``revoke``) and ``projects``."""
    keys = subparsers.add_parser(
        "keys",
        help="create, list and revoke the API keys of sagewai serve",
        description="Manage the API keys of a store's memory server.",
    )
    actions = keys.add_subparsers(dest="action", metavar="ACTION", required=True)

    create = actions.add_parser(
        "create", help="make a key (printed once)", description="Make an API key."
    )
    store_options(create)
    create.add_argument("--project", required=True, help="the project the key reads and writes")
    create.add_argument(
        "--role",
        required=True,
        choices=("read", "write", "admin"),
        help="read < write (remember, add, revert, forget) < admin (consolidate, export)",
    )
    create.add_argument("--org", default=None, help="the project's organisation")
    create.add_argument("--user", default=None, help="bind the key to this user only")
    create.add_argument("--name", default="", help="a label for people")
    create.add_argument("--json", action="store_true", help="print the key and its record as JSON")
    create.set_defaults(handler=lambda args: _run(_create, args))

    listing = actions.add_parser("list", help="list keys (never the keys themselves)")
    store_options(listing)
    listing.add_argument("--project", default=None, help="only this project's keys")
    listing.add_argument("--all", action="store_true", help="revoked keys too")
    listing.add_argument("--json", action="store_true", help="one JSON object per key and line")
    listing.set_defaults(handler=lambda args: _run(_list, args))

    revoke = actions.add_parser("revoke", help="revoke a key by its id")
    revoke.add_argument("key_id", metavar="KEY_ID", help="the id shown by 'sagewai keys list'")
    store_options(revoke)
    revoke.set_defaults(handler=lambda args: _run(_revoke, args))

    projects = subparsers.add_parser(
        "projects",
        help="list the projects a store holds, with their record counts",
        description="List every project with records in a store.",
    )
    store_options(projects)
    projects.add_argument(
        "--vectors", default=None, help="with a postgresql:// store: the vector store"
    )
    projects.add_argument("--json", action="store_true", help="one JSON object per project")
    projects.set_defaults(handler=_projects)


def _location(args: argparse.Namespace) -> str:
    return str(args.store or os.environ.get("SAGEWAI_STORE") or DEFAULT_STORE)


def _run(command: Callable[[ServerState, argparse.Namespace], Awaitable[int]], args: Any) -> int:
    from sagewai.server import open_state

    state = open_state(_location(args), schema=args.schema, create=True)

    async def run() -> int:
        await state.open()
        try:
            return await command(state, args)
        finally:
            await state.close()

    return asyncio.run(run())


async def _create(state: ServerState, args: argparse.Namespace) -> int:
    from sagewai.server import new_key

    made = new_key(
        project_id=args.project, role=args.role, org_id=args.org, user_id=args.user, name=args.name
    )
    await state.add_key(made.key)
    if args.json:
        print(json.dumps({"key": made.token, **made.key.public()}, ensure_ascii=False))
        return EXIT_OK
    bound = f" for user {args.user!r}" if args.user else ""
    print(f"created {args.role} key {made.key.id} of project {args.project!r}{bound}:")
    print(f"  {made.token}")
    print("keep it now: it is not stored and cannot be shown again")
    return EXIT_OK


async def _list(state: ServerState, args: argparse.Namespace) -> int:
    keys = [
        k
        for k in await state.keys()
        if (args.all or k.active) and (args.project is None or k.project_id == args.project)
    ]
    if args.json:
        for key in keys:
            print(json.dumps(key.public(), ensure_ascii=False))
        return EXIT_OK
    if not keys:
        print("no keys")
        return EXIT_OK
    rows = [
        [
            k.id,
            k.role.value,
            k.org_id or "-",
            k.project_id,
            k.user_id or "-",
            k.created_at.isoformat(timespec="seconds"),
            "revoked" if not k.active else "active",
            k.name or "-",
        ]
        for k in keys
    ]
    headers = ["ID", "ROLE", "ORG", "PROJECT", "USER", "CREATED", "STATE", "NAME"]
    print(format_table(headers, rows, width=shutil.get_terminal_size((120, 24)).columns))
    return EXIT_OK


async def _revoke(state: ServerState, args: argparse.Namespace) -> int:
    key = await state.revoke(args.key_id)
    if key is None:
        raise SagewaiRuntimeError(f"no key with id {args.key_id!r}")
    print(f"revoked key {key.id} of project {key.project_id!r}")
    return EXIT_OK


def _projects(args: argparse.Namespace) -> int:
    from sagewai.core import FactQuery
    from sagewai.stores import resolve_stores

    # Only the metadata store is opened and read (no engine): the listing works beside a
    # running server (which holds an embedded folder's vectors) and whatever embedder wrote them.
    stores = resolve_stores(_location(args), vectors=args.vectors, schema=args.schema)
    metadata = stores.metadata

    async def run() -> list[tuple[str, int]]:
        await metadata.open()
        try:
            return [
                (project_id, await metadata.count(FactQuery(project_id=project_id)))
                for project_id in await metadata.project_ids()
            ]
        finally:
            await metadata.close()

    found = asyncio.run(run())
    if args.json:
        for project_id, records in found:
            print(json.dumps({"project_id": project_id, "records": records}, ensure_ascii=False))
    elif found:
        rows = [[str(records), project_id] for project_id, records in found]
        print(format_table(["RECORDS", "PROJECT"], rows, width=120))
    else:
        print("no projects")
    return EXIT_OK
