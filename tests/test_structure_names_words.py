"""The candidate table's light reading gives exactly the names and words of the full reading.

Past the read cache's size a run's candidate table reads only each fact's names and words
(:func:`read_names_and_words`); the decisions later read the whole structure. The table is cut by
those names and words, so the two readings must agree on every content, or the table would miss
(or invent) candidate pairs.
"""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from sagewai.core._records import Fact
from sagewai.intelligence.consolidation._structure import (
    STRUCTURE_KEY,
    names_and_words_of,
    read_names_and_words,
    read_structure,
    structure_json,
)
from tests.helpers import load_benchmark

TRICKY = [
    "Ana Silva moved to Berlin in 2021.",
    "Ben really likes ramen.",
    "Ben isn't using Rust anymore.",
    "They're moving to Lisbon next week.",
    "I love the new MacBook Pro, it's 14-inch.",
    "User uploads are stored in S3 by the Backend-Team.",
    "Ramen is liked by Ben.",
    "The team moved the API to v2.3.1 last Friday.",
    "She has a peanut allergy since she was 12.",
    "Maria Lopez keeps recommending chess to Eli.",
    "Dr. Chen no longer works at ACME Corp.",
    "We're going to spend 2,500 euros on 3 GPUs.",
    "",
    "   ",
    "über-cool Zoë visited São Paulo",
    "DB migrations run at 5 pm, every Monday.",
]

WORDS = [
    "Ana", "ben", "Ben", "Silva", "I", "we", "They", "she", "the", "a", "is", "isn't", "was",
    "has", "have", "will", "not", "never", "no", "longer", "really", "keeps", "going", "to",
    "used", "likes", "like", "moved", "moving", "uses", "using", "studies", "Berlin", "São",
    "Paulo", "in", "on", "by", "at", "2021", "3.5", "v2", "12kg", "km", "five", "dozen", "euros",
    "PostgreSQL", "DB", "API", "well-known", "Zoë", "don't", "it's", "I'm", ",", ".", "!", "?",
]  # fmt: skip


def _agree(content: str) -> None:
    full = read_structure(content)
    assert read_names_and_words(content) == (full.names, full.words), content


def test_the_light_reading_agrees_on_tricky_sentences() -> None:
    for content in TRICKY:
        _agree(content)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=14).map(" ".join))
def test_the_light_reading_agrees_on_any_word_sequence(content: str) -> None:
    _agree(content)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_the_light_reading_agrees_on_any_text(content: str) -> None:
    _agree(content)


def test_the_light_reading_agrees_on_the_realistic_corpus() -> None:
    """Every fact of the consolidation benchmark's generated corpus (names, dates, numbers,
    restatements and near-distinct distractors), 3,000 of them."""
    realistic = load_benchmark("consolidation_realistic")
    facts, _ = realistic.RealisticWorld(11).facts(3_000, "p", datetime(2026, 1, 1, tzinfo=UTC))
    for fact in facts:
        _agree(fact.content)


def test_a_stored_structure_gives_its_names_and_words() -> None:
    """A fact holding a structure of an earlier run is read from it, as ``structure_of`` does."""
    content = "Ana Silva moved to Berlin in 2021."
    stored = structure_json(read_structure(content), content)
    stored["names"] = ["stored-name"]
    fact = Fact(
        project_id="p", content=content, metadata={"consolidation": {STRUCTURE_KEY: stored}}
    )
    names, _ = names_and_words_of(fact)
    assert names == frozenset({"stored-name"})
    stale = Fact(project_id="p", content="Ben likes ramen.", metadata=fact.metadata)
    assert names_and_words_of(stale) == read_names_and_words("Ben likes ramen.")
