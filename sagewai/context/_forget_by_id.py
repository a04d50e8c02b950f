"""Forgetting facts by id for one user (the agent's ``forget``), and everything that shows them.

``forget_facts`` deletes the facts with the values they replaced and the repeats merged into
them, the verbatim records of their messages (and of the user's messages naming their values),
those messages in the user's saved episodes and the graph relations read from them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sagewai.context._forgetting import delete_records, syntheses_resting_on
from sagewai.core._episode_records import subject_pattern
from sagewai.core._queries import ChangeQuery, FactQuery
from sagewai.core._records import Fact, FactKind
from sagewai.core._scope import validate_identifier
from sagewai.errors import InvalidInputError
from sagewai.stores.base._graph import GraphWrite
from sagewai.stores.base._summary import summary_not_naming

if TYPE_CHECKING:
    from sagewai.context._access import StoreAccess
    from sagewai.core._graph_records import Relation
    from sagewai.stores.base._episodes import EpisodeStoreBase
    from sagewai.stores.base._graph import ProjectGraph

__all__ = [
    "ForgottenFacts",
    "delete_graph_relations",
    "forget_facts",
    "may_forget",
    "mentions_any",
    "redact_episodes",
]

_PAGE = 500
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
    episodes_changed: int = 0
    """Saved episodes the forgotten messages were removed from (or deleted, left empty)."""
    relations_deleted: int = 0
    """Graph relations read from the forgotten messages that carried a forgotten value."""

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
    access: StoreAccess,
    fact_ids: Sequence[str],
    *,
    user_id: str | None,
    graph: ProjectGraph | None,
) -> ForgottenFacts:
    """Delete facts by id, and every record of the user's that could show them again.

    The facts go with the values they replaced and the repeats merged into them; then the
    verbatim records of their messages (and of the user's messages naming their values), the
    same messages in the user's saved episodes (the engine's episode store), and the relations
    ``graph`` read from them.

    Args:
        access: The port of the engine holding the facts.
        fact_ids: The facts to forget.
        user_id: The user asking; only facts this user may change are deleted.
        graph: The graph the relations were written to (the engine's, or an agent's builder's).

    Returns:
        The deleted ids, the refused ids, the source message ids, the forgotten values and
        how many messages, episodes and relations went with them.
    """
    chosen: dict[str, Fact] = {}
    refused: list[str] = []
    pending: list[tuple[str, str | None]] = [(fact_id, None) for fact_id in fact_ids]
    while pending and len(chosen) < _MAX_CHAIN:
        fact_id, successor = pending.pop()
        if fact_id in chosen:
            continue
        try:
            found = await access.get_many([validate_identifier(fact_id, "fact_id")])
        except InvalidInputError:
            found = []
        if not found:
            if successor is None:
                refused.append(fact_id)
            continue
        fact = found[0]
        linked = successor is None or successor in (fact.superseded_by, fact.merged_into)
        if not linked:
            continue
        if not may_forget(fact, user_id):
            if successor is None:
                refused.append(fact_id)
            continue
        chosen[fact.id] = fact
        history = await access.changes(ChangeQuery(project_id=access.project_id, fact_id=fact.id))
        for change in history:
            pending.extend((related, fact.id) for related in change.related_fact_ids)
    quoting = await syntheses_resting_on(access, list(chosen.values()))
    await delete_records(
        access, [*chosen, *(r.id for r in quoting)], reason="forgotten at the user's request"
    )
    message_ids = frozenset(
        source.message_id
        for fact in chosen.values()
        for source in fact.sources
        if source.message_id is not None
    )
    records = await _message_records(access, chosen.values(), user_id=user_id)
    outcome = ForgottenFacts(
        deleted=tuple(chosen),
        refused=tuple(dict.fromkeys(refused)),
        message_ids=message_ids,
        terms=_terms(chosen.values()),
        messages_deleted=len(records),
    )
    if not outcome.deleted:
        return outcome
    episodes = relations = 0
    if access.episode_store is not None:
        episodes = await redact_episodes(
            access.episode_store, outcome, project_id=access.project_id, user_id=user_id
        )
    if graph is not None:
        relations = await delete_graph_relations(graph, outcome, user_id=user_id)
    return dataclasses.replace(outcome, episodes_changed=episodes, relations_deleted=relations)


async def _message_records(
    access: StoreAccess, forgotten: Iterable[Fact], *, user_id: str | None
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
    query = FactQuery(project_id=access.project_id, user_id=user_id, kinds=(FactKind.MESSAGE,))
    async for record in access.iter_facts(query, page_size=_PAGE):
        if record.id in known or not may_forget(record, user_id):
            continue
        source = record.sources[0] if record.sources else None
        key = (source.session_id or record.session_id, source.message_id) if source else None
        if key in sources or mentions_any(record.content, patterns):
            doomed.append(record.id)
    await delete_records(access, doomed, reason="forgotten at the user's request")
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
        summary = await summary_not_naming(
            store.summarizer, kept, lambda text: mentions_any(text, patterns)
        )
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
