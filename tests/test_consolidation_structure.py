"""Consolidation never merges two different facts, and merges restatements cosine misses.

The pure rules (:mod:`sagewai.intelligence.consolidation._structure` and ``.equivalence``) are
tested on the differences of issue 15 one by one; the planted scenario of the issue runs end to
end on the embedded default with the real MiniLM embedder, dry run first.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from sagewai.context._engine import ContextEngine
from sagewai.core._records import ChangeAction, Fact, FactStatus
from sagewai.intelligence import MemoryConsolidator
from sagewai.intelligence.consolidation._dedup import DedupProfile, merge_refusal, merge_rule
from sagewai.intelligence.consolidation._equivalence import same_statement, structural_refusal
from sagewai.intelligence.consolidation._report import ConsolidationReport
from sagewai.intelligence.consolidation._structure import (
    STRUCTURE_KEY,
    decode_reading,
    encode_reading,
    has_structure,
    read_structure,
    reading_of,
    structure_json,
    structure_of,
    vocabulary_predicate,
)


def refusal(a: str, b: str) -> str | None:
    return structural_refusal(read_structure(a), read_structure(b))


def profile(content: str, **fields: object) -> DedupProfile:
    return DedupProfile.of(Fact(project_id="p", content=content, **fields))  # type: ignore[arg-type]


def test_a_plain_fact_gets_subject_predicate_and_object_from_the_extractor_vocabulary() -> None:
    likes = read_structure("Ben likes ramen.")
    assert (likes.subject, likes.predicate, likes.object) == ("ben", "likes", "ramen")
    assert likes.source == "sentence"
    assert read_structure("Ben loves ramen.").predicate == "likes"
    moved = read_structure("Nadia moved to Berlin.")
    assert (moved.subject, moved.phrase, moved.tense) == ("nadia", "moved to berlin", "past")
    assert vocabulary_predicate("moved to berlin") == ("lives_in", False)
    # Same predicate through the extractor, so only the tense tells them apart.
    reason = refusal("Nadia moved to Berlin.", "Nadia lives in Berlin.")
    assert reason is not None
    assert "tense" in reason
    assert read_structure("Ana is using Rust.").tense == "progressive"
    assert read_structure("Ana doesn't use Rust.").negated
    values = read_structure("Ben paid $40 for 3 books on 2024-03-05 with Python 3.12").values
    assert {"$40", "3", "2024-03-05", "3.12"} <= values


@pytest.mark.parametrize(
    ("a", "b", "why"),
    [
        ("Ben likes ramen.", "Ben uses ramen.", "different predicates"),
        ("Chen studies yoga.", "Chen uses yoga.", "different predicates"),
        ("Eli recommends chess.", "Eli sells chess.", "different predicates"),
        ("Ben likes ramen.", "Ben likes sushi.", "different objects"),
        ("Ben likes ramen.", "Ana likes ramen.", "different names"),
        ("Ben likes ramen.", "Ben does not like ramen.", "negation"),
        ("Ben likes ramen.", "Ben no longer likes ramen.", "negation"),
        ("Ben has 3 cats.", "Ben has 4 cats.", "different values"),
        ("Ben has three cats.", "Ben has four cats.", "different values"),
        ("Ben paid $40 for the ticket.", "Ben paid $45 for the ticket.", "different values"),
        ("Ben's exam is on March 3.", "Ben's exam is on March 4.", "different values"),
        ("The API runs Python 3.11.", "The API runs Python 3.12.", "different values"),
        ("Ben ran 5 km today.", "Ben ran 5 miles today.", "different values"),
        ("Ben had lunch with Tom.", "Ben had lunch with Sara.", "different names"),
        ("Ben lives in Paris.", "Ben lives in Lyon.", "different names"),
        ("Ben moved to Berlin.", "Ben is moving to Berlin.", "different tense"),
        ("Ben used Rust.", "Ben will use Rust.", "different tense"),
        ("The team likes Kafka.", "The team uses Kafka.", "where the other says"),
        ("Ben hates ramen.", "Ben loves ramen.", "different predicates"),
        ("My sister lives in Rome.", "My brother lives in Rome.", "where the other says"),
        ("Ben prefers tea over coffee.", "Ben prefers coffee over tea.", "another order"),
        ("Ben likes ramen.", "Ben likes ramen at home.", "one adds"),
        ("Ben used to live in Paris.", "Ben lives in Paris.", "different tense"),
        ("Ben Ito had lunch with Alma.", "alma ito had lunch with ben", "roles swapped"),
    ],
)
def test_a_difference_that_changes_the_claim_refuses_the_merge(a: str, b: str, why: str) -> None:
    reason = refusal(a, b)
    assert reason is not None
    assert why in reason
    assert refusal(b, a) is not None  # symmetric
    assert merge_rule(profile(a), profile(b), 0.99, threshold=0.92, floor=0.75) is None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Ben likes ramen.", "Ben really likes ramen."),
        ("Ana uses Rust.", "Ana is using Rust."),
        ("Eli recommends chess.", "Eli keeps recommending chess."),
        ("Ana is not using Rust.", "Ana isn't using Rust."),
        ("Ben likes ramen on Fridays.", "On Fridays, Ben likes ramen."),
        ("Ben likes ramen.", "ben likes ramen"),
        ("Chen studies yoga.", "Chen currently studies yoga."),
        ("Tom is Priya's manager", "Priya's manager is Tom"),
        ("Ben has two kids.", "Ben has 2 kids."),
        ("Ben likes ramen.", "Ramen is liked by Ben."),
    ],
)
def test_a_restatement_merges_below_the_threshold_as_dedup_structure(a: str, b: str) -> None:
    assert refusal(a, b) is None
    assert same_statement(read_structure(a), read_structure(b))
    rule = merge_rule(profile(a), profile(b), 0.80, threshold=0.92, floor=0.75)
    assert rule == "dedup.structure"
    assert merge_rule(profile(a), profile(b), 0.95, threshold=0.92, floor=0.75) == "dedup.cosine"
    assert merge_rule(profile(a), profile(b), 0.70, threshold=0.92, floor=0.75) is None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Ana works at Acme.", "Ana is employed at Acme."),
        ("Ana works at Acme.", "Ana has a job at Acme."),
        ("Ana works for Acme.", "Ana is employed by Acme."),
        ("Ana lives in Porto.", "Ana is based in Porto."),
        ("Ana lives in Porto.", "Ana resides in Porto."),
        ("Ben likes jazz.", "Ben is a fan of jazz."),
        ("Ben likes jazz.", "Ben is fond of jazz."),
        ("Ben studies at MIT.", "Ben is enrolled at MIT."),
        ("Ben is from Lima.", "Ben hails from Lima."),
        ("Ben speaks Spanish.", "Ben is fluent in Spanish."),
        ("Ben uses Docker.", "Ben relies on Docker."),
        ("Ben uses Docker.", "Ben makes use of Docker."),
        ("Ben owns a sailboat.", "Ben is the owner of a sailboat."),
        ("Ben visited Rome.", "Ben has been to Rome."),
        ("Ben is a member of the chess club.", "Ben belongs to the chess club."),
        ("Ben works as a nurse.", "Ben is employed as a nurse."),
        ("Ben is allergic to peanuts.", "Ben has an allergy to peanuts."),
    ],
)
def test_the_same_claim_in_another_verb_phrase_merges(a: str, b: str) -> None:
    """Issue 37: verbs of one vocabulary predicate state one claim ("works at" / "is employed
    at" / "has a job at"), read through the shared vocabulary (sagewai.core._predicates)."""
    one, two = read_structure(a), read_structure(b)
    assert one.claim is not None
    assert one.claim == two.claim
    assert refusal(a, b) is None
    assert refusal(b, a) is None
    assert same_statement(one, two)
    assert merge_rule(profile(a), profile(b), 0.80, threshold=0.92, floor=0.75) == "dedup.structure"


@pytest.mark.parametrize(
    ("a", "b", "why"),
    [
        ("Priya lives in Porto.", "Priya is from Porto.", "different predicates"),
        ("Ana is based in Kyoto.", "Ana has been to Kyoto.", "tense"),
        ("Ana resides in Kyoto.", "Ana is a native of Kyoto.", "different predicates"),
        ("Ana works at MIT.", "Ana studies at MIT.", "different predicates"),
        ("Ana is employed at Oxford.", "Ana is enrolled at Oxford.", "different predicates"),
        ("Ana relies on Docker.", "Ana is a fan of Docker.", "different predicates"),
        ("Ana works at Acme.", "Ana works at Globex.", "different names"),
        ("Ana is employed at Acme.", "Ana is not employed at Acme.", "negation"),
        ("Ana is living in Oslo.", "Ana is moving to Oslo.", ""),
        ("Ana is a fan of jazz.", "Ana is a fan of opera.", ""),
    ],
)
def test_claims_of_other_families_or_objects_never_merge(a: str, b: str, why: str) -> None:
    reason = refusal(a, b)
    assert reason is not None
    assert why in reason
    assert refusal(b, a) is not None
    assert merge_rule(profile(a), profile(b), 0.99, threshold=0.92, floor=0.75) is None


def test_a_change_of_state_is_no_claim_of_the_state() -> None:
    # "is moving to" and "is joining" tell an event, not where one lives or what one belongs to.
    assert read_structure("Ana is moving to Oslo.").claim is None
    assert read_structure("Ana is joining the chess club.").claim is None
    assert read_structure("Ana is a teacher.").claim is None  # "is" alone names no claim
    assert read_structure("Ana hates jazz.").claim == ("ana", "not likes", "jazz")


def test_a_writer_triple_and_a_sentence_of_the_same_claim_merge() -> None:
    triple = profile("Ana: employer Acme", subject="Ana", predicate="works_at", object="Acme")
    sentence = profile("Ana has a job at Acme.")
    assert structure_of(triple.fact).claim == ("ana", "works_at", "acm")
    assert merge_refusal(triple, sentence) is None


def test_close_sentences_of_other_words_still_merge_on_cosine_only_above_the_threshold() -> None:
    a, b = profile("Backups are stored in S3"), profile("Backups are kept in S3")
    assert merge_refusal(a, b) is None
    assert merge_rule(a, b, 0.95, threshold=0.92, floor=0.75) == "dedup.cosine"
    assert merge_rule(a, b, 0.85, threshold=0.92, floor=0.75) is None


def test_writer_triples_decide_the_statement() -> None:
    moved = profile("Nadia moved to Berlin", subject="Nadia", predicate="lives_in", object="Berlin")
    lives = profile(
        "Nadia now lives in Berlin", subject="Nadia", predicate="lives_in", object="Berlin"
    )
    assert merge_refusal(moved, lives) is None
    assert structure_of(moved.fact).source == "triple"


def test_a_stored_structure_is_used_and_a_stale_one_is_read_again() -> None:
    content = "Ben likes ramen."
    stored = structure_json(read_structure("Ben uses ramen."), content)
    fact = Fact(
        project_id="p", content=content, metadata={"consolidation": {STRUCTURE_KEY: stored}}
    )
    assert structure_of(fact).predicate == "uses"  # what the fact says it holds
    stale = dict(stored, digest="0" * 16)
    other = Fact(
        project_id="p", content=content, metadata={"consolidation": {STRUCTURE_KEY: stale}}
    )
    assert structure_of(other).predicate == "likes"


def test_a_claim_survives_the_stored_structure_and_the_encoded_reading() -> None:
    content = "Ana has a job at Acme."
    read = read_structure(content)
    fact = Fact(
        project_id="p",
        content=content,
        metadata={"consolidation": {STRUCTURE_KEY: structure_json(read, content)}},
    )
    assert structure_of(fact) == read
    assert decode_reading(encode_reading(reading_of(content)))[0].claim == read.claim


# ------------------------------------------------------------------ the planted scenario

PEOPLE = "Ben Ana Eli Chen Maya Omar Lena Ravi Sofia Jonas Priya Tom Nadia Kenji Olga".split()  # noqa: SIM905
THINGS = "ramen Rust chess yoga sushi Python tennis jazz Kafka poetry Docker tea Linux".split()  # noqa: SIM905
VERBS = {"uses": "using", "likes": "liking", "studies": "studying", "recommends": "recommending"}


def planted(seed: int) -> list[tuple[str, tuple[str, str, str]]]:
    rng = random.Random(seed)
    every = [(p, v, t) for p in PEOPLE for v in VERBS for t in THINGS]
    distinct = rng.sample(every, 400)
    facts = [(f"{p} {v} {t}.", (p, v, t)) for p, v, t in distinct]
    forms = (
        lambda p, v, t: f"{p} really {v} {t}.",
        lambda p, v, t: f"{p} is {VERBS[v]} {t}.",
        lambda p, v, t: f"{p} keeps {VERBS[v]} {t}.",
        lambda p, v, t: f"{p} currently {v} {t}.",
    )
    for i, (p, v, t) in enumerate(rng.sample(distinct, 100)):
        facts.append((forms[i % len(forms)](p, v, t), (p, v, t)))
    return facts


def actions(report: ConsolidationReport) -> set[tuple[str, str, tuple[str, ...], str | None]]:
    return {(a.kind.value, a.rule, tuple(sorted(a.fact_ids)), a.target_id) for a in report.actions}


@pytest.mark.slow
async def test_planted_restatements_merge_and_different_facts_never_do(tmp_path: Path) -> None:
    facts = planted(seed=7)
    async with ContextEngine.local(tmp_path / "memory", project_id="planted") as ctx:
        stored = await ctx.add_many([content for content, _ in facts])
        statement = {fact.id: key for fact, (_, key) in zip(stored, facts, strict=True)}
        consolidator = MemoryConsolidator(ctx, similarity_threshold=0.92)
        dry = await consolidator.consolidate(dry_run=True)
        real = await consolidator.consolidate()
        assert dry.duplicates_removed == real.duplicates_removed
        assert dry.contradictions_resolved == real.contradictions_resolved
        assert actions(dry) == actions(real)
        planted_merges = 0
        for fact in stored:
            current = await ctx.get(fact.id)
            if current.status is not FactStatus.MERGED:
                continue
            assert current.merged_into is not None
            assert statement[fact.id] == statement[current.merged_into], current.content
            history = await ctx.history(fact.id)
            rules = {c.rule for c in history if c.action is ChangeAction.MERGED}
            assert rules <= {"dedup.cosine", "dedup.structure"}
            planted_merges += 1
        assert planted_merges >= 95
        assert real.duplicates_removed == planted_merges
        # The structure read for a merge is kept on the canonical fact for later runs.
        targets = {a.target_id for a in real.actions if a.target_id is not None}
        assert targets
        for target in targets:
            canonical = await ctx.get(target)
            assert has_structure(canonical)
            assert structure_of(canonical) == read_structure(canonical.content)
