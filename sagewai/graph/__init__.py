"""The knowledge graph: entities and time-bounded relations, per project, on three backends.

* :class:`InMemoryGraphStore` for tests and short-lived agents,
* :class:`SqliteGraphStore`, the embedded default (``<folder>/graph.sqlite3``),
* :class:`NebulaGraphStore` for a NebulaGraph cluster (``pip install "sagewai[nebula]"``).

The stores and their contract live with every other backend in :mod:`sagewai.stores`
(``sagewai.stores.memory``, ``.sqlite``, ``.nebula``; the contract in ``sagewai.stores.base``);
this package holds the graph's records, name matching and exports, and names the stores too.

All three implement :class:`GraphMemory` and pass one conformance suite. Stores are shared by
projects; ``store.for_project("p")`` gives the :class:`ProjectGraph` view that the conversation
graph builder and the context engine use.

Example:
    >>> from sagewai.graph import SqliteGraphStore
    >>> graph = SqliteGraphStore(":memory:").for_project("demo")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports
from sagewai.core._graph_matching import name_key
from sagewai.core._graph_records import (
    Entity,
    GraphCounts,
    GraphDeletion,
    GraphPath,
    Neighbourhood,
    Relation,
)
from sagewai.graph._export import export_graph, graph_to_graphml, graph_to_html, graph_to_json

if TYPE_CHECKING:
    from sagewai.stores.base._graph import GraphMemory, GraphWrite, ProjectGraph
    from sagewai.stores.memory._graph import InMemoryGraphStore
    from sagewai.stores.nebula._graph import NebulaGraphStore
    from sagewai.stores.sqlite._graph import GRAPH_FILENAME, SqliteGraphStore, graph_file

__all__ = [
    "GRAPH_FILENAME",
    "Entity",
    "GraphCounts",
    "GraphDeletion",
    "GraphMemory",
    "GraphPath",
    "GraphWrite",
    "InMemoryGraphStore",
    "NebulaGraphStore",
    "Neighbourhood",
    "ProjectGraph",
    "Relation",
    "SqliteGraphStore",
    "export_graph",
    "graph_file",
    "graph_to_graphml",
    "graph_to_html",
    "graph_to_json",
    "name_key",
]

# The graph stores live with the other backends in sagewai.stores; they are named here too, so
# everything a graph user needs comes from one package.
_LAZY = {
    "GRAPH_FILENAME": "sagewai.stores.sqlite._graph",
    "GraphMemory": "sagewai.stores.base._graph",
    "GraphWrite": "sagewai.stores.base._graph",
    "InMemoryGraphStore": "sagewai.stores.memory._graph",
    "NebulaGraphStore": "sagewai.stores.nebula._graph",
    "ProjectGraph": "sagewai.stores.base._graph",
    "SqliteGraphStore": "sagewai.stores.sqlite._graph",
    "graph_file": "sagewai.stores.sqlite._graph",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
