"""The episode record and the filter every episode backend answers."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from sagewai.core._conversation import ChatMessage
from sagewai.core._records import new_id, utcnow
from sagewai.core._scope import validate_identifier

__all__ = [
    "Episode",
    "EpisodeFilter",
    "EpisodeRedaction",
    "episode_text",
    "json_mentions",
    "mentions",
    "message_mentions",
    "subject_pattern",
]


class Episode(BaseModel):
    """A whole session kept as it happened, with a summary to find it by.

    Facts are the distilled knowledge of a conversation; an episode keeps the conversation itself,
    so an agent can recall *how* something was discussed, not only *what* was concluded.

    Example:
        >>> from sagewai.core import ChatMessage
        >>> episode = Episode(session_id="s1", summary="Alice likes tea.",
        ...                   messages=(ChatMessage(role="user", content="I like tea"),))
        >>> episode.messages[0].content
        'I like tea'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(default_factory=new_id)
    session_id: str
    messages: tuple[ChatMessage, ...]
    summary: str
    created_at: datetime = Field(default_factory=utcnow)
    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    project_id: str | None = None
    user_id: str | None = None
    score: float | None = None
    """Set on search results: the fused relevance score (higher is better)."""


@dataclass(frozen=True, slots=True)
class EpisodeFilter:
    """Which episodes an operation may see; ``None`` means "no restriction" on that field."""

    project_id: str | None = None
    session_id: str | None = None
    user_id: str | None = None

    def __post_init__(self) -> None:
        for name in ("project_id", "session_id", "user_id"):
            value = getattr(self, name)
            if value is not None:
                validate_identifier(value, name)

    def matches(self, episode: Episode) -> bool:
        """The reference semantics every backend's filtering agrees with."""
        return (
            (self.project_id is None or episode.project_id == self.project_id)
            and (self.session_id is None or episode.session_id == self.session_id)
            and (self.user_id is None or episode.user_id == self.user_id)
        )


def episode_text(episode: Episode) -> str:
    """The text an episode is found by with keywords: summary, every line, string metadata."""
    return "\n".join(
        [
            episode.summary,
            *(message.line() for message in episode.messages),
            *(m.name for m in episode.messages if m.name and m.speaker),
            *(v for v in episode.metadata.values() if isinstance(v, str)),
        ]
    )


def subject_pattern(subject: str) -> re.Pattern[str] | None:
    """A case-insensitive whole-words pattern for ``subject`` (``None`` when it has no word)."""
    words = subject.split()
    if not words:
        return None
    return re.compile(
        r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)", re.IGNORECASE
    )


@dataclass(frozen=True, slots=True)
class EpisodeRedaction:
    """What forgetting a subject did to the episodes (or would do, in a dry run)."""

    episodes_redacted: int = 0
    """Episodes kept, rewritten without the messages (and metadata) naming the subject."""
    episodes_deleted: int = 0
    """Episodes deleted: every message of them named the subject."""
    messages_removed: int = 0
    """Messages (turns) removed from those episodes."""

    @property
    def episodes_touched(self) -> int:
        """Episodes redacted or deleted."""
        return self.episodes_redacted + self.episodes_deleted


def json_mentions(value: object, pattern: re.Pattern[str]) -> bool:
    """True when ``pattern`` matches a string anywhere in a JSON-like value (keys included)."""
    if isinstance(value, str):
        return pattern.search(value) is not None
    if isinstance(value, dict):
        return any(json_mentions(k, pattern) or json_mentions(v, pattern) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(json_mentions(item, pattern) for item in value)
    return False


def message_mentions(message: ChatMessage, pattern: re.Pattern[str]) -> bool:
    """True when the message's text, speaker, name or metadata matches ``pattern``."""
    return any(
        pattern.search(text) for text in (message.content, message.name, message.speaker) if text
    ) or json_mentions(message.metadata, pattern)


def mentions(episode: Episode, pattern: re.Pattern[str]) -> bool:
    """True when ``pattern`` (see :func:`subject_pattern`) matches anywhere in the episode.

    Speakers, names, message text, the summary and string metadata values are all read: forgetting
    a subject must not leave it behind anywhere in the episode.
    """
    if pattern.search(episode.summary):
        return True
    if any(message_mentions(message, pattern) for message in episode.messages):
        return True
    return json_mentions(episode.metadata, pattern)
