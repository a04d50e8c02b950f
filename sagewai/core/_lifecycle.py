"""Every transition a stored fact can make, and the audit row each one writes, decided once.

A fact is never edited in place (see :mod:`sagewai.core._records`): a transition returns the
fact's next version together with the :class:`~sagewai.core._records.FactChange` that records it.
The engine, the write-time reconciler and the consolidator all change facts through these
functions, so a supersession closes validity the same way whoever decides it, and every audit
row holds ``before``/``after`` values of exactly the fields the transition touched (what
``ContextEngine.revert`` restores).

The functions are pure: nothing here reads or writes a store. The caller commits the versions
and rows in one batch.

Example:
    >>> from datetime import UTC, datetime
    >>> from sagewai import Fact
    >>> old = Fact(project_id="p", content="Alice lives in Paris")
    >>> at = datetime(2030, 1, 1, tzinfo=UTC)
    >>> why = Cause("engine", "engine.supersede", "moved", at=at)
    >>> step = supersede(old, why, successor_id="f2", ends=at)
    >>> step.fact.status.value, step.change.action.value, step.change.before
    ('superseded', 'superseded', {'status': 'active', 'valid_to': None, 'superseded_by': None})
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from pydantic import JsonValue

from sagewai.core._records import (
    ChangeAction,
    Fact,
    FactChange,
    FactStatus,
    Provenance,
    assembled,
    new_id,
    utcnow,
)

__all__ = [
    "CLOSED_FIELDS",
    "MAX_STRENGTH",
    "MERGED_FIELDS",
    "REINFORCED_FIELDS",
    "STATUS_ACTIONS",
    "Cause",
    "Transition",
    "audit",
    "created",
    "merge",
    "reinforce",
    "restore",
    "revise",
    "set_status",
    "snapshot",
    "supersede",
    "tombstone",
]

CLOSED_FIELDS = ("status", "valid_to", "superseded_by")
"""What a supersession touches: the status, the end of validity, the successor."""
MERGED_FIELDS = ("status", "merged_into")
"""What a merge touches."""
REINFORCED_FIELDS = ("strength", "last_accessed_at", "sources", "confidence")
"""What saying a fact again touches."""
MAX_STRENGTH = 10.0
"""The strength a fact reinforced again and again never exceeds."""

STATUS_ACTIONS: Mapping[FactStatus, ChangeAction] = {
    FactStatus.ARCHIVED: ChangeAction.ARCHIVED,
    FactStatus.FLAGGED: ChangeAction.FLAGGED,
    FactStatus.ACTIVE: ChangeAction.RESTORED,
    FactStatus.SUPERSEDED: ChangeAction.SUPERSEDED,
    FactStatus.MERGED: ChangeAction.MERGED,
}
"""The audited action of moving a fact to each status."""

# Fields whose JSON form is the attribute itself (or its enum value): read directly, because
# a consolidation run snapshots most facts twice and a full pydantic dump is most of its cost.
_PLAIN_FIELDS = frozenset({"strength", "metadata", "merged_into", "superseded_by", "confidence"})
_ENUM_FIELDS = frozenset({"status", "fact_type", "kind", "scope"})


@dataclass(frozen=True, slots=True)
class Cause:
    """Who makes a change, by which rule, why and when: what every audit row names.

    ``at`` is when the change is recorded (now, when ``None``). ``trusted`` builds the rows
    without re-validation, for a caller that writes thousands of rows from validated facts and
    vouches for its own ``actor``, ``rule``, ``reason`` and an aware ``at`` (the consolidator).
    """

    actor: str
    rule: str
    reason: str = ""
    at: datetime | None = None
    run_id: str | None = None
    trusted: bool = False

    def because(self, reason: str) -> Cause:
        """The same cause with another reason."""
        return replace(self, reason=reason)


@dataclass(frozen=True, slots=True)
class Transition:
    """A fact's next version and the audit row that records the step."""

    fact: Fact
    change: FactChange


def snapshot(fact: Fact, fields: Iterable[str]) -> dict[str, JsonValue]:
    """The JSON values of ``fields`` of ``fact``: what a change's ``before``/``after`` holds.

    Example:
        >>> snapshot(Fact(project_id="p", content="x", strength=0.5), ["strength", "status"])
        {'strength': 0.5, 'status': 'active'}
    """
    names = list(fields)
    out: dict[str, JsonValue] = {}
    rest: list[str] = []
    for name in names:
        if name in _PLAIN_FIELDS:
            out[name] = getattr(fact, name)
        elif name in _ENUM_FIELDS:
            out[name] = getattr(fact, name).value
        else:
            rest.append(name)
    if rest:
        out.update(fact.model_dump(mode="json", include=set(rest)))
    return {name: out[name] for name in names}


