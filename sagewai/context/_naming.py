"""Whether a record names a subject, and the audit's text without it (pure functions).

``forget(subject=X)`` removes every record that names X as a word: the pattern is
:func:`~sagewai.core._episode_records.subject_pattern` (case-insensitive, word boundaries,
Unicode-aware), searched in every text field of a record and never in its identifiers. The audit
rows of kept records are rewritten without X: each string naming it becomes :data:`REDACTED`.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import JsonValue

from sagewai.core._graph_records import Entity, Relation
from sagewai.core._records import Fact, FactChange

__all__ = [
    "FACT_TEXT_FIELDS",
    "PROVENANCE_TEXT_FIELDS",
    "REDACTED",
    "audit_names",
    "record_names",
    "redact_text",
    "redacted_change",
    "text_names",
]

_ID_FIELDS = frozenset(
    {
        "id",
        "project_id",
        "org_id",
        "user_id",
        "session_id",
        "session_ids",
        "message_id",
        "document_id",
        "fact_id",
        "subject_id",
        "object_id",
        "superseded_by",
        "merged_into",
        "related_fact_ids",
        "run_id",
        "entry_id",
    }
)
"""Fields holding identifiers, not text: a subject is not "named" by an id that spells it."""
REDACTED = "[forgotten]"
"""What stands in the audit where forgotten text was."""


def text_names(value: Any, pattern: re.Pattern[str]) -> bool:
    """Whether ``pattern`` matches any text in a JSON-like value (identifier fields skipped)."""
    if isinstance(value, str):
        return pattern.search(value) is not None
    if isinstance(value, dict):
        return any(
            k not in _ID_FIELDS and (text_names(k, pattern) or text_names(v, pattern))
            for k, v in value.items()
        )
    if isinstance(value, list | tuple):
        return any(text_names(item, pattern) for item in value)
    return False


FACT_TEXT_FIELDS = frozenset(
    {"content", "subject", "predicate", "object", "exact_values", "tags", "metadata", "sources"}
)
"""The fields of a :class:`Fact` that hold text (the others are ids, enums, numbers, times)."""
PROVENANCE_TEXT_FIELDS = frozenset({"role", "speaker", "extractor"})
"""The fields of a :class:`Provenance` that hold text (the others are ids, numbers, times)."""


def record_names(record: Fact | Entity | Relation, pattern: re.Pattern[str]) -> bool:
    """Whether a record names the subject anywhere in its text.

    A fact: its content, subject, predicate, object, exact values, tags, metadata and its
    sources' speakers (read field by field: every record of a project is checked, and a
    whole dump costs thirty times more). An entity or a relation: every text field.
    """
    if not isinstance(record, Fact):
        return text_names(record.model_dump(mode="json"), pattern)
    search = pattern.search
    if search(record.content):
        return True
    for value in (record.subject, record.predicate, record.object):
        if value is not None and search(value):
            return True
    if any(search(value) for value in (*record.exact_values, *record.tags)):
        return True
    if record.metadata and text_names(record.metadata, pattern):
        return True
    return any(
        value is not None and search(value)
        for source in record.sources
        for value in (source.speaker, source.role, source.extractor)
    )


def redact_text(text: str, pattern: re.Pattern[str]) -> str:
    """``text`` with every mention of the subject replaced by :data:`REDACTED`."""
    return pattern.sub(REDACTED, text)


def _redact_json(value: JsonValue, pattern: re.Pattern[str]) -> JsonValue:
    """A JSON value with every string naming the subject replaced whole by :data:`REDACTED`."""
    if isinstance(value, str):
        return REDACTED if pattern.search(value) else value
    if isinstance(value, dict):
        return {k: _redact_json(v, pattern) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_json(item, pattern) for item in value]
    return value


def audit_names(change: FactChange, pattern: re.Pattern[str] | None) -> bool:
    if pattern is None:
        return False
    return text_names([change.reason, change.before, change.after], pattern)


def redacted_change(change: FactChange, pattern: re.Pattern[str] | None) -> FactChange:
    """An audit row without the forgotten text: the rule, the time and the actor stay."""
    if pattern is None:
        return change
    before = None if change.before is None else _redact_json(change.before, pattern)
    after = None if change.after is None else _redact_json(change.after, pattern)
    return change.model_copy(
        update={
            "reason": redact_text(change.reason, pattern),
            "before": before,
            "after": after,
        }
    )
