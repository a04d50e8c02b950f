"""parse_json_lenient: fenced, wrapped, truncated and hostile model output."""

from __future__ import annotations

import time

import pytest

from sagewai.errors import ExtractionError
from sagewai.llm import MalformedOutputError, parse_json_lenient


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"facts": []}', {"facts": []}),
        ("  [1, 2, 3]\n", [1, 2, 3]),
        ("42", 42),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('```\n[{"a": 1}]\n```\nHope this helps!', [{"a": 1}]),
        ('Sure! Here you go: {"a": {"b": [1, 2]}} -- done', {"a": {"b": [1, 2]}}),
        ('```json\n{"facts": [{"a": 1}, {"b": 2}', {"facts": [{"a": 1}, {"b": 2}]}),
        ('[{"a": 1}, {"b": [1, 2]}, {"c": "unfinished', [{"a": 1}, {"b": [1, 2]}]),
        ('{"x": {"y": 1}, "z": [1,', {"x": {"y": 1}}),
        ('[{"s": "a } ] \\" tricky"}, {"t":', [{"s": 'a } ] " tricky'}]),
    ],
)
def test_recovers_json(text: str, expected: object) -> None:
    assert parse_json_lenient(text) == expected


@pytest.mark.parametrize(
    "text", ["", "   ", "no json here", '{"a": 1', "[", "```json\n", "}{", "\ufeff"]
)
def test_unrecoverable_output_raises_typed_error(text: str) -> None:
    with pytest.raises(MalformedOutputError) as caught:
        parse_json_lenient(text)
    assert isinstance(caught.value, ExtractionError)
    assert isinstance(caught.value, ValueError)


def test_non_string_is_refused() -> None:
    with pytest.raises(MalformedOutputError):
        parse_json_lenient(b'{"a": 1}')  # type: ignore[arg-type]


def test_hostile_nesting_and_size_are_bounded() -> None:
    started = time.perf_counter()
    with pytest.raises(MalformedOutputError):
        parse_json_lenient("[" * 200_000)
    with pytest.raises(MalformedOutputError):
        parse_json_lenient('{"a": "' + "x" * 2_000_000 + '"}')
    assert parse_json_lenient("[" + "[1]," * 50_000 + "[2") is not None
    assert time.perf_counter() - started < 5.0
