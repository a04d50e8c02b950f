"""The metadata store contract: the source of truth for facts and their audit history.

Backends implement a narrow async core (``apply`` one atomic batch, ``get``, ``query``, ``count``,
``keyword_search``, ``changes``, ``touch``, ``delete_project``, ``lock``). Every convenience, every
validation and every scoping rule lives once above them, in the engine.
"""

from __future__ import annotations

import asyncio
import re
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from types import TracebackType
from typing import Self

from pydantic import JsonValue

from sagewai.context.scope import validate_identifier
from sagewai.errors import InvalidInputError
from sagewai.records import Fact, FactChange, FactKind, FactStatus, FactType

__all__ = ["ChangeQuery", "FactQuery", "MetadataStore", "WriteBatch", "keyword_terms"]

_TERM = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
MAX_QUERY_LIMIT = 100_000


def keyword_terms(text: str, *, limit: int = 64) -> list[str]:
    """Lower-cased word terms of ``text``: the one tokenisation all keyword backends share.

    Only letters and digits survive, so no query syntax (FTS5 operators, tsquery symbols) ever
    reaches a backend from user text.
    """
    terms = [match.group(0).lower().replace("’", "'") for match in _TERM.finditer(text)]
    out: list[str] = []
    for term in terms:
        for part in term.split("'"):
            if part and part not in out:
                out.append(part)
    return out[:limit]


@dataclass(frozen=True, slots=True)
class FactQuery:
    """A filter over one project's facts; ``None`` means "no restriction".

    With ``scope_keys`` the query reads exactly those scopes (ORG keys reach across the org's
    projects); without, it reads every fact whose ``project_id`` is ``project_id``.
    Results are ordered by ``(created_at, id)``; ``after`` continues after that position.
    """

    project_id: str
    scope_keys: tuple[str, ...] | None = None
    ids: tuple[str, ...] | None = None
    subject: str | None = None
    subjects: tuple[str, ...] | None = None
    """Any of these subjects (an empty tuple matches nothing)."""
    user_id: str | None = None
    session_id: str | None = None
    statuses: tuple[FactStatus, ...] | None = None
    kinds: tuple[FactKind, ...] | None = None
    fact_types: tuple[FactType, ...] | None = None
    tags_any: tuple[str, ...] | None = None
    valid_at: datetime | None = None
    updated_since: datetime | None = None
    """Facts written (inserted or changed) at or after this time; used by incremental runs."""
    after: tuple[datetime, str] | None = None
    limit: int | None = None

    def __post_init__(self) -> None:
        validate_identifier(self.project_id, "project_id")
        if self.scope_keys is not None and not self.scope_keys:
            raise InvalidInputError("scope_keys must not be empty when given")
        if self.limit is not None and not 0 < self.limit <= MAX_QUERY_LIMIT:
            raise InvalidInputError(f"limit must be between 1 and {MAX_QUERY_LIMIT}")

    def matches(self, fact: Fact) -> bool:
        """The reference semantics of every field but ``updated_since``/``after``/``limit``."""
        if self.scope_keys is not None:
            if fact.scope_key not in self.scope_keys:
                return False
        elif fact.project_id != self.project_id:
            return False
        if self.ids is not None and fact.id not in self.ids:
            return False
        if self.subject is not None and fact.subject != self.subject:
            return False
        if self.subjects is not None and fact.subject not in self.subjects:
            return False
        if self.user_id is not None and fact.user_id != self.user_id:
            return False
        if self.session_id is not None and fact.session_id != self.session_id:
            return False
        if self.statuses is not None and fact.status not in self.statuses:
            return False
        if self.kinds is not None and fact.kind not in self.kinds:
            return False
        if self.fact_types is not None and fact.fact_type not in self.fact_types:
            return False
        if self.tags_any is not None and not set(self.tags_any).intersection(fact.tags):
            return False
        return self.valid_at is None or fact.valid_at(self.valid_at)


@dataclass(frozen=True, slots=True)
class ChangeQuery:
    """A filter over one project's audit log, oldest first."""

    project_id: str
    fact_id: str | None = None
    run_id: str | None = None
    since: datetime | None = None
    limit: int | None = None


