"""Forgetting facts the agent was shown, everywhere the agent could show them again.

Deleting a fact from the engine is not enough for an agent: the message that stated it sits in
the saved episode of its session, the assistant may have repeated the value, and the graph holds
the relation read from the same message. :func:`forget_facts` deletes the facts (and the older
values they replaced, and the repeats merged into them) and returns what identifies them in text:
the ids of the messages they came from and their values. The agent then removes the messages
that carry them from the user's episodes, its own session histories and the graph.

Only facts the current user may change are forgotten: facts in that user's scope (or, for an
agent without users, facts stored without a user). The verbatim records of the messages the
facts came from, and the user's messages naming a forgotten value, are deleted with them.
Document chunks are never deleted from a chat.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sagewai.context.episodes.records import subject_pattern
from sagewai.context.episodes.summary import extractive_summary
from sagewai.errors import FactNotFoundError, InvalidInputError
from sagewai.records import Fact, FactKind
from sagewai.stores.base.graph import GraphWrite
from sagewai.stores.base.metadata import FactQuery

if TYPE_CHECKING:
    from sagewai.agent.session import AgentSession
    from sagewai.context.engine import ContextEngine
    from sagewai.context.episodes import EpisodeStoreBase
    from sagewai.graph.records import Relation
    from sagewai.stores.base.graph import ProjectGraph

__all__ = [
    "AgentForgetReport",
    "ForgottenFacts",
    "delete_graph_relations",
    "forget_everywhere",
    "forget_facts",
    "mentions_any",
    "redact_episodes",
]

logger = logging.getLogger("sagewai.agent")

_MAX_CHAIN = 200
_MIN_TERM_CHARS = 2
_MAX_EPISODES = 10_000


@dataclass(frozen=True, slots=True)
class ForgottenFacts:
    """What :func:`forget_facts` deleted, and how to recognise it in text."""

    deleted: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    """Ids that were unknown, not this user's, or document chunks: left untouched."""
    message_ids: frozenset[str] = frozenset()
    terms: tuple[str, ...] = ()
    messages_deleted: int = 0
    """Verbatim message records deleted with the facts (their sources, or naming a value)."""

    def patterns(self) -> list[re.Pattern[str]]:
        """Whole-word, case-insensitive patterns of the forgotten values."""
        found = (subject_pattern(term) for term in self.terms)
        return [pattern for pattern in found if pattern is not None]


def may_forget(fact: Fact, user_id: str | None) -> bool:
    """Whether a chat with ``user_id`` may delete ``fact`` (a fact or a verbatim message)."""
    return fact.kind in (FactKind.FACT, FactKind.MESSAGE) and fact.user_id == user_id


def _terms(facts: Iterable[Fact]) -> tuple[str, ...]:
    terms: list[str] = []
    for fact in facts:
        for value in (fact.object, *fact.exact_values):
            if value and len(value.strip()) >= _MIN_TERM_CHARS and value.strip() not in terms:
                terms.append(value.strip())
    return tuple(terms)


async def forget_facts(
    engine: ContextEngine, fact_ids: Sequence[str], *, user_id: str | None
) -> ForgottenFacts:
    """Delete facts by id, with the values they replaced and the repeats merged into them.

    Args:
        engine: The engine holding the facts.
        fact_ids: The facts to forget.
        user_id: The user asking; only facts this user may change are deleted.

    Returns:
        The deleted ids, the refused ids, the source message ids and the forgotten values.
    """
    chosen: dict[str, Fact] = {}
    refused: list[str] = []
    pending: list[tuple[str, str | None]] = [(fact_id, None) for fact_id in fact_ids]
    while pending and len(chosen) < _MAX_CHAIN:
        fact_id, successor = pending.pop()
        if fact_id in chosen:
            continue
        try:
            fact = await engine.get(fact_id)
        except (FactNotFoundError, InvalidInputError):
            if successor is None:
                refused.append(fact_id)
            continue
        linked = successor is None or successor in (fact.superseded_by, fact.merged_into)
        if not linked:
            continue
        if not may_forget(fact, user_id):
            if successor is None:
                refused.append(fact_id)
            continue
        chosen[fact.id] = fact
        for change in await engine.history(fact.id):
            pending.extend((related, fact.id) for related in change.related_fact_ids)
    for fact_id in chosen:
        await engine.delete(fact_id, reason="forgotten at the user's request")
    message_ids = frozenset(
        source.message_id
        for fact in chosen.values()
        for source in fact.sources
        if source.message_id is not None
    )
    records = await _message_records(engine, chosen.values(), user_id=user_id)
    return ForgottenFacts(
        deleted=tuple(chosen),
        refused=tuple(dict.fromkeys(refused)),
        message_ids=message_ids,
        terms=_terms(chosen.values()),
        messages_deleted=len(records),
    )


