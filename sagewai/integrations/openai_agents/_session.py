"""``SagewaiSession``: the OpenAI Agents SDK's ``Session`` protocol over a ``ContextEngine``.

Each conversation item (a user message, an answer, a tool call, a tool result) is one verbatim
``message`` record at the SESSION scope of ``(user_id, session_id)``: searchable in that session,
never read by another user, and never by the user's other sessions (a search reads its scope and
those above, never a sibling). The item itself rides in ``metadata["openai_agents"]`` with its
place in the conversation, so :meth:`get_items` gives back exactly what was added, in order.
With ``bridge=``, the user's messages also go through a :class:`~sagewai.context.MemoryBridge`,
which learns facts from them at the user's scope, for every later session.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from agents.items import TResponseInputItem
from agents.memory import SessionSettings

from sagewai.core import ContextScope, new_id, utcnow, validate_identifier
from sagewai.core._records import Fact, FactKind
from sagewai.errors import InvalidInputError

if TYPE_CHECKING:
    from sagewai.context import MemoryBridge
    from sagewai.context._engine import ContextEngine

__all__ = ["SESSION_ITEM_TAG", "SagewaiSession", "conversation_item_text"]

SESSION_ITEM_TAG = "openai-agents:item"
"""The tag every conversation item of a :class:`SagewaiSession` carries."""
_META = "openai_agents"
_MAX_TEXT = 20_000


def conversation_item_text(item: Mapping[str, Any]) -> str:
    """The searchable text of one conversation item: what was said, or what a tool did.

    Example:
        >>> conversation_item_text({"role": "user", "content": "I live in Oslo"})
        'I live in Oslo'
        >>> conversation_item_text(
        ...     {"type": "function_call", "name": "search_memory", "arguments": '{"q": 1}'}
        ... )
        'search_memory({"q": 1})'
    """
    content = item.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = " ".join(
            str(part.get("text") or part.get("refusal") or "")
            for part in content
            if isinstance(part, Mapping)
        )
    elif item.get("type") == "function_call":
        text = f"{item.get('name')}({item.get('arguments') or ''})"
    elif item.get("type") == "function_call_output":
        text = str(item.get("output") or "")
    else:
        text = ""
    text = text.strip() or f"({item.get('type') or item.get('role') or 'item'})"
    return text[:_MAX_TEXT]


class SagewaiSession:
    """Conversation history of one session of one user, kept in sagewai.

    Implements the SDK's ``Session`` protocol (``get_items``, ``add_items``, ``pop_item``,
    ``clear_session``): pass it as ``Runner.run(agent, text, session=...)``.

    Args:
        session_id: The conversation (the SDK's session id).
        engine: The project's engine.
        user_id: Whose conversation it is; two users' sessions of the same id never meet.
        bridge: Also learn from the user's messages through this bridge (facts at USER scope).
        session_settings: The SDK's settings (``limit`` of items given to the model).

    Example:
        >>> import asyncio
        >>> from sagewai import ContextEngine
        >>> from sagewai.testing import FakeEmbedder
        >>> async def demo() -> list[str]:
        ...     engine = ContextEngine.in_memory(embedder=FakeEmbedder())
        ...     session = SagewaiSession("chat-1", engine, user_id="maya")
        ...     await session.add_items([{"role": "user", "content": "Hi, I'm Maya"}])
        ...     other = SagewaiSession("chat-1", engine, user_id="leo")
        ...     items = await session.get_items() + await other.get_items()
        ...     return [conversation_item_text(i) for i in items]
        >>> asyncio.run(demo())
        ["Hi, I'm Maya"]
    """

    def __init__(
        self,
        session_id: str,
        engine: ContextEngine,
        *,
        user_id: str | None = None,
        bridge: MemoryBridge | None = None,
        session_settings: SessionSettings | None = None,
    ) -> None:
        self.session_id = validate_identifier(session_id, "session_id")
        self.user_id = None if user_id is None else validate_identifier(user_id, "user_id")
        self.engine = engine
        self.bridge = bridge
        self.session_settings = session_settings
        owner = json.dumps([engine.project_id, self.user_id, self.session_id])
        self._tag = "openai-agents:session:" + hashlib.sha256(owner.encode()).hexdigest()[:32]

    # ---------------------------------------------------------------- reading

    async def _records(self) -> list[Fact]:
        """Every item record of this session, in conversation order."""
        found = await self.engine.get_all(
            scope=ContextScope.SESSION,
            user_id=self.user_id,
            session_id=self.session_id,
            tags=[self._tag],
            kinds=[FactKind.MESSAGE],
        )
        mine = [f for f in found if f.session_id == self.session_id and f.user_id == self.user_id]
        return sorted(mine, key=lambda f: (_meta(f).get("position", 0), f.created_at, f.id))

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The conversation so far, oldest first (the latest ``limit`` items when given)."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        records = await self._records()
        if limit is not None:
            if limit < 0:
                raise InvalidInputError("limit must not be negative")
            records = records[-limit:] if limit else []
        return [_meta(record)["item"] for record in records]

    # ---------------------------------------------------------------- writing

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append items to the conversation (one batched write; the bridge learns after)."""
        if not items:
            return
        records = await self._records()
        position = _meta(records[-1]).get("position", 0) + 1 if records else 0
        start = max(utcnow(), records[-1].created_at if records else utcnow())
        rows: list[dict[str, Any]] = []
        for offset, item in enumerate(items):
            value = _json_item(item)
            rows.append(
                {
                    "content": conversation_item_text(value),
                    "fact_id": new_id(),  # a line said twice is two items of the conversation
                    "kind": FactKind.MESSAGE,
                    "scope": ContextScope.SESSION,
                    "user_id": self.user_id,
                    "session_id": self.session_id,
                    "tags": [SESSION_ITEM_TAG, self._tag],
                    "metadata": {_META: {"item": value, "position": position + offset}},
                    # strictly increasing, so the store's own order is the conversation's
                    "created_at": start + timedelta(microseconds=offset + 1),
                }
            )
        await self.engine.add_many(rows, actor="openai-agents")
        if self.bridge is not None:
            for item in items:
                if item.get("role") == "user" and item.get("type", "message") == "message":
                    await self.bridge.process_message(
                        {"role": "user", "content": conversation_item_text(item)},
                        session_id=self.session_id,
                        user_id=self.user_id,
                    )

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove the latest item and return it (``None`` when the session is empty)."""
        records = await self._records()
        if not records:
            return None
        last = records[-1]
        await self.engine.delete(last.id, reason="openai-agents session pop_item")
        item: TResponseInputItem = _meta(last)["item"]
        return item

    async def clear_session(self) -> None:
        """Delete every item of this session (each leaves a content-free audit tombstone)."""
        for record in await self._records():
            await self.engine.delete(record.id, reason="openai-agents session cleared")


def _meta(fact: Fact) -> dict[str, Any]:
    meta = fact.metadata.get(_META)
    return meta if isinstance(meta, dict) else {}


def _json_item(item: Any) -> Any:
    """The item as plain JSON (the SDK hands dicts, sometimes holding pydantic models)."""
    try:
        return json.loads(json.dumps(item, default=_dump, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"a conversation item must be JSON: {exc}") from exc


def _dump(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_unset=True)
    raise TypeError(f"{type(value).__name__} is not JSON")
