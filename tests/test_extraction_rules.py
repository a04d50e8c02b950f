"""RuleBasedFactExtractor through its public API: types, negation, perspective, dates, values."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sagewai.core._records import FactType
from sagewai.errors import InvalidInputError
from sagewai.extraction import (
    ExtractedFact,
    ExtractionContext,
    FactExtractor,
    RuleBasedFactExtractor,
)

WEDNESDAY = datetime(2024, 3, 13, 15, 0, tzinfo=UTC)
MONDAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def extract(
    text: str,
    speaker: str | None = "Alice",
    role: str = "user",
    when: datetime | None = WEDNESDAY,
    **options: object,
) -> list[ExtractedFact]:
    extractor = RuleBasedFactExtractor(**options)  # type: ignore[arg-type]
    return extractor.extract_sync(
        text, ExtractionContext(speaker=speaker, role=role, timestamp=when)
    )


def top(text: str, **kwargs: object) -> ExtractedFact:
    facts = extract(text, **kwargs)  # type: ignore[arg-type]
    assert facts, f"no fact from {text!r}"
    return facts[0]


def test_is_a_fact_extractor() -> None:
    assert isinstance(RuleBasedFactExtractor(), FactExtractor)


@pytest.mark.parametrize(
    ("text", "fact_type", "predicate", "obj"),
    [
        ("I love hiking in the mountains.", "preference", "likes", "hiking in the mountains"),
        ("I prefer tea over coffee.", "preference", "prefers", "tea"),
        ("I can't stand loud restaurants.", "preference", "dislikes", "loud restaurants"),
        ("My favourite colour is teal.", "preference", "favorite_color", "teal"),
        (
            "We decided to use PostgreSQL for the metadata store.",
            "decision",
            "decided",
            "use PostgreSQL for the metadata store",
        ),
        ("Let's go with the blue logo.", "decision", "decided", "go with the blue logo"),
        (
            "I'll send you the quarterly report by Friday.",
            "action",
            "plans_to",
            "send you the quarterly report",
        ),
        ("Remind me to call the plumber tomorrow.", "action", "needs_to", "call the plumber"),
        (
            "I need to renew my passport before June.",
            "action",
            "needs_to",
            "renew Alice's passport",
        ),
        ("I moved to Berlin last month.", "event", "lives_in", "Berlin"),
        ("I went to a support group yesterday.", "event", "attended", "a support group"),
        ("I live in Berlin.", "general", "lives_in", "Berlin"),
        ("I work at Acme Corp as a data engineer.", "general", "works_at", "Acme Corp"),
        ("I'm a nurse at St. Mary's hospital.", "general", "works_as", "nurse"),
        ("I'm originally from Sweden.", "general", "is_from", "Sweden"),
        ("I have two cats named Miso and Tofu.", "general", "owns", "two cats named Miso"),
        ("I'm married to Tom.", "general", "spouse_of", "Tom"),
        ("I'm allergic to peanuts.", "general", "allergic_to", "peanuts"),
        ("My name is Priya Raman.", "general", "name", "Priya Raman"),
        ("I'm 34 years old.", "general", "has_age", "34"),
    ],
)
def test_reads_each_type(text: str, fact_type: str, predicate: str, obj: str) -> None:
    fact = top(text)
    assert fact.fact_type is FactType(fact_type)
    assert (fact.subject, fact.predicate, fact.object) == ("Alice", predicate, obj)
    assert fact.negated is False
    assert fact.extractor == "rules"
    assert 0.4 <= fact.confidence <= 1.0


@pytest.mark.parametrize(
    ("text", "predicate", "obj"),
    [
        ("I don't like green tea anymore.", "likes", "green tea"),
        ("I'm not a fan of horror movies.", "likes", "horror movies"),
        ("I never liked jazz.", "likes", "jazz"),
        ("I don't live in London anymore.", "lives_in", "London"),
        ("We decided not to use Redis for caching.", "decided", "use Redis for caching"),
        ("I'm not vegetarian anymore.", "is_a", "vegetarian"),
        ("I don't have any pets anymore.", "owns", "any pets"),
        ("Tom and I got divorced last year.", "spouse_of", "Tom"),
    ],
)
def test_negation_is_captured(text: str, predicate: str, obj: str) -> None:
    facts = extract(text)
    assert any(f.predicate == predicate and f.object == obj and f.negated for f in facts), facts
    negated = next(f for f in facts if f.predicate == predicate)
    assert negated.metadata["negated"] is True


def test_first_person_resolves_to_the_speaker() -> None:
    fact = top("I moved to Berlin last month and I love it.")
    assert fact.content.startswith("Alice moved to Berlin")
    assert fact.subject == "Alice"
    assert fact.speaker == "Alice"
    assert top("I really like my new job.").content == "Alice really likes their new job."
    assert top("I have two cats.").content == "Alice has two cats."
    assert top("I don't like cilantro.").content == "Alice doesn't like cilantro."


def test_unknown_speaker_and_assistant_perspective() -> None:
    fact = top("I live in Berlin.", speaker=None)
    assert (fact.subject, fact.content) == ("user", "The user lives in Berlin.")
    commitment = top(
        "I'll remind you to take your medication at 8pm.", speaker=None, role="assistant"
    )
    assert commitment.fact_type is FactType.ACTION
    assert commitment.content.startswith("The assistant will remind the user to take the user's")


def test_third_parties_are_their_own_subject() -> None:
    facts = extract("My brother Kevin lives in Toronto.", speaker="Bob")
    # The fact is about Kevin; how he relates to the speaker is noted beside it.
    assert ("Kevin", "lives_in", "Toronto") in [f.triple for f in facts]
    kevin = next(f for f in facts if f.subject == "Kevin")
    assert kevin.content == "Kevin (Bob's brother) lives in Toronto."
    assert (kevin.metadata["relation"], kevin.metadata["relation_of"]) == ("brother", "Bob")
    assert ("Bob", "sibling_of", "Kevin") in [f.triple for f in facts]


@pytest.mark.parametrize(
    ("text", "when", "iso"),
    [
        ("I went to a support group yesterday.", MONDAY, "2023-05-07"),
        ("I adopted a kitten two days ago.", MONDAY, "2023-05-06"),
        ("I got promoted last week.", WEDNESDAY, "2024-03-04/2024-03-10"),
        ("My sister got married last Saturday.", WEDNESDAY, "2024-03-09"),
        ("I have a dentist appointment next Tuesday.", WEDNESDAY, "2024-03-19"),
        ("I moved to Berlin last month.", WEDNESDAY, "2024-02"),
        ("I ran my first marathon in May 2023.", WEDNESDAY, "2023-05"),
        ("I graduated from MIT in 2019.", WEDNESDAY, "2019"),
        ("I'll upgrade the cluster on Saturday.", WEDNESDAY, "2024-03-16"),
        ("Our flight to Tokyo is on April 2nd.", WEDNESDAY, "2024-04-02"),
    ],
)
def test_dates_are_normalised_against_the_message_time(text: str, when: datetime, iso: str) -> None:
    fact = top(text, when=when)
    assert fact.event_time == iso
    assert isinstance(fact.metadata["event_time_text"], str)


def test_relative_dates_are_annotated_in_content() -> None:
    fact = top("I went to a support group yesterday.", when=MONDAY)
    assert "yesterday (2023-05-07)" in fact.content


def test_without_a_message_time_only_absolute_dates_resolve() -> None:
    assert top("I moved to Berlin last month.", when=None).event_time is None
    assert top("I graduated from MIT in 2019.", when=None).event_time == "2019"


@pytest.mark.parametrize(
    "value",
    [
        "postgresql://app:s3cret@db.internal:5432/staging",
        "3f2b8c1e-9d4a-4e7b-a1c2-5f6e7d8c9b0a",
        "https://docs.example.com/v2/getting-started",
        "/etc/sagewai/config.toml",
        "~/Library/Logs/sagewai/app.log",
        "alice.w@example.org",
        "v2.3.0",
        "$4,250",
        "25 MB",
        "JIRA-4521",
        "proj_8f3a2c91",
        "10.0.4.17",
    ],
)
def test_exact_values_are_kept_verbatim(value: str) -> None:
    for text in (f"Our value is {value}.", f"We decided to keep {value} for now."):
        facts = extract(text)
        assert facts, text
        assert value in facts[0].exact_values
        assert value in facts[0].content


def test_exact_values_are_never_rewritten_by_perspective() -> None:
    fact = top("My email is me@my-domain.org.")
    assert fact.predicate == "email"
    assert fact.object == "me@my-domain.org"
    assert "me@my-domain.org" in fact.content


@pytest.mark.parametrize(
    "text",
    [
        "Do you like tea?",
        "what time is my dentist appointment",
        "Can you remind me to call mom tomorrow?",
        "If I were rich, I'd buy a boat.",
        "Suppose we moved everything to GCP.",
        "I wish I could speak French.",
        "Maybe I'll try yoga at some point.",
        "I might move to Berlin someday.",
        "I'm not sure if I like the new design.",
        "I'm married to my job, jk",
        "Thanks so much!",
        "Hey Mel! Good to see you! How have you been?",
        "I love that!",
        "",
        "   ",
    ],
)
def test_no_facts_from_non_statements(text: str) -> None:
    assert extract(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "As you mentioned, you like tea.",
        "I remember you said you live in Berlin.",
        "You told me earlier that your sister got married.",
        "According to my notes, your project ID is proj_8f3a2c91.",
        "Since you work at Acme Corp, this might help.",
    ],
)
def test_no_facts_from_assistant_echoes_of_memory(text: str) -> None:
    assert extract(text, speaker=None, role="assistant") == []


def test_facts_from_other_sentences_survive_a_question() -> None:
    facts = extract("I moved to Berlin last month. Do you know any good cafes?")
    assert [f.predicate for f in facts] == ["lives_in"]


def test_laughter_lowers_confidence() -> None:
    plain = top("I moved to Berlin last month.")
    laughing = extract("I moved to Berlin last month lol", min_confidence=0.0)
    assert laughing[0].confidence < plain.confidence


def test_filters_by_confidence_and_type() -> None:
    text = "I love tea. We decided to use Rust."
    assert {f.fact_type for f in extract(text)} == {FactType.PREFERENCE, FactType.DECISION}
    assert {f.fact_type for f in extract(text, fact_types=["decision"])} == {FactType.DECISION}
    assert extract(text, min_confidence=0.99) == []
    with pytest.raises(InvalidInputError):
        RuleBasedFactExtractor(fact_types=["opinion"])
    with pytest.raises(InvalidInputError):
        RuleBasedFactExtractor(min_confidence=1.5)


def test_facts_are_sorted_and_spans_point_into_the_message() -> None:
    text = "Hi! I'm from Lagos but I live in Manchester now."
    facts = extract(text)
    assert [f.confidence for f in facts] == sorted((f.confidence for f in facts), reverse=True)
    for fact in facts:
        assert fact.source_span is not None
        start, end = fact.source_span
        assert text[start:end] in {"I'm from Lagos", "I live in Manchester now."}


async def test_async_extract_matches_sync() -> None:
    extractor = RuleBasedFactExtractor()
    context = ExtractionContext(speaker="Alice", timestamp=WEDNESDAY)
    text = "We picked Stripe as our payment provider."
    assert await extractor.extract(text, context) == extractor.extract_sync(text, context)


def test_analysis_reports_gates_and_stats() -> None:
    extractor = RuleBasedFactExtractor()
    question = extractor.analyze("Do you like tea? Where do you live?")
    assert question.non_factual
    assert question.facts == ()
    assert extractor.analyze("thanks!").small_talk
    assert not extractor.analyze("I live in Berlin.").non_factual
    stats = extractor.stats
    assert stats.texts == 3
    assert stats.small_talk == 1
    assert stats.vetoed["question"] == 2


def test_extracted_fact_contract() -> None:
    fact = ExtractedFact(content="Alice likes tea", fact_type=FactType.PREFERENCE, confidence=0.8)
    assert fact.metadata == {"negated": False}
    with pytest.raises(ValueError, match="verbatim"):
        ExtractedFact(content="x", fact_type=FactType.GENERAL, confidence=0.5, exact_values=("y",))
    with pytest.raises(ValueError):
        ExtractedFact(content=" ", fact_type=FactType.GENERAL, confidence=0.5)
    with pytest.raises(ValueError):
        ExtractedFact(content="x", fact_type="opinion", confidence=0.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        ExtractedFact(content="x", fact_type=FactType.GENERAL, confidence=1.5)


def test_to_fact_carries_negation_time_and_provenance() -> None:
    context = ExtractionContext(
        speaker="Bob", session_id="s1", message_id="m7", timestamp=WEDNESDAY
    )
    fact = RuleBasedFactExtractor().extract_sync("I don't like green tea anymore.", context)[0]
    stored = fact.to_fact("demo", context=context, tags=("chat",))
    assert stored.triple == ("Bob", "likes", "green tea")
    assert stored.metadata["negated"] is True
    assert stored.session_id == "s1"
    assert stored.sources[0].message_id == "m7"
    assert stored.sources[0].extractor == "rules"
    assert stored.tags == ("chat",)


def test_values_holding_date_words_are_never_annotated() -> None:
    fact = top("I'll deploy https://example.com/today/v2 tomorrow.")
    assert "https://example.com/today/v2" in fact.exact_values
    assert "https://example.com/today/v2" in fact.content
    assert fact.event_time == "2024-03-14"
