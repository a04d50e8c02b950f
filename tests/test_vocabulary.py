"""One predicate vocabulary: facts and the knowledge graph name and supersede things alike."""

from __future__ import annotations

import pytest

import sagewai.core._claims as reconcile
import sagewai.intelligence._graph_builder as graph_builder
from sagewai.core._predicates import (
    PREDICATES,
    VOCABULARY,
    is_job_title,
    is_single_valued,
    normalize_predicate,
    relation_predicate,
)
from sagewai.intelligence import HeuristicRelationExtractor, RuleBasedFactExtractor
from sagewai.intelligence._rule_entities import RuleBasedEntityExtractor

SINGLE_VALUED = {
    "works_at",
    "works_as",
    "lives_in",
    "is_from",
    "studies_at",
    "spouse_of",
    "partner_of",
    "has_age",
    "name",
    "birthday",
    "has_value",
    # changes are read into these (issue 37): one manager, team, car and meeting day at a time
    "managed_by",
    "on_team",
    "drives",
    "scheduled_on",
}


def test_facts_and_graph_decide_single_values_with_one_function() -> None:
    assert reconcile.is_single_valued is is_single_valued
    assert graph_builder.is_single_valued is is_single_valued


def test_the_single_valued_set() -> None:
    assert {name for name, single in VOCABULARY.items() if single} == SINGLE_VALUED
    assert is_single_valued("favorite_color")
    assert not is_single_valued("plays chess with")
    # The relation table is the part of the vocabulary a graph edge and a fact both say.
    assert set(PREDICATES) <= set(VOCABULARY)
    for name, entry in PREDICATES.items():
        assert entry.single_valued is VOCABULARY[name]


@pytest.mark.parametrize(
    "phrase",
    [
        "works for",
        "Moved to",
        "sister",
        "co-worker",
        "job_title",
        "occupation",
        "has_pet",
        "married to",
        "favourite colour",
        "date_of_birth",
        "name",
        "born in",
        "grandma",
    ],
)
def test_graph_edges_and_facts_normalise_alike(phrase: str) -> None:
    name = normalize_predicate(phrase)
    assert name is not None
    assert relation_predicate(phrase) == name
    # A phrase single-valued for a fact is single-valued for an edge: it is one name.
    assert is_single_valued(phrase) is is_single_valued(relation_predicate(phrase))


def test_only_the_graph_keeps_unknown_verbs() -> None:
    assert normalize_predicate("plays chess with") is None
    assert relation_predicate("plays chess with") == "plays_chess_with"
    assert relation_predicate("!!!") == "related_to"


def test_one_job_lexicon() -> None:
    assert is_job_title("mentor")
    assert is_job_title("youth mentors")
    assert is_job_title("social worker")
    assert is_job_title("co-founder")
    assert not is_job_title("fan")
    assert not is_job_title("")


@pytest.mark.parametrize(
    "text", ["I am a mentor at the youth club.", "I'm a social worker.", "I am a barista."]
)
async def test_a_job_is_works_as_in_the_facts_and_in_the_graph(text: str) -> None:
    facts = await RuleBasedFactExtractor().extract(text)
    entities = await RuleBasedEntityExtractor().extract(text)
    relations = await HeuristicRelationExtractor().extract(text, speaker="Ana", entities=entities)
    fact_triples = {(f.predicate, f.object) for f in facts if f.predicate}
    edge_triples = {(r.predicate, r.object) for r in relations}
    assert fact_triples
    assert fact_triples == edge_triples
    assert {predicate for predicate, _ in fact_triples} == {"works_as"}
