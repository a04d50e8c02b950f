"""The records sagewai stores and returns: facts, their provenance, their history, search results.

A :class:`Fact` is immutable. Nothing edits a fact in place: a change produces a new version of the
record (``fact.evolve(...)``) and a :class:`FactChange` that says what changed, when, why and by
which rule, so every change can be audited and undone.
"""

from __future__ import annotations

import functools
import unicodedata
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

from sagewai.core._scope import (
    MAX_IDENTIFIER_LENGTH,
    ContextScope,
    ScopeAddress,
    scope_key,
    validate_identifier,
)
from sagewai.core._text import clean_json, clean_text

__all__ = [
    "ChangeAction",
    "ClaimChange",
    "Fact",
    "FactChange",
    "FactKind",
    "FactStatus",
    "FactType",
    "Provenance",
    "ScoreParts",
    "SearchResult",
    "Standing",
    "assembled",
    "complete_fields",
    "new_id",
    "utcnow",
]

MAX_CONTENT_CHARS = 10_000_000
"""The longest record content accepted (10 million characters): a conversation message is stored
verbatim whatever its length; the embedder reads long texts in pieces and the extractors read a
bounded part of them."""
MAX_SUBJECT_CHARS = MAX_IDENTIFIER_LENGTH
"""Longest subject a fact may have: exactly what ``forget(subject=...)`` accepts."""


_Model = TypeVar("_Model", bound=BaseModel)


@functools.cache
def _field_names(model: type[BaseModel]) -> frozenset[str]:
    return frozenset(model.model_fields)  # read through a slow descriptor in pydantic 2.11


def assembled(model: type[_Model], fields: dict[str, Any], *, complete: bool = False) -> _Model:
    """``model.model_construct(**fields)`` for a dict holding every field, already valid.

    What the stores and the consolidator use to rebuild records they validated before (a row read
    back, an audit row made from validated facts): the instance takes ``fields`` as its
    ``__dict__``, about a fifth of ``model_construct``'s cost, which walks every field's default
    and alias. The dict is the record's from then on: the caller must not keep it. A dict
    missing a field, or a model with private attributes, goes through ``model_construct``.
    ``complete`` skips that check, for a caller that made sure once (:func:`complete_fields`)
    that its dicts hold exactly the model's fields: a search rebuilds about a hundred facts,
    and the check was a third of each.

    Example:
        >>> fact = Fact(project_id="demo", content="Ben likes ramen.")
        >>> assembled(Fact, dict(fact.__dict__)) == fact
        True
    """
    if not complete and (model.__private_attributes__ or fields.keys() != _field_names(model)):
        return model.model_construct(**fields)
    record = model.__new__(model)
    object.__setattr__(record, "__dict__", fields)
    object.__setattr__(record, "__pydantic_fields_set__", set(fields))
    object.__setattr__(record, "__pydantic_extra__", None)
    object.__setattr__(record, "__pydantic_private__", None)
    return record


def complete_fields(model: type[BaseModel], names: Sequence[str]) -> bool:
    """Whether dicts with exactly ``names`` as keys may be :func:`assembled` with ``complete``:
    they name every field of ``model``, once, and it has no private attributes.

    Example:
        >>> complete_fields(ScoreParts, list(ScoreParts.model_fields))
        True
        >>> complete_fields(ScoreParts, ["dense"])
        False
    """
    return (
        not model.__private_attributes__
        and len(names) == len(set(names))
        and set(names) == _field_names(model)
    )


def utcnow() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)


def new_id() -> str:
    """A new random identifier (a UUID4 in canonical text form)."""
    return str(uuid.uuid4())


def _aware(value: datetime) -> datetime:
    try:
        aware = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        aware.timestamp()
    except OverflowError as exc:  # datetime.max west of Greenwich has no UTC time
        raise ValueError(f"{value!r} is outside the range of times") from exc
    return aware


class FactType(StrEnum):
    """What kind of statement a fact is."""

    DECISION = "decision"
    PREFERENCE = "preference"
    EVENT = "event"
    ACTION = "action"
    GENERAL = "general"


