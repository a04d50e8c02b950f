"""Forgetting facts the agent was shown, everywhere the agent could show them again.

Deleting a fact from the engine is not enough for an agent: the message that stated it sits in
the saved episode of its session, the assistant may have repeated the value, and the graph holds
the relation read from the same message. The engine's one forget cascade
(:func:`sagewai.context._forget_by_id.forget_facts`) deletes the facts (and the older values they
replaced, and the repeats merged into them), the messages they came from, those messages in the
user's episodes and the relations read from them; what is left here is the agent's own state:
the open sessions' histories and transcripts.

Only facts the current user may change are forgotten: facts in that user's scope (or, for an
agent without users, facts stored without a user). The verbatim records of the messages the
facts came from, and the user's messages naming a forgotten value, are deleted with them.
Document chunks are never deleted from a chat.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sagewai.context._forget_by_id import (
    ForgottenFacts,
    delete_graph_relations,
    forget_facts,
    mentions_any,
    redact_episodes,
)

if TYPE_CHECKING:
    from sagewai.agent._session import AgentSession
    from sagewai.context._engine import ContextEngine
    from sagewai.stores.base._graph import ProjectGraph

__all__ = [
    "AgentForgetReport",
    "ForgottenFacts",
    "delete_graph_relations",
    "forget_everywhere",
    "forget_facts",
    "mentions_any",
    "redact_episodes",
]


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
    graph: ProjectGraph | None,
    sessions: Iterable[AgentSession],
) -> tuple[AgentForgetReport, ForgottenFacts]:
    """Forget facts through the engine's cascade, then remove them from the open sessions.

    The engine's cascade reaches its episode store (the agent's, attached to it) and ``graph``
    (the agent's graph builder's, or the engine's). The caller makes sure everything said
    before is stored first (so a fact still queued for extraction cannot come back after it
    was forgotten).
    """
    outcome = await forget_facts(engine.port, fact_ids, user_id=user_id, graph=graph)
    removed = 0
    if outcome.deleted:
        for session in sessions:
            if session.user_id == user_id:
                removed += session.redact(outcome.message_ids, outcome.patterns())
    report = AgentForgetReport(
        facts_deleted=len(outcome.deleted),
        refused=outcome.refused,
        episodes_changed=outcome.episodes_changed,
        relations_deleted=outcome.relations_deleted,
        history_messages_removed=removed,
    )
    return report, outcome
