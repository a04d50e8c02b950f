"""How CrewAI's scope paths map onto sagewai scopes: one explicit rule, no framework imported.

CrewAI's unified ``Memory`` files every record under a path (``/``, ``/crew/research``,
``/users/maya/preferences``). The rule, applied to every path the storage sees:

===========================================  ===============================================
path holds                                   stored and read at
===========================================  ===============================================
``sessions/<id>`` (or ``session/<id>``)      SESSION scope of ``<id>`` (short-term memory of
                                             one run or chat), owned by the path's user if any
``users/<id>`` (or ``user/<id>``)            USER scope of ``<id>`` (the user's long-term
                                             memory, read in all their sessions)
neither                                      the storage's user when it is bound to one
                                             (``SagewaiStorage(engine, user_id=...)``), else
                                             PROJECT scope (shared by the crew)
===========================================  ===============================================

A storage bound to a user refuses a path that names another user. Entities (CrewAI's analysis
puts them in ``metadata["entities"]``) become the fact's ``subject`` and tags, so sagewai's
``forget(subject=...)`` and graph-style reads find them.

Example:
    >>> scope_of_path("/users/maya/preferences").user_id
    'maya'
    >>> scope_of_path("/crew/research").scope.value
    'project'
    >>> scope_of_path("/users/maya/sessions/run-7").scope.value
    'session'
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sagewai.core import ContextScope, validate_identifier
from sagewai.errors import InvalidInputError

__all__ = ["PathScope", "normalize_path", "path_prefixes", "path_tag", "scope_of_path"]

_USER_LABELS = frozenset({"users", "user"})
_SESSION_LABELS = frozenset({"sessions", "session"})
_MAX_DEPTH = 32


@dataclass(frozen=True)
class PathScope:
    """The sagewai scope a CrewAI path maps onto."""

    scope: ContextScope
    user_id: str | None = None
    session_id: str | None = None


def normalize_path(path: str | None) -> str:
    """``"/a/b"`` form of a scope path (``None`` and ``""`` are the root ``"/"``).

    Raises:
        InvalidInputError: not text, too deep, or holding an empty or control-character label.
    """
    if path is None:
        return "/"
    if not isinstance(path, str):
        raise InvalidInputError(f"a scope path must be text, got {type(path).__name__}")
    labels = [label for label in path.strip().strip("/").split("/") if label]
    if len(labels) > _MAX_DEPTH:
        raise InvalidInputError(f"a scope path has at most {_MAX_DEPTH} labels")
    for label in labels:
        validate_identifier(label, "scope path label")
    return "/" + "/".join(labels)


def scope_of_path(path: str | None, *, bound_user: str | None = None) -> PathScope:
    """The sagewai scope of a CrewAI path (the rule in the module text).

    Raises:
        InvalidInputError: the path names another user than ``bound_user``, or a user or
            session label without an id.
    """
    labels = normalize_path(path).strip("/").split("/")
    user = session = None
    for index, label in enumerate(labels):
        if label in _USER_LABELS or label in _SESSION_LABELS:
            if index + 1 >= len(labels):
                raise InvalidInputError(f"scope path {path!r} names {label!r} without an id")
            if label in _USER_LABELS and user is None:
                user = labels[index + 1]
            elif label in _SESSION_LABELS and session is None:
                session = labels[index + 1]
    if bound_user is not None:
        if user is not None and user != bound_user:
            raise InvalidInputError(
                f"scope path {path!r} names user {user!r}; this storage holds {bound_user!r}'s"
            )
        user = bound_user
    if session is not None:
        return PathScope(ContextScope.SESSION, user, session)
    if user is not None:
        return PathScope(ContextScope.USER, user)
    return PathScope(ContextScope.PROJECT)


def path_prefixes(path: str) -> list[str]:
    """``"/a/b"`` -> ``["/", "/a", "/a/b"]``: every prefix a record is found under."""
    labels = [label for label in path.strip("/").split("/") if label]
    return ["/", *("/" + "/".join(labels[:depth]) for depth in range(1, len(labels) + 1))]


def path_tag(path: str) -> str:
    """The tag of every record under ``path``."""
    digest = hashlib.sha256(normalize_path(path).encode("utf-8")).hexdigest()[:32]
    return f"crewai:path:{digest}"
