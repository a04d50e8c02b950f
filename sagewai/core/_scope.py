"""Scopes: where a fact lives and who may read it.

Scopes nest ``ORG ⊃ PROJECT ⊃ USER ⊃ SESSION``. A fact is written at exactly one scope; a search
names one scope and reads that scope plus every scope above it, never a sibling: a search for user
``alice`` sees project-wide facts and Alice's facts, never Bob's.

Each (scope, identifiers) pair is encoded as a *scope key*, an opaque string that the stores index
and filter on. Identifiers may not contain control characters, so the unit separator used inside a
key cannot be forged by an identifier: ``project "p:a" + user "b"`` and ``project "p" + user "a:b"``
never collide.

A session belongs to the user it was written for: the key of a SESSION-scope fact written with a
``user_id`` names that user too, so a reader who names the session with another ``user_id`` (or
with none) never reaches it. Session facts written without a user stay readable by anyone who
names the session.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from sagewai.errors import InvalidInputError, ScopeError

__all__ = ["ContextScope", "ScopeAddress", "validate_identifier"]

_SEPARATOR = "\x1f"
MAX_IDENTIFIER_LENGTH = 256


class ContextScope(StrEnum):
    """The level a fact is stored at, from the widest (ORG) to the narrowest (SESSION)."""

    ORG = "org"
    PROJECT = "project"
    USER = "user"
    SESSION = "session"

    @property
    def depth(self) -> int:
        """0 for ORG up to 3 for SESSION."""
        return _DEPTH[self]

    def contains(self, other: ContextScope) -> bool:
        """True when ``other`` is this scope or nested inside it."""
        return other.depth >= self.depth


_DEPTH = {
    ContextScope.ORG: 0,
    ContextScope.PROJECT: 1,
    ContextScope.USER: 2,
    ContextScope.SESSION: 3,
}


def validate_identifier(value: str, what: str) -> str:
    """Check an identifier (project, org, user, session id) and return it unchanged.

    Identifiers are kept verbatim, but must be non-empty, at most 256 characters, and free of
    control characters (which would let one identifier forge another's scope key).

    Raises:
        InvalidInputError: when the identifier is not acceptable.
    """
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string, got {type(value).__name__}")
    if not value or not value.strip():
        raise InvalidInputError(f"{what} must not be empty")
    if len(value) > MAX_IDENTIFIER_LENGTH:
        raise InvalidInputError(f"{what} is longer than {MAX_IDENTIFIER_LENGTH} characters")
    if _FORBIDDEN.search(value):
        raise InvalidInputError(f"{what} must not contain control characters or lone surrogates")
    return value


_FORBIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
"""Unicode's control characters (category Cc) forge keys; a lone surrogate (Cs) cannot be
encoded (no store can hold it). One pattern: identifiers are checked for every record built."""


@dataclass(frozen=True, slots=True)
class ScopeAddress:
    """A concrete place in the scope tree: a scope plus the identifiers that pin it down.

    ``ScopeAddress(ContextScope.USER, project_id="p", user_id="alice")`` is Alice's user scope in
    project ``p``. ``org_id`` is optional everywhere except at ORG scope.
    """

    scope: ContextScope
    project_id: str
    org_id: str | None = None
    user_id: str | None = None
    session_id: str | None = None

    def __post_init__(self) -> None:
        validate_identifier(self.project_id, "project_id")
        for name in ("org_id", "user_id", "session_id"):
            value = getattr(self, name)
            if value is not None:
                validate_identifier(value, name)
        if self.scope is ContextScope.ORG and self.org_id is None:
            raise ScopeError("ORG scope needs an org_id")
        if self.scope is ContextScope.USER and self.user_id is None:
            raise ScopeError("USER scope needs a user_id")
        if self.scope is ContextScope.SESSION and self.session_id is None:
            raise ScopeError("SESSION scope needs a session_id")

    @property
    def scope_id(self) -> str:
        """The identifier of the scope itself (the org, project, user or session id)."""
        if self.scope is ContextScope.ORG:
            assert self.org_id is not None
            return self.org_id
        if self.scope is ContextScope.PROJECT:
            return self.project_id
        if self.scope is ContextScope.USER:
            assert self.user_id is not None
            return self.user_id
        assert self.session_id is not None
        return self.session_id

    @property
    def key(self) -> str:
        """The opaque key the stores filter on: unique per scope, never forgeable by identifiers."""
        owner = self.user_id if self.scope is ContextScope.SESSION else None
        return scope_key(self.scope, self.project_id, self.scope_id, owner)

    def readable_keys(self) -> tuple[str, ...]:
        """Keys of this scope and every scope above it: what a search at this address may read.

        A SESSION address reads its session, and its user's facts when a ``user_id`` is given.
        A session's facts owned by a user are read only with that user's ``user_id``; facts of
        the session written without a user are read by every reader of the session.
        """
        keys = [self.key]
        if self.scope is ContextScope.SESSION and self.user_id is not None:
            keys.append(scope_key(ContextScope.SESSION, self.project_id, self.scope_id))
        if self.scope.depth >= ContextScope.USER.depth and self.user_id is not None:
            keys.append(scope_key(ContextScope.USER, self.project_id, self.user_id))
        if self.scope.depth >= ContextScope.PROJECT.depth:
            keys.append(scope_key(ContextScope.PROJECT, self.project_id, self.project_id))
        if self.org_id is not None:
            keys.append(scope_key(ContextScope.ORG, self.project_id, self.org_id))
        return tuple(dict.fromkeys(keys))


def scope_key(scope: ContextScope, project_id: str, scope_id: str, owner: str | None = None) -> str:
    """Encode a scope key. ORG keys are shared by every project of the org.

    ``owner`` is the user a SESSION belongs to (ignored at other scopes): the session of one
    user and the same session id of another user, or of nobody, never share a key.
    """
    if scope is ContextScope.ORG:
        return _SEPARATOR.join(("org", scope_id))
    if scope is ContextScope.SESSION and owner is not None:
        return _SEPARATOR.join((scope.value, project_id, scope_id, owner))
    return _SEPARATOR.join((scope.value, project_id, scope_id))
