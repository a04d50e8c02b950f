"""Turn consolidation decisions into new fact versions and audit rows.

Pure functions: given a decision (merge these, supersede that, decay this) they return the updated
facts, one :class:`~sagewai.core._records.FactChange` per changed fact (made by
:mod:`sagewai.core._lifecycle`, with before/after snapshots of exactly the fields it touched, so
``ContextEngine.revert`` can undo it), and the
:class:`~sagewai.intelligence.consolidation._report.ConsolidationAction` the report shows. The
consolidator commits the result; a dry run only reports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from pydantic import JsonValue

from sagewai.core import _lifecycle as lifecycle
from sagewai.core._records import ChangeAction, Fact, FactChange, FactStatus, assembled
from sagewai.intelligence.consolidation._annotations import with_annotations
from sagewai.intelligence.consolidation._config import ContradictionStrategy
from sagewai.intelligence.consolidation._contradictions import Flagging, Supersession
from sagewai.intelligence.consolidation._decay import DecayDecision
from sagewai.intelligence.consolidation._dedup import reinforced_strength, touched_at, union
from sagewai.intelligence.consolidation._report import ActionKind, ConsolidationAction

__all__ = [
    "ACTOR",
    "DECAY_RULE",
    "DEDUP_RULE",
    "DEDUP_STRUCTURE_RULE",
    "PlannedStep",
    "contradiction_rule",
    "plan_decay",
    "plan_flagging",
    "plan_merge",
    "plan_supersession",
]

ACTOR = "consolidator"
DEDUP_RULE = "dedup.cosine"
DEDUP_STRUCTURE_RULE = "dedup.structure"
DECAY_RULE = "decay.halflife"

CANONICAL_FIELDS = ("sources", "exact_values", "tags", "strength", "last_accessed_at", "metadata")
DECAY_FIELDS = ("status", "strength", "metadata")


def contradiction_rule(strategy: ContradictionStrategy) -> str:
    """The audit rule name of a contradiction strategy (``contradiction.keep_newer``, ...)."""
    return f"contradiction.{strategy.value}"


def _kept(structure: JsonValue | None) -> dict[str, JsonValue]:
    # Only a structure to add: ``None`` would remove the one the fact already holds.
    return {} if structure is None else {"structure": structure}


@dataclass(frozen=True, slots=True)
class PlannedStep:
    """One decision made concrete: the new fact versions, their audit rows, and the action."""

    updates: tuple[Fact, ...]
    changes: tuple[FactChange, ...]
    action: ConsolidationAction


def _cause(rule: str, reason: str, *, run_id: str, at: datetime) -> lifecycle.Cause:
    # Rows built without re-validation: every field is made here from validated facts, and a
    # run writes one row per changed fact, so validation would be a large share of its time.
    return lifecycle.Cause(ACTOR, rule, reason, at=at, run_id=run_id, trusted=True)


def _action(
    kind: ActionKind,
    rule: str,
    fact_ids: tuple[str, ...],
    reason: str,
    details: dict[str, JsonValue],
    changes: Sequence[FactChange],
    target_id: str | None = None,
) -> ConsolidationAction:
    # Built without re-validation, like the audit rows it names (every field is made here).
    return assembled(
        ConsolidationAction,
        {
            "kind": kind,
            "rule": rule,
            "fact_ids": fact_ids,
            "target_id": target_id,
            "reason": reason,
            "details": details,
            "change_ids": tuple(change.id for change in changes),
        },
    )


def plan_merge(
    canonical: Fact,
    absorbed: Sequence[tuple[Fact, float]],
    *,
    threshold: float,
    run_id: str,
    at: datetime,
    rules: Mapping[str, str] | None = None,
    structure: JsonValue | None = None,
) -> PlannedStep:
    """Fold ``absorbed`` (facts with their cosine to ``canonical``) into ``canonical``.

    ``rules`` names the rule that let each absorbed fact merge (``dedup.cosine`` when missing,
    ``dedup.structure`` for a restatement found below the threshold); the action and the
    canonical's audit row carry ``dedup.structure`` when any member merged under it.
    ``structure`` (the canonical's read structure, as JSON) is kept in its metadata, so later
    runs read it instead of reading the words again.

    The canonical keeps its content and gains the union of everyone's sources, exact values and
    tags; its base strength is reinforced and its decay clock restarts at the latest time any of
    them was used or restated. The others become MERGED with ``merged_into`` set, and stay in
    the store with their own history.
    """
    members = [canonical, *(fact for fact, _ in absorbed)]
    base = reinforced_strength(members)
    latest = max(touched_at(fact) for fact in members)
    updated = canonical.evolve(
        sources=union(fact.sources for fact in members),
        exact_values=union(fact.exact_values for fact in members),
        tags=union(fact.tags for fact in members),
        strength=base,
        last_accessed_at=latest if latest > touched_at(canonical) else canonical.last_accessed_at,
        metadata=with_annotations(canonical, base_strength=base, **_kept(structure)),
    )
    ids = [fact.id for fact, _ in absorbed]
    similarities = {fact.id: round(score, 4) for fact, score in absorbed}
    member_rules = {i: (rules or {}).get(i, DEDUP_RULE) for i in ids}
    structural = [i for i in ids if member_rules[i] == DEDUP_STRUCTURE_RULE]
    group_rule = DEDUP_STRUCTURE_RULE if structural else DEDUP_RULE
    lowest = min(similarities.values())
    reason = (
        f"{len(ids)} near-duplicate(s) of {canonical.id} (cosine >= {lowest:.3f}, threshold "
        f"{threshold:.2f}); sources and exact values kept in the canonical fact"
    )
    if structural:
        reason += f"; {len(structural)} state(s) the same subject, predicate and object"
    updates: list[Fact] = [updated]
    changes = [
        lifecycle.revise(
            canonical,
            updated,
            CANONICAL_FIELDS,
            ChangeAction.REINFORCED,
            _cause(group_rule, reason, run_id=run_id, at=at),
            related=ids,
        )
    ]
    for fact, score in absorbed:
        rule = member_rules[fact.id]
        why = (
            f"states the same as {canonical.id} (same subject, predicate and object; cosine "
            f"{score:.3f})"
            if rule == DEDUP_STRUCTURE_RULE
            else f"near-duplicate of {canonical.id} (cosine {score:.3f} >= {threshold:.2f})"
        )
        merged = lifecycle.merge(
            fact, _cause(rule, why, run_id=run_id, at=at), into_id=canonical.id
        )
        updates.append(merged.fact)
        changes.append(merged.change)
    details: dict[str, JsonValue] = {"similarity": dict(similarities), "strength": base}
    if structural:
        details["rules"] = dict(member_rules)
    action = _action(
        ActionKind.MERGE,
        group_rule,
        tuple(ids),
        reason,
        details,
        changes,
        target_id=canonical.id,
    )
    return PlannedStep(tuple(updates), tuple(changes), action)


def plan_supersession(
    decision: Supersession, *, strategy: ContradictionStrategy, run_id: str, at: datetime
) -> PlannedStep:
    """Supersede the loser of a contradiction: status, closed validity, ``superseded_by``."""
    rule = contradiction_rule(strategy)
    loser = decision.loser
    closed = lifecycle.supersede(
        loser,
        _cause(rule, decision.reason, run_id=run_id, at=at),
        successor_id=decision.winner.id,
        ends=decision.valid_to,
    )
    action = _action(
        ActionKind.SUPERSEDE,
        rule,
        (loser.id,),
        decision.reason,
        {"valid_to": decision.valid_to.isoformat()},
        [closed.change],
        target_id=decision.winner.id,
    )
    return PlannedStep((closed.fact,), (closed.change,), action)


def plan_flagging(decision: Flagging, *, run_id: str, at: datetime) -> PlannedStep:
    """Flag one fact of a contradiction for review; it stays retrievable."""
    rule = contradiction_rule(ContradictionStrategy.FLAG)
    flagged = lifecycle.set_status(
        decision.fact,
        FactStatus.FLAGGED,
        _cause(rule, decision.reason, run_id=run_id, at=at),
        related=decision.against,
    )
    action = _action(
        ActionKind.FLAG,
        rule,
        (decision.fact.id,),
        decision.reason,
        {"contradicts": list(decision.against)},
        [flagged.change],
    )
    return PlannedStep((flagged.fact,), (flagged.change,), action)


def plan_decay(
    fact: Fact,
    decision: DecayDecision,
    *,
    halflife_days: float,
    archive_below: float,
    protected_value: str | None,
    run_id: str,
    at: datetime,
    structure: JsonValue | None = None,
) -> PlannedStep:
    """Write a decayed (or refreshed) strength, archiving the fact when the decision says so.

    ``protected_value`` names the exact value the fact holds the only copy of when an archive
    was refused for that reason; it is only mentioned in the reason. ``structure`` (read this
    run, as JSON) is kept in the metadata the step writes anyway.
    """
    metadata = with_annotations(fact, base_strength=decision.base, **_kept(structure))
    idle = f"{decision.idle_days:.1f} days without use (half-life {halflife_days:g} days)"
    # model_copy, not evolve: only a status, a non-negative float and JSON metadata change, all
    # valid by construction, and decay touches most facts of a first run.
    if decision.archive:
        kind, change_action = ActionKind.ARCHIVE, ChangeAction.ARCHIVED
        updated = fact.model_copy(
            update={
                "status": FactStatus.ARCHIVED,
                "strength": decision.strength,
                "metadata": metadata,
            }
        )
        reason = f"strength {decision.strength:.3f} fell below {archive_below:g} after {idle}"
    elif decision.strength < fact.strength:
        kind, change_action = ActionKind.DECAY, ChangeAction.DECAYED
        updated = fact.model_copy(update={"strength": decision.strength, "metadata": metadata})
        reason = f"strength {fact.strength:.3f} -> {decision.strength:.3f} after {idle}"
        if protected_value is not None:
            reason += (
                f"; not archived: it holds the only copy of the exact value {protected_value!r}"
            )
    else:
        kind, change_action = ActionKind.REFRESH, ChangeAction.REINFORCED
        updated = fact.model_copy(update={"strength": decision.strength, "metadata": metadata})
        reason = f"strength {fact.strength:.3f} -> {decision.strength:.3f}: used again, {idle}"
    change = lifecycle.revise(
        fact,
        updated,
        DECAY_FIELDS,
        change_action,
        _cause(DECAY_RULE, reason, run_id=run_id, at=at),
    )
    action = _action(
        kind,
        DECAY_RULE,
        (fact.id,),
        reason,
        {
            "strength_before": fact.strength,
            "strength_after": decision.strength,
            "idle_days": round(decision.idle_days, 3),
        },
        [change],
    )
    return PlannedStep((updated,), (change,), action)
