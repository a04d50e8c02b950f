"""The knowledge graph: entities and time-bounded relations, per project, on three backends.

* :class:`InMemoryGraphStore` for tests and short-lived agents,
* :class:`SqliteGraphStore`, the embedded default (``<folder>/graph.sqlite3``),
* :class:`NebulaGraphStore` for a NebulaGraph cluster (``pip install "sagewai[nebula]"``).

All three implement :class:`GraphMemory` and pass one conformance suite. Stores are shared by
projects; ``store.for_project("p")`` gives the :class:`ProjectGraph` view that the conversation
graph builder and the context engine use.

Example:
    >>> from sagewai.graph import SqliteGraphStore
    >>> graph = SqliteGraphStore(":memory:").for_project("demo")
"""

from __future__ import annotations

from sagewai.core.graph_matching import name_key
from sagewai.core.graph_records import (
    Entity,
    GraphCounts,
    GraphDeletion,
    GraphPath,
    Neighbourhood,
    Relation,
)
from sagewai.graph.base import GraphMemory, GraphWrite, ProjectGraph
from sagewai.graph.export import export_graph, graph_to_graphml, graph_to_html, graph_to_json
from sagewai.graph.memory import InMemoryGraphStore
from sagewai.graph.nebula import NebulaGraphStore
from sagewai.graph.sqlite import GRAPH_FILENAME, SqliteGraphStore, graph_file

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
