"""The query and record types every store contract speaks: filters, write batches, vector rows.

They are plain frozen dataclasses with the *reference semantics* of each filter (``matches``):
every backend's filtering must agree with them, and the in-memory backends are written on them.
The contracts that use them (``MetadataStore``, ``VectorStore``) live with the backends in
:mod:`sagewai.stores`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from sagewai.core._embedder import Vector
from sagewai.core._records import Fact, FactChange, FactKind, FactStatus, FactType
from sagewai.core._scope import validate_identifier
from sagewai.errors import InvalidInputError

__all__ = [
    "MAX_QUERY_LIMIT",
    "ChangeQuery",
    "FactQuery",
    "VectorFilter",
    "VectorHit",
    "VectorPayload",
    "VectorRecord",
    "WriteBatch",
]

MAX_QUERY_LIMIT = 100_000


@dataclass(frozen=True, slots=True)
class FactQuery:
    """A filter over one project's facts; ``None`` means "no restriction".

    With ``scope_keys`` the query reads exactly those scopes (ORG keys reach across the org's
    projects); without, it reads every fact whose ``project_id`` is ``project_id``.
    Results are ordered by ``(created_at, id)``; ``after`` continues after that position.
    """

    project_id: str
    scope_keys: tuple[str, ...] | None = None
    ids: tuple[str, ...] | None = None
    subject: str | None = None
    subjects: tuple[str, ...] | None = None
    """Any of these subjects (an empty tuple matches nothing)."""
    user_id: str | None = None
    session_id: str | None = None
    statuses: tuple[FactStatus, ...] | None = None
    kinds: tuple[FactKind, ...] | None = None
    fact_types: tuple[FactType, ...] | None = None
    tags_any: tuple[str, ...] | None = None
    valid_at: datetime | None = None
    updated_since: datetime | None = None
    """Facts written (inserted or changed) at or after this time; used by incremental runs."""
    after: tuple[datetime, str] | None = None
    limit: int | None = None

    def __post_init__(self) -> None:
        validate_identifier(self.project_id, "project_id")
        if self.scope_keys is not None and not self.scope_keys:
            raise InvalidInputError("scope_keys must not be empty when given")
        if self.limit is not None and not 0 < self.limit <= MAX_QUERY_LIMIT:
            raise InvalidInputError(f"limit must be between 1 and {MAX_QUERY_LIMIT}")

    def matches(self, fact: Fact) -> bool:
        """The reference semantics of every field but ``updated_since``/``after``/``limit``."""
        if self.scope_keys is not None:
            if fact.scope_key not in self.scope_keys:
                return False
        elif fact.project_id != self.project_id:
            return False
        if self.ids is not None and fact.id not in self.ids:
            return False
        if self.subject is not None and fact.subject != self.subject:
            return False
        if self.subjects is not None and fact.subject not in self.subjects:
            return False
        if self.user_id is not None and fact.user_id != self.user_id:
            return False
        if self.session_id is not None and fact.session_id != self.session_id:
            return False
        if self.statuses is not None and fact.status not in self.statuses:
            return False
        if self.kinds is not None and fact.kind not in self.kinds:
            return False
        if self.fact_types is not None and fact.fact_type not in self.fact_types:
            return False
        if self.tags_any is not None and not set(self.tags_any).intersection(fact.tags):
            return False
        return self.valid_at is None or fact.valid_at(self.valid_at)


@dataclass(frozen=True, slots=True)
class ChangeQuery:
    """A filter over one project's audit log, oldest first."""

    project_id: str
    fact_id: str | None = None
    run_id: str | None = None
    since: datetime | None = None
    limit: int | None = None


@dataclass(slots=True)
class WriteBatch:
    """One atomic unit of writes to a project: all of it lands, or none of it.

    Applied in this order: ``deletes`` (the facts and their history), then ``upserts``, then
    ``changes`` (audit rows, including the tombstones of deletions). A batch may only touch facts
    of ``project_id``.
    """

    project_id: str
    upserts: list[Fact] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    changes: list[FactChange] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.upserts or self.deletes or self.changes)

    def validate(self) -> None:
        """Refuse a batch that reaches into another project."""
        for fact in self.upserts:
            if fact.project_id != self.project_id:
                raise InvalidInputError(
                    f"fact {fact.id} belongs to project {fact.project_id!r}, "
                    f"not {self.project_id!r}"
                )
        for change in self.changes:
            if change.project_id != self.project_id:
                raise InvalidInputError(f"change {change.id} belongs to another project")


