"""Flat rows for entities and relations: what the SQLite and NebulaGraph backends store.

Scalars stay columns (so they can be indexed and filtered); lists and maps travel as JSON text;
times as ISO-8601 text in UTC (which sorts in time order). One codec keeps both backends' rows
identical and round-trips every record exactly.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sagewai.core._graph_records import Entity, Relation
from sagewai.core._records import Provenance
from sagewai.errors import BackendError

__all__ = [
    "ENTITY_COLUMNS",
    "RELATION_COLUMNS",
    "entity_from_row",
    "entity_to_row",
    "relation_from_row",
    "relation_to_row",
]

ENTITY_COLUMNS = (
    "project_id",
    "id",
    "name",
    "label",
    "aliases",
    "session_ids",
    "created_at",
    "metadata",
)
RELATION_COLUMNS = (
    "project_id",
    "id",
    "subject_id",
    "predicate",
    "object_id",
    "valid_from",
    "valid_to",
    "confidence",
    "sources",
    "created_at",
    "superseded_by",
)

Row = dict[str, Any]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def entity_to_row(entity: Entity) -> Row:
    """The entity as a flat row of text columns."""
    return {
        "project_id": entity.project_id,
        "id": entity.id,
        "name": entity.name,
        "label": entity.label,
        "aliases": _dumps(list(entity.aliases)),
        "session_ids": _dumps(list(entity.session_ids)),
        "created_at": _time(entity.created_at),
        "metadata": _dumps(entity.metadata),
    }


def entity_from_row(row: Row) -> Entity:
    """Rebuild an entity; a row that does not decode is a :class:`BackendError` (corrupt store)."""
    try:
        return Entity(
            project_id=row["project_id"],
            id=row["id"],
            name=row["name"],
            label=row["label"],
            aliases=tuple(json.loads(row["aliases"])),
            session_ids=tuple(json.loads(row["session_ids"])),
            created_at=datetime.fromisoformat(row["created_at"]),
            metadata=json.loads(row["metadata"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise BackendError(f"a stored entity row does not decode: {exc}") from exc


def relation_to_row(relation: Relation) -> Row:
    """The relation as a flat row (``valid_to``/``superseded_by`` may be ``None``)."""
    return {
        "project_id": relation.project_id,
        "id": relation.id,
        "subject_id": relation.subject_id,
        "predicate": relation.predicate,
        "object_id": relation.object_id,
        "valid_from": _time(relation.valid_from),
        "valid_to": _time(relation.valid_to),
        "confidence": float(relation.confidence),
        "sources": _dumps([s.model_dump(mode="json", exclude_none=True) for s in relation.sources]),
        "created_at": _time(relation.created_at),
        "superseded_by": relation.superseded_by,
    }


def relation_from_row(row: Row) -> Relation:
    """Rebuild a relation; a row that does not decode is a :class:`BackendError`."""
    try:
        valid_to = row["valid_to"]
        return Relation(
            project_id=row["project_id"],
            id=row["id"],
            subject_id=row["subject_id"],
            predicate=row["predicate"],
            object_id=row["object_id"],
            valid_from=datetime.fromisoformat(row["valid_from"]),
            valid_to=datetime.fromisoformat(valid_to) if valid_to else None,
            confidence=float(row["confidence"]),
            sources=tuple(Provenance.model_validate(s) for s in json.loads(row["sources"])),
            created_at=datetime.fromisoformat(row["created_at"]),
            superseded_by=row["superseded_by"] or None,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise BackendError(f"a stored relation row does not decode: {exc}") from exc
