"""Export one project's graph as JSON, GraphML or a self-contained interactive HTML page.

The exporters are pure functions of the entities and relations, so they are tested without a
store; :func:`export_graph` reads a :class:`~sagewai.graph.ProjectGraph` and picks one. The HTML
page needs no network: its script and styles are inline, the data is embedded as escaped JSON and
drawn with ``textContent`` only, and a Content-Security-Policy forbids every outside request.
"""

from __future__ import annotations

import html
import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from sagewai.core._graph_records import Entity, Relation
from sagewai.errors import InvalidInputError
from sagewai.graph._html import page_script, page_style
from sagewai.stores.base._graph import ProjectGraph

if TYPE_CHECKING:
    from sagewai.stores.base._graph import ProjectGraph

__all__ = ["EXPORT_FORMATS", "export_graph", "graph_to_graphml", "graph_to_html", "graph_to_json"]

ExportFormat = Literal["json", "graphml", "html"]
EXPORT_FORMATS: tuple[str, ...] = ("html", "graphml", "json")
_GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"


def _document(
    project_id: str, entities: Sequence[Entity], relations: Sequence[Relation]
) -> dict[str, Any]:
    known = {e.id for e in entities}
    return {
        "project_id": project_id,
        "entities": [e.model_dump(mode="json") for e in entities],
        "relations": [
            r.model_dump(mode="json")
            for r in relations
            if r.subject_id in known and r.object_id in known
        ],
    }


def graph_to_json(
    project_id: str, entities: Sequence[Entity], relations: Sequence[Relation]
) -> str:
    """The graph as a JSON document: ``{"project_id", "entities": [...], "relations": [...]}``.

    Example:
        >>> import json
        >>> json.loads(graph_to_json("demo", [], []))["entities"]
        []
    """
    return json.dumps(_document(project_id, entities, relations), ensure_ascii=False, indent=2)


def graph_to_graphml(
    project_id: str, entities: Sequence[Entity], relations: Sequence[Relation]
) -> str:
    """The graph as GraphML (directed), readable by Gephi, yEd, networkx and Cytoscape.

    Example:
        >>> graph_to_graphml("demo", [], []).startswith("<?xml")
        True
    """
    ET.register_namespace("", _GRAPHML_NS)
    root = ET.Element(f"{{{_GRAPHML_NS}}}graphml")
    node_keys = ("name", "label", "aliases", "created_at")
    edge_keys = ("predicate", "valid_from", "valid_to", "confidence", "active", "message_ids")
    for owner, keys in (("node", node_keys), ("edge", edge_keys)):
        for key in keys:
            kind = "double" if key == "confidence" else "boolean" if key == "active" else "string"
            ET.SubElement(
                root,
                f"{{{_GRAPHML_NS}}}key",
                {"id": f"{owner[0]}_{key}", "for": owner, "attr.name": key, "attr.type": kind},
            )
    graph = ET.SubElement(
        root, f"{{{_GRAPHML_NS}}}graph", {"id": project_id, "edgedefault": "directed"}
    )
    known = {e.id for e in entities}
    for entity in entities:
        node = ET.SubElement(graph, f"{{{_GRAPHML_NS}}}node", {"id": entity.id})
        values = {
            "name": entity.name,
            "label": entity.label,
            "aliases": json.dumps(list(entity.aliases), ensure_ascii=False),
            "created_at": entity.created_at.isoformat(),
        }
        for key, value in values.items():
            ET.SubElement(node, f"{{{_GRAPHML_NS}}}data", {"key": f"n_{key}"}).text = value
    for relation in relations:
        if relation.subject_id not in known or relation.object_id not in known:
            continue
        edge = ET.SubElement(
            graph,
            f"{{{_GRAPHML_NS}}}edge",
            {"id": relation.id, "source": relation.subject_id, "target": relation.object_id},
        )
        values = {
            "predicate": relation.predicate,
            "valid_from": relation.valid_from.isoformat(),
            "valid_to": relation.valid_to.isoformat() if relation.valid_to else "",
            "confidence": repr(relation.confidence),
            "active": "true" if relation.is_active else "false",
            "message_ids": json.dumps(list(relation.message_ids), ensure_ascii=False),
        }
        for key, value in values.items():
            ET.SubElement(edge, f"{{{_GRAPHML_NS}}}data", {"key": f"e_{key}"}).text = value
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _script_json(document: dict[str, Any]) -> str:
    """JSON safe inside a ``<script>`` element: no ``<``, ``>``, ``&`` or line separators."""
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def graph_to_html(
    project_id: str, entities: Sequence[Entity], relations: Sequence[Relation]
) -> str:
    """A self-contained page that draws the graph (force layout, drag, zoom, labels) offline.

    Example:
        >>> "<svg" in graph_to_html("demo", [], [])
        True
    """
    document = _document(project_id, entities, relations)
    title = html.escape(f"sagewai graph: {project_id}")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n<style>{page_style()}</style>\n</head>\n<body>\n"
        f'<header><h1>{title}</h1><span id="stats"></span>'
        '<input id="filter" type="search" placeholder="filter by name" aria-label="filter">'
        '<label><input id="expired" type="checkbox"> show ended relations</label></header>\n'
        '<svg id="canvas" role="img" aria-label="knowledge graph"></svg>\n'
        '<aside id="details" hidden></aside>\n<div id="legend"></div>\n'
        f'<script type="application/json" id="graph-data">{_script_json(document)}</script>\n'
        f"<script>{page_script()}</script>\n</body>\n</html>\n"
    )


async def export_graph(graph: ProjectGraph, fmt: str) -> str:
    """Read a project's whole graph and render it as ``html``, ``graphml`` or ``json``.

    Raises:
        InvalidInputError: for an unknown format.
    """
    renderers = {"json": graph_to_json, "graphml": graph_to_graphml, "html": graph_to_html}
    renderer = renderers.get(fmt)
    if renderer is None:
        raise InvalidInputError(f"unknown export format {fmt!r}; use one of {EXPORT_FORMATS}")
    entities = await graph.entities()
    relations = await graph.relations()
    return renderer(graph.project_id, entities, relations)