OPEN_END = math.inf


def _epoch(value: datetime | None) -> float:
    return OPEN_END if value is None else value.timestamp()


@dataclass(frozen=True, slots=True)
class VectorPayload:
    """What a vector store keeps beside a vector to filter on."""

    project_id: str
    scope_key: str
    status: str
    kind: str
    fact_type: str
    tags: tuple[str, ...] = ()
    created_at: float = 0.0
    valid_from: float = 0.0
    valid_to: float = OPEN_END
    """``inf`` while the fact still holds."""

    @classmethod
    def of(cls, fact: Fact) -> VectorPayload:
        """The payload that indexes ``fact``."""
        return cls(
            project_id=fact.project_id,
            scope_key=fact.scope_key,
            status=fact.status.value,
            kind=fact.kind.value,
            fact_type=fact.fact_type.value,
            tags=fact.tags,
            created_at=fact.created_at.timestamp(),
            valid_from=fact.effective_from.timestamp(),
            valid_to=_epoch(fact.valid_to),
        )


@dataclass(frozen=True, slots=True)
class VectorRecord:
    """A fact's vector and payload, as written to a vector store."""

    id: str
    vector: Vector
    payload: VectorPayload


class VectorHit(NamedTuple):
    """A nearest-neighbour hit: the fact id and its cosine similarity to the query.

    A named tuple (immutable, compared by value): a search makes a few hundred of them, and a
    frozen dataclass pays an ``object.__setattr__`` per field to be made.
    """

    id: str
    score: float


@dataclass(frozen=True, slots=True)
class VectorFilter:
    """Which vectors a search or count may see.

    ``scope_keys`` is required and never empty: every read is scoped. ``None`` in any other field
    means "no restriction". ``valid_at`` (epoch seconds) keeps facts recorded by then whose validity
    interval contains it.
    """

    scope_keys: tuple[str, ...]
    statuses: tuple[str, ...] | None = (FactStatus.ACTIVE.value, FactStatus.FLAGGED.value)
    kinds: tuple[str, ...] | None = None
    fact_types: tuple[str, ...] | None = None
    tags_any: tuple[str, ...] | None = None
    valid_at: float | None = None
    ids: tuple[str, ...] | None = field(default=None)

    def __post_init__(self) -> None:
        if not self.scope_keys:
            raise ValueError("a VectorFilter needs at least one scope key")

    def matches(self, payload: VectorPayload, point_id: str | None = None) -> bool:
        """The reference semantics every backend's filtering must agree with."""
        if payload.scope_key not in self.scope_keys:
            return False
        if self.statuses is not None and payload.status not in self.statuses:
            return False
        if self.kinds is not None and payload.kind not in self.kinds:
            return False
        if self.fact_types is not None and payload.fact_type not in self.fact_types:
            return False
        if self.tags_any is not None and not set(self.tags_any).intersection(payload.tags):
            return False
        if self.ids is not None and point_id is not None and point_id not in self.ids:
            return False
        if self.valid_at is not None:
            at = self.valid_at
            if payload.created_at > at or payload.valid_from > at or payload.valid_to <= at:
                return False
        return True

    @classmethod
    def for_types(
        cls,
        scope_keys: Sequence[str],
        *,
        statuses: Sequence[FactStatus] | None,
        kinds: Sequence[FactKind] | None = None,
        fact_types: Sequence[FactType] | None = None,
        tags_any: Sequence[str] | None = None,
        valid_at: datetime | None = None,
    ) -> VectorFilter:
        """Build a filter from the record enums."""
        return cls(
            scope_keys=tuple(scope_keys),
            statuses=None if statuses is None else tuple(s.value for s in statuses),
            kinds=None if kinds is None else tuple(k.value for k in kinds),
            fact_types=None if fact_types is None else tuple(t.value for t in fact_types),
            tags_any=None if tags_any is None else tuple(tags_any),
            valid_at=None if valid_at is None else valid_at.timestamp(),
        )
