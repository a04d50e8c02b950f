"""Learning from finished turns: facts through the bridge, relations through the graph builder.

The bridge stores each message verbatim (with the rules' facts of it) before :meth:`learn`
returns, so the next turn recalls it, and updates the graph with it (:func:`graph_learner` hands
it the builder); the model's extraction runs in the bridge's background workers. Without a
bridge, the graph builder works in tasks this class tracks.
:meth:`TurnLearner.flush` waits for both, which is what ending a session, forgetting and tests
need (what was said is stored before the next step reads memory).
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sagewai.errors import ConfigurationError, SagewaiError

if TYPE_CHECKING:
    from sagewai.context import MemoryBridge
    from sagewai.context._engine import ContextEngine
    from sagewai.context.bridge._graphing import TurnGraph
    from sagewai.intelligence._graph_builder import ConversationGraphBuilder

__all__ = ["LearnedMessage", "TurnLearner", "default_bridge", "graph_learner"]

logger = logging.getLogger("sagewai.agent")


@dataclass(frozen=True, slots=True)
class LearnedMessage:
    """One message to learn from: its role, text, id and speaker (for the graph)."""

    role: str
    content: str
    message_id: str
    speaker: str | None


class TurnLearner:
    """Hands finished turns to the bridge and the graph builder; never raises into a turn.

    Args:
        bridge: Fact extraction and reconciliation (``None``: no facts learned).
        graph_builder: Entity and relation extraction (``None``: no graph learned).
    """

    def __init__(self, bridge: MemoryBridge | None, graph_builder: TurnGraph | None) -> None:
        self.bridge = bridge
        self.graph_builder = graph_builder
        self._tasks: set[asyncio.Task[None]] = set()

    async def learn(
        self, messages: Sequence[LearnedMessage], *, session_id: str, user_id: str | None
    ) -> bool:
        """Store the messages (durable and recallable when this returns); extraction of what
        needs the model goes on in the background. Problems are logged, not raised.

        Returns:
            True when every message was accepted by a bridge that keeps it beyond this
            process (a journal, or a persistent engine): only then may the agent say it saved
            the message.
        """
        saved = False
        if self.bridge is not None:
            try:
                for message in messages:
                    await self.bridge.remember(
                        {
                            "role": message.role,
                            "content": message.content,
                            "id": message.message_id,
                        },
                        session_id=session_id,
                        user_id=user_id,
                    )
                saved = self.bridge.durable
            except SagewaiError as exc:
                logger.warning("the memory bridge did not accept a turn: %s", exc)
        if self.graph_builder is not None:
            task = asyncio.get_running_loop().create_task(
                self._build(self.graph_builder, messages, session_id), name="sagewai-agent-graph"
            )
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return saved

    async def ready(self) -> None:
        """Replay what the bridge's journal holds from an earlier process (before a recall)."""
        if self.bridge is not None:
            try:
                await self.bridge.start()
            except SagewaiError as exc:
                logger.warning("the memory bridge could not start: %s", exc)

    @staticmethod
    async def _build(
        builder: TurnGraph, messages: Sequence[LearnedMessage], session_id: str
    ) -> None:
        for message in messages:
            try:
                await builder.process_turn(
                    message.content,
                    role=message.role,
                    session_id=session_id,
                    speaker=message.speaker,
                    message_id=message.message_id,
                )
            except SagewaiError as exc:
                logger.warning("graph update skipped for message %s: %s", message.message_id, exc)

    async def flush(self, session_id: str | None = None) -> None:
        """Wait until every message handed over so far (of a session, or all) is stored.

        Raises:
            BackendError: the bridge failed to store a background batch.
        """
        if self.bridge is not None:
            await self.bridge.flush(session_id)
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def aclose(self) -> None:
        """Finish the graph work and close the bridge (storing everything it accepted)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        if self.bridge is not None:
            await self.bridge.aclose()


def graph_learner(
    bridge: MemoryBridge | None,
    graph_builder: ConversationGraphBuilder | None,
    context: ContextEngine,
) -> TurnGraph | None:
    """What learns the graph from the agent's turns; hands it to the bridge, which runs it.

    The agent's ``graph_builder`` goes to a bridge that has none (a bridge with another one is a
    wiring mistake); a bridge with neither gets a default ``ConversationGraphBuilder`` over the
    engine's graph store (the rule-based extractors), so the seed's wiring grows its graph.

    Raises:
        ConfigurationError: the agent and its bridge were given two different graph builders.
    """
    if bridge is None:
        return graph_builder
    current = bridge.graph_builder
    if graph_builder is not None:
        if current is not None and current is not graph_builder and current not in _DEFAULTS:
            raise ConfigurationError(
                "the agent and its memory bridge have different graph builders: give it to one"
            )
        bridge.graph_builder = graph_builder  # also replaces a default another agent gave it
    elif current is None and context.graph_store is not None:
        from sagewai.intelligence import ConversationGraphBuilder

        default = ConversationGraphBuilder(graph_store=context.graph_store)
        _DEFAULTS.add(default)
        bridge.graph_builder = default
    return bridge.graph_builder


_DEFAULTS: weakref.WeakSet[Any] = weakref.WeakSet()
"""Graph builders :func:`graph_learner` made itself: a builder the user gives replaces them."""


def default_bridge(
    context: ContextEngine, model: str, api_base: str | None, *, use_model: bool
) -> MemoryBridge:
    """The agent's bridge when none is given: rules, plus ``model`` where they are unsure.

    With an injected client (a test double, a custom adapter) the rules work alone: extraction
    must not consume a scripted conversation's answers. The model, when used, gets its own
    client (no retries of its own: the extractor retries, then falls back to the rules).
    """
    from sagewai.context import MemoryBridge
    from sagewai.extraction import (
        HybridFactExtractor,
        LLMFactExtractor,
        RuleBasedFactExtractor,
    )

    rules = RuleBasedFactExtractor()
    extractor: Any = rules
    if use_model:
        extractor = HybridFactExtractor(
            rule_extractor=rules,
            llm_extractor=LLMFactExtractor(model=model, api_base=api_base, fallback=rules),
        )
    return MemoryBridge(context_engine=context, model=model, fact_extractor=extractor)
