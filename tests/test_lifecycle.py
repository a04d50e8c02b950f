"""The fact lifecycle: each transition's next version and the audit row it writes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sagewai.core import _lifecycle as lifecycle
from sagewai.core._records import ChangeAction, Fact, FactStatus, Provenance

AT = datetime(2030, 5, 1, tzinfo=UTC)
WHY = lifecycle.Cause("engine", "test.rule", "because", at=AT)


def _fact(**fields: Any) -> Fact:
    return Fact(project_id="p", content="Alice lives in Paris", created_at=AT, **fields)


def test_supersede_closes_validity_and_records_exactly_what_it_touched() -> None:
    old = _fact()
    step = lifecycle.supersede(old, WHY, successor_id="new", ends=AT + timedelta(days=1))
    assert step.fact.status is FactStatus.SUPERSEDED
    assert step.fact.valid_to == AT + timedelta(days=1)
    assert step.fact.superseded_by == "new"
    change = step.change
    assert (change.action, change.fact_id, change.related_fact_ids) == (
        ChangeAction.SUPERSEDED,
        old.id,
        ("new",),
    )
    assert change.before == {"status": "active", "valid_to": None, "superseded_by": None}
    assert change.after == {
        "status": "superseded",
        "valid_to": "2030-05-02T00:00:00Z",
        "superseded_by": "new",
    }
    assert (change.actor, change.rule, change.reason, change.at) == (
        "engine",
        "test.rule",
        "because",
        AT,
    )


def test_validity_never_ends_before_it_began() -> None:
    old = _fact(valid_from=AT)
    step = lifecycle.supersede(old, WHY, successor_id="new", ends=AT - timedelta(days=30))
    assert step.fact.valid_to == AT


def test_a_repeat_that_arrives_merged_has_no_earlier_state() -> None:
    repeat = _fact()
    arrived = lifecycle.merge(repeat, WHY, into_id="target", stored=False)
    assert (arrived.fact.status, arrived.fact.merged_into) == (FactStatus.MERGED, "target")
    assert arrived.change.before is None
    assert arrived.change.after is None
    stored = lifecycle.merge(repeat, WHY, into_id="target")
    assert stored.change.before == {"status": "active", "merged_into": None}


def test_reinforce_is_capped_and_adds_the_source() -> None:
    strong = _fact(strength=lifecycle.MAX_STRENGTH - 0.1, confidence=0.5)
    source = Provenance(session_id="s", message_id="m")
    step = lifecycle.reinforce(strong, WHY, source=source, step=1.0, confidence=0.9)
    assert step.fact.strength == lifecycle.MAX_STRENGTH
    assert step.fact.confidence == 0.9
    assert step.fact.sources[-1] == source
    assert step.fact.last_accessed_at == AT
    assert step.change.action is ChangeAction.REINFORCED
    assert set(step.change.before or {}) == set(lifecycle.REINFORCED_FIELDS)


@pytest.mark.parametrize("status", list(lifecycle.STATUS_ACTIONS))
def test_every_status_has_its_audited_action(status: FactStatus) -> None:
    step = lifecycle.set_status(_fact(), status, WHY)
    assert step.fact.status is status
    assert step.change.action is lifecycle.STATUS_ACTIONS[status]
    assert step.change.after == {"status": status.value}


def test_restore_undoes_a_change() -> None:
    old = _fact()
    closed = lifecycle.supersede(old, WHY, successor_id="new", ends=AT)
    assert closed.change.before is not None
    undo = lifecycle.restore(closed.fact, closed.change.before, WHY)
    assert undo.fact.status is FactStatus.ACTIVE
    assert undo.fact.valid_to is None
    assert undo.fact.superseded_by is None
    assert undo.change.action is ChangeAction.RESTORED
    assert undo.change.after == closed.change.before
    assert undo.change.before == closed.change.after


def test_trusted_rows_equal_validated_rows() -> None:
    old = _fact()
    checked = lifecycle.supersede(old, WHY, successor_id="new", ends=AT).change
    trusted = lifecycle.supersede(
        old,
        lifecycle.Cause("engine", "test.rule", "because", at=AT, trusted=True),
        successor_id="new",
        ends=AT,
    ).change
    assert trusted.model_dump(exclude={"id"}) == checked.model_dump(exclude={"id"})


def test_a_created_row_defaults_to_when_the_fact_was_recorded() -> None:
    fact = _fact()
    assert lifecycle.created(fact, lifecycle.Cause("engine", "engine.add")).at == AT
    assert lifecycle.created(fact, WHY.because("x")).reason == "x"


def test_a_tombstone_holds_no_content() -> None:
    row = lifecycle.tombstone("f1", "p", WHY)
    assert (row.action, row.before, row.after, row.fact_id) == (
        ChangeAction.DELETED,
        None,
        None,
        "f1",
    )