async def _message_records(
    engine: ContextEngine, forgotten: Iterable[Fact], *, user_id: str | None
) -> list[str]:
    """Delete the verbatim records of the messages the forgotten facts came from, and of the
    user's messages naming a forgotten value; return their ids."""
    facts = list(forgotten)
    if not facts:
        return []
    known = {fact.id for fact in facts}
    sources = {
        (source.session_id or fact.session_id, source.message_id)
        for fact in facts
        for source in fact.sources
        if source.message_id is not None
    }
    patterns = ForgottenFacts(terms=_terms(facts)).patterns()
    doomed: list[str] = []
    query = FactQuery(
        project_id=engine.project_id, user_id=user_id, kinds=(FactKind.MESSAGE,), limit=500
    )
    after: tuple[datetime, str] | None = None
    while True:
        page = await engine.metadata_store.query(dataclasses.replace(query, after=after))
        for record in page:
            if record.id in known or not may_forget(record, user_id):
                continue
            source = record.sources[0] if record.sources else None
            key = (source.session_id or record.session_id, source.message_id) if source else None
            if key in sources or mentions_any(record.content, patterns):
                doomed.append(record.id)
        if len(page) < 500:
            break
        after = (page[-1].created_at, page[-1].id)
    for record_id in doomed:
        await engine.delete(record_id, reason="forgotten at the user's request")
    return doomed


def mentions_any(text: str, patterns: Sequence[re.Pattern[str]]) -> bool:
    """Whether ``text`` names any of the patterns."""
    return any(pattern.search(text) for pattern in patterns)


async def redact_episodes(
    store: EpisodeStoreBase,
    forgotten: ForgottenFacts,
    *,
    project_id: str,
    user_id: str | None,
) -> int:
    """Remove the forgotten messages from the user's episodes; return how many episodes changed.

    A message goes when it is one a forgotten fact came from, or when it names a forgotten
    value. The summary is rewritten from what is left (and made extractive if a written summary
    still names a value); an episode left without messages is deleted.
    """
    patterns = forgotten.patterns()
    if not patterns and not forgotten.message_ids:
        return 0
    changed = 0
    episodes = await store.list_episodes(
        project_id=project_id, user_id=user_id, limit=_MAX_EPISODES
    )
    for episode in episodes:
        kept = tuple(
            message
            for message in episode.messages
            if message.id not in forgotten.message_ids
            and not mentions_any(message.content, patterns)
        )
        if len(kept) == len(episode.messages) and not mentions_any(episode.summary, patterns):
            continue
        changed += 1
        if all(message.is_empty for message in kept):
            await store.delete_session(episode.session_id, project_id=project_id)
            continue
        metadata = {
            key: value
            for key, value in episode.metadata.items()
            if not (isinstance(value, str) and mentions_any(value, patterns))
        }
        summary = await store.summarizer.summarize(kept)
        if not summary or mentions_any(summary, patterns):
            summary = extractive_summary(kept) or kept[0].line()[:600]
        await store.save_episode(
            episode.session_id,
            kept,
            metadata=metadata,
            project_id=episode.project_id,
            user_id=episode.user_id,
            episode_id=episode.id,
            summary=summary,
        )
    return changed


async def delete_graph_relations(
    graph: ProjectGraph, forgotten: ForgottenFacts, *, user_id: str | None
) -> int:
    """Delete the relations read from the forgotten messages that carry a forgotten value.

    A relation goes when one of its sources is a forgotten message and it touches an entity
    named like a forgotten value; other relations read from the same message (another fact of
    it) stay. When the facts had no value to name (no object, no exact value), the relations of
    those messages touching the user's entity go instead. Returns how many were deleted.
    """
    if not forgotten.message_ids:
        return 0
    names = list(forgotten.terms) or ([user_id] if user_id else [])
    doomed: dict[str, Relation] = {}
    for name in names:
        for entity in await graph.entities_named(name):
            touching = [
                *await graph.relations(subject_id=entity.id),
                *await graph.relations(object_id=entity.id),
            ]
            for relation in touching:
                if any(s.message_id in forgotten.message_ids for s in relation.sources):
                    doomed[relation.id] = relation
    if doomed:
        write = GraphWrite(graph.project_id, delete_relations=list(doomed.values()))
        await graph.apply(write)
    return len(doomed)


@dataclass(frozen=True, slots=True)
class AgentForgetReport:
    """What :meth:`UniversalAgent.forget <sagewai.agent.UniversalAgent.forget>` removed."""

    facts_deleted: int
    refused: tuple[str, ...]
    episodes_changed: int
    relations_deleted: int
    history_messages_removed: int


async def forget_everywhere(
    engine: ContextEngine,
    fact_ids: Sequence[str],
    *,
    user_id: str | None,
    episode_store: EpisodeStoreBase | None,
    graph: ProjectGraph | None,
    sessions: Iterable[AgentSession],
) -> tuple[AgentForgetReport, ForgottenFacts]:
    """Forget facts and remove them from episodes, the graph and the user's open sessions.

    The caller makes sure everything said before is stored first (so a fact still queued for
    extraction cannot come back after it was forgotten).
    """
    outcome = await forget_facts(engine, fact_ids, user_id=user_id)
    episodes = relations = removed = 0
    if outcome.deleted:
        if episode_store is not None:
            episodes = await redact_episodes(
                episode_store, outcome, project_id=engine.project_id, user_id=user_id
            )
        if graph is not None:
            relations = await delete_graph_relations(graph, outcome, user_id=user_id)
        for session in sessions:
            if session.user_id == user_id:
                removed += session.redact(outcome.message_ids, outcome.patterns())
    report = AgentForgetReport(
        facts_deleted=len(outcome.deleted),
        refused=outcome.refused,
        episodes_changed=episodes,
        relations_deleted=relations,
        history_messages_removed=removed,
    )
    return report, outcome