FACT_TYPE_MEANINGS: Mapping[FactType, str] = {
    FactType.DECISION: 'a choice made ("we decided to use PostgreSQL")',
    FactType.PREFERENCE: "likes, dislikes, prefers X over Y, favourites, and their negations",
    FactType.EVENT: "something that happened or is scheduled, with its date when known",
    FactType.ACTION: 'a commitment, plan or to-do ("I\'ll send the report by Friday")',
    FactType.GENERAL: (
        "identity, work, home, relations, possessions, and exact values (ids, URLs, ...)"
    ),
}
"""What each fact type means, as the LLM extractor's prompt tells a model (one line a type).

Every surface that lists the types (the prompt, the JSON schemas of the agent's and the MCP
server's tools, the HTTP API and its dashboard, the CLI's ``--type``) derives the list from
:class:`FactType`: a new type is a new member here, its meaning here, and a line in the docs.
"""


class FactKind(StrEnum):
    """What a record is: a fact proper, a message kept verbatim, or a chunk of a document.

    ``MESSAGE`` records hold a conversation message exactly as it was said (the bridge stores
    one per accepted message); the facts drawn from a message carry the same
    ``sources[0].message_id`` and ``session_id``, so search can fuse a message with its facts.
    ``DOCUMENT`` records are chunks of a plain text document ingested with ``add_document``.
    ``SYNTHESIS`` records are written by consolidation's reflection step: what is current about
    one subject, drawn from its facts (their ids in ``metadata["reflection"]["rests_on"]``).
    Nobody said one, so it carries no ``sources``; consolidation never merges, decays or
    resolves it against a fact, and rewrites it when its facts change.
    """

    FACT = "fact"
    MESSAGE = "message"
    DOCUMENT = "document"
    SYNTHESIS = "synthesis"


class FactStatus(StrEnum):
    """Where a fact is in its life. Only ACTIVE and FLAGGED facts are searched by default."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"
    MERGED = "merged"
    FLAGGED = "flagged"
    ARCHIVED = "archived"


class Provenance(BaseModel):
    """Where a fact came from: a message of a session, or a chunk of a document."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session_id: str | None = None
    message_id: str | None = None
    """The message's own id (for LoCoMo, the dialogue id such as ``D1:3``)."""
    turn_index: int | None = None
    role: str | None = None
    speaker: str | None = None
    timestamp: datetime | None = None
    extractor: str | None = None
    document_id: str | None = None
    chunk_index: int | None = None

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else _aware(value)

    @field_validator(
        "session_id", "message_id", "role", "speaker", "extractor", "document_id", mode="before"
    )
    @classmethod
    def _text(cls, value: Any) -> Any:
        return clean_text(value) if isinstance(value, str) else value


