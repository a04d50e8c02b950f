"""A project that holds nothing: a mistyped ``--project`` is said, never answered with nothing.

``sagewai export``, ``facts``, ``search`` and ``consolidate`` on a project with no record would
succeed with an empty archive, an empty table or an empty report, and exit 0: the operator who
typed ``--project prod-eu`` for ``prod_eu`` learns nothing. Each of them checks here first and
fails, naming the store and ``sagewai projects`` (which lists what it holds); ``--allow-empty``
goes on with an empty project on purpose (a fresh project in a script).
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from sagewai.cli._stores import DEFAULT_STORE
from sagewai.errors import InvalidInputError

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine

__all__ = ["allow_empty_option", "redact_store", "require_records"]


def allow_empty_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--allow-empty`` to a command that reads one project."""
    parser.add_argument(
        "--allow-empty",
        action="store_true",
        help="go on when the project holds nothing (by default that is an error, exit code 2)",
    )


async def require_records(
    engine: ContextEngine, args: argparse.Namespace, *, store: str | None = None
) -> None:
    """Refuse a project that holds no record at all, unless ``--allow-empty`` was given.

    Raises:
        InvalidInputError: the project holds nothing (exit code 2); the message names the store
            and the command that lists its projects.
    """
    from sagewai.core._queries import FactQuery

    if getattr(args, "allow_empty", False):
        return
    if await engine.port.count_matching(FactQuery(project_id=engine.project_id)):
        return
    # The store as the command resolved it (``store``), else as ``--store`` names it.
    store = store or getattr(args, "store", None) or os.environ.get("SAGEWAI_STORE")
    store = store or DEFAULT_STORE
    raise InvalidInputError(
        f"project {engine.project_id!r} holds nothing in {redact_store(store)}; "
        f"`sagewai projects --store {redact_store(store)}` lists the projects it holds. "
        "Pass --allow-empty to go on with an empty project."
    )


def redact_store(store: str) -> str:
    """A store for a message: a URL without its password.

    Example:
        >>> redact_store("postgresql://me:secret@db:5432/app")
        'postgresql://me:***@db:5432/app'
        >>> redact_store("./sagewai-data")
        './sagewai-data'
    """
    from urllib.parse import urlsplit, urlunsplit

    if "://" not in store:
        return store
    parts = urlsplit(store)
    if parts.password is None:
        return store
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))
