"""Text as it enters sagewai: one rule for lone surrogates, one for JSON values, one tokeniser.

A Python ``str`` may hold surrogate code points (``"\\ud800"``) that no UTF-8 store, index or
file can hold: SQLite, the vector index, the journal and nGQL would each fail on them, at write
time or at the next restart. They reach us from JSON escapes in model output, from decoding
with ``surrogateescape`` and from careless slicing of UTF-16 text.

The rule, decided once:

* free text (contents, queries, messages, subjects, names, metadata values) is *repaired*: a
  well-formed surrogate pair becomes the character it encodes, and every lone surrogate becomes
  U+FFFD, so model output and journal replays never fail on it;
* identifiers (project, user, session, fact ids, tags) are *refused* with
  :class:`~sagewai.errors.InvalidInputError` (see
  :func:`~sagewai.core._scope.validate_identifier`): repairing two different ids could make
  them one.

Keyword search, ranking, query analysis, episodes and the test doubles split text into terms with
:func:`keyword_terms`, so a term means the same thing in every one of them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from sagewai.errors import InvalidInputError

__all__ = ["MAX_JSON_DEPTH", "clean_json", "clean_text", "keyword_terms", "word_set"]

_TERM = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)


def clean_text(value: str) -> str:
    """``value`` with surrogate pairs joined and lone surrogates replaced by U+FFFD.

    Example:
        >>> clean_text("tea \\ud800 time")
        'tea \\ufffd time'
        >>> clean_text("\\ud83d\\ude00") == "\\U0001F600"
        True
    """
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return value


MAX_JSON_DEPTH = 64
"""How deeply a JSON value (metadata) may nest: deeper values are refused, not recursed into."""


def clean_json(value: Any, what: str = "metadata", *, depth: int = 0) -> Any:
    """A JSON value with its text repaired (keys too); NaN and infinities are refused.

    Nesting is bounded by :data:`MAX_JSON_DEPTH`, so a hostile value cannot exhaust the stack
    here, in the JSON encoder or in a store's decoder.

    Raises:
        InvalidInputError: a float that JSON cannot hold, a value that is not JSON, or one
            nested deeper than :data:`MAX_JSON_DEPTH`.

    Example:
        >>> clean_json({"a": ["tea \\ud800", 1.5]})
        {'a': ['tea \\ufffd', 1.5]}
    """
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInputError(f"{what} holds {value!r}, which JSON cannot hold")
        return value
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, Mapping | list | tuple) and depth >= MAX_JSON_DEPTH:
        raise InvalidInputError(f"{what} is nested more than {MAX_JSON_DEPTH} levels deep")
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidInputError(f"{what} keys must be strings, got {key!r}")
            out[clean_text(key)] = clean_json(item, what, depth=depth + 1)
        return out
    if isinstance(value, list | tuple):
        return [clean_json(item, what, depth=depth + 1) for item in value]
    raise InvalidInputError(f"{what} holds a {type(value).__name__}, which is not JSON")


def keyword_terms(text: str, *, limit: int = 64) -> list[str]:
    """Lower-cased word terms of ``text``: the one tokenisation every keyword reader shares.

    Keyword backends, ranking, query analysis, episodes and the test doubles all split text here,
    so a term means the same thing everywhere. Only letters and digits survive, so no query
    syntax (FTS5 operators, tsquery symbols) ever reaches a backend from user text.

    Example:
        >>> keyword_terms("Alice's café: OR 42!")
        ['alice', 's', 'café', 'or', '42']
    """
    terms = [match.group(0).lower().replace("’", "'") for match in _TERM.finditer(text)]
    out: list[str] = []
    for term in terms:
        for part in term.split("'"):
            if part and part not in out:
                out.append(part)
    return out[:limit]


def word_set(words: str) -> frozenset[str]:
    """The white-space separated words of ``words``: how the rules write their word lists.

    Example:
        >>> sorted(word_set("tea coffee  tea"))
        ['coffee', 'tea']
    """
    return frozenset(words.split())
