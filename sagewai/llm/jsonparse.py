"""Reading JSON out of model text: fenced, wrapped in prose, or cut off mid-array.

Models asked for JSON still answer ```` ```json ... ``` ````, prepend "Here are the facts:",
or stop at their token limit in the middle of the tenth object. :func:`parse_json_lenient`
recovers what is complete and refuses the rest; it never invents values. Every step is linear
in the input length, and the input is capped, so a hostile or runaway answer costs little.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sagewai.llm.errors import MalformedOutputError

__all__ = ["MAX_JSON_CHARS", "parse_json_lenient"]

MAX_JSON_CHARS = 1_000_000
"""Longer model outputs are refused rather than scanned."""

_MAX_REPAIR_ATTEMPTS = 32
_FENCE = re.compile(r"```[ \t]*(?:json5?|JSON|javascript|js)?[ \t]*\r?\n?")
_CLOSERS = {"{": "}", "[": "]"}
_decoder = json.JSONDecoder()


def parse_json_lenient(text: str) -> Any:
    """Parse the JSON value in a model's answer, recovering what a truncation left complete.

    Tried in order: the whole text; the inside of the first Markdown code fence (closed or
    not); the first ``{``/``[`` value in the text, ignoring prose around it; and, when the value
    is cut off, the longest prefix that ends after a complete object or array, with the open
    brackets closed (so ``[{"a": 1}, {"b": 2}, {"c":`` gives ``[{"a": 1}, {"b": 2}]``).

    Args:
        text: The model's raw answer.

    Returns:
        The parsed JSON value (dict, list, str, number, bool or None).

    Raises:
        MalformedOutputError: when no JSON value can be recovered.

    Example:
        >>> parse_json_lenient('Sure! ```json\\n{"facts": [{"a": 1}, {"b": 2}, {"c"')
        {'facts': [{'a': 1}, {'b': 2}]}
    """
    if not isinstance(text, str):
        raise MalformedOutputError(f"expected model text, got {type(text).__name__}")
    if len(text) > MAX_JSON_CHARS:
        raise MalformedOutputError(f"model output longer than {MAX_JSON_CHARS} characters")
    stripped = text.strip().lstrip("\ufeff")
    if not stripped:
        raise MalformedOutputError("model output is empty")
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        pass
    fence = _FENCE.search(stripped)
    if fence is not None:
        inner = stripped[fence.end() :]
        closing = inner.find("```")
        candidate = inner if closing < 0 else inner[:closing]
        value = _first_value(candidate)
        if value is not _NOTHING:
            return value
    value = _first_value(stripped)
    if value is not _NOTHING:
        return value
    raise MalformedOutputError("no JSON object or array found in the model output")


class _Nothing:
    """Sentinel: no JSON value found (``None`` is a valid JSON value)."""


_NOTHING: Any = _Nothing()


def _first_value(text: str) -> Any:
    """The first complete (or recoverable) JSON object/array in ``text``, else ``_NOTHING``."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return _NOTHING
    start = min(starts)
    try:
        value, _ = _decoder.raw_decode(text, start)
    except (ValueError, RecursionError):
        return _recover_truncated(text, start)
    return value


def _recover_truncated(text: str, start: int) -> Any:
    """Cut ``text`` after the last complete nested container and close what is still open.

    One pass tracks strings, escapes and the bracket stack, and records each position just
    after a ``}`` or ``]`` that leaves the value still open; candidates are tried from the
    longest, a bounded number of times.
    """
    stack: list[str] = []
    cuts: list[tuple[int, str]] = []
    in_string = False
    escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "{[":
            stack.append(char)
        elif char in "}]":
            if not stack or _CLOSERS[stack[-1]] != char:
                break  # unbalanced: nothing after this point can be trusted
            stack.pop()
            if not stack:
                break  # a complete top-level value that raw_decode refused: give up
            closers = "".join(_CLOSERS[opener] for opener in reversed(stack))
            cuts.append((index + 1, closers))
    for end, closers in reversed(cuts[-_MAX_REPAIR_ATTEMPTS:]):
        try:
            return json.loads(text[start:end] + closers)
        except (ValueError, RecursionError):
            continue
    return _NOTHING
