"""``sagewai profile``: read and edit a user's standing instructions, preferences and identity.

What a user told the agent about how to work with them ("always answer in French", "call me
Dana") is their profile; it is shown in every turn (``docs/profile.md``). This command is the
operator's door to it: ``list`` it, ``set`` (or ``add``) an entry (an instruction about an
aspect the profile already has replaces the old one), ``remove`` one (archived: ``sagewai``
keeps the audit and can revert it). Without ``--user`` it reads and edits the project's team
rules.

Example:
    sagewai profile list --project demo --user dana
    sagewai profile set --project demo --user dana "Always answer in French."
    sagewai profile remove --project demo --user dana 6f1d3c1e-...
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from typing import Any

from sagewai.cli._stores import DEFAULT_STORE, open_engine, store_arguments
from sagewai.core._profile import ProfileKind, profile_kind

__all__ = ["register", "run_profile"]


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project", required=True, help="project id")
    parser.add_argument("--user", default=None, help="user id (default: the project's team rules)")
    store_arguments(parser, vectors="with a postgresql:// store: the vector store")
    parser.add_argument("--json", action="store_true", help="print JSON")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``profile`` command and its ``list``, ``set``/``add`` and ``remove``."""
    parser = subparsers.add_parser(
        "profile", help="list and edit a user's standing instructions, preferences and identity"
    )
    commands = parser.add_subparsers(dest="profile_command", metavar="SUBCOMMAND", required=True)
    listing = commands.add_parser("list", help="the current entries, instructions first")
    _common(listing)
    for name in ("set", "add"):
        setting = commands.add_parser(
            name, help="add an entry (an instruction replaces one about the same aspect)"
        )
        _common(setting)
        setting.add_argument("text", help='the entry, e.g. "Always answer in French."')
        setting.add_argument(
            "--kind", choices=[k.value for k in ProfileKind], default=ProfileKind.INSTRUCTION
        )
        setting.add_argument(
            "--aspect", default=None, help="what an instruction is about (answer_language, ...)"
        )
    removing = commands.add_parser("remove", help="take an entry out (archived, revertible)")
    _common(removing)
    removing.add_argument("entry_id", help="the entry's id (from list)")
    parser.set_defaults(handler=lambda args: asyncio.run(run_profile(args)))


def _row(fact: Any) -> dict[str, Any]:
    return {
        "id": fact.id,
        "kind": (profile_kind(fact) or ProfileKind.PREFERENCE).value,
        "scope": fact.scope.value,
        "content": fact.content,
        "since": fact.effective_from.isoformat(),
    }


async def run_profile(args: argparse.Namespace) -> int:
    """Run one ``profile`` subcommand; returns the exit code.

    Raises:
        SagewaiError: bad input (an empty entry, an unknown id) or a backend failure.
    """
    store = args.store or os.environ.get("SAGEWAI_STORE") or DEFAULT_STORE
    async with open_engine(store, args.project, vectors=args.vectors) as engine:
        profile = engine.profile(user_id=args.user)
        if args.profile_command == "list":
            rows = [_row(fact) for fact in await profile.entries()]
            if args.json:
                print(json.dumps(rows, indent=2))
            elif not rows:
                print("the profile is empty")
            for row in [] if args.json else rows:
                print(f"{row['id']}  {row['kind']:<11} {row['scope']:<7} {row['content']}")
            return 0
        if args.profile_command in ("set", "add"):
            fact = await profile.set(args.text, kind=args.kind, aspect=args.aspect)
            row = _row(fact)
        else:
            fact = await profile.remove(args.entry_id)
            row = {**_row(fact), "removed": True}
        print(json.dumps(row, indent=2) if args.json else f"{row['id']}  {row['content']}")
        return 0
