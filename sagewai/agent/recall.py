"""Recall: what an agent reads from memory before it answers a message.

Three sources, read concurrently and each optional:

* facts: the engine's hybrid search in the user's and session's scopes (so another user's facts
  are never read), with graph-aware ranking when the engine has a graph; each fact that replaced
  an older one carries the older value, so the model sees a change *as* a change;
* the knowledge graph: the relations around the entities the message names, only those the user
  stated (the graph is project-wide; its relations remember who said them);
* episodes: summaries of the user's past sessions that match the message.

A source that fails at run time (a backend down) is logged and skipped: the turn goes on with
what the others found.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sagewai.agent.memory_block import EPISODES, FACTS, GRAPH, MemoryItem, clean_text, day
from sagewai.errors import SagewaiRuntimeError
from sagewai.records import ChangeAction, Fact, FactStatus

if TYPE_CHECKING:
    from sagewai.context.engine import ContextEngine
    from sagewai.context.episodes import Episode, EpisodeStoreBase
    from sagewai.graph.base import ProjectGraph
    from sagewai.graph.records import Relation

__all__ = ["MemoryRecaller", "RecalledFact", "Recollection"]

logger = logging.getLogger("sagewai.agent")

MAX_RECALL_QUERY_CHARS = 4_000
EPISODE_SUMMARY_CHARS = 400


@dataclass(frozen=True, slots=True)
class RecalledFact:
    """A fact found for the message, its score, and the value it replaced (if any)."""

    fact: Fact
    score: float
    previously: str | None = None


@dataclass(frozen=True, slots=True)
class Recollection:
    """Everything recalled for one message, best first within each source."""

    facts: list[RecalledFact] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)

    def items(self, ref_for: Callable[[str], str]) -> list[MemoryItem]:
        """The block lines, facts labelled with the session's references (``ref_for(id)``)."""
        out: list[MemoryItem] = []
        for recalled in self.facts:
            fact = recalled.fact
            notes = [fact.fact_type.value]
            since = day(fact.valid_from or fact.created_at)
            if since:
                notes.append(f"since {since}")
            if recalled.previously:
                notes.append(f"previously: {clean_text(recalled.previously, limit=200)}")
            text = f"[{ref_for(fact.id)}] {clean_text(fact.content)} ({'; '.join(notes)})"
            out.append(MemoryItem(FACTS, text, fact.id))
        out.extend(MemoryItem(GRAPH, clean_text(line)) for line in self.relations)
        for episode in self.episodes:
            summary = clean_text(episode.summary, limit=EPISODE_SUMMARY_CHARS)
            out.append(MemoryItem(EPISODES, f"{day(episode.created_at)}: {summary}"))
        return out


