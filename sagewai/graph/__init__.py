"""The knowledge graph's records, name matching and exports.

* records: :class:`Entity` and time-bounded :class:`Relation`, with the results of traversals
  (:class:`Neighbourhood`, :class:`GraphPath`) and of writes (:class:`GraphCounts`,
  :class:`GraphDeletion`); :func:`name_key`, how two names are matched;
* exports: :func:`export_graph` (JSON, GraphML, or a self-contained HTML page), and the embedded
  graph file of a folder (:func:`graph_file`).

The graph stores and their contract live with every other backend in :mod:`sagewai.stores`
(:class:`~sagewai.stores.GraphStore`, :class:`~sagewai.stores.InMemoryGraphStore`,
:class:`~sagewai.stores.SqliteGraphStore`, :class:`~sagewai.stores.NebulaGraphStore`); the graph
builder that fills them is :class:`~sagewai.intelligence.ConversationGraphBuilder`.

Example:
    >>> from sagewai.graph import Entity, name_key
    >>> name_key("  Dr. Ana   Lima ") == name_key("dr. ana lima")
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
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
    from sagewai.stores.sqlite._graph import GRAPH_FILENAME, graph_file

__all__ = [
    "GRAPH_FILENAME",
    "Entity",
    "GraphCounts",
    "GraphDeletion",
    "GraphPath",
    "Neighbourhood",
    "Relation",
    "export_graph",
    "graph_file",
    "graph_to_graphml",
    "graph_to_html",
    "graph_to_json",
    "name_key",
]

_LAZY = {
    "Entity": "sagewai.core._graph_records",
    "GRAPH_FILENAME": "sagewai.stores.sqlite._graph",
    "GraphCounts": "sagewai.core._graph_records",
    "GraphDeletion": "sagewai.core._graph_records",
    "GraphPath": "sagewai.core._graph_records",
    "Neighbourhood": "sagewai.core._graph_records",
    "Relation": "sagewai.core._graph_records",
    "export_graph": "sagewai.graph._export",
    "graph_file": "sagewai.stores.sqlite._graph",
    "graph_to_graphml": "sagewai.graph._export",
    "graph_to_html": "sagewai.graph._export",
    "graph_to_json": "sagewai.graph._export",
    "name_key": "sagewai.core._graph_matching",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
