"""Building a fact of a project from a caller's fields: the defaults and checks, written once.

Pure functions (no store is touched), so the engine, its port and every helper that makes
records (the bridge, the agent's memory tools, supersession) validate the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import JsonValue, ValidationError

from sagewai.core._arguments import (
    aware_time,
    check_list,
    check_scope,
    check_source,
    string_list,
)
from sagewai.core._records import Fact, FactKind, FactType, Provenance
from sagewai.core._scope import ContextScope, ScopeAddress, validate_identifier
from sagewai.errors import InvalidInputError

__all__ = ["build_fact", "scope_address"]


def scope_address(
    project_id: str,
    org_id: str | None,
    scope: ContextScope | str | None = None,
    *,
    user_id: str | None = None,
    session_id: str | None = None,
) -> ScopeAddress:
    """The scope address of ``project_id`` for a scope and its identifiers.

    Without ``scope`` the narrowest scope the identifiers name is used: SESSION when a
    ``session_id`` is given, USER when a ``user_id`` is, PROJECT otherwise.

    Raises:
        ScopeError: an unknown scope, or a scope named without its identifier.

    Example:
        >>> scope_address("demo", None, user_id="alice").scope.value
        'user'
    """
    if scope is None:
        scope = (
            ContextScope.SESSION
            if session_id is not None
            else ContextScope.USER
            if user_id is not None
            else ContextScope.PROJECT
        )
    level = check_scope(scope)
    assert level is not None
    return ScopeAddress(
        level, project_id=project_id, org_id=org_id, user_id=user_id, session_id=session_id
    )


def build_fact(
    project_id: str,
    org_id: str | None,
    content: str,
    **fields: Any,
) -> Fact:
    """Validate a caller's fields (:class:`~sagewai.core.FactFields`) into a fact of a project.

    An unknown field name is an :class:`InvalidInputError`, like any bad value.

    Example:
        >>> build_fact("demo", None, "Alice prefers tea", user_id="alice").scope.value
        'user'
    """
    try:
        return _build(project_id, org_id, content, **fields)
    except TypeError as exc:  # an unknown field name
        raise InvalidInputError(f"invalid fact field: {exc}") from exc


def _build(
    project_id: str,
    org_id: str | None,
    content: str,
    *,
    fact_type: FactType | str = FactType.GENERAL,
    scope: ContextScope | str | None = None,
    user_id: str | None = None,
    session_id: str | None = None,
    subject: str | None = None,
    predicate: str | None = None,
    object: str | None = None,
    confidence: float = 1.0,
    exact_values: Sequence[str] = (),
    tags: Sequence[str] = (),
    metadata: Mapping[str, JsonValue] | None = None,
    source: Provenance | None = None,
    sources: Sequence[Provenance] = (),
    kind: FactKind | str = FactKind.FACT,
    valid_from: datetime | None = None,
    created_at: datetime | None = None,
    fact_id: str | None = None,
) -> Fact:
    if not isinstance(content, str):
        raise InvalidInputError(f"content must be text, got {type(content).__name__}")
    if scope is None:
        # A fact with a user is recalled in the user's later sessions; session_id alone only
        # records where it came from.
        scope = ContextScope.USER if user_id is not None else ContextScope.PROJECT
    scope_address(project_id, org_id, scope, user_id=user_id, session_id=session_id)
    if isinstance(subject, str) and not subject.strip():
        # A blank subject could never be forgotten by name (forget refuses an empty subject).
        raise InvalidInputError("subject must not be blank; leave it out (None) instead")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise InvalidInputError(f"metadata must be a mapping, got {type(metadata).__name__}")
    tags = string_list(tags, "tags") or ()
    exact_values = string_list(exact_values, "exact_values") or ()
    all_sources = tuple(check_source(s) for s in check_list(sources, "sources")) + (
        (check_source(source),) if source is not None else ()
    )
    if session_id is None:
        session_id = next((s.session_id for s in all_sources if s.session_id), None)
    values: dict[str, Any] = {
        "project_id": project_id,
        "org_id": org_id,
        "scope": scope,
        "user_id": user_id,
        "session_id": session_id,
        "kind": kind,
        "content": content,
        "fact_type": fact_type,
        "confidence": confidence,
        "subject": subject,
        "predicate": predicate,
        "object": object,
        "exact_values": tuple(exact_values),
        "tags": tuple(tags),
        "metadata": dict(metadata or {}),
        "sources": all_sources,
        # Times are datetimes: a number is not read as seconds since 1970.
        "valid_from": aware_time(valid_from, "valid_from"),
    }
    if created_at is not None:
        values["created_at"] = aware_time(created_at, "created_at")
    if fact_id is not None:
        values["id"] = validate_identifier(fact_id, "fact_id")
    try:
        return Fact.model_validate(values)
    except ValidationError as exc:
        raise InvalidInputError(f"invalid fact: {exc}") from exc