@dataclass(slots=True)
class WriteBatch:
    """One atomic unit of writes to a project: all of it lands, or none of it.

    Applied in this order: ``deletes`` (the facts and their history), then ``upserts``, then
    ``changes`` (audit rows, including the tombstones of deletions). A batch may only touch facts
    of ``project_id``.
    """

    project_id: str
    upserts: list[Fact] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    changes: list[FactChange] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.upserts or self.deletes or self.changes)

    def validate(self) -> None:
        """Refuse a batch that reaches into another project."""
        for fact in self.upserts:
            if fact.project_id != self.project_id:
                raise InvalidInputError(
                    f"fact {fact.id} belongs to project {fact.project_id!r}, "
                    f"not {self.project_id!r}"
                )
        for change in self.changes:
            if change.project_id != self.project_id:
                raise InvalidInputError(f"change {change.id} belongs to another project")


class MetadataStore(ABC):
    """Base class of metadata store backends (the source of truth for facts)."""

    def __init__(self) -> None:
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._state: dict[tuple[str, str], JsonValue] = {}

    async def open(self) -> None:  # noqa: B027 - optional hook
        """Open connections or files. Safe to call more than once."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections or files. Safe to call more than once."""

    async def migrate(self) -> list[str]:
        """Apply pending schema migrations; return the versions applied (none by default)."""
        return []

    @abstractmethod
    async def apply(self, batch: WriteBatch) -> None:
        """Apply ``batch`` atomically. Ids of other projects in ``deletes`` are ignored."""

    @abstractmethod
    async def get(self, project_id: str, ids: Sequence[str]) -> list[Fact]:
        """Facts of ``project_id`` with these ids (order not guaranteed; unknown ids left out).

        ORG-scope facts written by another project of the same org are returned too when their id
        is asked for and ``project_id``'s engine may read them; the engine checks scope keys.
        """

    @abstractmethod
    async def query(self, query: FactQuery) -> list[Fact]:
        """Facts matching ``query`` ordered by ``(created_at, id)``."""

    @abstractmethod
    async def count(self, query: FactQuery) -> int:
        """How many facts match ``query`` (``after`` and ``limit`` ignored)."""

    @abstractmethod
    async def keyword_search(
        self, query: FactQuery, text: str, top_k: int
    ) -> list[tuple[str, float]]:
        """Ids and keyword scores (higher is better) of facts matching ``query`` and ``text``."""

    @abstractmethod
    async def changes(self, query: ChangeQuery) -> list[FactChange]:
        """Audit rows matching ``query``, oldest first."""

    @abstractmethod
    async def touch(self, project_id: str, ids: Sequence[str], at: datetime) -> None:
        """Set ``last_accessed_at`` of these facts (reads count as use for decay)."""

    @abstractmethod
    async def delete_project(self, project_id: str) -> int:
        """Delete every fact and audit row of ``project_id``; return the number of facts."""

    async def get_state(self, project_id: str, key: str) -> JsonValue | None:
        """A small JSON value kept per project (e.g. the last consolidation run).

        The default keeps it in memory; persistent backends override both methods.
        """
        return self._state.get((project_id, key))

    async def set_state(self, project_id: str, key: str, value: JsonValue) -> None:
        """Store a small JSON value per project, replacing the previous one."""
        self._state[(project_id, key)] = value

    @asynccontextmanager
    async def lock(self, project_id: str, name: str) -> AsyncIterator[None]:
        """Hold an exclusive lock named ``name`` on ``project_id``.

        The default is an in-process lock; backends shared between processes override it
        (a file lock for SQLite, an advisory lock for PostgreSQL). Raises
        :class:`~sagewai.errors.LockedError` when the lock is held elsewhere.
        """
        from sagewai.errors import LockedError

        lock = self._locks.setdefault((project_id, name), asyncio.Lock())
        if lock.locked():
            raise LockedError(f"{name} is already running on project {project_id!r}")
        async with lock:
            yield

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
