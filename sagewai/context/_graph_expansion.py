"""Graph-aware retrieval: facts linked to the entities a query names, one or two hops away.

A question such as "what does Caroline's sister do for a living?" names Caroline, but the answer
is a fact about Sara. The knowledge graph knows ``Caroline -sibling_of- Sara``; expansion finds
the entities named in the query, walks their neighbourhood, and adds keyword candidates for the
neighbours' names and for the messages the walked relations came from, with a rank-based bonus
that the ranking fuses like any other list.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from sagewai.core._queries import FactQuery
from sagewai.errors import SagewaiError

if TYPE_CHECKING:
    from sagewai.core._port import MemoryPort
    from sagewai.stores.base._graph import ProjectGraph

__all__ = ["GRAPH_WEIGHT", "MAX_QUERY_ENTITIES", "graph_bonus", "neighbour_names"]

logger = logging.getLogger("sagewai.context")

GRAPH_WEIGHT = 1.0
"""Bonus, on the fusion's 0..1 scale, of the best match for a neighbour's name (others get a
share in proportion to their keyword score)."""
MAX_QUERY_ENTITIES = 5
MAX_NEIGHBOURS = 12


async def neighbour_names(graph: Any, query: str, hops: int) -> list[str]:
    """Names of the entities within ``hops`` of the entities named in ``query``, nearest first.

    The query's own entities are left out: the keyword and dense lists already cover them.
    """
    named = (await graph.find_entities(query))[:MAX_QUERY_ENTITIES]
    own = {entity.id for entity in named}
    names: list[str] = []
    for entity in named:
        neighbourhood = await graph.neighbours(entity.id, depth=hops)
        for other in neighbourhood.entities:
            if other.id not in own and other.name not in names:
                names.append(other.name)
    return names[:MAX_NEIGHBOURS]


async def graph_bonus(
    port: MemoryPort,
    graph: ProjectGraph,
    query: str,
    fact_query: FactQuery,
    hops: int,
    pool: int,
) -> dict[str, float]:
    """Fusion bonus per fact id for facts that mention the query entities' neighbours.

    A graph failure never fails the search: it is logged and the search goes on without it.
    """
    try:
        names = await neighbour_names(graph, query, hops)
    except SagewaiError as exc:
        logger.warning("graph expansion skipped: %s", exc)
        return {}
    if not names:
        return {}
    hits = await port.keyword_hits(fact_query, " ".join(names), pool)
    best = max((score for _, score in hits), default=0.0)
    if best <= 0:
        return {}
    return {fact_id: GRAPH_WEIGHT * score / best for fact_id, score in hits}
