"""What an extractor returns and what it is told: ``ExtractedFact``, ``ExtractionContext``.

A :class:`FactExtractor` turns one message into zero or more :class:`ExtractedFact` records.
The record holds what a stored :class:`~sagewai.Fact` needs (content, type, confidence,
subject, the optional predicate/object triple, exact values, negation) plus where it came from in
the message (span, speaker) and when the event it describes happened (``event_time``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, Self, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

from sagewai.core._records import MAX_CONTENT_CHARS, Fact, FactType, Provenance
from sagewai.core._text import clean_text

__all__ = [
    "ExtractedFact",
    "ExtractionContext",
    "FactExtractor",
    "Turn",
]

_ROLES = frozenset({"user", "assistant", "system", "tool"})


class Turn(BaseModel):
    """A previous message of the conversation, given to extractors as context."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: str = "user"
    content: str
    speaker: str | None = None


class ExtractionContext(BaseModel):
    """Who said the message, when, and in which conversation.

    Every field is optional; extractors use what is there. ``speaker`` lets first-person text be
    resolved ("I moved to Berlin" by Alice -> "Alice moved to Berlin"); ``timestamp`` lets
    relative dates be normalised ("yesterday" -> an ISO date); ``role`` tells a user's statement
    from the assistant restating what it remembers.

    Example:
        >>> from datetime import datetime, UTC
        >>> ExtractionContext(speaker="Alice", timestamp=datetime(2024, 3, 13, tzinfo=UTC)).role
        'user'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    speaker: str | None = None
    """The name of who wrote the message; first person resolves to it."""
    role: str = "user"
    """``user``, ``assistant``, ``system`` or ``tool``."""
    session_id: str | None = None
    message_id: str | None = None
    """The message's own id (for LoCoMo, the dialogue id such as ``D1:3``)."""
    timestamp: datetime | None = None
    """When the message was written; relative dates are resolved against it."""
    addressee: str | None = None
    """Who "you" refers to, when known (in an assistant message, the user's name)."""
    user_name: str | None = None
    """The name the user gave ("My name is Dana"), when known: a user's message without a
    ``speaker`` reads "Dana (the user) leads the platform team" (the subject stays "user")."""
    previous_turns: tuple[Turn, ...] = ()
    """Earlier messages, oldest first; LLM extractors show the last few to the model."""

    @field_validator("role")
    @classmethod
    def _role(cls, value: str) -> str:
        role = value.strip().lower()
        if role not in _ROLES:
            raise ValueError(f"role must be one of {sorted(_ROLES)}, got {value!r}")
        return role

    @field_validator("speaker", "addressee", "user_name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is None:
            return None
        name = " ".join(value.split())
        return name[:100] or None

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value


class ExtractedFact(BaseModel):
    """One fact read from a message, ready to be stored.

    Attributes:
        content: A self-contained sentence, first person resolved ("Alice moved to Berlin last
            month (2024-02)"); exact values appear in it verbatim.
        fact_type: What kind of statement it is (a :class:`~sagewai.FactType`).
        confidence: How likely the fact is correct and worth keeping, in ``[0, 1]``; the rule
            extractor's values are calibrated on a labelled set (see ``docs/extraction.md``).
        subject: Who or what the fact is about ("Alice", "Alice's sister", "the staging database").
        metadata: Free JSON; always holds ``negated`` (bool), and extractor-specific details.
        predicate: A name from :mod:`sagewai.core._predicates`, or ``None``.
        object: The triple's object when a predicate is set ("Berlin").
        exact_values: Values kept verbatim (UUIDs, URLs, paths, versions, amounts...).
        source_span: ``(start, end)`` offsets of the source text in the message.
        speaker: Who said it.
        event_time: When the described event happens, ISO 8601 (``2023-05-07``, ``2023-05``,
            ``2023``, or an interval ``2023-05-01/2023-05-07``).
        extractor: Which extractor produced it (``rules``, ``llm``).

    Example:
        >>> fact = ExtractedFact(content="Alice likes green tea", fact_type="preference",
        ...                      confidence=0.8, subject="Alice", predicate="likes",
        ...                      object="green tea")
        >>> fact.negated, fact.triple
        (False, ('Alice', 'likes', 'green tea'))
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str
    fact_type: FactType
    confidence: float = Field(ge=0.0, le=1.0)
    subject: str | None = None
    metadata: dict[str, JsonValue] = Field(default_factory=dict, validate_default=True)
    predicate: str | None = None
    object: str | None = None
    exact_values: tuple[str, ...] = ()
    source_span: tuple[int, int] | None = None
    speaker: str | None = None
    event_time: str | None = None
    extractor: str | None = None

    @field_validator("content")
    @classmethod
    def _content(cls, value: str) -> str:
        text = clean_text(value).strip()  # model output may hold lone surrogates: repaired
        if not text:
            raise ValueError("content must not be empty")
        if len(text) > MAX_CONTENT_CHARS:
            raise ValueError(f"content is longer than {MAX_CONTENT_CHARS} characters")
        if "\x00" in text:
            raise ValueError("content must not contain NUL characters")
        return text

    @field_validator("subject", "object", "predicate", "speaker")
    @classmethod
    def _optional_text(cls, value: str | None) -> str | None:
        if value is None:
            return None
        text = clean_text(value).strip()
        return text or None

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        negated = value.get("negated", False)
        if not isinstance(negated, bool):
            raise ValueError("metadata['negated'] must be a bool")
        return {**value, "negated": negated}

    @field_validator("exact_values")
    @classmethod
    def _values(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(clean_text(item) for item in value if item))

    @field_validator("event_time", "extractor")
    @classmethod
    def _plain_text(cls, value: str | None) -> str | None:
        return None if value is None else clean_text(value)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        missing = [item for item in self.exact_values if item not in self.content]
        if missing:
            raise ValueError(f"exact values must appear verbatim in content: {missing}")
        if self.source_span is not None:
            start, end = self.source_span
            if start < 0 or end < start:
                raise ValueError("source_span must be (start, end) with 0 <= start <= end")
        return self

    @property
    def negated(self) -> bool:
        """True for a negative statement ("does not like tea", "no longer lives in Paris")."""
        return bool(self.metadata.get("negated", False))

    @property
    def triple(self) -> tuple[str, str, str] | None:
        """``(subject, predicate, object)`` when all three are known."""
        if self.subject and self.predicate and self.object:
            return (self.subject, self.predicate, self.object)
        return None

    def to_fact(
        self, project_id: str, *, context: ExtractionContext | None = None, **fields: Any
    ) -> Fact:
        """The :class:`~sagewai.core._records.Fact` to store for this extraction.

        Negation, event time, span and extractor go into the fact's metadata; the context gives
        the provenance (session, message, role, speaker, time). ``fields`` override or add any
        :class:`Fact` field (``scope``, ``user_id``, ``tags``...).

        Example:
            >>> fact = ExtractedFact(content="Alice lives in Berlin", fact_type="general",
            ...                      confidence=0.9, subject="Alice", predicate="lives_in",
            ...                      object="Berlin").to_fact("demo")
            >>> fact.triple, fact.metadata["negated"]
            (('Alice', 'lives_in', 'Berlin'), False)
        """
        metadata: dict[str, JsonValue] = dict(self.metadata)
        metadata["negated"] = self.negated
        if self.event_time is not None:
            metadata["event_time"] = self.event_time
        if self.source_span is not None:
            metadata["source_span"] = [self.source_span[0], self.source_span[1]]
        source = Provenance(
            session_id=context.session_id if context else None,
            message_id=context.message_id if context else None,
            role=context.role if context else None,
            speaker=self.speaker or (context.speaker if context else None),
            timestamp=context.timestamp if context else None,
            extractor=self.extractor,
        )
        data: dict[str, Any] = {
            "project_id": project_id,
            "content": self.content,
            "fact_type": self.fact_type,
            "confidence": self.confidence,
            "subject": self.subject,
            "predicate": self.predicate,
            "object": self.object,
            "exact_values": self.exact_values,
            "metadata": metadata,
            "sources": (source,),
        }
        if context is not None and context.session_id is not None and "session_id" not in fields:
            data["session_id"] = context.session_id
        data.update(fields)
        return Fact.model_validate(data)


@runtime_checkable
class FactExtractor(Protocol):
    """Turns a message into facts worth remembering.

    Implementations never raise on bad model output or an unreachable model inside a
    conversation loop; a non-string ``text`` is a caller error
    (:class:`~sagewai.errors.InvalidInputError`).
    """

    async def extract(
        self, text: str, context: ExtractionContext | None = None
    ) -> list[ExtractedFact]:
        """The facts stated in ``text`` (possibly none), most confident first."""
        ...


def sort_facts(facts: Sequence[ExtractedFact]) -> list[ExtractedFact]:
    """Most confident first; ties keep their order in the text."""
    return sorted(facts, key=lambda fact: -fact.confidence)