class MemoryRecaller:
    """Reads facts, graph relations and episodes relevant to a message.

    Args:
        engine: The facts (searched in the user's and session's scopes).
        episode_store: Past sessions, or ``None``.
        graph: The project's graph view, or ``None``.
        top_k: Most facts recalled.
        graph_hops: Hops of graph-aware fact ranking (0 to switch it off).
        episode_limit: Most past sessions recalled.
        max_entities: Most entities of the message whose neighbourhood is read.
        graph_depth: Hops walked from each of them (relations nearest first).
        max_relations: Most graph relations recalled.
    """

    def __init__(
        self,
        engine: ContextEngine,
        *,
        episode_store: EpisodeStoreBase | None = None,
        graph: ProjectGraph | None = None,
        top_k: int = 8,
        graph_hops: int = 1,
        episode_limit: int = 2,
        max_entities: int = 3,
        graph_depth: int = 2,
        max_relations: int = 10,
    ) -> None:
        self.engine = engine
        self.episode_store = episode_store
        self.graph = graph
        self.top_k = top_k
        self.graph_hops = graph_hops
        self.episode_limit = episode_limit
        self.max_entities = max_entities
        self.graph_depth = graph_depth
        self.max_relations = max_relations

    async def recall(self, message: str, *, user_id: str | None, session_id: str) -> Recollection:
        """Everything relevant to ``message`` that this user may read."""
        query = message[:MAX_RECALL_QUERY_CHARS]
        facts, relations, episodes = await asyncio.gather(
            self._guard("facts", self._facts(query, user_id, session_id), []),
            self._guard("graph", self._relations(query, user_id), []),
            self._guard("episodes", self._episodes(query, user_id, session_id), []),
        )
        return Recollection(facts=facts, relations=relations, episodes=episodes)

    async def search(
        self, query: str, *, user_id: str | None, session_id: str, top_k: int
    ) -> list[RecalledFact]:
        """The facts search alone (the ``search_memory`` tool)."""
        return await self._facts(query[:MAX_RECALL_QUERY_CHARS], user_id, session_id, top_k)

    async def _guard(self, what: str, work: Any, empty: Any) -> Any:
        try:
            return await work
        except SagewaiRuntimeError as exc:
            logger.warning("recall of %s skipped this turn: %s", what, exc)
            return empty

    async def _facts(
        self, query: str, user_id: str | None, session_id: str, top_k: int | None = None
    ) -> list[RecalledFact]:
        if not query.strip() or (top_k or self.top_k) < 1:
            return []
        hops = self.graph_hops if self.engine.graph_store is not None else 0
        results = await self.engine.search(
            query, top_k or self.top_k, user_id=user_id, session_id=session_id, graph_hops=hops
        )
        previous = await asyncio.gather(*(self._previously(r.fact) for r in results))
        return [
            RecalledFact(fact=r.fact, score=r.score, previously=p)
            for r, p in zip(results, previous, strict=True)
        ]

    async def _previously(self, fact: Fact) -> str | None:
        """The content of the fact this one superseded, from the audit log."""
        related: list[str] = []
        for change in await self.engine.history(fact.id):
            if change.action is ChangeAction.CREATED:
                related.extend(change.related_fact_ids)
        if not related:
            return None
        older = [
            other
            for other in await self.engine.metadata_store.get(self.engine.project_id, related)
            if other.status is FactStatus.SUPERSEDED and other.superseded_by == fact.id
        ]
        if not older:
            return None
        return max(older, key=lambda f: f.effective_from).content

    async def _relations(self, query: str, user_id: str | None) -> list[str]:
        if self.graph is None or self.max_relations < 1:
            return []
        named = (await self.graph.find_entities(query))[: self.max_entities]
        lines: list[str] = []
        seen: set[str] = set()
        for entity in named:
            neighbourhood = await self.graph.neighbours(entity.id, depth=self.graph_depth)
            names = {e.id: e.name for e in (neighbourhood.center, *neighbourhood.entities)}
            for relation in neighbourhood.relations:
                if relation.id in seen or not _stated_by(relation, user_id):
                    continue
                seen.add(relation.id)
                subject = names.get(relation.subject_id, "?")
                obj = names.get(relation.object_id, "?")
                since = day(relation.valid_from)
                lines.append(f"{subject} {relation.predicate} {obj} (since {since})")
                if len(lines) >= self.max_relations:
                    return lines
        return lines

    async def _episodes(self, query: str, user_id: str | None, session_id: str) -> list[Episode]:
        if self.episode_store is None or self.episode_limit < 1:
            return []
        found = await self.episode_store.search_episodes(
            query,
            project_id=self.engine.project_id,
            limit=self.episode_limit + 1,
            user_id=user_id,
        )
        return [e for e in found if e.session_id != session_id][: self.episode_limit]


def _stated_by(relation: Relation, user_id: str | None) -> bool:
    """Whether the user said it (the agent tags the user's turns with the user id as speaker)."""
    if user_id is None:
        return True
    return any(source.speaker == user_id for source in relation.sources)


def fact_lines(facts: Sequence[RecalledFact], ref_for: Callable[[str], str]) -> str:
    """Facts as the ``search_memory`` tool shows them: one line each, with references."""
    if not facts:
        return "nothing found"
    return "\n".join(item.text for item in Recollection(facts=list(facts)).items(ref_for))
