"""Versioned schema migrations of every SQL store, kept as plain ``.sql`` files.

Each store has a folder of files named ``NNNN_description.sql``: ``sqlite/`` and ``postgres/``
(the metadata stores), ``sqlite_graph/``, ``sqlite_episodes/``, ``sqlite_vectors/`` (an
embedded folder's vectors, :mod:`sagewai.stores.sqlite._vectors`) and ``postgres_episodes/``,
and ``pgvector/`` (the vector table of :class:`~sagewai.stores.postgres._pgvector.PgVectorStore`).
One runner per database applies them (:mod:`sagewai.stores.sqlite._database`,
:mod:`sagewai.stores.postgres._pool`).
A store applies the files it has not recorded in its migrations table, in version
order, each in its own transaction together with the row that records it, so a migration is
either applied and recorded or not applied at all. Files are never edited once released: a change
to the schema is a new file.

Example:
    >>> [m.version for m in load_migrations("sqlite")][:1]
    ['0001']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Literal

__all__ = ["Migration", "MigrationSet", "load_migrations"]

MigrationSet = Literal[
    "sqlite",
    "sqlite_graph",
    "sqlite_episodes",
    "sqlite_vectors",
    "postgres",
    "postgres_episodes",
    "pgvector",
]
"""The migration folders shipped with sagewai, one per store and database."""

_FILE = re.compile(r"^(?P<version>\d{4})_(?P<name>[a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: its version (``"0001"``), a short name and its SQL script."""

    version: str
    name: str
    sql: str


def load_migrations(dialect: MigrationSet) -> list[Migration]:
    """The migrations shipped for ``dialect``, oldest first.

    Raises:
        RuntimeError: when two files claim the same version (a packaging mistake).
    """
    folder = resources.files(__name__).joinpath(dialect)
    found: dict[str, Migration] = {}
    for entry in folder.iterdir():
        match = _FILE.match(entry.name)
        if match is None:
            continue
        version = match.group("version")
        if version in found:
            raise RuntimeError(f"two {dialect} migrations claim version {version}")
        found[version] = Migration(version, match.group("name"), entry.read_text("utf-8"))
    return [found[version] for version in sorted(found)]
