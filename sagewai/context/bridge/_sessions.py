"""Sessions: what the bridge keeps per conversation, and how a message becomes a numbered turn.

Per session: the turns before the current one (the extractors' context and the context record's
"what it answers"), the next turn index, the recorded turns waiting for the deferred extraction
stage (the buffer), the facts the agent was shown (an assistant restating one is an echo), and
the two locks that keep a session's turns in order. At most ``MAX_SESSIONS`` are kept; idle ones
are dropped first (what they held is stored, so nothing is lost, only the in-memory context).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sagewai.context.bridge._turns import MAX_SESSIONS, BridgeTurn, PendingTurn
from sagewai.core._arguments import string_list
from sagewai.core._conversation import ChatMessage, MessageLike
from sagewai.core._records import Fact, new_id, utcnow
from sagewai.core._scope import validate_identifier

if TYPE_CHECKING:
    from sagewai.context.bridge._settings import BridgeSettings

__all__ = ["SessionState", "Sessions", "StoredTurn"]

Said = tuple[str, str, str | None]
"""A turn as the context keeps it: role, text, speaker."""


@dataclass(slots=True)
class SessionState:
    """One conversation's state in the bridge (see the module)."""

    buffer: list[PendingTurn] = field(default_factory=list)
    history: deque[Said] = field(default_factory=lambda: deque(maxlen=32))
    next_turn: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while a batch of the session is extracted."""
    record_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while turns of the session are recorded (they enter the history in order)."""
    last_seen: float = field(default_factory=time.monotonic)
    user_speaker: str | None = None
    last_record: str | None = None
    """The verbatim record id of the session's last message (a context record carries its end
    only while that record is stored: a forgotten message lends its words to nothing)."""
    recalled: deque[str] = field(default_factory=lambda: deque(maxlen=200))
    resumed: bool = False
    """Whether what the store holds of the session was read in (see :meth:`resume`)."""

    def resume(self, stored: Sequence[StoredTurn]) -> None:
        """Continue from a session's stored turns: a restarted bridge builds what a running
        one would have (its history, the next turn's index, the last record, the user's name).

        ``stored`` are the session's earlier turns in order, as the store holds them.
        """
        self.resumed = True
        if not stored:
            return
        self.next_turn = max(self.next_turn, max(t.turn_index for t in stored) + 1)
        if not self.history:
            self.history.extend((t.role, t.content, t.speaker) for t in stored)
            self.last_record = stored[-1].record_id
        if self.user_speaker is None:
            self.user_speaker = next(
                (t.speaker for t in reversed(stored) if t.role == "user" and t.speaker), None
            )


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """A turn as its verbatim record holds it (parts joined): what a resumed session reads."""

    turn_index: int
    role: str
    content: str
    speaker: str | None
    record_id: str
    """The id of its verbatim record (of its first part)."""


class Sessions:
    """The bridge's conversations, and the intake of a message into a turn of one of them.

    Args:
        settings: The bridge's settings (its default user and its batch size).
    """

    def __init__(self, settings: BridgeSettings) -> None:
        self._settings = settings
        self._states: dict[str, SessionState] = {}
        self.default_session_id = new_id()
        """The session of messages given without a ``session_id``."""
        self._instance = new_id()
        self._minted = 0

    def __getitem__(self, session_id: str) -> SessionState:
        """The state of a session, made on first use."""
        state = self._states.get(session_id)
        if state is None:
            if len(self._states) >= MAX_SESSIONS:
                self._forget_idle()
            state = self._states[session_id] = SessionState()
        return state

    def get(self, session_id: str) -> SessionState | None:
        """The state of a known session, or ``None``."""
        return self._states.get(session_id)

    def with_waiting_turns(self) -> list[str]:
        """The sessions whose buffer holds turns for the deferred stage."""
        return [sid for sid, state in self._states.items() if state.buffer]

    def idle(self, seconds: float) -> list[str]:
        """Sessions with waiting turns and no new turn for ``seconds``."""
        now = time.monotonic()
        return [
            sid
            for sid, state in self._states.items()
            if state.buffer and now - state.last_seen >= seconds
        ]

    def _forget_idle(self) -> None:
        idle = [sid for sid, s in self._states.items() if not s.buffer and not s.lock.locked()]
        idle.sort(key=lambda sid: self._states[sid].last_seen)
        for sid in idle[: len(idle) // 2 or len(idle)]:
            del self._states[sid]

    # ------------------------------------------------------------------ intake

    def turn(
        self,
        message: MessageLike,
        *,
        role: str | None,
        session_id: str | None,
        user_id: str | None,
        tags: Sequence[str] | None,
        turn_index: int | None = None,
        message_id: str | None = None,
    ) -> BridgeTurn:
        """The accepted form of a message: validated, in its session, numbered, with an id.

        Raises:
            InvalidInputError: a malformed message or identifier.
        """
        chat = ChatMessage.coerce(message, role=role)
        session_id = session_id or self.default_session_id
        if not isinstance(session_id, str) or session_id not in self._states:
            validate_identifier(session_id, "session_id")  # known sessions were checked once
        user_id = user_id if user_id is not None else self._settings.user_id
        if user_id is not None:
            validate_identifier(user_id, "user_id")
        tags = string_list(tags, "tags")
        for tag in tags or ():
            validate_identifier(tag, "tag")
        state = self[session_id]
        if turn_index is None:
            turn_index = state.next_turn
        state.next_turn = max(state.next_turn, turn_index + 1)
        if message_id is None and chat.id is None:
            self._minted += 1
            message_id = f"{self._instance}-{self._minted}"
        # Every field is validated above; skipping a second validation keeps ``submit`` fast.
        return BridgeTurn.model_construct(
            message=chat,
            session_id=session_id,
            user_id=user_id,
            message_id=message_id or chat.id,
            turn_index=turn_index,
            received_at=utcnow(),
            tags=tuple(tags or ()),
        )

    def note_recalled(self, session_id: str, facts: Sequence[Fact | str]) -> None:
        """Remember which facts the agent was shown in a session (see the bridge's method)."""
        state = self[validate_identifier(session_id, "session_id")]
        state.recalled.extend(f.id if isinstance(f, Fact) else f for f in facts)

    # ------------------------------------------------------------------ the deferred stage's buffer

    def buffer(self, recorded: Sequence[PendingTurn]) -> tuple[list[PendingTurn], list[str]]:
        """Put the recorded turns the deferred stage must read in their sessions' buffers.

        Returns the turns that are done (no deferred stage) and the sessions whose buffer now
        holds ``extract_every_n_turns`` turns.
        """
        done = [p for p in recorded if not p.deferred]
        full: list[str] = []
        for pending in recorded:
            if pending.deferred:
                state = self[pending.turn.session_id]
                state.buffer.append(pending)
                state.last_seen = time.monotonic()
                if len(state.buffer) >= self._settings.extract_every_n_turns:
                    full.append(pending.turn.session_id)
        return done, list(dict.fromkeys(full))

    def take(self, session_id: str) -> list[PendingTurn]:
        """Empty a session's buffer and return what it held."""
        state = self[session_id]
        batch, state.buffer = state.buffer, []
        return batch
