"""The memory tools an agent's model may call: search, save and forget.

Recall puts the most relevant memory in front of the model before it answers; these tools let
it look further (a second search with other words), keep something the user asked it to
remember, and forget what the user asks it to forget. Each tool is an ordinary typed function
turned into a :class:`~sagewai.agent._tools.Tool`, bound to one session by closures the agent
passes in, so the model can never reach another user's memory through them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from sagewai.agent._session import AgentSession
from sagewai.agent._tools import Tool
from sagewai.context._reconcile import Candidate
from sagewai.core._claims import ReconcileAction
from sagewai.core._records import FactType, Provenance, utcnow

if TYPE_CHECKING:
    from sagewai.context import MemoryBridge
    from sagewai.context._engine import ContextEngine

__all__ = ["FORGET_TOOL", "SAVE_TOOL", "SEARCH_TOOL", "memory_tools", "save_fact"]

SEARCH_TOOL = "search_memory"
SAVE_TOOL = "save_memory"
FORGET_TOOL = "forget_memory"

SearchFunction = Callable[[str, int], Awaitable[str]]
SaveFunction = Callable[[str, str, str | None], Awaitable[str]]
ForgetFunction = Callable[[list[str]], Awaitable[str]]


def memory_tools(
    *, search: SearchFunction, save: SaveFunction, forget: ForgetFunction
) -> list[Tool]:
    """The three memory tools, calling the given session-bound functions.

    Example:
        >>> async def search(query: str, top_k: int) -> str:
        ...     return "nothing found"
        >>> async def save(content: str, fact_type: str, subject: str | None) -> str:
        ...     return "saved"
        >>> async def forget(ids: list[str]) -> str:
        ...     return "forgotten"
        >>> [t.name for t in memory_tools(search=search, save=save, forget=forget)]
        ['search_memory', 'save_memory', 'forget_memory']
    """

    async def search_memory(query: str, top_k: int = 5) -> str:
        """Search long-term memory about this user for facts matching a query.

        Args:
            query: What to look for, in plain words.
            top_k: How many facts to return (1-20).
        """
        return await search(query, max(1, min(top_k, 20)))

    async def save_memory(
        content: str, fact_type: FactType = FactType.GENERAL, subject: str | None = None
    ) -> str:
        """Save one fact to long-term memory, e.g. when the user asks you to remember something.

        Args:
            content: The fact as one self-contained sentence.
            fact_type: What kind of statement it is (one of the listed values).
            subject: Who or what the fact is about, if clear.
        """
        return await save(content, fact_type, subject)

    async def forget_memory(memory_ids: list[str]) -> str:
        """Forget facts for good, when the user asks you to forget them.

        Args:
            memory_ids: The references of the facts to forget, as shown in memory (e.g. "m2").
        """
        return await forget(memory_ids)

    return [
        Tool.from_function(search_memory),
        Tool.from_function(save_memory),
        Tool.from_function(forget_memory),
    ]


async def save_fact(
    engine: ContextEngine,
    bridge: MemoryBridge | None,
    session: AgentSession,
    message_id: str,
    content: str,
    fact_type: str,
    subject: str | None,
) -> str:
    """Store what the model chose to save, reconciled with memory like any learned fact.

    Through the bridge's writer a saved fact that repeats memory reinforces it and one that
    changes a value supersedes the old one; the answer names the references involved.
    """
    source = Provenance(
        session_id=session.session_id,
        message_id=message_id,
        role="user",
        timestamp=utcnow(),
        extractor="agent.save_memory",
    )
    fact = engine.port.build_fact(
        content,
        fact_type=fact_type,
        # A model fills an optional argument with "" as often as it leaves it out.
        subject=subject if isinstance(subject, str) and subject.strip() else None,
        user_id=session.user_id,
        session_id=session.session_id,
        source=source,
        confidence=0.9,
    )
    if bridge is None:
        await engine.add_many([fact], actor="agent")
        return f"saved as [{session.ref_for(fact.id)}]"
    outcome = await bridge.writer.write([Candidate(fact=fact, role="tool", source=source)])
    for _, decision in outcome.decisions:
        if decision.action is ReconcileAction.NOOP and decision.targets:
            return f"already in memory as [{session.ref_for(decision.targets[0].id)}]"
        if decision.action is ReconcileAction.UPDATE and decision.targets:
            replaced = ", ".join(f"[{session.ref_for(t.id)}]" for t in decision.targets)
            return f"saved as [{session.ref_for(fact.id)}], replacing {replaced}"
    return f"saved as [{session.ref_for(fact.id)}]"