class Fact(BaseModel):
    """One stored piece of knowledge.

    Identity and place (``id``, ``project_id``, ``scope`` with its identifiers), content
    (``content``, ``fact_type``, ``confidence``, the optional ``subject``/``predicate``/``object``
    triple, ``exact_values`` kept verbatim), provenance (``sources``), time (``created_at``,
    ``last_accessed_at``, validity ``valid_from``/``valid_to``) and life (``status``, ``strength``,
    ``superseded_by``, ``merged_into``).

    Example:
        >>> fact = Fact(project_id="demo", content="Alice prefers tea over coffee",
        ...             fact_type=FactType.PREFERENCE, subject="alice")
        >>> fact.scope
        <ContextScope.PROJECT: 'project'>
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(default_factory=new_id)
    project_id: str
    scope: ContextScope = ContextScope.PROJECT
    org_id: str | None = None
    user_id: str | None = None
    session_id: str | None = None

    kind: FactKind = FactKind.FACT
    content: str
    fact_type: FactType = FactType.GENERAL
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    exact_values: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    sources: tuple[Provenance, ...] = ()

    created_at: datetime = Field(default_factory=utcnow)
    last_accessed_at: datetime | None = None
    valid_from: datetime | None = None
    """When the fact became true; ``None`` means "since it was recorded" (``created_at``)."""
    valid_to: datetime | None = None
    """When the fact stopped being true; ``None`` while it still holds."""

    status: FactStatus = FactStatus.ACTIVE
    strength: float = Field(default=1.0, ge=0.0)
    superseded_by: str | None = None
    merged_into: str | None = None

    @field_validator("created_at", "last_accessed_at", "valid_from", "valid_to")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else _aware(value)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return validate_identifier(value, "fact id")

    @field_validator("predicate", "object", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return clean_text(value) if isinstance(value, str) else value

    @field_validator("subject", mode="before")
    @classmethod
    def _subject(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        value = clean_text(value)
        if len(value) > MAX_SUBJECT_CHARS:
            raise ValueError(f"subject is longer than {MAX_SUBJECT_CHARS} characters")
        if any(unicodedata.category(ch) == "Cc" for ch in value):
            raise ValueError("subject must not contain control characters")
        return value

    @field_validator("exact_values", mode="before")
    @classmethod
    def _exact_values(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError("exact_values must be a list of strings, not one string")
        if isinstance(value, list | tuple):
            return tuple(clean_text(v) if isinstance(v, str) else v for v in value)
        return value

    @field_validator("metadata", mode="before")
    @classmethod
    def _metadata(cls, value: Any) -> Any:
        return clean_json(value) if isinstance(value, Mapping) else value

    @field_validator("content")
    @classmethod
    def _content(cls, value: str) -> str:
        value = clean_text(value)
        if not value.strip():
            raise ValueError("content must not be empty")
        if len(value) > MAX_CONTENT_CHARS:
            raise ValueError(f"content is longer than {MAX_CONTENT_CHARS} characters")
        if "\x00" in value:
            raise ValueError("content must not contain NUL characters")
        return value

    @field_validator("tags", mode="before")
    @classmethod
    def _tag_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError("tags must be a list of strings, not one string")
        return value

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for tag in value:
            validate_identifier(tag, "tag")
        return tuple(dict.fromkeys(value))

    @model_validator(mode="after")
    def _place(self) -> Self:
        # Validates the identifiers and that the scope has the identifier it needs.
        self.address  # noqa: B018
        if self.valid_to is not None and self.valid_to < self.effective_from:
            raise ValueError("valid_to is before valid_from")
        return self

    @property
    def address(self) -> ScopeAddress:
        """The scope address the fact is stored at."""
        return ScopeAddress(
            self.scope,
            project_id=self.project_id,
            org_id=self.org_id,
            user_id=self.user_id,
            session_id=self.session_id,
        )

    @property
    def scope_id(self) -> str:
        """The identifier of the fact's own scope (org, project, user or session id)."""
        # Read straight from the fields (hot in every search's re-check); construction already
        # validated them, and a copy that lost its identifier falls back to the full check.
        scope = self.scope
        if scope is ContextScope.PROJECT:
            return self.project_id
        if scope is ContextScope.SESSION:
            picked = self.session_id
        else:
            picked = self.user_id if scope is ContextScope.USER else self.org_id
        return picked if picked is not None else self.address.scope_id

    @property
    def scope_key(self) -> str:
        """The opaque key stores filter on."""
        owner = self.user_id if self.scope is ContextScope.SESSION else None
        return scope_key(self.scope, self.project_id, self.scope_id, owner)

    @property
    def effective_from(self) -> datetime:
        """``valid_from``, or ``created_at`` when the fact holds since it was recorded."""
        return self.valid_from if self.valid_from is not None else self.created_at

    @property
    def triple(self) -> tuple[str, str, str] | None:
        """``(subject, predicate, object)`` when all three are known."""
        if self.subject and self.predicate and self.object:
            return (self.subject, self.predicate, self.object)
        return None

    def valid_at(self, when: datetime) -> bool:
        """True when the fact was recorded by ``when`` and held at that time."""
        when = _aware(when)
        if self.created_at > when or self.effective_from > when:
            return False
        return self.valid_to is None or self.valid_to > when

    def evolve(self, **changes: Any) -> Fact:
        """A new version of this fact with ``changes`` applied and validated."""
        data = self.model_dump()
        data.update(changes)
        return Fact.model_validate(data)


class ChangeAction(StrEnum):
    """What a recorded change did to a fact."""

    CREATED = "created"
    REINFORCED = "reinforced"
    UPDATED = "updated"
    SUPERSEDED = "superseded"
    MERGED = "merged"
    DECAYED = "decayed"
    ARCHIVED = "archived"
    FLAGGED = "flagged"
    RESTORED = "restored"
    DELETED = "deleted"


