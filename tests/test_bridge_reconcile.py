"""Write-time reconciliation: ADD / UPDATE / NOOP rules, the LLM judge, echoes, idempotence."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from sagewai.context import MemoryBridge
from sagewai.context._reconcile import Candidate, ClaimIndex, LLMReconciler, ReconcilingWriter
from sagewai.core._claims import Claim, Neighbour, ReconcileAction, decide, negation_pair
from sagewai.core._records import ChangeAction, Fact, FactStatus, FactType, Provenance
from sagewai.extraction._base import ExtractedFact, ExtractionContext
from sagewai.extraction._rules import RuleBasedFactExtractor
from sagewai.llm._errors import ModelUnreachableError
from sagewai.testing._llm import ScriptedLLM
from tests.helpers import memory_engine


def fact(content: str, **fields: object) -> Fact:
    return Fact(project_id="p1", content=content, **fields)  # type: ignore[arg-type]


class SentenceExtractor:
    """Every sentence of every role becomes a fact (as a permissive LLM extractor would)."""

    async def extract(
        self, text: str, context: ExtractionContext | None = None
    ) -> list[ExtractedFact]:
        return [
            ExtractedFact(
                content=s, fact_type=FactType.GENERAL, confidence=0.9, extractor="sentences"
            )
            for s in re.split(r"(?<=[.!?])\s+", text.strip())
            if s
        ]


# --------------------------------------------------------------------------- pure rules

PARIS = fact("Alice lives in Paris", subject="Alice", predicate="lives_in", object="Paris")


def test_single_valued_predicate_with_a_new_object_is_an_update() -> None:
    berlin = fact("Alice lives in Berlin", subject="Alice", predicate="lives_in", object="Berlin")
    decision = decide(berlin, [Neighbour(PARIS, 0.4)])
    assert decision.action is ReconcileAction.UPDATE
    assert decision.rule == "reconcile.triple"
    assert [t.id for t in decision.targets] == [PARIS.id]


def test_multi_valued_predicate_adds() -> None:
    tea = fact("Alice likes tea", subject="Alice", predicate="likes", object="tea")
    coffee = fact("Alice likes coffee", subject="Alice", predicate="likes", object="coffee")
    assert decide(coffee, [Neighbour(tea, 0.95)]).action is ReconcileAction.ADD


def test_negated_triple_is_an_update_by_negation() -> None:
    tea = fact("Alice likes tea", subject="Alice", predicate="likes", object="tea")
    no_tea = fact(
        "Alice no longer likes tea",
        subject="alice",
        predicate="likes",
        object="Tea",
        metadata={"negated": True},
    )
    decision = decide(no_tea, [Neighbour(tea, 0.7)])
    assert (decision.action, decision.rule) == (ReconcileAction.UPDATE, "reconcile.negation")
    hates = fact("Alice hates tea", subject="Alice", predicate="dislikes", object="tea")
    assert decide(hates, [Neighbour(tea, 0.6)]).rule == "reconcile.negation"


def test_negation_by_wording_without_triples() -> None:
    assert negation_pair("The build uses caching", "The build does not use caching")
    assert not negation_pair("The build uses caching", "The build uses caching")
    old = fact("The nightly job sends reports")
    new = fact("The nightly job never sends reports")
    decision = decide(new, [Neighbour(old, 0.8)])
    assert (decision.action, decision.rule) == (ReconcileAction.UPDATE, "reconcile.negation")


def test_same_triple_or_near_identical_text_is_a_noop() -> None:
    again = fact("Alice's home is Paris", subject="Alice", predicate="lives_in", object="paris")
    decision = decide(again, [Neighbour(PARIS, 0.5)])
    assert (decision.action, decision.rule) == (ReconcileAction.NOOP, "reconcile.duplicate")
    plain = fact("The office closes at six")
    same = fact("The office closes at six.")
    assert decide(same, [Neighbour(plain, 0.97)]).action is ReconcileAction.NOOP
    assert decide(same, [Neighbour(plain, 0.80)]).action is ReconcileAction.ADD


def test_different_exact_values_are_never_duplicates() -> None:
    old = fact("The database listens on port 5432", exact_values=("5432",))
    new = fact("The database listens on port 5433", exact_values=("5433",))
    assert decide(new, [Neighbour(old, 0.99)]).action is ReconcileAction.ADD


def test_neighbours_of_another_scope_are_ignored() -> None:
    user_fact = fact(
        "Alice lives in Berlin",
        subject="Alice",
        predicate="lives_in",
        object="Berlin",
        scope="user",
        user_id="alice",
    )
    assert decide(user_fact, [Neighbour(PARIS, 0.9)]).action is ReconcileAction.ADD


# --------------------------------------------------------------------------- through the bridge


async def test_update_keeps_the_old_fact_retrievable_as_of_before_the_update() -> None:
    start = datetime.now(UTC) - timedelta(days=10)
    async with memory_engine() as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=1, fact_extractor=RuleBasedFactExtractor()
        )
        said = {"role": "user", "name": "Alice"}
        await bridge.process_message({**said, "content": "I live in Paris.", "timestamp": start})
        moved_at = start + timedelta(days=5)
        await bridge.process_message(
            {**said, "content": "I live in Berlin now.", "timestamp": moved_at}
        )
        now = await ctx.search("where does Alice live", top_k=5, kinds=["fact"])
        assert [r.fact.content for r in now] == ["Alice lives in Berlin now."]
        then = await ctx.search(
            "where does Alice live", top_k=5, as_of=start + timedelta(days=2), kinds=["fact"]
        )
        assert [r.fact.content for r in then] == ["Alice lives in Paris."]
        (old,) = await ctx.list(kinds=["fact"], statuses=[FactStatus.SUPERSEDED])
        assert old.valid_to == moved_at
        assert old.superseded_by == now[0].fact.id
        history = await ctx.history(old.id)
        assert [c.action for c in history] == [ChangeAction.CREATED, ChangeAction.SUPERSEDED]
        assert history[1].rule == "reconcile.triple"
        assert "lives_in" in history[1].reason
        (created,) = await ctx.history(now[0].fact.id)
        assert created.rule == "reconcile.triple"
        assert created.related_fact_ids == (old.id,)


async def test_a_statement_older_than_memory_is_kept_as_history() -> None:
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    async with memory_engine() as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=1, fact_extractor=RuleBasedFactExtractor()
        )
        said = {"role": "user", "name": "Alice"}
        await bridge.process_message(
            {**said, "content": "I live in Berlin.", "timestamp": t0 + timedelta(days=30)}
        )
        await bridge.process_message({**said, "content": "I live in Paris.", "timestamp": t0})
        (current,) = await ctx.list(kinds=["fact"])
        assert current.object == "Berlin"
        (history,) = await ctx.list(kinds=["fact"], statuses=[FactStatus.SUPERSEDED])
        assert history.object == "Paris"
        assert history.valid_to == t0 + timedelta(days=30)
        found = await ctx.search("Alice lives", as_of=t0 + timedelta(days=1), kinds=["fact"])
        assert [r.fact.object for r in found] == ["Paris"]


async def test_a_repeat_reinforces_the_existing_fact() -> None:
    async with memory_engine() as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=1, fact_extractor=RuleBasedFactExtractor()
        )
        await bridge.process_message({"role": "user", "name": "Bo", "content": "I love jazz."})
        await bridge.process_message(
            {"role": "user", "name": "Bo", "content": "I love jazz.", "id": "m2"}
        )
        (stored,) = await ctx.list(kinds=["fact"])
        assert stored.strength == pytest.approx(1.2)
        assert stored.last_accessed_at is not None
        assert [s.message_id for s in stored.sources][1] == "m2"
        history = await ctx.history(stored.id)
        assert [c.action for c in history] == [ChangeAction.CREATED, ChangeAction.REINFORCED]
        assert history[1].rule == "reconcile.duplicate"
        assert history[1].before is not None
        assert history[1].before["strength"] == 1.0
        assert bridge.stats.facts_reinforced == 1
        (repeat,) = await ctx.list(kinds=["fact"], statuses=[FactStatus.MERGED])
        assert repeat.merged_into == stored.id
        assert [c.action for c in await ctx.history(repeat.id)] == [ChangeAction.MERGED]


async def test_writing_the_same_candidates_twice_changes_nothing() -> None:
    async with memory_engine() as ctx:
        writer = ReconcilingWriter(ctx.port)
        source = Provenance(session_id="s1", message_id="m1")
        paris = ctx.port.build_fact(
            "Alice lives in Paris", subject="Alice", predicate="lives_in", object="Paris"
        )
        await writer.write([Candidate(paris, "user", source)])
        source2 = Provenance(session_id="s1", message_id="m2")
        again = ctx.port.build_fact(
            "Alice lives in Paris!", subject="Alice", predicate="lives_in", object="Paris"
        )
        berlin = ctx.port.build_fact(
            "Alice lives in Berlin", subject="Alice", predicate="lives_in", object="Berlin"
        )
        batch = [Candidate(again, "user", source2), Candidate(berlin, "user", source2)]
        first = await writer.write(batch)
        assert (first.reinforced, first.updated) == (1, 1)
        snapshot = sorted(
            (f.id, f.status, f.strength) for f in await ctx.list(kinds=["fact"], statuses=None)
        )
        changes = len(await ctx.changes())
        replay = await writer.write(batch)
        assert (replay.added, replay.updated, replay.reinforced) == (0, 0, 0)
        assert sorted(
            (f.id, f.status, f.strength) for f in await ctx.list(kinds=["fact"], statuses=None)
        ) == (snapshot)
        assert len(await ctx.changes()) == changes


# --------------------------------------------------------------------------- echoes


async def test_assistant_restating_memory_is_not_stored_again() -> None:
    async with memory_engine() as ctx:
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=1, fact_extractor=SentenceExtractor()
        )
        await bridge.process_message("The release train leaves every Tuesday.", session_id="s1")
        await bridge.process_message(
            "The release train leaves every Tuesday.", role="assistant", session_id="s1"
        )
        await bridge.process_message(
            "Quarterly planning happens in the Lisbon office.", role="assistant", session_id="s1"
        )
        assert bridge.stats.echoes_suppressed == 1
        facts = await ctx.list(kinds=["fact"])
        assert len(facts) == 2
        assert all(f.strength == 1.0 for f in facts)  # an echo is no evidence: no reinforcement


async def test_recalled_facts_make_echoes_even_from_another_scope() -> None:
    async with memory_engine() as ctx:
        shown = await ctx.add("Bob's laptop runs Ubuntu 24.04", user_id="bob")
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=1, fact_extractor=SentenceExtractor()
        )
        bridge.note_recalled("s9", [shown])
        await bridge.process_message(
            "Bob's laptop runs Ubuntu 24.04.", role="assistant", session_id="s9"
        )
        assert bridge.stats.echoes_suppressed == 1
        assert await ctx.count(kinds=["fact"]) == 1


# --------------------------------------------------------------------------- the LLM judge

TEA = fact("Alice enjoys green tea in the morning")
FOND = fact("Alice is fond of green tea at breakfast")


async def test_llm_judge_decides_ambiguous_cases() -> None:
    llm = ScriptedLLM(['{"action": "NOOP", "targets": [1], "reason": "same preference"}'])
    decision = await LLMReconciler(llm).decide(FOND, [Neighbour(TEA, 0.7)])
    assert (decision.action, decision.rule) == (ReconcileAction.NOOP, "reconcile.llm")
    assert decision.targets == (TEA,)
    assert decision.reason == "same preference"
    assert "Alice enjoys green tea" in llm.calls[0].prompt


async def test_llm_judge_update_through_the_bridge_is_recorded() -> None:
    llm = ScriptedLLM(['```json\n{"action": "UPDATE", "targets": [1], "reason": "moved"}\n```'])
    async with memory_engine() as ctx:
        old = await ctx.add("The team standup is at 9:30 in room A")
        bridge = MemoryBridge(
            context_engine=ctx,
            extract_every_n_turns=1,
            fact_extractor=SentenceExtractor(),
            reconciler=LLMReconciler(llm, ask_above=0.0),
        )
        await bridge.process_message("The team standup moved to room B.")
        assert (await ctx.get(old.id)).status is FactStatus.SUPERSEDED
        changes = await ctx.history(old.id)
        assert (changes[-1].rule, changes[-1].reason) == ("reconcile.llm", "moved")


@pytest.mark.parametrize(
    "answer",
    [
        "not json at all",
        '{"action": "MERGE", "targets": [1]}',
        '{"action": "UPDATE", "targets": [7]}',
        '{"action": "NOOP", "targets": []}',
        ModelUnreachableError("no network"),
    ],
)
async def test_llm_judge_falls_back_to_the_rules(answer: object) -> None:
    llm = ScriptedLLM([answer])  # type: ignore[list-item]
    decision = await LLMReconciler(llm).decide(FOND, [Neighbour(TEA, 0.7)])
    assert (decision.action, decision.rule) == (ReconcileAction.ADD, "reconcile.new")
    assert len(llm.calls) == 1


async def test_llm_judge_is_not_asked_when_the_rules_are_certain() -> None:
    llm = ScriptedLLM([])
    berlin = fact("Alice lives in Berlin", subject="Alice", predicate="lives_in", object="Berlin")
    reconciler = LLMReconciler(llm)
    assert (await reconciler.decide(berlin, [Neighbour(PARIS, 0.9)])).rule == "reconcile.triple"
    assert (await reconciler.decide(TEA, [Neighbour(FOND, 0.2)])).action is ReconcileAction.ADD
    assert llm.calls == []


async def test_llm_judge_may_not_merge_different_exact_values() -> None:
    llm = ScriptedLLM(['{"action": "NOOP", "targets": [1], "reason": "same"}'])
    old = fact("Deploy key is AKIA1234", exact_values=("AKIA1234",))
    new = fact("Deploy key is AKIA9999", exact_values=("AKIA9999",))
    decision = await LLMReconciler(llm).decide(new, [Neighbour(old, 0.9)])
    assert decision.action is ReconcileAction.ADD


async def test_the_claim_index_sees_what_other_writers_did() -> None:
    async with memory_engine() as ctx:
        index = ClaimIndex(ctx.port)
        berlin = Claim("alice", "lives_in", "berlin", negated=False)
        key = ctx.port.address().key
        await index.prepare({key: ["Alice"]})  # loads the (empty) group
        assert index.related(key, "Alice", berlin) == []
        paris = await ctx.add(
            "Alice's home is Paris", subject="Alice", predicate="lives_in", object="Paris"
        )
        for n in range(30):
            await ctx.add(
                f"Alice likes item {n}", subject="Alice", predicate="likes", object=f"{n}"
            )
        await index.prepare({key: ["Alice"]})  # reads only what changed since
        assert index.related(key, "Alice", berlin) == [paris.id]
        await ctx.set_status(paris.id, FactStatus.ARCHIVED, reason="test")
        await index.prepare({key: ["Alice"]})
        assert index.related(key, "Alice", berlin) == []


async def test_a_contradiction_far_from_the_nearest_vectors_is_still_found() -> None:
    async with memory_engine() as ctx:
        old = await ctx.add(
            "Alice's home is Paris", subject="Alice", predicate="lives_in", object="Paris"
        )
        for n in range(40):
            await ctx.add(
                f"Alice moved the meeting about lives in Berlin item {n}",
                subject="Alice",
                predicate="likes",
                object=f"item {n}",
            )
        bridge = MemoryBridge(
            context_engine=ctx, extract_every_n_turns=1, fact_extractor=RuleBasedFactExtractor()
        )
        await bridge.process_message(
            {"role": "user", "name": "Alice", "content": "I live in Berlin."}
        )
        assert (await ctx.get(old.id)).status is FactStatus.SUPERSEDED
