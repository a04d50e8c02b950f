"""``SagewaiMemory``: AutoGen AgentChat's ``Memory`` protocol over a sagewai ``ContextEngine``.

An ``AssistantAgent(..., memory=[SagewaiMemory(engine, user_id=...)])`` asks its memories to
update the model context before every model call: this one searches sagewai for the latest user
message at the user's scope and adds what it finds as one system message. ``add`` stores a
memory for the user (a fact, or through a :class:`~sagewai.context.MemoryBridge`, which learns
typed facts from it); ``query`` is the same search; ``clear`` forgets what this memory stored.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from autogen_core import CancellationToken
from autogen_core.memory import (
    Memory,
    MemoryContent,
    MemoryMimeType,
    MemoryQueryResult,
    UpdateContextResult,
)
from autogen_core.model_context import ChatCompletionContext
from autogen_core.models import SystemMessage, UserMessage

from sagewai.core import new_id, validate_identifier
from sagewai.core._records import SearchResult
from sagewai.errors import InvalidInputError

if TYPE_CHECKING:
    from sagewai.context import MemoryBridge
    from sagewai.context._engine import ContextEngine

__all__ = ["SagewaiMemory"]

_MAX_QUERY = 4_000
HEADER = "What you remember about this user (most relevant first):"


class SagewaiMemory(Memory):
    """Long-term memory of one user for AutoGen agents, kept in sagewai.

    Args:
        engine: The project's engine.
        user_id: Whose memory this is (one ``SagewaiMemory`` per user; ``None``: the project's).
        name: This memory's name; what it stores is tagged with it, so ``clear`` removes only that.
        bridge: Learn from added text through this bridge instead of storing it as one fact.
        top_k: How many memories a context update or query brings.

    Example:
        >>> import asyncio
        >>> from sagewai import ContextEngine
        >>> from sagewai.testing import FakeEmbedder
        >>> async def demo() -> list[str]:
        ...     memory = SagewaiMemory(ContextEngine.in_memory(embedder=FakeEmbedder()),
        ...                            user_id="maya")
        ...     await memory.add(MemoryContent(content="Maya takes her tea black",
        ...                                    mime_type=MemoryMimeType.TEXT))
        ...     return [m.content for m in (await memory.query("tea")).results]
        >>> asyncio.run(demo())
        ['Maya takes her tea black']
    """

    component_type = "memory"

    def __init__(
        self,
        engine: ContextEngine,
        *,
        user_id: str | None = None,
        name: str = "sagewai",
        bridge: MemoryBridge | None = None,
        top_k: int = 5,
    ) -> None:
        self.engine = engine
        self.user_id = None if user_id is None else validate_identifier(user_id, "user_id")
        self.name = validate_identifier(name, "name")
        self.bridge = bridge
        self.top_k = top_k
        owner = json.dumps([engine.project_id, self.user_id, self.name])
        self.tag = "autogen:memory:" + hashlib.sha256(owner.encode()).hexdigest()[:32]

    async def _search(self, query: str) -> list[SearchResult]:
        if not query.strip():
            return []
        return await self.engine.search(query[:_MAX_QUERY], self.top_k, user_id=self.user_id)

    async def update_context(self, model_context: ChatCompletionContext) -> UpdateContextResult:
        """Add the memories relevant to the latest user message to the model context."""
        messages = await model_context.get_messages()
        query = next(
            (
                m.content
                for m in reversed(messages)
                if isinstance(m, UserMessage) and isinstance(m.content, str)
            ),
            "",
        )
        results = await self._search(query)
        if results:
            lines = "\n".join(f"- {r.fact.content}" for r in results)
            await model_context.add_message(SystemMessage(content=f"{HEADER}\n{lines}"))
        return UpdateContextResult(memories=_as_result(results))

    async def query(
        self,
        query: str | MemoryContent,
        cancellation_token: CancellationToken | None = None,
        **kwargs: Any,
    ) -> MemoryQueryResult:
        """The user's memories (and the project's) relevant to ``query``, best first."""
        text = query if isinstance(query, str) else _text_of(query)
        return _as_result(await self._search(text))

    async def add(
        self, content: MemoryContent, cancellation_token: CancellationToken | None = None
    ) -> None:
        """Remember ``content`` (text, markdown or JSON) for this memory's user.

        Raises:
            InvalidInputError: images and bytes (sagewai remembers text), or empty text.
        """
        text = _text_of(content)
        if not text.strip():
            raise InvalidInputError("a memory must hold some text")
        if self.bridge is not None:
            await self.bridge.process_message(
                text, tags=[self.tag], session_id=None, user_id=self.user_id
            )
            return
        metadata = json.loads(json.dumps(content.metadata or {}, default=str))
        await self.engine.add(
            text,
            user_id=self.user_id,
            tags=[self.tag],
            metadata={"autogen": metadata},
            fact_id=new_id(),  # this memory's own record, even of a text another one holds
        )

    async def clear(self) -> None:
        """Forget everything this memory stored (audited deletes; other memories untouched)."""
        found = await self.engine.get_all(user_id=self.user_id, tags=[self.tag], statuses=None)
        for fact in found:
            if fact.user_id == self.user_id and self.tag in fact.tags:
                await self.engine.delete(fact.id, reason="autogen memory cleared")

    async def close(self) -> None:
        """Nothing to release: the engine belongs to the caller, who closes it."""


def _text_of(content: MemoryContent) -> str:
    value = content.content
    mime = content.mime_type
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and mime in (MemoryMimeType.JSON, MemoryMimeType.JSON.value):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    raise InvalidInputError(f"sagewai remembers text, markdown or JSON, not {mime!r}")


def _as_result(results: list[SearchResult]) -> MemoryQueryResult:
    return MemoryQueryResult(
        results=[
            MemoryContent(
                content=r.fact.content,
                mime_type=MemoryMimeType.TEXT,
                metadata={
                    "id": r.fact.id,
                    "score": round(r.score, 4),
                    "scope": r.fact.scope.value,
                    "user_id": r.fact.user_id,
                },
            )
            for r in results
        ]
    )
