"""The pure decision functions of consolidation, tested without any store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sagewai.core._lifecycle import snapshot
from sagewai.core._records import Fact, FactKind, FactStatus, FactType, Provenance
from sagewai.intelligence.consolidation._annotations import (
    base_strength,
    keep_apart,
    with_annotations,
)
from sagewai.intelligence.consolidation._config import ContradictionStrategy
from sagewai.intelligence.consolidation._contradictions import (
    Flagging,
    Supersession,
    conflict,
    resolve_group,
)
from sagewai.intelligence.consolidation._decay import decayed_strength, decide_decay
from sagewai.intelligence.consolidation._dedup import (
    DedupProfile,
    canonical_key,
    merge_refusal,
    reinforced_strength,
)
from sagewai.intelligence.consolidation._planning import plan_merge
from sagewai.intelligence.consolidation._selection import Selection
from sagewai.intelligence.consolidation._state import ConsolidationState, RunCheckpoint

T0 = datetime(2025, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)


def make(content: str, **fields: object) -> Fact:
    return Fact.model_validate({"project_id": "p", "content": content, **fields})


def triple(fact_id: str, predicate: str, obj: str, days: float, **fields: object) -> Fact:
    return make(
        f"Alice {predicate} {obj}",
        id=fact_id,
        subject="Alice",
        predicate=predicate,
        object=obj,
        created_at=T0 + days * DAY,
        **fields,
    )


def profile(content: str, **fields: object) -> DedupProfile:
    return DedupProfile.of(make(content, **fields))


# --------------------------------------------------------------------------- dedup


def test_values_in_content_and_declared_values_are_both_compared() -> None:
    one = profile("deploy to 10.0.0.1")
    two = profile("deploy to 10.0.0.2")
    assert merge_refusal(one, two) == "different exact values: '10.0.0.1' vs '10.0.0.2'"
    declared_one = profile("deploy to the host", exact_values=("10.0.0.1",))
    declared_two = profile("deploy to the host", exact_values=("10.0.0.2",))
    assert merge_refusal(declared_one, declared_two) is not None
    assert merge_refusal(profile("I am 34"), profile("I am 35")) is not None


def test_a_subset_of_values_may_merge_into_the_superset() -> None:
    short = profile("the key is in the vault")
    long = profile("the key is in the vault at /srv/vault/key")
    assert merge_refusal(short, long) is None
    assert min([short, long], key=canonical_key) is long


@pytest.mark.parametrize(
    ("a", "b", "why"),
    [
        ({"kind": FactKind.DOCUMENT}, {}, "different kinds"),
        ({"user_id": "u", "scope": "user"}, {}, "different scopes"),
        ({"fact_type": FactType.DECISION}, {"fact_type": FactType.EVENT}, "incompatible types"),
        (
            {"subject": "Alice", "predicate": "likes", "object": "tea"},
            {"subject": "Alice", "predicate": "likes", "object": "coffee"},
            "different statements",
        ),
        (
            {"subject": "Alice", "predicate": "likes", "object": "tea"},
            {
                "subject": "Alice",
                "predicate": "likes",
                "object": "tea",
                "metadata": {"negated": True},
            },
            "different statements",
        ),
    ],
)
def test_merge_refusals(a: dict[str, object], b: dict[str, object], why: str) -> None:
    first, second = profile("same words here", **a), profile("same words here", **b)
    reason = merge_refusal(first, second)
    assert reason is not None
    assert reason.startswith(why)
    reverse = merge_refusal(second, first)
    assert reverse is not None
    assert reverse.startswith(why)


def test_general_type_is_compatible_and_negation_by_wording_is_refused() -> None:
    assert merge_refusal(profile("x y z", fact_type="decision"), profile("x y z")) is None
    assert merge_refusal(profile("Dan likes sushi"), profile("Dan does not like sushi")) == (
        "one states the negation of the other"
    )


def test_kept_apart_pairs_never_merge() -> None:
    a = make("same", id="a")
    b = make("same", id="b", metadata=with_annotations(make("same"), keep_apart=["a"]))
    assert keep_apart(b) == {"a"}
    assert merge_refusal(DedupProfile.of(a), DedupProfile.of(b)) == "kept apart by a user"


def test_canonical_order_prefers_values_then_claims_then_type_then_age() -> None:
    old = profile("x", id="old", created_at=T0)
    new = profile("x", id="new", created_at=T0 + DAY)
    typed = profile("x", id="typed", created_at=T0 + 2 * DAY, fact_type="decision")
    assert min([new, old], key=canonical_key) is old
    assert min([old, typed], key=canonical_key) is typed


def test_reinforcement_combines_like_independent_evidence() -> None:
    assert reinforced_strength([make("x", strength=0.5), make("x", strength=0.5)]) == 0.75
    assert reinforced_strength([make("x"), make("x", strength=0.2)]) == 1.0
    assert reinforced_strength([make("x", strength=3.0)]) == 1.0


def test_plan_merge_unions_provenance_values_and_tags_and_snapshots_both_sides() -> None:
    canonical = make(
        "x",
        id="c",
        sources=(Provenance(session_id="s1"),),
        tags=("a",),
        strength=0.5,
        created_at=T0,
    )
    other = make(
        "x",
        id="o",
        sources=(Provenance(session_id="s2"),),
        tags=("b",),
        exact_values=("v1",),
        strength=0.5,
        created_at=T0 + 3 * DAY,
    )
    step = plan_merge(canonical, [(other, 0.97)], threshold=0.92, run_id="r", at=T0)
    merged_canonical, absorbed = step.updates
    assert [s.session_id for s in merged_canonical.sources] == ["s1", "s2"]
    assert merged_canonical.tags == ("a", "b")
    assert merged_canonical.exact_values == ("v1",)
    assert merged_canonical.strength == 0.75
    assert base_strength(merged_canonical) == 0.75
    assert merged_canonical.last_accessed_at == T0 + 3 * DAY
    assert absorbed.status is FactStatus.MERGED
    assert absorbed.merged_into == "c"
    reinforce, merge = step.changes
    assert reinforce.before is not None
    assert reinforce.before["strength"] == 0.5
    assert merge.after == {"status": "merged", "merged_into": "c"}
    assert {c.run_id for c in step.changes} == {"r"}
    assert step.action.fact_ids == ("o",)
    assert step.action.target_id == "c"


# --------------------------------------------------------------------------- decay


def test_decay_halves_per_halflife_and_archives_below_the_floor() -> None:
    assert decayed_strength(1.0, 30.0, 30.0) == 0.5
    assert decayed_strength(0.8, 0.0, 30.0) == 0.8
    fact = make("x", created_at=T0)
    assert (
        decide_decay(fact, T0 + DAY, halflife_days=30, archive_below=0.05, min_change=0.05) is None
    )
    half = decide_decay(fact, T0 + 30 * DAY, halflife_days=30, archive_below=0.05, min_change=0.05)
    assert half is not None
    assert (half.strength, half.archive) == (0.5, False)
    gone = decide_decay(fact, T0 + 200 * DAY, halflife_days=30, archive_below=0.05, min_change=0.05)
    assert gone is not None
    assert gone.archive


def test_decay_starts_from_the_recorded_base_and_the_last_use() -> None:
    decayed = make(
        "x", created_at=T0, strength=0.25, metadata=with_annotations(make("x"), base_strength=1.0)
    )
    at_sixty = decide_decay(
        decayed, T0 + 60 * DAY, halflife_days=30, archive_below=0.05, min_change=0.05
    )
    assert at_sixty is None  # already 0.25: nothing to write
    used = decayed.evolve(last_accessed_at=T0 + 59 * DAY)
    refreshed = decide_decay(
        used, T0 + 60 * DAY, halflife_days=30, archive_below=0.05, min_change=0.05
    )
    assert refreshed is not None
    assert refreshed.strength == pytest.approx(0.977, abs=1e-3)
    with pytest.raises(ValueError, match="halflife"):
        decayed_strength(1.0, 1.0, 0.0)


# --------------------------------------------------------------------------- contradictions


def test_single_valued_predicates_contradict_multi_valued_do_not() -> None:
    assert conflict(triple("a", "lives_in", "Paris", 0), triple("b", "lives_in", "London", 1))
    assert not conflict(triple("a", "likes", "tea", 0), triple("b", "likes", "coffee", 1))
    assert conflict(
        triple("a", "likes", "tea", 0),
        triple("b", "likes", "tea", 1, metadata={"negated": True}),
    )
    assert conflict(triple("a", "likes", "tea", 0), triple("b", "dislikes", "tea", 1))
    # Two negations agree; a negation and another value agree.
    assert not conflict(
        triple("a", "lives_in", "Paris", 0, metadata={"negated": True}),
        triple("b", "lives_in", "London", 1),
    )


def test_keep_newer_replays_the_group_in_time_order() -> None:
    paris, london, paris_again = (
        triple("p1", "lives_in", "Paris", 0),
        triple("l", "lives_in", "London", 10),
        triple("p2", "lives_in", "Paris", 20),
    )
    decisions = resolve_group([paris_again, paris, london], ContradictionStrategy.KEEP_NEWER)
    assert all(isinstance(d, Supersession) for d in decisions)
    pairs = [
        (d.loser.id, d.winner.id, d.valid_to) for d in decisions if isinstance(d, Supersession)
    ]
    assert pairs == [("p1", "l", T0 + 10 * DAY), ("l", "p2", T0 + 20 * DAY)]
    # A resolved group resolves to nothing.
    assert resolve_group([paris_again], ContradictionStrategy.KEEP_NEWER) == []


def test_keep_higher_confidence_keeps_the_surest_and_breaks_ties_by_time() -> None:
    sure = triple("sure", "works_at", "Initech", 0, confidence=0.9)
    unsure = triple("unsure", "works_at", "Globex", 5, confidence=0.4)
    decisions = resolve_group([sure, unsure], ContradictionStrategy.KEEP_HIGHER_CONFIDENCE)
    assert [(d.loser.id, d.winner.id) for d in decisions if isinstance(d, Supersession)] == [
        ("unsure", "sure")
    ]
    assert decisions[0].valid_to == T0 + 5 * DAY  # type: ignore[union-attr]
    tie_old = triple("old", "works_at", "Initech", 0, confidence=0.5)
    tie_new = triple("new", "works_at", "Globex", 5, confidence=0.5)
    tie = resolve_group([tie_old, tie_new], ContradictionStrategy.KEEP_HIGHER_CONFIDENCE)
    assert [d.loser.id for d in tie if isinstance(d, Supersession)] == ["old"]


def test_flag_marks_every_active_fact_in_a_contradiction_once() -> None:
    paris = triple("p", "lives_in", "Paris", 0)
    london = triple("l", "lives_in", "London", 1)
    rome = triple("r", "lives_in", "Rome", 2, status=FactStatus.FLAGGED)
    decisions = resolve_group([paris, london, rome], ContradictionStrategy.FLAG)
    assert all(isinstance(d, Flagging) for d in decisions)
    assert {d.fact.id: d.against for d in decisions if isinstance(d, Flagging)} == {
        "p": ("l", "r"),
        "l": ("p", "r"),
    }


def test_kept_apart_facts_are_not_resolved_against_each_other() -> None:
    paris = triple("p", "lives_in", "Paris", 0)
    london = triple(
        "l", "lives_in", "London", 1, metadata=with_annotations(make("x"), keep_apart=["p"])
    )
    assert resolve_group([paris, london], ContradictionStrategy.KEEP_NEWER) == []


# --------------------------------------------------------------------------- state and selection


def test_state_round_trips_and_tolerates_garbage() -> None:
    checkpoint = RunCheckpoint(
        run_id="r",
        started_at=T0,
        reference_time=T0 + DAY,
        fingerprint="f",
        incremental=True,
        since=T0 - DAY,
        cursor=(T0, "id-9"),
    )
    state = ConsolidationState("sel").started(checkpoint)
    assert ConsolidationState.from_json("sel", state.to_json()) == state
    done = state.finished(checkpoint, horizon=T0 + 2 * DAY, at=T0 + 3 * DAY)
    parsed = ConsolidationState.from_json("sel", done.to_json())
    assert parsed.in_progress is None
    assert parsed.last_horizon == T0 + 2 * DAY
    for garbage in (None, 3, "x", {"version": 99}, {"version": 1, "in_progress": {"run_id": 1}}):
        assert ConsolidationState.from_json("sel", garbage).in_progress is None  # type: ignore[arg-type]


def test_selection_keeps_to_its_scope_kind_and_tags() -> None:
    selection = Selection.build(
        project_id="p", org_id=None, scope="user", user_id=None, session_id=None, tags=["ops"]
    )
    assert selection.scope_key is None
    user_fact = make("x", scope="user", user_id="u", tags=("ops",))
    assert selection.contains(user_fact)
    assert not selection.contains(make("x", tags=("ops",)))
    assert not selection.contains(make("x", scope="user", user_id="u"))
    assert not selection.contains(
        make("x", scope="user", user_id="u", tags=("ops",), kind="document")
    )
    where = selection.neighbours(make("x", scope="user", user_id="u", fact_type="decision"))
    assert where.scope_keys == (user_fact.scope_key,)
    assert where.statuses == ("active",)
    assert where.tags_any == ("ops",)


def test_different_subjects_and_opposite_wording_never_merge() -> None:
    alice = profile("prefers window seats", subject="Alice")
    bob = profile("prefers window seats", subject="Bob")
    assert merge_refusal(alice, bob) == "different subjects"
    assert merge_refusal(alice, profile("prefers window seats", subject=" alice ")) is None
    assert merge_refusal(
        profile("Logging is enabled in production"), profile("Logging is disabled in production")
    ) == ("one says the opposite of the other")
    assert (
        merge_refusal(profile("Backups are stored in S3"), profile("Backups are kept in S3"))
        is None
    )


def test_snapshots_are_the_json_dump_of_the_fields() -> None:
    fact = make(
        "x",
        metadata={"consolidation": {"base_strength": 0.5}, "negated": True},
        merged_into="m",
        status=FactStatus.MERGED,
        sources=(Provenance(session_id="s", timestamp=T0),),
        exact_values=("v",),
        tags=("t",),
        created_at=T0,
        last_accessed_at=T0,
        valid_to=T0 + DAY,
    )
    fields = [
        "status",
        "strength",
        "metadata",
        "merged_into",
        "superseded_by",
        "sources",
        "exact_values",
        "tags",
        "last_accessed_at",
        "valid_to",
        "confidence",
        "fact_type",
    ]
    full = fact.model_dump(mode="json")
    assert snapshot(fact, fields) == {name: full[name] for name in fields}