def audit(
    fact: Fact,
    action: ChangeAction,
    cause: Cause,
    *,
    related: Sequence[str] = (),
    before: Mapping[str, JsonValue] | None = None,
    after: Mapping[str, JsonValue] | None = None,
) -> FactChange:
    """The audit row of ``action`` on ``fact``: who, when, why, by which rule, what it touched.

    ``before``/``after`` are the touched fields' values (see :func:`snapshot`); a row without
    ``before`` cannot be reverted (a creation).
    """
    fields: dict[str, Any] = {
        "id": new_id(),
        "fact_id": fact.id,
        "project_id": fact.project_id,
        "action": action,
        "at": cause.at if cause.at is not None else utcnow(),
        "actor": cause.actor,
        "rule": cause.rule,
        "reason": cause.reason,
        "related_fact_ids": tuple(related),
        "before": None if before is None else dict(before),
        "after": None if after is None else dict(after),
        "run_id": cause.run_id,
    }
    if cause.trusted:
        return assembled(FactChange, fields)
    return FactChange.model_validate(fields)


def revise(
    before: Fact,
    after: Fact,
    fields: Sequence[str],
    action: ChangeAction,
    cause: Cause,
    *,
    related: Sequence[str] = (),
) -> FactChange:
    """The audit row of a change from ``before`` to ``after`` touching exactly ``fields``."""
    return audit(
        before,
        action,
        cause,
        related=related,
        before=snapshot(before, fields),
        after=snapshot(after, fields),
    )


def created(fact: Fact, cause: Cause, *, related: Sequence[str] = ()) -> FactChange:
    """The audit row of a new fact (recorded when the fact was, unless ``cause.at`` says)."""
    when = cause if cause.at is not None else replace(cause, at=fact.created_at)
    return audit(fact, ChangeAction.CREATED, when, related=related)


def supersede(fact: Fact, cause: Cause, *, successor_id: str, ends: datetime) -> Transition:
    """``fact`` replaced by ``successor_id``: SUPERSEDED, its validity closed at ``ends``.

    The validity never ends before it began (``ends`` earlier than the fact's ``effective_from``
    closes it where it began), so a superseded fact stays valid for "as of" reads of its time.
    """
    closed = fact.evolve(
        status=FactStatus.SUPERSEDED,
        valid_to=max(ends, fact.effective_from),
        superseded_by=successor_id,
    )
    change = revise(
        fact, closed, CLOSED_FIELDS, ChangeAction.SUPERSEDED, cause, related=(successor_id,)
    )
    return Transition(closed, change)


def merge(fact: Fact, cause: Cause, *, into_id: str, stored: bool = True) -> Transition:
    """``fact`` folded into ``into_id``: MERGED, kept with its own history, never searched.

    ``stored=False`` is a fact that arrives already merged (a repeat the bridge keeps as the
    record of what was said): it had no earlier state, so its row has no ``before``/``after``.
    """
    merged = fact.evolve(status=FactStatus.MERGED, merged_into=into_id)
    if stored:
        change = revise(fact, merged, MERGED_FIELDS, ChangeAction.MERGED, cause, related=(into_id,))
    else:
        change = audit(merged, ChangeAction.MERGED, cause, related=(into_id,))
    return Transition(merged, change)


def reinforce(
    fact: Fact,
    cause: Cause,
    *,
    source: Provenance,
    step: float,
    confidence: float,
    related: Sequence[str] = (),
) -> Transition:
    """``fact`` said again (at ``cause.at``): stronger, capped at :data:`MAX_STRENGTH`, just
    used, one more source, and at least as confident as the repeat."""
    at = cause.at if cause.at is not None else utcnow()
    stronger = fact.evolve(
        strength=min(MAX_STRENGTH, fact.strength + step),
        last_accessed_at=at,
        sources=(*fact.sources, source),
        confidence=max(fact.confidence, confidence),
    )
    change = revise(
        fact, stronger, REINFORCED_FIELDS, ChangeAction.REINFORCED, cause, related=related
    )
    return Transition(stronger, change)


def set_status(
    fact: Fact, status: FactStatus, cause: Cause, *, related: Sequence[str] = ()
) -> Transition:
    """``fact`` moved to ``status`` (archived, flagged, restored, ...), audited as such."""
    updated = fact.evolve(status=status)
    change = revise(fact, updated, ("status",), STATUS_ACTIONS[status], cause, related=related)
    return Transition(updated, change)


def restore(
    fact: Fact, values: Mapping[str, JsonValue], cause: Cause, *, related: Sequence[str] = ()
) -> Transition:
    """``fact`` with ``values`` (an audit row's ``before``) put back: the undo of that change."""
    restored = fact.evolve(**values)
    change = audit(
        fact,
        ChangeAction.RESTORED,
        cause,
        related=related,
        before=snapshot(fact, values.keys()),
        after=values,
    )
    return Transition(restored, change)


def tombstone(fact_id: str, project_id: str, cause: Cause) -> FactChange:
    """The content-free row a deleted fact leaves in the audit log in place of its history."""
    return FactChange(
        fact_id=fact_id,
        project_id=project_id,
        action=ChangeAction.DELETED,
        actor=cause.actor,
        rule=cause.rule,
        reason=cause.reason,
        at=cause.at if cause.at is not None else utcnow(),
    )
