"""The embedded SQLite backends: metadata, graph and episodes, each a file in a project folder.

All three run on one plumbing module (:mod:`sagewai.stores.sqlite._database`): a worker thread
owning the connection, WAL pragmas, error translation and versioned migrations from SQL files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.stores.sqlite._episodes import SqliteEpisodeStore
    from sagewai.stores.sqlite._graph import GRAPH_FILENAME, SqliteGraphStore, graph_file
    from sagewai.stores.sqlite._metadata import SqliteMetadataStore

__all__ = [
    "GRAPH_FILENAME",
    "SqliteEpisodeStore",
    "SqliteGraphStore",
    "SqliteMetadataStore",
    "graph_file",
]

_LAZY = {
    "SqliteMetadataStore": "sagewai.stores.sqlite._metadata",
    "SqliteGraphStore": "sagewai.stores.sqlite._graph",
    "SqliteEpisodeStore": "sagewai.stores.sqlite._episodes",
    "GRAPH_FILENAME": "sagewai.stores.sqlite._graph",
    "graph_file": "sagewai.stores.sqlite._graph",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
