"""The pure pieces of extraction: dates, predicates, exact values, perspective, gates."""

from __future__ import annotations

from datetime import date

import pytest

from sagewai.core._predicates import (
    VOCABULARY,
    canonical_polarity,
    describe,
    is_single_valued,
    normalize_predicate,
)
from sagewai.extraction._dates import find_time_mentions, is_past_tense
from sagewai.extraction._exact_values import find_exact_value_spans, find_exact_values
from sagewai.extraction._gates import Gate, gate_sentence, is_question, is_small_talk
from sagewai.extraction._perspective import resolve_perspective, third_person
from sagewai.extraction._text import clean_text, looks_binary, split_sentences

WED = date(2024, 3, 13)


@pytest.mark.parametrize(
    ("sentence", "anchor", "iso"),
    [
        ("I saw it yesterday", WED, "2024-03-12"),
        ("see you tomorrow", WED, "2024-03-14"),
        ("the day before yesterday I left", WED, "2024-03-11"),
        ("I did it three days ago", WED, "2024-03-10"),
        ("it happened two weeks ago", WED, "2024-02-28"),
        ("I quit six months ago", WED, "2023-09"),
        ("we met three years ago", WED, "2021"),
        ("in 2 weeks we launch", WED, "2024-03-27"),
        ("last week was busy", WED, "2024-03-04/2024-03-10"),
        ("this week is busy", WED, "2024-03-11/2024-03-17"),
        ("next week I fly", WED, "2024-03-18/2024-03-24"),
        ("last weekend we hiked", WED, "2024-03-09/2024-03-10"),
        ("last month I moved", WED, "2024-02"),
        ("next year I graduate", WED, "2025"),
        ("last Friday I left", WED, "2024-03-08"),
        ("next Friday I fly", WED, "2024-03-15"),
        ("this Wednesday we ship", WED, "2024-03-13"),
        ("I lost it on Friday", WED, "2024-03-08"),
        ("I'll call on Friday", WED, "2024-03-15"),
        ("I will finish by Monday", WED, "2024-03-18"),
        ("born on June 3, 2021", None, "2021-06-03"),
        ("signed on 12 January 2025", None, "2025-01-12"),
        ("the 3rd of May 2023 was sunny", None, "2023-05-03"),
        ("launched on 2024-02-28", None, "2024-02-28"),
        ("I ran it in May 2023", None, "2023-05"),
        ("I graduated in 2019", None, "2019"),
        ("she passed away in December", date(2025, 1, 15), "2024-12"),
        ("school starts in September", date(2024, 6, 7), "2024-09"),
        ("it broke on March 11", WED, "2024-03-11"),
        ("our flight is on April 2nd", WED, "2024-04-02"),
    ],
)
def test_time_mentions(sentence: str, anchor: date | None, iso: str) -> None:
    mentions = find_time_mentions(sentence, anchor)
    assert [m.iso for m in mentions] == [iso]


def test_relative_time_without_anchor_is_unresolved_and_may_is_not_a_month() -> None:
    [mention] = find_time_mentions("I moved last month")
    assert (mention.iso, mention.relative, mention.granularity) == (None, True, "month")
    assert find_time_mentions("May I ask something?", WED) == []
    assert find_time_mentions("nothing temporal here", WED) == []
    assert find_time_mentions("the 31st of February 2023", None)[0].iso is None


def test_tense() -> None:
    assert is_past_tense("I volunteered on Saturday")
    assert not is_past_tense("I'll volunteer on Saturday")
    assert not is_past_tense("My son starts school in September")


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("db at postgresql://u:p@h:5432/d.", "url", "postgresql://u:p@h:5432/d"),
        ("mail ops+x@example.co.uk now", "email", "ops+x@example.co.uk"),
        ("id 3f2b8c1e-9d4a-4e7b-a1c2-5f6e7d8c9b0a", "uuid", "3f2b8c1e-9d4a-4e7b-a1c2-5f6e7d8c9b0a"),
        ("host 10.0.4.17:8080.", "ip", "10.0.4.17:8080"),
        ("see C:\\Users\\al\\notes.txt", "path", "C:\\Users\\al\\notes.txt"),
        ("logs in /var/log/app/x.log.", "path", "/var/log/app/x.log"),
        ("at 03:12 UTC it broke", "time", "03:12 UTC"),
        ("call +1 415 555 0132", "phone", "+1 415 555 0132"),
        ("it costs €1,450.50 a month", "amount", "€1,450.50"),
        ("cap at 25 MB", "quantity", "25 MB"),
        ("use v2.3.0-rc1 please", "version", "v2.3.0-rc1"),
        ("see JIRA-4521", "ticket", "JIRA-4521"),
        ("order #A-99812", "id", "#A-99812"),
        ("key sk_test_51Hx", "id", "sk_test_51Hx"),
        ("commit 9c1e4f2a7b", "hash", "9c1e4f2a7b"),
        ("renew api.example.com soon", "host", "api.example.com"),
    ],
)
def test_exact_value_kinds(text: str, kind: str, value: str) -> None:
    found = [(v.kind, v.value) for v in find_exact_value_spans(text)]
    assert (kind, value) in found
    for span in find_exact_value_spans(text):
        assert text[span.start : span.end] == span.value


