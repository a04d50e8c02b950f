"""Checks of the arguments users pass to the engine: every bad value gets a typed error.

Python's own conversions fail with ``TypeError``, ``ValueError`` or ``OverflowError`` (and a
string is silently a sequence of one-letter strings); these helpers turn each bad call into an
:class:`~sagewai.errors.InvalidInputError` (or :class:`~sagewai.errors.ScopeError`) at the
boundary, before anything is read or written.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TypeVar

from pydantic import ValidationError

from sagewai.core._records import Provenance
from sagewai.core._scope import ContextScope
from sagewai.errors import InvalidInputError, ScopeError

__all__ = [
    "aware_time",
    "check_flag",
    "check_int",
    "check_list",
    "check_number",
    "check_scope",
    "check_source",
    "enum_values",
    "string_list",
]

_E = TypeVar("_E", bound=StrEnum)


def check_int(value: Any, what: str, *, low: int, high: int) -> int:
    """An ``int`` (not a bool, not a string) between ``low`` and ``high``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"{what} must be an integer, got {type(value).__name__}")
    if not low <= value <= high:
        raise InvalidInputError(f"{what} must be between {low} and {high}, got {value}")
    return value


def check_number(value: Any, what: str) -> float:
    """A finite real number (not a bool, not a string)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInputError(f"{what} must be a finite number, got {value!r}")
    return float(value)


def check_flag(value: Any, what: str) -> bool:
    """A real ``bool``: ``"no"`` or ``1`` is not consent to anything."""
    if not isinstance(value, bool):
        raise InvalidInputError(f"{what} must be True or False, got {value!r}")
    return value


def check_scope(value: Any) -> ContextScope | None:
    """``None`` or a known scope."""
    if value is None:
        return None
    try:
        return ContextScope(value)
    except ValueError as exc:
        raise ScopeError(
            f"unknown scope {value!r}; use one of {[s.value for s in ContextScope]}"
        ) from exc


def string_list(value: Any, what: str) -> tuple[str, ...] | None:
    """``None`` or a list of strings; one string is refused (it is not a list of letters)."""
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | set | frozenset):
        raise InvalidInputError(f"{what} must be a list of strings, got {type(value).__name__}")
    items = tuple(value)
    if not all(isinstance(item, str) for item in items):
        raise InvalidInputError(f"{what} must be a list of strings")
    return items


def enum_values(value: Any, enum: type[_E], what: str) -> tuple[_E, ...] | None:
    """``None`` or a list of members of ``enum`` (given as members or their values)."""
    items = string_list(value, what)
    if items is None:
        return None
    try:
        return tuple(enum(item) for item in items)
    except ValueError as exc:
        raise InvalidInputError(
            f"{what} must hold values of {[m.value for m in enum]}, got {list(items)!r}"
        ) from exc


def aware_time(value: Any, what: str) -> datetime | None:
    """``None`` or a datetime in UTC; a naive datetime means UTC.

    Raises:
        InvalidInputError: not a datetime (ISO strings are not parsed: pass
            ``datetime.fromisoformat(...)``), or a time that cannot be held in UTC
            (``datetime.max`` west of Greenwich).
    """
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidInputError(f"{what} must be a datetime, got {type(value).__name__}")
    try:
        converted = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        converted.timestamp()
    except (OverflowError, ValueError) as exc:
        raise InvalidInputError(f"{what} {value!r} is outside the range of times") from exc
    return converted


def check_list(value: Any, what: str) -> Sequence[Any]:
    """``value`` as a list argument: a sequence, but not text, bytes or a mapping."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise InvalidInputError(f"{what} must be a list, got {type(value).__name__}")
    return value


def check_source(value: Any) -> Provenance:
    """A fact's source: a :class:`~sagewai.core._records.Provenance`, or a mapping of its fields."""
    if isinstance(value, Provenance):
        return value
    if isinstance(value, Mapping):
        try:
            return Provenance.model_validate(dict(value))
        except ValidationError as exc:
            raise InvalidInputError(f"invalid source: {exc}") from exc
    raise InvalidInputError(f"a source must be a Provenance, got {type(value).__name__}")
