"""Query analysis: keyword text, names, temporal intent (pure functions)."""

from __future__ import annotations

import re
from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sagewai.context._query import (
    STOPWORDS,
    analyse_query,
    asks_for_a_value_now,
    is_temporal_question,
    keyword_query,
    mentions_time,
    query_dates,
    query_names,
)
from sagewai.core._text import keyword_terms


def test_keyword_query_keeps_content_words_and_names() -> None:
    assert keyword_query("When did Caroline go to the LGBTQ support group?") == (
        "caroline go lgbtq support group"
    )


def test_keyword_query_keeps_every_term_when_all_are_stopwords() -> None:
    # An all-stopword query must still search something rather than nothing.
    assert keyword_query("Who are you?") == "who are you"


def test_a_named_date_is_read_as_days_and_its_numbers_leave_the_keyword_side() -> None:
    # Every record the bridge places in time holds its year ("(2023-05-03)"): the year as a
    # keyword matches them all, so the date is matched on the records' days instead.
    question = "What did Maria plan on the evening of 7 July, 2023?"
    assert keyword_query(question) == "maria plan evening july"
    assert query_dates(question) == ((date(2023, 7, 4), date(2023, 7, 10)),)
    assert analyse_query(question).dates == query_dates(question)
    assert query_dates("in May 2023") == ((date(2023, 5, 1), date(2023, 5, 31)),)
    assert query_dates("What happened in 2022?") == ((date(2022, 1, 1), date(2022, 12, 31)),)
    assert query_dates("What did I do last week?") == ()  # no anchor, no day
    assert keyword_query("Is port 5432 open?") == "port 5432 open"  # not a date


def test_keyword_query_can_keep_stopwords() -> None:
    assert keyword_query("What did Mel paint?", strip_stopwords=False) == "what did mel paint"


def test_keyword_query_output_survives_the_store_tokeniser_unchanged() -> None:
    # The stores tokenise the keyword text again; it must come out as the same terms.
    text = keyword_query("Melanie's kids' favourite café, in 2023?")
    assert keyword_terms(text) == text.split()


def test_keyword_query_of_punctuation_is_empty() -> None:
    assert keyword_query("?!") == ""


def test_contractions_split_like_the_stores_do() -> None:
    # keyword_terms splits "didn't" into "didn" and "t"; both must be stopwords.
    assert keyword_query("Why didn't Jon's bakery open?") == "jon bakery open"


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("What is Caroline's identity?", ("caroline",)),
        ("Did Melanie and Caroline meet?", ("melanie", "caroline")),
        ("what did mel paint?", ()),
        ("When did Jean-Luc visit Paris?", ("jean-luc", "paris")),
        ("Would I like it?", ()),
    ],
)
def test_query_names(text: str, names: tuple[str, ...]) -> None:
    assert query_names(text) == names


@pytest.mark.parametrize(
    ("text", "temporal"),
    [
        ("When did Melanie paint a sunrise?", True),
        ("What year did John start surfing?", True),
        ("How long ago was the trip?", True),
        ("What did Melanie paint?", False),
        ("Where does Caroline live?", False),
    ],
)
def test_is_temporal_question(text: str, temporal: bool) -> None:
    assert is_temporal_question(text) is temporal


@pytest.mark.parametrize(
    ("text", "timed"),
    [
        ("I went to a support group yesterday", True),
        ("We met last Friday", True),
        ("That was back in 2019", True),
        ("See you in May!", True),
        ("I love painting sunsets", False),
        ("The maybe-list is long", False),
    ],
)
def test_mentions_time(text: str, timed: bool) -> None:
    assert mentions_time(text) is timed


def test_analyse_query_bundles_the_signals() -> None:
    analysis = analyse_query("When did Melanie run a charity race?")
    assert analysis.text == "When did Melanie run a charity race?"
    assert analysis.keyword_text == "melanie run charity race"
    assert analysis.names == ("melanie",)
    assert analysis.temporal


def test_stopwords_hold_no_content_words() -> None:
    assert not {"caroline", "paint", "group", "2023", "tea"} & STOPWORDS


# The time expressions as a plain list of alternatives: what the factored pattern of
# ``mentions_time`` must accept and reject, word for word.
_PLAIN_TIME_EXPRESSION = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|ago|recently|lately|last|next|weekend"
    r"|(?:this|that|past|coming)\s+(?:week|month|year|summer|winter|spring|fall|autumn)"
    r"|january|february|march|april|may|june|july|august|september|october|november|december"
    r"|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday|(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
_TIME_WORDS = tuple(
    re.split(
        r"\s+",
        "yesterday today tonight tomorrow ago recently lately last next weekend this that past"
        " coming week month year summer winter spring fall autumn january february march april"
        " may june july august september october november december jan feb mar apr jun jul aug"
        " sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday 1999 2024"
        " 2100 1899 to tod tue sept. mayday junes decade mon sun sat todays",
    )
)

_GAPS = (" ", "  ", "\n", "-", "'", "_", "", ",", "é")


@given(
    st.lists(
        st.one_of(st.sampled_from(_TIME_WORDS), st.text(max_size=6)),
        max_size=8,
    ),
    st.lists(
        st.sampled_from([" ", "  ", "\n", "-", "'", "_", "", ",", "é"]), min_size=8, max_size=8
    ),
    st.booleans(),
)
def test_mentions_time_accepts_what_the_plain_alternatives_accept(
    words: list[str], gaps: list[str], upper: bool
) -> None:
    text = "".join(word + gap for word, gap in zip(words, gaps, strict=False))
    text = text.upper() if upper else text
    assert mentions_time(text) is (_PLAIN_TIME_EXPRESSION.search(text) is not None)


@pytest.mark.parametrize("word", _TIME_WORDS)
@pytest.mark.parametrize("frame", ["{}", "We met {} at noon", "{}s", "x{}", "({}).", "{} week"])
def test_mentions_time_agrees_on_every_time_word(word: str, frame: str) -> None:
    for text in (frame.format(word), frame.format(word).upper()):
        assert mentions_time(text) is (_PLAIN_TIME_EXPRESSION.search(text) is not None)


@pytest.mark.parametrize(
    ("question", "now"),
    [
        ("What is my monthly budget for books?", True),
        ("How many sources are in my Zotero library?", True),
        ("When is my session with the immigration consultant scheduled?", True),
        ("What time should I plan to join the Zoom meeting?", True),
        ("How many cupcakes did I order for the event?", False),
        ("What was my budget before the increase?", False),
        ("Where did I live before Munich?", False),
        ("How many problems have I completed in total across all sessions?", False),
        ("How many weeks do I have between the two deadlines?", False),
        ("I have 3 cats.", False),
    ],
)
def test_a_question_for_a_value_now(question: str, now: bool) -> None:
    assert asks_for_a_value_now(question) is now
    assert analyse_query(question).asks_value_now is now
