"""Entities from the rule extractors (issue 42): no weekdays, articles, pronouns, verbs or common
nouns as names; titles are titles, not persons; precision at least 0.9 on the labelled set."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evals import entity_eval
from sagewai.intelligence import ConversationGraphBuilder, RuleBasedEntityExtractor
from sagewai.intelligence._graph_builder import usable_entity_name
from sagewai.stores import InMemoryGraphStore

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("SAGEWAI_EVAL_DATA", ROOT.parent / "shared" / "data"))
if not (DATA / "locomo").is_dir():
    DATA = Path("/work/shared/data")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Last Fri I finally took my kids to a pottery workshop.", []),
        ("I just joined a new LGBTQ activist group last Tues.", []),
        (
            'I loved "Becoming Nicole" by Amy Ellis Nutt.',
            [("Becoming Nicole", "title"), ("Amy Ellis Nutt", "person")],
        ),
        ("Here's one- 'Embracing Identity' is all about love.", [("Embracing Identity", "title")]),
        ("I came across a rainbow sidewalk for Pride Month.", [("Pride Month", "event")]),
        ("We saw the Perseid meteor shower.", [("Perseid meteor shower", "event")]),
        ("Thanks, Mell! I'm still looking into counseling.", [("Mell", "person")]),
        ("Go Jon! You got this!", [("Jon", "person")]),
        ("Do I need to update the API for CSRF and SEO?", []),
        (
            "Do I need to update my Dockerfile on Render.com?",
            [("Dockerfile", "technology"), ("Render.com", "technology")],
        ),
        (
            "I'll use Google Lighthouse, GTmetrix, and WebPageTest.",
            [
                ("Google Lighthouse", "technology"),
                ("GTmetrix", "technology"),
                ("WebPageTest", "technology"),
            ],
        ),
        (
            "I'm using SQLite 3.39 and main.py.",
            [("SQLite", "technology"), ("3.39", "value"), ("main.py", "value")],
        ),
        ("We had dinner at The Coral Reef Restaurant.", [("Coral Reef Restaurant", "location")]),
        ("We had to say goodbye to Max.", [("Max", "person")]),
        ("My manager Lina lives in Dubai.", [("Lina", "person"), ("Dubai", "location")]),
        ("Finding my Zen is a mix of things, like peace and a push.", []),
    ],
)
async def test_rule_entities_name_only_names(text: str, expected: list[tuple[str, str]]) -> None:
    found = await RuleBasedEntityExtractor().extract(text)
    assert [(e.name, e.label) for e in found] == expected


async def test_graph_relations_name_no_articles_verbs_or_common_nouns_as_things() -> None:
    builder = ConversationGraphBuilder(graph_store=InMemoryGraphStore().for_project("p"))
    for line in (
        "I also use it to speak up for the LGBTQ+ community and push for acceptance.",
        "Creativity and family keep me at peace. I use painting to find peace.",
        "I went to a poetry reading last Fri and I went to the beach.",
        "I went to keep using my voice.",
        "I'd love to teach people and make people smile.",
    ):
        await builder.process_turn(line, speaker="Mel")
    entities = {(e.name, e.label) for e in await builder.graph.entities()}
    names = {name.lower() for name, _ in entities}
    assert names.isdisjoint({"a", "peace", "push", "fri", "tues", "lgbtq", "teach people"})
    assert ("poetry reading", "event") in entities
    assert ("beach", "place") in entities  # a place visited, not an event, not a name


def test_labelled_set_is_large_enough_and_well_formed() -> None:
    labels = json.loads(entity_eval.LABELS.read_text(encoding="utf-8"))
    items = labels["items"]
    assert sum(len(i["entities"]) for i in items if not i.get("fresh")) >= 300
    assert {i["source"] for i in items} == {"locomo", "beam"}
    for item in items:
        for entity in item["entities"]:
            assert entity["end"] - entity["start"] == len(entity["text"])


@pytest.mark.skipif(not (DATA / "locomo").is_dir(), reason="the evaluation data is not here")
async def test_rule_entity_precision_on_the_labelled_set() -> None:
    result = await entity_eval.evaluate(RuleBasedEntityExtractor(), DATA)
    assert result["mentions"] >= 300
    assert result["all"]["precision"] >= 0.9
    assert result["held_out"]["precision"] >= 0.9
    assert result["fresh"]["precision"] >= 0.9  # labelled after the change, never tuned on
    assert result["all"]["recall"] >= 0.85
    assert result["all"]["per_label"]["person"]["precision"] >= 0.9


@pytest.mark.skipif(not (DATA / "locomo").is_dir(), reason="the evaluation data is not here")
async def test_a_locomo_conversations_graph_holds_no_junk_names() -> None:
    """The issue's own example: conv-26 (419 turns) through the default builder."""
    data = json.loads((DATA / "locomo" / "locomo_dev.json").read_text())
    sample = next(s for s in data if s["sample_id"] == "conv-26")
    conversation = [
        {"role": "user", "name": turn["speaker"], "content": turn["text"], "id": turn["dia_id"]}
        for key, turns in sample["conversation"].items()
        if key.startswith("session_") and isinstance(turns, list)
        for turn in turns
    ]
    builder = ConversationGraphBuilder(graph_store=InMemoryGraphStore().for_project("p"))
    await builder.process_conversation(conversation)
    entities = {(e.name, e.label) for e in await builder.graph.entities()}
    names = {name for name, _ in entities}
    assert names.isdisjoint({"Fri", "Tues", "a", "peace", "push", "LGBTQ"})
    persons = {name for name, label in entities if label == "person"}
    assert persons.isdisjoint({"Becoming Nicole", "Charlotte's Web", "Pride", "Pride Month"})
    assert ("Becoming Nicole", "title") in entities
    assert {"Caroline", "Melanie", "Amy Ellis Nutt", "Ed Sheeran"} <= persons


@pytest.mark.parametrize(
    "name",
    ["Caroline", "she", "The", "an", "--", "", "   ", "x" * 120, "x" * 121, "Their", "3.39",
     "Amy Ellis Nutt", "every", "Someone", "'s"],
)  # fmt: skip
def test_the_evaluation_drops_the_names_the_graph_builder_drops(name: str) -> None:
    assert entity_eval.usable_entity_name(name) == usable_entity_name(name)
