"""Reading JSON out of model text: fenced, wrapped in prose, or cut off mid-array.

Models asked for JSON still answer ```` ```json ... ``` ````, prepend "Here are the facts:",
or stop at their token limit in the middle of the tenth object. :func:`parse_json_lenient`
recovers what is complete and refuses the rest; it never invents values. Every step is linear
in the input length, and the input is capped, so a hostile or runaway answer costs little.
"""

from __future__ import annotations

import gc
import json
import re
from typing import Any

from sagewai.llm._errors import MalformedOutputError

__all__ = ["MAX_JSON_CHARS", "parse_json_lenient"]

MAX_JSON_CHARS = 1_000_000
"""Longer model outputs are refused rather than scanned."""

_ESCAPE = re.compile(r"\\.", re.DOTALL)
_MAX_REPAIR_ATTEMPTS = 8
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
    if stripped[0] not in "{[" or stripped[-1] in "}]":  # else it cannot be a whole value
        try:
            return _loads(stripped)
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


def _loads(text: str) -> Any:
    """``json.loads`` with the cyclic garbage collector paused for the call.

    Why: decoding builds one container per JSON object or array, and the collector keeps
    scanning them while they are built; on a megabyte of small objects that is most of the time
    (measured: 67 ms with it, 25 ms without). Nothing decoded here can form a cycle, and the
    collector is resumed (if it was running) as soon as the call returns.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return json.loads(text)
    finally:
        if was_enabled:
            gc.enable()


class _Nothing:
    """Sentinel: no JSON value found (``None`` is a valid JSON value)."""


_NOTHING: Any = _Nothing()


def _first_value(text: str) -> Any:
    """The first complete (or recoverable) JSON object/array in ``text``, else ``_NOTHING``.

    Why it is built this way: a megabyte of brackets, deep nesting or a long string in a
    model's answer must cost milliseconds, not seconds (the reader runs on the event loop), and
    a long answer cut off at the token limit must be decoded once, not once per attempt. So no
    character is visited by a Python loop: escapes are blanked with one regular expression, the
    bracket structure is read with running sums in numpy (quote parity, then depth), and the
    decoder runs on the one prefix that can succeed; when it still fails at a position, the
    next try is the longest candidate before that position, a bounded number of times.
    """
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return _NOTHING
    start = min(starts)
    shape = _Shape(text, start)
    limit = len(text) - start  # the decoder may only be trusted before this offset
    for _ in range(_MAX_REPAIR_ATTEMPTS):
        closed = shape.top_level_end(limit)
        if closed is not None:
            candidate = text[start : start + closed]
        else:
            cut = shape.last_cut(limit)
            if cut is None:
                return _NOTHING
            end, closers = cut
            candidate = text[start : start + end] + closers
        try:
            return _loads(candidate)
        except json.JSONDecodeError as exc:
            if exc.pos >= limit or exc.pos <= 0:
                limit -= 1
            else:
                limit = exc.pos
        except (ValueError, RecursionError):
            return _NOTHING  # nested deeper than the decoder goes: hostile, refused
    return _NOTHING


class _Shape:
    """The bracket structure of ``text[start:]``, as numpy arrays over bracket positions."""

    def __init__(self, text: str, start: int) -> None:
        import numpy as np

        # Escapes become two plain characters (positions stay), so a quote always starts or
        # ends a string; UTF-32 gives one array cell per character.
        plain = _ESCAPE.sub("__", text[start:])
        codes: Any
        if plain.isascii():  # the usual case: one byte per character is four times less work
            codes = np.frombuffer(plain.encode("ascii"), dtype=np.uint8)
        else:
            codes = np.frombuffer(plain.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        outside = np.cumsum(codes == ord('"')) % 2 == 0
        opens = ((codes == ord("[")) | (codes == ord("{"))) & outside
        closes = ((codes == ord("]")) | (codes == ord("}"))) & outside
        self._np = np
        self.positions = np.flatnonzero(opens | closes)
        self.is_open = opens[self.positions]
        self.depth = np.cumsum(np.where(self.is_open, 1, -1))
        self.codes = codes

    def _before(self, limit: int) -> int:
        return int(self._np.searchsorted(self.positions, limit))

    def top_level_end(self, limit: int) -> int | None:
        """The offset just after the bracket that closes the first value, if before ``limit``."""
        count = self._before(limit)
        zero = self._np.flatnonzero(self.depth[:count] <= 0)
        if not zero.size:
            return None
        return int(self.positions[zero[0]]) + 1

    def last_cut(self, limit: int) -> tuple[int, str] | None:
        """The longest prefix before ``limit`` ending after a nested container, and its closers."""
        np = self._np
        count = self._before(limit)
        if not count:
            return None
        closing = np.flatnonzero(~self.is_open[:count] & (self.depth[:count] >= 1))
        if not closing.size:
            return None
        last = int(closing[-1])
        depth = self.depth[: last + 1]
        is_open = self.is_open[: last + 1]
        # An opener is still open when the depth never falls below its level again.
        floor = np.minimum.accumulate(depth[::-1])[::-1]
        still_open = self.positions[: last + 1][is_open & (floor >= depth)]
        closers = "".join("]" if self.codes[i] == ord("[") else "}" for i in still_open[::-1])
        return int(self.positions[last]) + 1, closers