class FactChange(BaseModel):
    """One audited change to a fact: what, when, why, by which rule, and how to undo it.

    ``before`` and ``after`` hold the fields the change touched, so ``ContextEngine.revert``
    can restore ``before``. A deletion keeps a tombstone with no content.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(default_factory=new_id)
    fact_id: str
    project_id: str
    action: ChangeAction
    at: datetime = Field(default_factory=utcnow)
    actor: str
    """Which component made the change (``engine``, ``consolidator``, ``bridge``, ...)."""
    rule: str
    """The rule that decided it (``dedup.cosine``, ``decay.halflife``, ...)."""
    reason: str = ""
    related_fact_ids: tuple[str, ...] = ()
    before: dict[str, JsonValue] | None = None
    after: dict[str, JsonValue] | None = None
    run_id: str | None = None

    @field_validator("at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return _aware(value)


class ScoreParts(BaseModel):
    """How a search result's score was made, for debugging and tuning retrieval."""

    model_config = ConfigDict(frozen=True)

    dense: float | None = None
    """Cosine similarity between query and fact, when the fact was a dense candidate."""
    keyword: float | None = None
    """Keyword (BM25-style) score, when the fact was a keyword candidate."""
    dense_rank: int | None = None
    keyword_rank: int | None = None
    fusion: float = 0.0
    """The reciprocal-rank fusion of the ranked lists."""
    recency: float = 0.0
    strength: float = 0.0
    graph: float = 0.0
    """Bonus for facts linked to entities named in the query (graph expansion)."""


class Standing(StrEnum):
    """Whether what a search result says still holds.

    ``CHANGED``: the claim the result answers with was superseded since (a message that said
    "I live in Berlin" after the user moved to Munich, or the superseded fact itself in a search
    of the past); its :attr:`SearchResult.changes` say what replaced it, and when.
    ``POSSIBLY_STALE``: a claim the result rested on changed since ("my commute is 20 minutes",
    said before the move to Munich); :attr:`SearchResult.rested_on` says which.
    """

    CURRENT = "current"
    CHANGED = "changed"
    POSSIBLY_STALE = "possibly_stale"


class ClaimChange(BaseModel):
    """A claim a record stated that has changed since: the old fact and what replaced it."""

    model_config = ConfigDict(frozen=True)

    old: Fact
    """The superseded fact (its content holds the old value)."""
    new: Fact | None = None
    """What holds now: the last fact of the chain of facts that superseded ``old`` (``None``
    when it is gone: deleted or forgotten)."""
    at: datetime | None = None
    """When the old claim stopped being true (``old.valid_to``)."""


class SearchResult(BaseModel):
    """A fact found by a search, with its final score and the parts it was made of."""

    model_config = ConfigDict(frozen=True)

    fact: Fact
    score: float
    parts: ScoreParts = Field(default_factory=ScoreParts)
    related: tuple[Fact, ...] = ()
    """Other records of the same source fused into this result (the message a fact was drawn
    from, or the facts drawn from a message), best first; ``fact`` is the best-scoring one."""
    standing: Standing = Standing.CURRENT
    """``CHANGED`` when the claim this result answers with was superseded since (see
    :attr:`changes`); a search about the present ranks such a result below its successor."""
    changes: tuple[ClaimChange, ...] = ()
    """Claims this result's records stated that have changed since, newest change first; a
    result may be ``CURRENT`` and still list a change of another claim of the same message."""
    rested_on: tuple[ClaimChange, ...] = ()
    """Changed claims this result rested on without stating them (see
    :mod:`sagewai.core._standing` for the rule): it may no longer hold."""
    repeats: tuple[Fact, ...] = ()
    """Other records saying the same thing (the same normalised content, from other messages or
    sessions), folded into this result: the statement was said ``1 + len(repeats)`` times."""
    later: tuple[Fact, ...] = ()
    """For a question about a value now: later statements of the same value that name another
    one ("new apartment in Madrid" after "I live in Lisbon") and that the ranking put above this
    result; no rule read them as a change, but this result may no longer hold."""
