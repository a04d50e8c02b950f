"""Memory tools for any agent framework: search, remember and forget, confined to one user.

Every framework integration (OpenAI Agents SDK, AutoGen, CrewAI, LlamaIndex) gives its agents
the same three tools; what differs is only how the framework names the tool and where it keeps
the run's user. The work and every scoping decision live here, on the MCP server's
:class:`~sagewai.integrations._mcp_memory.ScopedMemory` (one per user), with no framework
imported, and the answers are short texts a model reads.

Example:
    >>> import asyncio
    >>> from sagewai import ContextEngine
    >>> from sagewai.testing import FakeEmbedder
    >>> async def demo() -> str:
    ...     memories = UserMemories(ContextEngine.in_memory(embedder=FakeEmbedder()))
    ...     await memories.remember("maya", "Maya is vegetarian")
    ...     found = await memories.search("maya", "vegetarian")
    ...     return found.split("] ", 1)[1] + " | leo: " + await memories.search("leo", "vegetarian")
    >>> asyncio.run(demo())
    'Maya is vegetarian | leo: nothing remembered about that'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sagewai.core import validate_identifier
from sagewai.errors import FactNotFoundError, InvalidInputError
from sagewai.integrations._mcp_memory import ScopedMemory, ScopeRefusedError

if TYPE_CHECKING:
    from sagewai.context._engine import ContextEngine

__all__ = ["FORGET_DOC", "NOTHING_FOUND", "REMEMBER_DOC", "SEARCH_DOC", "UserMemories", "user_of"]

NOTHING_FOUND = "nothing remembered about that"
SEARCH_DOC = "Search the user's long-term memory; each line is [memory id] what is remembered."
REMEMBER_DOC = "Store one short fact about the user worth remembering in later conversations."
FORGET_DOC = "Forget one memory of the user by its id (the [id] that search_memory showed)."


def user_of(context: Any, *, key: str = "user_id") -> str | None:
    """The user a framework's run context names: ``context[key]`` or ``context.<key>``."""
    if context is None:
        return None
    value = context.get(key) if isinstance(context, Mapping) else getattr(context, key, None)
    return None if value is None else str(value)


class UserMemories:
    """Per-user memory operations over one engine, each answered as text for a model.

    Args:
        engine: The project's engine.
        top_k: How many memories a search returns.
    """

    def __init__(self, engine: ContextEngine, *, top_k: int = 5) -> None:
        self.engine = engine
        self.top_k = top_k
        self._scoped: dict[str, ScopedMemory] = {}

    def for_user(self, user_id: str | None) -> ScopedMemory:
        """The memory of one user (refusing a missing or malformed id).

        Raises:
            InvalidInputError: no user was named, or the id is not a valid identifier.
        """
        if user_id is None:
            raise InvalidInputError(
                "memory tools act for one user: name the run's user (user_id) in its context"
            )
        user_id = validate_identifier(user_id, "user_id")
        scoped = self._scoped.get(user_id)
        if scoped is None:
            scoped = self._scoped[user_id] = ScopedMemory(self.engine, user_id=user_id)
        return scoped

    async def search(self, user_id: str | None, query: str) -> str:
        """The user's memories (and the project's) relevant to ``query``, one per line."""
        found = await self.for_user(user_id).recall(query, top_k=self.top_k)
        lines = [f"[{hit['id']}] {hit['content']}" for hit in found["results"]]
        return "\n".join(lines) or NOTHING_FOUND

    async def remember(self, user_id: str | None, content: str) -> str:
        """Store ``content`` as one fact of the user."""
        stored = await self.for_user(user_id).remember(content, mode="fact")
        return f"remembered [{stored['stored'][0]['id']}]"

    async def forget(self, user_id: str | None, memory_id: str) -> str:
        """Forget one of the user's memories (archived: out of recall, kept in the audit log)."""
        try:
            done = await self.for_user(user_id).forget(fact_id=memory_id)
        except (FactNotFoundError, ScopeRefusedError):  # another user's fact does not exist here
            return f"no memory {memory_id!r}"
        return f"forgot {done['count']} record(s)"
