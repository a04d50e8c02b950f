"""Identifiers (project, user, session ids, fact ids, tags) refuse what would forge a scope key."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from sagewai.core._scope import _FORBIDDEN, validate_identifier
from sagewai.errors import InvalidInputError


def test_the_pattern_is_unicodes_control_and_surrogate_categories() -> None:
    """One pattern stands for ``unicodedata.category`` in {Cc, Cs}, code point by code point."""
    differing = [
        hex(point)
        for point in range(sys.maxunicode + 1)
        if (unicodedata.category(chr(point)) in {"Cc", "Cs"}) != bool(_FORBIDDEN.search(chr(point)))
    ]
    assert differing == []


@pytest.mark.parametrize("value", ["a\x1fb", "tab\there", "\x7f", "x\x85", "lone\udc80"])
def test_control_characters_and_lone_surrogates_are_refused(value: str) -> None:
    with pytest.raises(InvalidInputError, match="control characters"):
        validate_identifier(value, "user_id")


@pytest.mark.parametrize("value", ["alice", "D1:3", "Zoë", "用户", "a b", "😀"])
def test_other_text_is_kept_verbatim(value: str) -> None:
    assert validate_identifier(value, "user_id") == value
