"""Hostile input to the rules: empty, huge, binary, control characters, regex-DoS shapes.

Every pattern is linear-time (bounded quantifiers, anchored starts), a message is read up to
``max_input_chars`` (10,000 by default) and at most 12 subjects per sentence, so each case below
must finish well inside a second and never raise.
"""

from __future__ import annotations

import os
import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sagewai.errors import InvalidInputError
from sagewai.extraction import ExtractionContext, RuleBasedFactExtractor

CONTEXT = ExtractionContext(speaker="Alice")
_rng = random.Random(7)

HOSTILE = {
    "empty": "",
    "whitespace": " \t\n" * 50_000,
    "one megabyte": "a" * 1_000_000,
    "binary latin-1": os.urandom(1_000_000).decode("latin-1"),
    "binary replaced": os.urandom(200_000).decode("utf-8", "replace"),
    "lone surrogates": os.urandom(100_000).decode("utf-8", "surrogateescape"),
    "control characters": "".join(chr(_rng.randrange(32)) for _ in range(100_000)),
    "nul inside text": "I live in\x00 Berlin\x00.",
    "subject storm": "I " * 50_000,
    "we storm": "we " * 50_000,
    "possessive storm": "my " * 50_000,
    "long object": "I love " + "x" * 100_000,
    "many words": "I love " + "big " * 30_000,
    "adverb storm": "I'm " + "very " * 30_000,
    "dots": ". " * 100_000,
    "digits": "1" * 100_000,
    "date storm": "on May 3 " * 10_000,
    "email-like": "a@" * 50_000,
    "path-like": "/a" * 50_000,
    "id-like": "-1a" * 30_000,
    "reminder storm": "remind me to " * 10_000,
    "nested brackets": "(" * 50_000 + ")" * 50_000,
    "attribute storm": "the " * 3_000 + "is https://example.com/a",
    "no spaces": "I" + "moved" * 20_000,
    "repeated facts": "I moved to Berlin last month and I love it. " * 500,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_is_fast_and_safe(name: str) -> None:
    extractor = RuleBasedFactExtractor()
    started = time.perf_counter()
    facts = extractor.extract_sync(HOSTILE[name], CONTEXT)
    elapsed = time.perf_counter() - started
    assert elapsed < 1.5, f"{name} took {elapsed:.2f}s"
    assert len(facts) <= extractor.max_facts
    for fact in facts:
        assert "\x00" not in fact.content
        for value in fact.exact_values:
            assert value in fact.content


@pytest.mark.parametrize(
    "name", ["binary latin-1", "binary replaced", "lone surrogates", "control characters"]
)
def test_binary_noise_yields_no_facts(name: str) -> None:
    extractor = RuleBasedFactExtractor()
    assert extractor.extract_sync(HOSTILE[name], CONTEXT) == []


def test_long_input_is_capped_and_counted() -> None:
    extractor = RuleBasedFactExtractor(max_input_chars=1_000)
    text = "x " * 1_000 + "I live in Berlin."
    assert extractor.extract_sync(text, CONTEXT) == []  # the fact is past the cap
    assert extractor.stats.truncated == 1
    assert extractor.extract_sync("I live in Berlin. " + "x " * 1_000, CONTEXT)


@pytest.mark.parametrize("bad", [None, b"I live in Berlin", 42, ["I live in Berlin"]])
def test_non_text_is_a_typed_error(bad: object) -> None:
    with pytest.raises(InvalidInputError):
        RuleBasedFactExtractor().extract_sync(bad, CONTEXT)  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_text_gives_valid_facts(text: str) -> None:
    for fact in RuleBasedFactExtractor(min_confidence=0.0).extract_sync(text, CONTEXT):
        assert fact.content.strip()
        assert 0.0 <= fact.confidence <= 1.0
        assert all(value in fact.content for value in fact.exact_values)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "I",
                "we",
                "my",
                "love",
                "moved",
                "to",
                "Berlin",
                "decided",
                "use",
                "'m",
                "not",
                "yesterday",
                "last",
                "week",
                "v1.2.3",
                "https://x.io/a",
                ",",
                ".",
                "?",
                "lol",
                "if",
            ]
        ),
        max_size=60,
    )
)
def test_fact_shaped_noise_gives_valid_facts(words: list[str]) -> None:
    text = " ".join(words)
    for fact in RuleBasedFactExtractor(min_confidence=0.0).extract_sync(text, CONTEXT):
        start, end = fact.source_span or (0, 0)
        assert 0 <= start <= end <= len(text)
        assert all(value in fact.content for value in fact.exact_values)
