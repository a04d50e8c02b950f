"""The deterministic ids of the records drawn from a conversation.

A message's verbatim record, its context record and the facts read from it have ids computed
from the project, the session and the message (uuid5): replaying a message writes the same ids
(an upsert, never a duplicate), and a reader finds a fact's message, or a message's records,
without a lookup. Pure functions, in the core because the bridge that writes these records and
the engine and consolidation that mark them both need them.
"""

from __future__ import annotations

import uuid

__all__ = [
    "FACT_NAMESPACE",
    "MESSAGE_NAMESPACE",
    "STATEMENT_NAMESPACE",
    "context_record_id",
    "fact_id_for",
    "message_record_id",
    "statement_id",
]

FACT_NAMESPACE = uuid.UUID("6f1c1f4e-8a43-5b0e-9d52-2f0f3c1d7a10")
MESSAGE_NAMESPACE = uuid.UUID("3a7e9c14-52d8-5b6f-8e01-9d4c2b7f6a53")
STATEMENT_NAMESPACE = uuid.UUID("9b2d4e61-7c3a-5f08-a1d9-4e6b8c2f0a37")


def fact_id_for(project_id: str, session_id: str, message_id: str, index: int) -> str:
    """The deterministic id of the ``index``-th fact extracted from one message.

    Replaying a message gives the same ids, so a replay upserts instead of duplicating.

    Example:
        >>> fact_id_for("p", "s1", "m1", 0) == fact_id_for("p", "s1", "m1", 0)
        True
    """
    name = "\x1f".join((project_id, session_id, message_id, str(index)))
    return str(uuid.uuid5(FACT_NAMESPACE, name))


def message_record_id(project_id: str, session_id: str, message_id: str, part: int = 0) -> str:
    """The deterministic id of the verbatim record of one message (``part`` of a long one).

    The facts drawn from the message carry the same ``session_id`` and
    ``sources[0].message_id``, so a reader finds a fact's message with this id.

    Example:
        >>> message_record_id("p", "s1", "m1") == message_record_id("p", "s1", "m1")
        True
    """
    name = "\x1f".join((project_id, session_id, message_id, str(part)))
    return str(uuid.uuid5(MESSAGE_NAMESPACE, name))


def context_record_id(project_id: str, session_id: str, message_id: str) -> str:
    """The deterministic id of a message's context record (the message with the turn before).

    Example:
        >>> context_record_id("p", "s1", "m1") != message_record_id("p", "s1", "m1")
        True
    """
    name = "\x1f".join((project_id, session_id, message_id, "context"))
    return str(uuid.uuid5(MESSAGE_NAMESPACE, name))


def statement_id(project_id: str, parts: tuple[str, ...]) -> str:
    """The id a record added without one gets: the same statement, stored by the same call
    again (same scope, kind, type, triple and text), gets the same id, so adding it twice stores
    it once.

    Example:
        >>> statement_id("p", ("user:p:alice", "Alice likes tea")) == statement_id(
        ...     "p", ("user:p:alice", "Alice likes tea"))
        True
    """
    return str(uuid.uuid5(STATEMENT_NAMESPACE, "\x1f".join((project_id, *parts))))
