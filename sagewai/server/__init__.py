"""The memory server: an HTTP API with API keys and roles, and a dashboard, over any store.

``sagewai serve --store ./sagewai-data`` runs it (``pip install "sagewai[server]"``); this
package is what that command is built from, for a deployment that wants its own process:

* :func:`create_app` makes the FastAPI app over a :class:`~sagewai.stores.ProjectStores` and a
  :class:`ServerState` (where keys and consolidation runs live), tuned by
  :class:`ServerSettings`;
* :func:`open_state` finds the keys and runs of a ``--store`` location (a folder, or
  ``postgresql://...``), whose stores :func:`sagewai.stores.resolve_stores` opens;
* :func:`new_key`, :class:`ApiKey` and :class:`Role` make and describe keys
  (``sagewai keys create`` uses them).

Names are imported on first use: importing this package loads neither FastAPI nor uvicorn.
See ``docs/server.md`` for the API and ``docs/deployment.md`` for running it.

Example:
    >>> from sagewai.server import Role, new_key
    >>> made = new_key(project_id="demo", role=Role.WRITE, user_id="alice")
    >>> made.key.user_id, made.token.startswith("sgw_")
    ('alice', True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.server._app import create_app
    from sagewai.server._keys import ApiKey, NewKey, Role, new_key
    from sagewai.server._settings import ServerSettings
    from sagewai.server._state import PostgresServerState, ServerState, SqliteServerState
    from sagewai.server._stores import open_state

__all__ = [
    "ApiKey",
    "NewKey",
    "PostgresServerState",
    "Role",
    "ServerSettings",
    "ServerState",
    "SqliteServerState",
    "create_app",
    "new_key",
    "open_state",
]

_LAZY = {
    "create_app": "sagewai.server._app",
    "ApiKey": "sagewai.server._keys",
    "NewKey": "sagewai.server._keys",
    "Role": "sagewai.server._keys",
    "new_key": "sagewai.server._keys",
    "ServerSettings": "sagewai.server._settings",
    "PostgresServerState": "sagewai.server._state",
    "ServerState": "sagewai.server._state",
    "SqliteServerState": "sagewai.server._state",
    "open_state": "sagewai.server._stores",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
