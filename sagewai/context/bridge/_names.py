"""The name each user gave ("My name is Dana"), remembered in the store for later turns.

Facts about the user read "Dana (the user) leads the platform team" once the name is known: in
the message that gives it (the rules read it there), and in every later message of the same user,
in this process or a later one. The name lives in the project's state (``get_state`` /
``set_state``) beside the id of the message that gave it; when that message is forgotten, the
name is forgotten with it (checked when the name is read back, which also erases it from the
state).
"""

from __future__ import annotations

from collections.abc import Iterable

from sagewai.context.bridge._turns import BridgeTurn
from sagewai.core._ids import message_record_id
from sagewai.core._port import MemoryPort
from sagewai.core._profile import user_name_key
from sagewai.extraction._perspective import stated_name

__all__ = ["UserNames", "user_name_key"]

_key = user_name_key


def _speaks_as_user(turn: BridgeTurn) -> bool:
    """A user's turn without a speaker name: its first person is "the user"."""
    return turn.message.role == "user" and not turn.message.speaker_name


class UserNames:
    """The names users gave, per user of one project (read once from the store, then cached)."""

    def __init__(self, port: MemoryPort) -> None:
        self.port = port
        self._names: dict[str | None, str | None] = {}
        self._changed: dict[str | None, tuple[str, str]] = {}

    def get(self, user_id: str | None) -> str | None:
        """The name of ``user_id`` (``None``: the default user) when known."""
        return self._names.get(user_id)

    async def load(self, turns: Iterable[BridgeTurn]) -> None:
        """Read the names of these turns' users from the store (once per user; a name known
        is checked again each time, so one a ``forget`` erased is not used again)."""
        for user_id in {t.user_id for t in turns if _speaks_as_user(t)}:
            known = self._names.get(user_id)
            if known is not None and user_id not in self._changed:
                saved = await self.port.get_state(_key(user_id))
                if not (isinstance(saved, dict) and saved.get("name") == known):
                    self._names.pop(user_id)
            if user_id in self._names:
                continue
            saved = await self.port.get_state(_key(user_id))
            name: str | None = None
            if isinstance(saved, dict):
                said_in, value = saved.get("message"), saved.get("name")
                if isinstance(said_in, str) and isinstance(value, str):
                    # the message that gave the name must still be stored (it may be forgotten)
                    name = value if await self.port.get_many([said_in]) else None
                    if name is None:  # forgotten: the name leaves the store too
                        await self.port.set_state(_key(user_id), None)
            self._names[user_id] = name

    def read(self, turn: BridgeTurn) -> str | None:
        """Note a name ``turn`` gives; return the user's name for this turn."""
        if not _speaks_as_user(turn):
            return None
        named = stated_name(turn.message.content)
        if named is not None and named != self._names.get(turn.user_id):
            self._names[turn.user_id] = named
            record = message_record_id(self.port.project_id, turn.session_id, turn.message_id)
            self._changed[turn.user_id] = (named, record)
        return self._names.get(turn.user_id)

    async def save(self) -> None:
        """Store the names given since the last save (after the messages are committed)."""
        changed, self._changed = self._changed, {}
        for user_id, (name, record) in changed.items():
            await self.port.set_state(_key(user_id), {"name": name, "message": record})