def test_exact_values_for_consolidation_include_numbers() -> None:
    assert find_exact_values("I'm 34 and live at 10.0.0.1") == ("34", "10.0.0.1")
    assert find_exact_values("I'm 34", include_numbers=False) == ()
    assert find_exact_values("snake_case and first-ever are words") == ()


def test_predicate_vocabulary() -> None:
    assert normalize_predicate("job_title") == "works_as"
    assert normalize_predicate("Married to") == "spouse_of"
    assert normalize_predicate("moved_to") == "lives_in"
    assert normalize_predicate("live_in") == "lives_in"  # consolidation's base form
    assert normalize_predicate("favourite colour") == "favorite_color"
    assert normalize_predicate("plays chess with") is None
    assert normalize_predicate(None) is None
    for name in ("lives_in", "works_at", "works_as", "spouse_of", "has_age", "favorite_food"):
        assert is_single_valued(name), name
    for name in ("likes", "dislikes", "owns", "decided", "visited", "unknown thing"):
        assert not is_single_valued(name), name
    assert canonical_polarity("dislikes", False) == ("likes", True)
    assert canonical_polarity("hates", True) == ("likes", False)
    assert describe("lives_in") == "lives in"
    assert {"likes", "decided", "plans_to", "needs_to", "has_value"} <= set(VOCABULARY)


@pytest.mark.parametrize(
    ("verb", "expected"),
    [("have", "has"), ("do", "does"), ("go", "goes"), ("fix", "fixes"), ("try", "tries"),
     ("play", "plays"), ("need", "needs"), ("moved", "moved"), ("can", "can"), ("am", "is")],
)  # fmt: skip
def test_third_person(verb: str, expected: str) -> None:
    assert third_person(verb) == expected


def test_perspective() -> None:
    assert resolve_perspective("I'm tired of my job", speaker="Bo") == "Bo is tired of their job"
    assert resolve_perspective("We've decided", speaker="Bo") == "Bo and their team have decided"
    assert (
        resolve_perspective("We've been friends", speaker="Bo") == "Bo and others have been friends"
    )
    assert resolve_perspective("The US and I agree", speaker="Bo") == "The US and Bo agree"
    assert resolve_perspective("I sent you your file", speaker="Al", role="assistant",
                               addressee="Bo") == "Al sent Bo Bo's file"  # fmt: skip
    assert resolve_perspective("my key is me@x.io", speaker="Bo", protected=[(10, 17)]) == (
        "Bo's key is me@x.io"
    )


@pytest.mark.parametrize(
    ("sentence", "role", "gate"),
    [
        ("Do you like tea?", "user", Gate.QUESTION),
        ("how was your trip to Paris", "user", Gate.QUESTION),
        ("If I were rich I'd buy a boat.", "user", Gate.HYPOTHETICAL),
        ("Maybe I'll go.", "user", Gate.HEDGE),
        ("I'm the CEO of naps, jk", "user", Gate.JOKE),
        ("As you mentioned, you like tea.", "assistant", Gate.ECHO),
        ("As you mentioned, you like tea.", "user", Gate.FACTUAL),
        ("When I was 5 I lived in Rome.", "user", Gate.FACTUAL),
        ("What I love is hiking.", "user", Gate.FACTUAL),
    ],
)
def test_gates(sentence: str, role: str, gate: Gate) -> None:
    assert gate_sentence(sentence, role).gate is gate


def test_laughter_is_a_penalty_not_a_veto() -> None:
    verdict = gate_sentence("I moved to Berlin lol")
    assert verdict.gate is Gate.FACTUAL
    assert verdict.penalty > 0
    assert is_question("Any plans for the summer?")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Thanks so much!", True), ("Hey Mel! Good to see you!", True), ("ok", True),
     ("😂😂", True), ("I'm a vegetarian.", False), ("I live in Berlin", False),
     ("Call me at 5", False)],
)  # fmt: skip
def test_small_talk(text: str, expected: bool) -> None:
    assert is_small_talk(text) is expected


def test_text_preparation() -> None:
    cleaned = clean_text("I\u2019m\x00 here\u200b now", 100)
    assert cleaned == "I'm  here  now"
    assert len(clean_text("x\x01y", 100)) == 3  # one character for one: offsets survive
    assert [s.text for s in split_sentences("Dr. Who lives at St. Mary's. v1.2.3 shipped!")] == [
        "Dr. Who lives at St. Mary's.",
        "v1.2.3 shipped!",
    ]
    assert all(len(s.text) <= 1_000 for s in split_sentences("word " * 5_000))
    assert looks_binary("\x00\x01\x02abc", 0.1)
    assert not looks_binary("plain words", 0.1)
