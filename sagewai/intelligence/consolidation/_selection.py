"""Which facts a run consolidates, and the store queries and filters that reach them.

Why a separate piece: the same selection (a scope, optionally one user or session, optionally
some tags) must be applied identically to the batch scan, the nearest-neighbour searches and the
contradiction groups, or a run would merge a fact it was never asked to touch. Only facts proper
are consolidated; document chunks are left as ingested.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sagewai.core._queries import FactQuery, VectorFilter
from sagewai.core._records import Fact, FactKind, FactStatus
from sagewai.core._scope import ContextScope, ScopeAddress, scope_key
from sagewai.errors import ScopeError

__all__ = ["Selection", "scope_key_of"]

_KINDS = (FactKind.FACT,)


def scope_key_of(fact: Fact) -> str:
    """``fact.scope_key`` without re-validating the fact's identifiers (they were validated when
    the fact was built); a run asks for it many times per fact."""
    if fact.scope is ContextScope.ORG:
        assert fact.org_id is not None
        return _scope_key(fact.scope, fact.project_id, fact.org_id, None)
    if fact.scope is ContextScope.USER:
        assert fact.user_id is not None
        return _scope_key(fact.scope, fact.project_id, fact.user_id, None)
    if fact.scope is ContextScope.SESSION:
        assert fact.session_id is not None
        return _scope_key(fact.scope, fact.project_id, fact.session_id, fact.user_id)
    return _scope_key(fact.scope, fact.project_id, fact.project_id, None)


@functools.lru_cache(maxsize=4_096)
def _scope_key(scope: ContextScope, project_id: str, scope_id: str, owner: str | None) -> str:
    """:func:`~sagewai.core._scope.scope_key`, remembered (a run has few scopes)."""
    return scope_key(scope, project_id, scope_id, owner)


@dataclass(frozen=True, slots=True)
class Selection:
    """The facts of one project a run may read and change.

    Attributes:
        project_id: The engine's project.
        scope: One scope level, or ``None`` for every scope of the project.
        scope_key: The exact scope key when the scope is pinned to one place (a project, one
            user, one session, the org); ``None`` when a level spans many places (every user).
        tags: Only facts carrying at least one of these tags.
    """

    project_id: str
    scope: ContextScope | None
    scope_key: str | None
    tags: tuple[str, ...] | None

    @classmethod
    def build(
        cls,
        *,
        project_id: str,
        org_id: str | None,
        scope: ContextScope | str | None,
        user_id: str | None,
        session_id: str | None,
        tags: Sequence[str] | None,
    ) -> Selection:
        """Resolve the caller's arguments into a selection.

        Raises:
            ScopeError: an unknown scope, an ORG scope on an engine without ``org_id``, or an
                identifier that does not belong to the scope named.
        """
        level: ContextScope | None
        try:
            level = None if scope is None else ContextScope(scope)
        except ValueError as exc:
            raise ScopeError(f"unknown scope {scope!r}") from exc
        key: str | None = None
        if level is ContextScope.ORG:
            if org_id is None:
                raise ScopeError("consolidating the ORG scope needs an engine with an org_id")
            key = scope_key(ContextScope.ORG, project_id, org_id)
        elif level is ContextScope.PROJECT:
            key = scope_key(ContextScope.PROJECT, project_id, project_id)
        elif level is ContextScope.USER and user_id is not None:
            key = ScopeAddress(level, project_id=project_id, user_id=user_id).key
        elif level is ContextScope.SESSION and session_id is not None:
            key = ScopeAddress(
                level, project_id=project_id, session_id=session_id, user_id=user_id
            ).key
        if (user_id is not None and level not in (ContextScope.USER, ContextScope.SESSION)) or (
            session_id is not None and level is not ContextScope.SESSION
        ):
            raise ScopeError("user_id goes with scope='user' and session_id with scope='session'")
        return cls(
            project_id=project_id,
            scope=level,
            scope_key=key,
            tags=None if tags is None else tuple(dict.fromkeys(tags)),
        )

    @property
    def describe(self) -> str:
        """The selection in words (also the identity of its stored state)."""
        where = "all scopes" if self.scope is None else self.scope.value
        if self.scope_key is not None and self.scope not in (None, ContextScope.PROJECT):
            where += f" {self.scope_key.rsplit(chr(31), 1)[-1]}"
        tags = "" if self.tags is None else f" tags={','.join(sorted(self.tags))}"
        return f"project={self.project_id} scope={where}{tags}"

    def contains(self, fact: Fact) -> bool:
        """True when ``fact`` belongs to the selection (whatever its status)."""
        if fact.project_id != self.project_id or fact.kind is not FactKind.FACT:
            return False
        if self.scope_key is not None and scope_key_of(fact) != self.scope_key:
            return False
        if self.scope is not None and fact.scope is not self.scope:
            return False
        return self.tags is None or bool(set(self.tags).intersection(fact.tags))

    def scan(
        self,
        *,
        after: tuple[datetime, str] | None,
        limit: int,
        updated_since: datetime | None,
    ) -> FactQuery:
        """The page query of the batch scan: ACTIVE facts in ``(created_at, id)`` order.

        The query may return facts outside a multi-place scope level (every user's facts are
        read through the project); callers keep those for which :meth:`contains` holds.
        """
        return FactQuery(
            project_id=self.project_id,
            scope_keys=None if self.scope_key is None else (self.scope_key,),
            statuses=(FactStatus.ACTIVE,),
            kinds=_KINDS,
            tags_any=self.tags,
            updated_since=updated_since,
            after=after,
            limit=limit,
        )

    def count(self, *, updated_since: datetime | None) -> FactQuery:
        """The query counting what the scan will examine (an estimate for progress)."""
        return FactQuery(
            project_id=self.project_id,
            scope_keys=None if self.scope_key is None else (self.scope_key,),
            statuses=(FactStatus.ACTIVE,),
            kinds=_KINDS,
            tags_any=self.tags,
            updated_since=updated_since,
        )

    def group(self, subject: str, *, after: tuple[datetime, str] | None, limit: int) -> FactQuery:
        """A page of a subject's facts (contradiction groups are cut from it).

        Filtered by project and subject only, so the store's (project, subject) index serves it;
        scope, kind and tags are checked by the caller.
        """
        return FactQuery(
            project_id=self.project_id,
            subject=subject,
            statuses=(FactStatus.ACTIVE, FactStatus.FLAGGED),
            after=after,
            limit=limit,
        )

    def groups(self, subjects: Sequence[str], *, limit: int) -> FactQuery:
        """The facts of several subjects at once (see :meth:`group`)."""
        return FactQuery(
            project_id=self.project_id,
            subjects=tuple(subjects),
            statuses=(FactStatus.ACTIVE, FactStatus.FLAGGED),
            limit=limit,
        )

    def neighbours(self, fact: Fact) -> VectorFilter:
        """Where near-duplicates of ``fact`` may be: its scope, active (and the run's tags).

        Kind and type compatibility are left to :func:`merge_refusal` on the hydrated hits:
        each extra condition makes every step of the index's graph walk check one more field
        (a two-type condition made a search 40 % slower in measurements), and a fact of another
        kind or type that is that close to ``fact`` is rare.
        """
        return self.neighbours_in(scope_key_of(fact))

    def neighbours_in(self, key: str) -> VectorFilter:
        """Where near-duplicates of a fact of scope ``key`` may be (see :meth:`neighbours`)."""
        return VectorFilter(
            scope_keys=(key,),
            statuses=(FactStatus.ACTIVE.value,),
            tags_any=self.tags,
        )

    def value_holders(self, fact: Fact) -> FactQuery:
        """Facts that may hold another copy of one of ``fact``'s exact values."""
        return FactQuery(
            project_id=self.project_id,
            scope_keys=(scope_key_of(fact),),
            statuses=(FactStatus.ACTIVE, FactStatus.FLAGGED),
        )
