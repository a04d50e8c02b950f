"""A project that holds nothing: a mistyped ``--project`` is said, never answered with nothing.

``sagewai export``, ``facts``, ``search`` and ``consolidate`` on a project with no record would
succeed with an empty archive, an empty table or an empty report, and exit 0: the operator who
typed ``--project prod-eu`` for ``prod_eu`` learns nothing. Each of them checks here first and
fails with the projects the store does hold; ``--allow-empty`` goes on with an empty project on
purpose (a fresh project in a script).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from sagewai.errors import InvalidInputError

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine

__all__ = ["allow_empty_option", "require_records"]

_SHOWN = 10
"""At most this many other projects are named in the message."""


def allow_empty_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--allow-empty`` to a command that reads one project."""
    parser.add_argument(
        "--allow-empty",
        action="store_true",
        help="go on when the project holds nothing (by default that is an error, exit code 2)",
    )


async def require_records(engine: ContextEngine, args: argparse.Namespace) -> None:
    """Refuse a project that holds no record at all, unless ``--allow-empty`` was given.

    Raises:
        InvalidInputError: the project holds nothing (exit code 2), with the store's projects.
    """
    from sagewai.core._queries import FactQuery

    if getattr(args, "allow_empty", False):
        return
    if await engine.port.count_matching(FactQuery(project_id=engine.project_id)):
        return
    others = sorted(p for p in await engine.stores.metadata.project_ids() if p != engine.project_id)
    if others:
        named = ", ".join(repr(p) for p in others[:_SHOWN])
        more = f" and {len(others) - _SHOWN} more" if len(others) > _SHOWN else ""
        held = f"the store holds {named}{more} (see `sagewai projects`)"
    else:
        held = "the store holds no project yet"
    raise InvalidInputError(
        f"project {engine.project_id!r} holds nothing; {held}. "
        "Pass --allow-empty to go on with an empty project."
    )
