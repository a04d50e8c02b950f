"""The records a knowledge graph holds: entities (nodes), relations (edges) and traversal results.

Entities and relations are immutable pydantic records, like facts. A relation is never edited in
place: when a single-valued relation gets a new value, the old edge is written again with its
``valid_to`` set (and ``superseded_by`` pointing at the new edge), so "what was true on date D"
keeps an answer.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
    field_validator,
    model_validator,
)

from sagewai.core._records import Provenance, new_id, utcnow
from sagewai.core._scope import validate_identifier
from sagewai.core._text import clean_text
from sagewai.errors import InvalidInputError

__all__ = [
    "MAX_GRAPH_WRITE",
    "MAX_NAME_CHARS",
    "Entity",
    "GraphCounts",
    "GraphDeletion",
    "GraphPath",
    "GraphWrite",
    "Neighbourhood",
    "Relation",
]

MAX_NAME_CHARS = 512
"""Longest entity name, alias, label or predicate accepted: nodes name things, not passages."""


def _aware(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _check_text(value: str, what: str) -> str:
    value = clean_text(value)  # lone surrogates become U+FFFD, as everywhere in sagewai
    if not value or not value.strip():
        raise ValueError(f"{what} must not be empty")
    if len(value) > MAX_NAME_CHARS:
        raise ValueError(f"{what} is longer than {MAX_NAME_CHARS} characters")
    # Newlines and tabs are kept (every backend escapes them); NUL and other controls are refused.
    if any(unicodedata.category(ch) == "Cc" and ch not in "\n\t\r" for ch in value):
        raise ValueError(f"{what} must not contain control characters")
    return value


def _check_findable(value: str, what: str) -> str:
    # A name made only of punctuation ("?", "(") has no matching key: nothing could find or
    # forget it by name, so it is refused at write time.
    from sagewai.core._graph_matching import name_key

    if not name_key(value):
        raise ValueError(f"{what} {value!r} has no letter or digit; it could not be found by name")
    return value


class Entity(BaseModel):
    """A node: one named thing of one project (a person, an organisation, a place, a value, ...).

    ``name`` is kept verbatim; ``aliases`` are other surface forms that refer to the same thing.
    ``session_ids`` says which conversations mentioned it, so forgetting a session can remove an
    entity that only that session introduced.

    Example:
        >>> alice = Entity(project_id="demo", name="Alice", label="person", aliases=("Ali",))
        >>> alice.all_names
        ('Alice', 'Ali')
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(default_factory=new_id)
    project_id: str
    name: str
    label: str = "entity"
    aliases: tuple[str, ...] = ()
    session_ids: tuple[str, ...] = ()
    created_at: datetime = Field(default_factory=utcnow)
    metadata: dict[str, JsonValue] = Field(default_factory=dict)

    @field_validator("id", "project_id")
    @classmethod
    def _identifier(cls, value: str) -> str:
        return validate_identifier(value, "identifier")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _check_findable(_check_text(value, "entity name"), "entity name")

    @field_validator("label")
    @classmethod
    def _label(cls, value: str) -> str:
        return _check_text(value, "entity label")

    @field_validator("aliases")
    @classmethod
    def _aliases(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(
            dict.fromkeys(_check_findable(_check_text(alias, "alias"), "alias") for alias in value)
        )

    @field_validator("session_ids")
    @classmethod
    def _sessions(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(validate_identifier(s, "session_id") for s in value))

    @field_validator("created_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return _aware(value)

    @property
    def all_names(self) -> tuple[str, ...]:
        """The name followed by every alias."""
        return (self.name, *self.aliases)


class Relation(BaseModel):
    """An edge ``subject --predicate--> object`` between two entities of the same project.

    ``valid_from``/``valid_to`` bound the time the relation held (``valid_to`` is ``None`` while it
    still holds). ``sources`` are the messages that stated it; the graph-aware search follows them
    back to the conversation.

    Example:
        >>> rel = Relation(project_id="demo", subject_id="a", predicate="works_at", object_id="b")
        >>> rel.is_active
        True
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(default_factory=new_id)
    project_id: str
    subject_id: str
    predicate: str
    object_id: str
    valid_from: datetime = Field(default_factory=utcnow)
    valid_to: datetime | None = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    sources: tuple[Provenance, ...] = ()
    created_at: datetime = Field(default_factory=utcnow)
    superseded_by: str | None = None

    @field_validator("id", "project_id", "subject_id", "object_id")
    @classmethod
    def _identifier(cls, value: str) -> str:
        return validate_identifier(value, "identifier")

    @field_validator("predicate")
    @classmethod
    def _predicate(cls, value: str) -> str:
        return _check_text(value, "predicate")

    @field_validator("valid_from", "valid_to", "created_at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else _aware(value)

    @model_validator(mode="after")
    def _interval(self) -> Self:
        if self.valid_to is not None and self.valid_to < self.valid_from:
            raise ValueError("valid_to is before valid_from")
        return self

    @property
    def is_active(self) -> bool:
        """True while the relation still holds (no ``valid_to``)."""
        return self.valid_to is None

    @property
    def session_ids(self) -> tuple[str, ...]:
        """Sessions named by the relation's sources, in order, without repeats."""
        return tuple(dict.fromkeys(s.session_id for s in self.sources if s.session_id is not None))

    @property
    def message_ids(self) -> tuple[str, ...]:
        """Message ids named by the relation's sources, in order, without repeats."""
        return tuple(dict.fromkeys(s.message_id for s in self.sources if s.message_id is not None))

    def valid_at(self, when: datetime) -> bool:
        """True when the relation held at ``when``."""
        when = _aware(when)
        return self.valid_from <= when and (self.valid_to is None or when < self.valid_to)


class Neighbourhood(BaseModel):
    """What lies around an entity: the entities reached and the relations walked to reach them."""

    model_config = ConfigDict(frozen=True)

    center: Entity
    entities: tuple[Entity, ...] = ()
    """The entities reached, nearest first, without the center."""
    relations: tuple[Relation, ...] = ()

    @property
    def message_ids(self) -> tuple[str, ...]:
        """Every provenance message id of the relations, for pulling the facts they came from."""
        return tuple(dict.fromkeys(m for r in self.relations for m in r.message_ids))


class GraphPath(BaseModel):
    """A simple path between two entities: ``entities[i] -- relations[i] -- entities[i + 1]``."""

    model_config = ConfigDict(frozen=True)

    entities: tuple[Entity, ...]
    relations: tuple[Relation, ...]

    @property
    def length(self) -> int:
        """Number of edges on the path."""
        return len(self.relations)


class GraphCounts(BaseModel):
    """How big one project's graph is."""

    model_config = ConfigDict(frozen=True)

    entities: int = 0
    relations: int = 0
    active_relations: int = 0


class GraphDeletion(BaseModel):
    """What a forget call removed (and, for a session, what it only stripped of that session)."""

    model_config = ConfigDict(frozen=True)

    entities_deleted: int = 0
    relations_deleted: int = 0
    relations_updated: int = 0
    """Relations kept because other sessions also stated them, minus this session's sources."""
    entities_updated: int = 0

    @property
    def total(self) -> int:
        """Entities plus relations deleted."""
        return self.entities_deleted + self.relations_deleted


MAX_GRAPH_WRITE = 10_000
"""The most records one :class:`GraphWrite` may hold."""


@dataclass(slots=True)
class GraphWrite:
    """One atomic unit of writes to one project's graph: all of it lands, or none of it.

    Applied in this order: ``delete_relations``, ``delete_entities`` (with every edge that touches
    them), ``put_entities``, ``put_relations``. A put replaces the record with the same id; a
    relation put again must keep its subject and object (write a new relation to change them).
    """

    project_id: str
    put_entities: list[Entity] = field(default_factory=list)
    put_relations: list[Relation] = field(default_factory=list)
    delete_entities: list[str] = field(default_factory=list)
    delete_relations: list[Relation] = field(default_factory=list)
    """Relations to delete, as records (a NebulaGraph edge is addressed by its ends, not its id)."""

    def validate(self) -> None:
        """Raise :class:`InvalidInputError` for a record of another project or a huge batch."""
        validate_identifier(self.project_id, "project_id")
        size = (
            len(self.put_entities)
            + len(self.put_relations)
            + len(self.delete_entities)
            + len(self.delete_relations)
        )
        if size > MAX_GRAPH_WRITE:
            raise InvalidInputError(
                f"a graph write holds at most {MAX_GRAPH_WRITE} items, got {size}"
            )
        records: list[Entity | Relation] = [
            *self.put_entities,
            *self.put_relations,
            *self.delete_relations,
        ]
        for record in records:
            if record.project_id != self.project_id:
                raise InvalidInputError(
                    f"{type(record).__name__} {record.id!r} belongs to project "
                    f"{record.project_id!r}, not {self.project_id!r}"
                )
        for identifier in self.delete_entities:
            validate_identifier(identifier, "entity id")
        puts: list[Entity | Relation] = [*self.put_entities, *self.put_relations]
        for put in puts:
            # A record built with model_copy skipped validation; no row that would not decode
            # again may be stored, so every put is checked here, at the store's door.
            try:
                type(put).model_validate(put.model_dump())
            except ValidationError as exc:
                raise InvalidInputError(
                    f"{type(put).__name__} {put.id!r} does not validate: {exc}"
                ) from exc

    @property
    def empty(self) -> bool:
        """True when the write changes nothing."""
        return not (
            self.put_entities or self.put_relations or self.delete_entities or self.delete_relations
        )
