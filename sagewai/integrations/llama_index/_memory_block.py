"""``SagewaiMemoryBlock``: a long-term memory block of LlamaIndex's ``Memory``, kept in sagewai.

LlamaIndex's ``Memory`` holds the recent chat itself and asks each memory block for what else
belongs in the prompt (``aget``) and hands it the messages that age out of the short-term window
(``aput``). This block answers ``aget`` with sagewai's hybrid search for the latest user message,
at the user's scope, and keeps what ``aput`` hands it: verbatim at the user's scope, or through a
:class:`~sagewai.context.MemoryBridge` (which learns typed facts from it too).
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock
from llama_index.core.bridge.pydantic import Field
from llama_index.core.memory.memory import BaseMemoryBlock
from pydantic import SkipValidation

from sagewai.core import validate_identifier
from sagewai.core._records import FactKind

__all__ = ["SagewaiMemoryBlock", "message_text"]

_MAX_QUERY = 4_000


def message_text(message: ChatMessage) -> str:
    """The text of a LlamaIndex chat message (its text blocks joined)."""
    return " ".join(b.text for b in message.blocks if isinstance(b, TextBlock)).strip()


class SagewaiMemoryBlock(BaseMemoryBlock[str]):
    """Long-term memory of one user, recalled from and written to sagewai.

    Args:
        engine: The project's :class:`~sagewai.ContextEngine`.
        user_id: Whose memory this block reads and writes (one block per user). A call of
            ``memory.aget(user_id=...)`` names the user for that read instead.
        bridge: Learn from the messages handed over through this bridge; without one they are
            kept verbatim (as ``message`` records of the user).
        top_k: How many memories a read returns.
        name: The block's name in the prompt (``<SagewaiMemory>...``).

    Example:
        >>> import asyncio
        >>> from sagewai import ContextEngine
        >>> from sagewai.testing import FakeEmbedder
        >>> async def demo() -> str:
        ...     engine = ContextEngine.in_memory(embedder=FakeEmbedder())
        ...     block = SagewaiMemoryBlock(engine=engine, user_id="maya")
        ...     await block.aput([ChatMessage(role="user", content="Maya keeps bees")])
        ...     return await block.aget([ChatMessage(role="user", content="bees")])
        >>> print(asyncio.run(demo()))
        - Maya keeps bees
    """

    name: str = Field(default="SagewaiMemory", description="The block's name in the prompt.")
    engine: SkipValidation[Any] = Field(description="The project's ContextEngine.")
    user_id: str | None = Field(default=None, description="Whose memory this block holds.")
    bridge: SkipValidation[Any] = Field(default=None, description="A MemoryBridge to learn with.")
    top_k: int = Field(default=5, ge=1, le=100, description="Memories per read.")

    async def _aget(
        self,
        messages: list[ChatMessage] | None = None,
        session_id: str | None = None,
        **block_kwargs: Any,
    ) -> str:
        query = next(
            (message_text(m) for m in reversed(messages or []) if m.role == MessageRole.USER),
            "",
        )
        if not query:
            return ""
        user_id = block_kwargs.get("user_id", self.user_id)
        results = await self.engine.search(
            query[:_MAX_QUERY],
            top_k=self.top_k,
            user_id=None if user_id is None else validate_identifier(str(user_id), "user_id"),
        )
        return "\n".join(f"- {r.fact.content}" for r in results)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        said = [
            (m, message_text(m))
            for m in messages
            if m.role in (MessageRole.USER, MessageRole.ASSISTANT) and message_text(m)
        ]
        if not said:
            return
        if self.bridge is not None:
            for message, text in said:
                await self.bridge.process_message(
                    {"role": message.role.value, "content": text},
                    session_id=message.additional_kwargs.get("session_id"),
                    user_id=self.user_id,
                )
            return
        await self.engine.add_many(
            [
                {
                    "content": text,
                    "kind": FactKind.MESSAGE,
                    "user_id": self.user_id,
                    "session_id": message.additional_kwargs.get("session_id"),
                    "metadata": {"role": message.role.value},
                }
                for message, text in said
            ],
            actor="llama-index",
        )
