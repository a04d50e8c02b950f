"""The graph on every turn: each recorded message goes through the bridge's graph builder.

The bridge holds any object with ``process_turn`` (:class:`TurnGraph`; a
:class:`~sagewai.intelligence.ConversationGraphBuilder` is one). The builder runs after the
turn's records are committed, so the graph never holds a message the store does not; a failure
is logged once and counted, never raised into the conversation loop (the message is stored
whatever the graph does).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from sagewai.context.bridge._turns import BridgeStats, PendingTurn
from sagewai.errors import SagewaiError

__all__ = ["GraphStage", "TurnGraph"]

logger = logging.getLogger("sagewai.context.bridge")


@runtime_checkable
class TurnGraph(Protocol):
    """What the bridge needs of a graph builder: one message in, the graph updated."""

    async def process_turn(
        self,
        message: str,
        role: str = "user",
        session_id: str | None = None,
        speaker: str | None = None,
        message_id: str | None = None,
        timestamp: datetime | None = None,
    ) -> object:
        """Extract the message's entities and relations and write them."""
        ...


class GraphStage:
    """Hands recorded turns to the graph builder, in order (see the module).

    Args:
        builder: The graph builder, or ``None`` (no graph is learned).
        stats: The bridge's counters (``graph_turns``, ``graph_failures``).
        user_name: The name the user gave, per user id: the graph's "I" of a user's message
            becomes that person (else the user id, else the entity "user").
    """

    def __init__(
        self,
        builder: TurnGraph | None,
        stats: BridgeStats,
        user_name: Callable[[str | None], str | None],
    ) -> None:
        self.builder = builder
        self.stats = stats
        self.user_name = user_name
        self._warned = False

    async def learn(self, recorded: Sequence[PendingTurn]) -> None:
        """Update the graph with every recorded message (those the bridge extracts from)."""
        builder = self.builder
        if builder is None:
            return
        for pending in recorded:
            if pending.context is None:
                continue  # a role the bridge does not read, or an empty message
            turn = pending.turn
            speaker = turn.message.speaker_name
            if speaker is None and turn.message.role == "user":
                speaker = self.user_name(turn.user_id) or turn.user_id
            try:
                await builder.process_turn(
                    turn.message.content,
                    role=turn.message.role,
                    session_id=turn.session_id,
                    speaker=speaker,
                    message_id=turn.message_id,
                    timestamp=turn.timestamp,
                )
                self.stats.graph_turns += 1
            except SagewaiError as exc:
                self.stats.graph_failures += 1
                if not self._warned:
                    self._warned = True
                    logger.warning(
                        "graph update skipped for message %s: %s (logged once)",
                        turn.message_id,
                        exc,
                    )
