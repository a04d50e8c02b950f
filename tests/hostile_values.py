"""Hypothesis strategies for hostile input: what a careless caller, a hostile user or a broken
model sends. Shared by the ``test_hostile_*`` suites."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

NASTY_TEXT = (
    "",
    " ",
    "\n\t ",
    "tea \ud800 time",
    "\udc00",
    "\ud83d",
    "\ud83d\ude00 emoji pair",
    "nul \x00 byte",
    "unit \x1f separator",
    "bell \x07 and escape \x1b[31m",
    "'; DROP TABLE facts; --",
    '" OR 1=1 --',
    'NEAR(a b) AND * OR "x"',
    '"; DROP SPACE sagewai; "',
    "\\u0000 \\ud800 literally",
    "?",
    "(",
    "...",
    "\u202e right-to-left override",
    "\ufeff bom",
    "x" * 5_000,
    "word " * 8_000,
    "é" * 300,
)

_HOSTILE_CHARS = st.characters(
    codec=None, categories=("Cs", "Cc", "Cf", "Zs", "Ll", "Lu", "Nd", "Po", "Ps", "Pe", "So")
)

PLAIN_TEXT = ("Alice prefers green tea", "Bob moved to Berlin", "tea", "Alice", "s1 notes")

hostile_text = st.one_of(
    st.sampled_from(PLAIN_TEXT),
    st.sampled_from(NASTY_TEXT),
    st.text(_HOSTILE_CHARS, max_size=40),
    st.text(max_size=20),
)
"""Text with surrogates, controls, injection attempts, empties and oversized values."""

hostile_id = st.one_of(
    st.sampled_from(["s1", "u1", "note-1", "", " ", "s\x01", "s\ud800", "a" * 300, "p:a", "\x1f"]),
    st.sampled_from(["s1", "s2", "u1", "u2"]),
    st.text(_HOSTILE_CHARS, min_size=1, max_size=8),
)
"""Identifiers: plausible, empty, with controls or surrogates, too long."""

EXTREME_TIMES = (
    datetime.max.replace(tzinfo=timezone(timedelta(hours=-14))),
    datetime.min.replace(tzinfo=timezone(timedelta(hours=14))),
    datetime.max,
    datetime.min,
    datetime(2026, 1, 1),
    datetime(1970, 1, 1, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, tzinfo=UTC),
)

hostile_time = st.one_of(
    st.sampled_from(EXTREME_TIMES),
    st.datetimes(timezones=st.none() | st.just(UTC)),
    st.sampled_from(["2024-01-01", "yesterday", 0, 1.5e12, -1]),
)

EXTREME_NUMBERS = (math.nan, math.inf, -math.inf, -1, 0, 10**100, -(10**100), 1e308, 2.5, True)

hostile_number = st.one_of(
    st.sampled_from(EXTREME_NUMBERS),
    st.integers(),
    st.floats(),
    st.sampled_from(["5", "high", None]),
)

wrong_type = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.binary(max_size=8),
    st.just(object()),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.just({"session_id": "s1"}),
    st.just("abc"),
)

json_value: st.SearchStrategy[Any] = st.recursive(
    st.one_of(st.none(), st.booleans(), hostile_number, hostile_text),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile_text, inner, max_size=3),
    max_leaves=6,
)
"""JSON-ish values with NaN, infinities, huge numbers and hostile text."""


def kwargs_of(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Keyword arguments: a few of ``fields`` (none to three), each given a (hostile) value.

    Few at a time, so that one bad value does not hide every other: many generated calls are
    valid, and each bad one is bad in one or two ways.
    """
    names = sorted(fields)
    return st.lists(st.sampled_from(names), max_size=3, unique=True).flatmap(
        lambda keys: st.fixed_dictionaries({key: fields[key] for key in keys})
    )
