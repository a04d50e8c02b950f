"""``ctx.add([...messages...])``: a chat turned into memory through the bridge, in one call.

Why: a user with a chat history in hand (``[{"role": "user", "content": ...}, ...]``, the shape
every chat API and mem0's ``add`` take) should not have to build a :class:`MemoryBridge` to store
it. The engine passes such a list to a bridge as one conversation: each message kept verbatim,
the facts read from it and reconciled with what the memory holds (a move supersedes the old
home). The call returns when everything is stored, so it needs no write-ahead journal. This
module reads the call's input and picks out what it wrote; the engine runs the bridge.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sagewai.core._conversation import ChatMessage, Conversation
from sagewai.core._records import Fact, FactKind, new_id
from sagewai.errors import InvalidInputError

__all__ = ["MESSAGE_FIELDS", "chat_of", "is_message_list", "written_in"]

MESSAGE_FIELDS = frozenset({"user_id", "session_id", "tags", "metadata"})
"""The fields ``add`` takes with a list of messages (who spoke, in which session, labels)."""


def is_message_list(content: object) -> bool:
    """True when ``content`` is a list of chat messages (``ChatMessage`` or role/content maps)."""
    return (
        isinstance(content, Sequence)
        and not isinstance(content, str | bytes)
        and all(isinstance(item, ChatMessage | Mapping) for item in content)
    )


def chat_of(
    messages: Sequence[ChatMessage | Mapping[str, Any]], fields: Mapping[str, Any]
) -> Conversation:
    """The conversation ``add(messages, **fields)`` stores (a new session unless one is named).

    Raises:
        InvalidInputError: no messages, a malformed message, or a field a conversation does not
            take (only ``user_id``, ``session_id``, ``tags`` and ``metadata``).
    """
    unknown = sorted(set(fields) - MESSAGE_FIELDS)
    if unknown:
        raise InvalidInputError(
            f"add() with a list of messages takes only {', '.join(sorted(MESSAGE_FIELDS))}; "
            f"got {', '.join(unknown)} (store single facts with add(text, ...))"
        )
    if not messages:
        raise InvalidInputError("add() got an empty list of messages")
    return Conversation.of(
        messages,
        session_id=fields.get("session_id") or new_id(),
        user_id=fields.get("user_id"),
        metadata=dict(fields.get("metadata") or {}),
    )


def written_in(records: Iterable[Fact], session_id: str) -> list[Fact]:
    """The records of ``session_id`` among ``records`` (what a bridged chat wrote), oldest
    first."""
    return sorted(
        (fact for fact in records if any(s.session_id == session_id for s in fact.sources)),
        key=_said_order,
    )


def _said_order(fact: Fact) -> tuple[object, ...]:
    """Conversation order: when stored, the turn, a message before the facts read from it."""
    turn = min((s.turn_index for s in fact.sources if s.turn_index is not None), default=-1)
    return (fact.created_at, turn, fact.kind is not FactKind.MESSAGE, fact.id)
