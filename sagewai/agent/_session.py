"""The state an agent keeps for one open session: history, transcript and memory references."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from sagewai.agent._history import ConversationHistory, HistoryBlock
from sagewai.core._conversation import ChatMessage
from sagewai.core._records import utcnow

__all__ = ["REMOVED", "AgentSession"]

REMOVED = "[removed: it named something the user asked to forget]"
"""What the history shows instead of a message of this turn that named a forgotten value."""


def _names_any(text: str, patterns: Sequence[re.Pattern[str]]) -> bool:
    return any(pattern.search(text) for pattern in patterns)


@dataclass(slots=True)
class AgentSession:
    """One conversation of one user with the agent, while it is open.

    ``history`` is what the model is shown (windowed); ``transcript`` is every user and assistant
    message of the session (saved as the episode when the session ends). ``refs`` maps the short
    references the model sees (``m1``, ``m2``, ...) to fact ids; a fact keeps its reference for
    the whole session.
    """

    session_id: str
    user_id: str | None
    history: ConversationHistory
    transcript: list[ChatMessage] = field(default_factory=list)
    refs: dict[str, str] = field(default_factory=dict)
    ref_of: dict[str, str] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    turns: int = 0
    ended: bool = False
    """Set by ``end_session``; a turn that waited for the lock starts over on a new session."""

    def ref_for(self, fact_id: str) -> str:
        """The fact's reference in this session (a new one the first time it is shown)."""
        ref = self.ref_of.get(fact_id)
        if ref is None:
            ref = f"m{len(self.refs) + 1}"
            self.refs[ref] = fact_id
            self.ref_of[fact_id] = ref
        return ref

    def resolve(self, reference: str) -> str:
        """The fact id of a reference (``m3``, ``[m3]``) or of a fact id given as is."""
        key = reference.strip().strip("[]").strip()
        return self.refs.get(key, self.refs.get(key.lower(), key))

    def seed(self, messages: Sequence[ChatMessage]) -> None:
        """Resume from a saved episode: its messages become the transcript and the history."""
        self.transcript = list(messages)
        self.history.extend(
            HistoryBlock(({"role": m.role, "content": m.content},), m.id)
            for m in messages
            if m.role in ("user", "assistant") and not m.is_empty
        )

    def redact(self, message_ids: Collection[str], patterns: Sequence[re.Pattern[str]]) -> int:
        """Remove messages (by id, or naming a pattern) from history and transcript.

        Returns:
            How many history blocks were removed.
        """
        self.transcript = [
            m
            for m in self.transcript
            if m.id not in message_ids and not _names_any(m.content, patterns)
        ]
        return self.history.redact(
            lambda block: block.message_id in message_ids or _names_any(block.text(), patterns)
        )

    def record_turn(
        self,
        *,
        text: str,
        text_id: str,
        answer: str,
        answer_id: str,
        exchanges: Sequence[tuple[dict[str, Any], list[dict[str, Any]]]],
        forgotten: Sequence[re.Pattern[str]] = (),
    ) -> None:
        """Add a finished turn to the history (tool exchanges kept whole) and the transcript.

        A message of the turn that names a value forgotten during the turn is replaced by a
        placeholder in the history and left out of the transcript; a tool exchange naming one
        is dropped.
        """
        now = utcnow()

        def hidden(content: str) -> bool:
            return _names_any(content, forgotten)

        blocks = [
            HistoryBlock(({"role": "user", "content": REMOVED if hidden(text) else text},), text_id)
        ]
        for call_message, results in exchanges:
            block = HistoryBlock((call_message, *results))
            if not hidden(block.text()):
                blocks.append(block)
        shown = REMOVED if hidden(answer) else answer
        blocks.append(HistoryBlock(({"role": "assistant", "content": shown},), answer_id))
        self.history.extend(blocks)
        for role, content, message_id in (
            ("user", text, text_id),
            ("assistant", answer, answer_id),
        ):
            if not hidden(content):
                self.transcript.append(
                    ChatMessage(role=role, content=content, id=message_id, timestamp=now)
                )
        self.turns += 1
