"""Where the server's keys and runs live for a ``--store`` location.

The stores themselves are resolved by :func:`sagewai.stores.resolve_stores`, the one resolver of
``--store`` / ``--vectors`` strings; this module puts the server's state beside them: a file in
an embedded folder, tables in the PostgreSQL schema.
"""

from __future__ import annotations

from pathlib import Path

from sagewai.errors import ConfigurationError
from sagewai.server._state import (
    STATE_FILENAME,
    PostgresServerState,
    ServerState,
    SqliteServerState,
)

__all__ = ["DEFAULT_SCHEMA", "is_postgres", "open_state"]

DEFAULT_SCHEMA = "sagewai"
"""The PostgreSQL schema the stores use unless told otherwise."""


def is_postgres(location: str) -> bool:
    """Whether ``location`` names a PostgreSQL database (else it is an embedded folder).

    Raises:
        ConfigurationError: a URL of another kind (``mysql://...``).

    Example:
        >>> is_postgres("postgresql://db/memory"), is_postgres("./sagewai-data")
        (True, False)
    """
    if "://" not in location:
        return False
    if location.startswith(("postgresql://", "postgres://")):
        return True
    raise ConfigurationError(
        f"unsupported --store {location.split('://', 1)[0]}://...; use a folder or postgresql://"
    )


def _folder(location: str, *, create: bool) -> Path:
    path = Path(location)
    if path.exists() and not path.is_dir():
        raise ConfigurationError(f"--store {location} is a file; give the store's folder")
    if not path.exists():
        if not create:
            raise ConfigurationError(
                f"no embedded store at {location}; give --store the folder an engine wrote"
            )
        path.mkdir(parents=True)
    return path


def open_state(location: str, *, schema: str = DEFAULT_SCHEMA, create: bool = False) -> ServerState:
    """Where the server's keys and runs live for the store at ``location`` (not yet opened).

    Raises:
        ConfigurationError: not a folder nor a PostgreSQL URL, a file, or a missing folder
            (without ``create``).
    """
    if is_postgres(location):
        return PostgresServerState(location, schema=schema)
    return SqliteServerState(_folder(location, create=create) / STATE_FILENAME)
