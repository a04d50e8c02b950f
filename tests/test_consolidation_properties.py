"""Properties of consolidation over generated worlds (hypothesis), on the in-memory stores.

Whatever the facts, the batch size and the strategy:

* a dry run changes nothing and plans exactly the actions the real run then takes;
* a second run at the same reference time changes nothing (the result is a fixed point);
* a run interrupted at any commit and then resumed ends in the state of an uninterrupted run;
* no exact value leaves the active facts of its scope through a merge.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagewai.context._engine import ContextEngine
from sagewai.core._records import Fact, FactStatus
from sagewai.errors import BackendError
from sagewai.extraction._exact_values import find_exact_values
from sagewai.intelligence import MemoryConsolidator
from tests.test_consolidation import (
    DAY,
    NOW,
    FailingMemoryStore,
    all_facts,
    comparable,
    make_factory,
)

_T = TypeVar("_T")

SENTENCES = (
    "The staging database runs PostgreSQL",
    "the staging database runs postgresql",
    "Deploy the billing API to {value}",
    "The nightly backup goes to {value}",
    "Alice enjoys hiking on weekends",
    "alice enjoys hiking on weekends!",
)
VALUES = ("10.0.0.1", "10.0.0.2", "/srv/backups/a", "v2.4.1")
TRIPLES = (
    None,
    ("Alice", "lives_in", "Paris"),
    ("Alice", "lives_in", "London"),
    ("Alice", "likes", "tea"),
    ("Alice", "likes", "coffee"),
    ("Bob", "works_at", "Initech"),
    ("Bob", "works_at", "Globex"),
)


@st.composite
def fact_specs(draw: st.DrawFn) -> dict[str, Any]:
    template = draw(st.sampled_from(SENTENCES))
    spec: dict[str, Any] = {
        "content": template.format(value=draw(st.sampled_from(VALUES))),
        "age_days": draw(st.integers(min_value=0, max_value=300)),
        "confidence": draw(st.sampled_from((0.4, 0.7, 0.9))),
        "fact_type": draw(st.sampled_from(("general", "preference"))),
        "user": draw(st.sampled_from((None, None, "alice"))),
        "triple": draw(st.sampled_from(TRIPLES)),
        "negated": draw(st.booleans()),
        "strength": draw(st.sampled_from((1.0, 0.6))),
        "used_days_ago": draw(st.sampled_from((None, 0, 5, 90))),
    }
    if draw(st.booleans()):
        spec["exact_values"] = [draw(st.sampled_from(VALUES))]
    return spec


def build(ctx: ContextEngine, specs: list[dict[str, Any]]) -> list[Fact]:
    facts = []
    for index, spec in enumerate(specs):
        fields: dict[str, Any] = {
            "fact_id": f"f{index:02d}",
            "created_at": NOW - spec["age_days"] * DAY,
            "confidence": spec["confidence"],
            "fact_type": spec["fact_type"],
            "exact_values": spec.get("exact_values", []),
        }
        if spec["user"] is not None:
            fields["user_id"] = spec["user"]
        if spec["triple"] is not None:
            subject, predicate, obj = spec["triple"]
            fields.update(subject=subject, predicate=predicate, object=obj)
            if spec["negated"]:
                fields["metadata"] = {"negated": True}
        fact = ctx.port.build_fact(spec["content"], **fields)
        used = spec["used_days_ago"]
        fact = fact.evolve(
            strength=spec["strength"],
            last_accessed_at=None if used is None else max(fact.created_at, NOW - used * DAY),
        )
        facts.append(fact)
    return facts


def run(coroutine: Coroutine[Any, Any, _T]) -> _T:
    return asyncio.run(coroutine)


def active_values(facts: dict[str, Fact]) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for fact in facts.values():
        if fact.status in (FactStatus.ACTIVE, FactStatus.FLAGGED):
            for value in (*fact.exact_values, *find_exact_values(fact.content)):
                out.add((fact.scope_key, value))
    return out


WORLDS = st.lists(fact_specs(), min_size=2, max_size=14)
STRATEGIES = st.sampled_from(("keep_newer", "keep_higher_confidence", "flag"))
SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(specs=WORLDS, strategy=STRATEGIES, batch_size=st.integers(1, 5))
def test_dry_run_plans_the_real_run_and_the_result_is_a_fixed_point(
    specs: list[dict[str, Any]], strategy: str, batch_size: int
) -> None:
    async def scenario() -> None:
        ctx = make_factory("memory", Path("."))()
        async with ctx:
            await ctx.add_many(build(ctx, specs))
            before = await all_facts(ctx)
            consolidator = MemoryConsolidator(
                ctx,
                contradiction_strategy=strategy,
                batch_size=batch_size,
                similarity_threshold=0.9,
            )
            planned = await consolidator.consolidate(dry_run=True, now=NOW, scope=None)
            assert await all_facts(ctx) == before
            done = await consolidator.consolidate(now=NOW, scope=None)
            assert comparable(done) == comparable(planned)
            assert done.total_processed == planned.total_processed
            again = await consolidator.consolidate(now=NOW, scope=None)
            assert again.actions == [], [a.reason for a in again.actions]
            # Merges never lose a value: every (scope, value) stays held by a live fact, except
            # what decay archived (which keeps the fact, and is allowed when another copy lives).
            after = await all_facts(ctx)
            archived = {f.id for f in after.values() if f.status is FactStatus.ARCHIVED}
            superseded = {f.id for f in after.values() if f.status is FactStatus.SUPERSEDED}
            lost = active_values(before) - active_values(after)
            for scope_key, value in lost:
                holders = [
                    f.id
                    for f in before.values()
                    if f.scope_key == scope_key
                    and value in (*f.exact_values, *find_exact_values(f.content))
                ]
                assert set(holders) <= archived | superseded, (value, holders)

    run(scenario())


@SETTINGS
@given(
    specs=WORLDS,
    strategy=STRATEGIES,
    batch_size=st.integers(1, 4),
    fail_on=st.integers(1, 6),
)
def test_an_interrupted_run_always_resumes_to_the_uninterrupted_state(
    specs: list[dict[str, Any]], strategy: str, batch_size: int, fail_on: int
) -> None:
    async def scenario() -> None:
        reference = make_factory("memory", Path("."))()
        interrupted = make_factory("memory", Path("."))()
        async with reference, interrupted:
            for ctx in (reference, interrupted):
                await ctx.add_many(build(ctx, specs))
            options: dict[str, Any] = {
                "contradiction_strategy": strategy,
                "batch_size": batch_size,
                "similarity_threshold": 0.9,
            }
            await MemoryConsolidator(reference, **options).consolidate(now=NOW, scope=None)
            store = interrupted.stores.metadata
            assert isinstance(store, FailingMemoryStore)
            store.fail_on = store.applies + fail_on
            consolidator = MemoryConsolidator(interrupted, **options)
            try:
                await consolidator.consolidate(now=NOW, scope=None)
            except BackendError:
                await consolidator.consolidate(now=NOW + DAY, scope=None)
            assert await all_facts(interrupted) == await all_facts(reference)

    run(scenario())
