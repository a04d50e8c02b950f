"""Conversation records: what the bridge and the episode stores read.

Agents hand sagewai messages in many shapes: OpenAI-style dicts (``{"role": "user", "content":
"..."}``, with ``content`` possibly a list of parts), plain strings, or our own records. They are
normalised here once, into a :class:`ChatMessage`, so every consumer reads one validated shape
and the provenance fields sagewai needs (message id, speaker, timestamp) have one name each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, field_validator

from sagewai.core._scope import validate_identifier
from sagewai.core._text import clean_json, clean_text
from sagewai.errors import InvalidInputError

__all__ = ["MAX_MESSAGE_CHARS", "ChatMessage", "Conversation", "MessageLike"]

MAX_MESSAGE_CHARS = 10_000_000
"""Longest accepted message text; longer input is refused rather than silently truncated."""

_ROLE_ALIASES = {"human": "user", "ai": "assistant", "bot": "assistant", "model": "assistant"}


def _content_text(content: Any) -> Any:
    """OpenAI content: a string, or a list of parts of which the text parts are kept."""
    if isinstance(content, list):
        texts: list[str] = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                texts.append(part["text"])
        return "\n".join(texts)
    return content


class ChatMessage(BaseModel):
    """One turn of a conversation.

    Accepts the fields of an OpenAI chat message (``role``, ``content``, ``name``) plus the
    optional ``id``, ``timestamp`` and ``speaker`` that make provenance precise. Unknown keys of
    an OpenAI dict (``tool_calls``, ...) are ignored.

    Example:
        >>> message = ChatMessage.coerce({"role": "user", "content": "I moved to Lisbon",
        ...                               "name": "alice", "id": "m1"})
        >>> (message.role, message.speaker_name, message.id)
        ('user', 'alice', 'm1')
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    role: str = "user"
    content: str
    name: str | None = None
    id: str | None = None
    """The message's own id (for LoCoMo, the dialogue id such as ``D1:3``)."""
    timestamp: datetime | None = None
    """When the message was said (a naive time is read as UTC); facts extracted from it are
    valid from this time."""
    speaker: str | None = None
    """Who said it, when it is not the ``name``."""
    metadata: dict[str, JsonValue] = Field(default_factory=dict)

    @field_validator("role", mode="before")
    @classmethod
    def _role(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = clean_text(value).strip().lower()
            return _ROLE_ALIASES.get(value, value)
        return value

    @field_validator("metadata", mode="before")
    @classmethod
    def _metadata(cls, value: Any) -> Any:
        return clean_json(value, "message metadata") if isinstance(value, Mapping) else value

    @field_validator("role")
    @classmethod
    def _role_not_empty(cls, value: str) -> str:
        if not value:
            raise ValueError("role must not be empty")
        return value

    @field_validator("content", mode="before")
    @classmethod
    def _content_parts(cls, value: Any) -> Any:
        return _content_text(value)

    @field_validator("content")
    @classmethod
    def _content(cls, value: str) -> str:
        value = clean_text(value)  # lone surrogates become U+FFFD before anything keeps them
        if len(value) > MAX_MESSAGE_CHARS:
            raise ValueError(f"content is longer than {MAX_MESSAGE_CHARS} characters")
        if "\x00" in value:
            raise ValueError("content must not contain NUL characters")
        return value

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        try:
            aware = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
            aware.timestamp()
        except OverflowError as exc:
            raise ValueError(f"timestamp {value!r} is outside the range of times") from exc
        return aware

    @field_validator("id", "name", "speaker")
    @classmethod
    def _identifier(cls, value: str | None) -> str | None:
        return None if value is None else validate_identifier(value, "message id/name/speaker")

    @property
    def speaker_name(self) -> str | None:
        """Who said the message: ``speaker``, else ``name``."""
        return self.speaker or self.name

    @property
    def is_empty(self) -> bool:
        """True when the message holds no text worth reading."""
        return not self.content.strip()

    @classmethod
    def coerce(cls, value: MessageLike, *, role: str | None = None) -> ChatMessage:
        """Normalise a message given as a record, an OpenAI-style dict or a plain string.

        Args:
            value: The message.
            role: The role of a plain string (default ``"user"``); for a dict or record it only
                fills a missing role.

        Raises:
            InvalidInputError: the message is malformed (no content, wrong types, NUL bytes).
        """
        if isinstance(value, ChatMessage):
            return value
        if isinstance(value, str):
            data: dict[str, Any] = {"role": role or "user", "content": value}
        elif isinstance(value, Mapping):
            data = dict(value)
            if role is not None and not data.get("role"):
                data["role"] = role
            if data.get("content") is None:
                raise InvalidInputError("a chat message needs text content")
        else:
            raise InvalidInputError(
                f"a chat message must be a ChatMessage, a mapping or a string, "
                f"not {type(value).__name__}"
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise InvalidInputError(f"invalid chat message: {exc}") from exc

    def line(self) -> str:
        """``"speaker: content"``, the form the extractors and summaries read."""
        who = self.speaker_name or self.role
        return f"{who}: {self.content}"


MessageLike = ChatMessage | Mapping[str, Any] | str
"""Anything :meth:`ChatMessage.coerce` accepts."""


class Conversation(BaseModel):
    """A sequence of messages of one session, with who it belongs to.

    Example:
        >>> conversation = Conversation.of(
        ...     [{"role": "user", "content": "I prefer tea"},
        ...      {"role": "assistant", "content": "Noted"}],
        ...     session_id="s1",
        ... )
        >>> len(conversation.messages)
        2
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: tuple[ChatMessage, ...]
    session_id: str | None = None
    user_id: str | None = None
    metadata: dict[str, JsonValue] = Field(default_factory=dict)

    @field_validator("session_id", "user_id")
    @classmethod
    def _identifier(cls, value: str | None) -> str | None:
        return None if value is None else validate_identifier(value, "session_id/user_id")

    @classmethod
    def of(
        cls,
        messages: Iterable[MessageLike],
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        metadata: Mapping[str, JsonValue] | None = None,
    ) -> Self:
        """Build a conversation from messages in any accepted shape.

        Raises:
            InvalidInputError: a message or an identifier is malformed.
        """
        coerced = tuple(ChatMessage.coerce(message) for message in messages)
        try:
            return cls(
                messages=coerced,
                session_id=session_id,
                user_id=user_id,
                metadata=dict(metadata or {}),
            )
        except ValidationError as exc:
            raise InvalidInputError(f"invalid conversation: {exc}") from exc

    @classmethod
    def coerce(cls, value: Conversation | Sequence[MessageLike]) -> Conversation:
        """A conversation as given, or built from a list of messages."""
        if isinstance(value, Conversation):
            return value
        if isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise InvalidInputError("a conversation must be a Conversation or a list of messages")
        return cls.of(value)
