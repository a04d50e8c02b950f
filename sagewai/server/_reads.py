"""The reads the server makes beyond ``search`` and ``get``: filtered pages, provenance, previews.

Why here, in one module: listing a project's records across every user (the dashboard's table,
an export-sized page) and finding the message a fact came from need exact filters that
``ContextEngine.list`` (which reads scopes as a search does) does not give. They go through the
engine's :class:`~sagewai.core.FactQuery` read (``find``), and only from this module, so the day
that read moves to a narrower port, one module follows it.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sagewai.core import FactQuery, clean_text, validate_identifier
from sagewai.core._records import Fact, FactKind, FactStatus, FactType
from sagewai.errors import InvalidInputError

if TYPE_CHECKING:
    from sagewai.context import ContextEngine
    from sagewai.context._forgetting import ForgetReport

__all__ = [
    "FactFilter",
    "decode_cursor",
    "encode_cursor",
    "forget_preview",
    "list_page",
    "source_messages",
]

_PAGE = 500
"""Most records one preview or provenance read walks through."""


def encode_cursor(fact: Fact) -> str:
    """The opaque cursor after ``fact`` (base64 of its creation time and id).

    Example:
        >>> from sagewai import Fact
        >>> fact = Fact(project_id="p", content="x")
        >>> decode_cursor(encode_cursor(fact)) == (fact.created_at, fact.id)
        True
    """
    raw = json.dumps([fact.created_at.isoformat(), fact.id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """The position a cursor names.

    Raises:
        InvalidInputError: not a cursor this server made.
    """
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        when, fact_id = json.loads(raw)
        return datetime.fromisoformat(when), validate_identifier(fact_id, "cursor")
    except (ValueError, TypeError, binascii.Error) as exc:
        raise InvalidInputError("cursor is not a cursor this server returned") from exc


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FactFilter:
    """The dashboard's and the API's filters of a fact list (``None``: no restriction)."""

    user_id: str | None = None
    session_id: str | None = None
    subject: str | None = None
    statuses: Sequence[FactStatus] | None = None
    fact_types: Sequence[FactType] | None = None
    kinds: Sequence[FactKind] | None = None
    tags: Sequence[str] | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    scope: str | None = None
    text: str | None = None
    """Keep records whose content holds this text (case-insensitive)."""


def _utc(when: datetime | None) -> datetime | None:
    """A time without a zone is read as UTC (as the CLI reads ``--as-of``)."""
    return when.replace(tzinfo=UTC) if when is not None and when.tzinfo is None else when


async def list_page(
    engine: ContextEngine, where: FactFilter, *, limit: int, cursor: str | None
) -> tuple[list[Fact], str | None]:
    """One page of the project's records matching ``where``, oldest first, and the next cursor.

    A filter the store cannot apply (scope, a time bound, text) is applied to each page read,
    so a page may hold fewer than ``limit`` records while a cursor still follows.
    """
    where = dataclasses.replace(
        where, created_after=_utc(where.created_after), created_before=_utc(where.created_before)
    )
    after = decode_cursor(cursor) if cursor is not None else None
    if where.created_after is not None and (after is None or after[0] < where.created_after):
        after = (where.created_after, "")
    query = FactQuery(
        project_id=engine.project_id,
        user_id=where.user_id,
        session_id=where.session_id,
        subject=None if where.subject is None else clean_text(where.subject),
        statuses=None if where.statuses is None else tuple(where.statuses),
        fact_types=None if where.fact_types is None else tuple(where.fact_types),
        kinds=None if where.kinds is None else tuple(where.kinds),
        tags_any=None if where.tags is None else tuple(where.tags),
        after=after,
        limit=limit,
    )
    page = await engine.port.find(query)
    next_cursor = encode_cursor(page[-1]) if len(page) == limit else None
    needle = None if where.text is None else where.text.casefold()
    kept = []
    for fact in page:
        if fact.project_id != engine.project_id:
            continue
        if where.created_before is not None and fact.created_at >= where.created_before:
            next_cursor = None  # ordered by time: nothing later can match
            break
        if where.scope is not None and fact.scope.value != where.scope:
            continue
        if needle is not None and needle not in fact.content.casefold():
            continue
        kept.append(fact)
    return kept, next_cursor


async def source_messages(engine: ContextEngine, fact: Fact) -> list[Fact]:
    """The verbatim message records ``fact`` was drawn from (same session and message id)."""
    wanted = {(s.session_id or fact.session_id, s.message_id) for s in fact.sources if s.message_id}
    if not wanted or fact.kind is FactKind.MESSAGE:
        return []
    found: list[Fact] = []
    for session_id in sorted({session for session, _ in wanted if session is not None}):
        query = FactQuery(
            project_id=engine.project_id,
            session_id=session_id,
            user_id=fact.user_id,
            kinds=(FactKind.MESSAGE,),
            limit=_PAGE,
        )
        async for record in engine.port.iter_facts(query, page_size=_PAGE):
            ids = {(s.session_id or record.session_id, s.message_id) for s in record.sources}
            if ids & wanted:
                found.append(record)
    return found


async def forget_preview(
    engine: ContextEngine,
    *,
    subject: str | None,
    session_id: str | None,
    user_id: str | None,
) -> tuple[list[Fact], ForgetReport]:
    """What a ``forget`` with these criteria would delete, and its receipt, changing nothing.

    The records are the ones the engine's ``forget`` deletes (every record naming the subject
    as a word, of every kind and status, with the messages its facts came from); the receipt is
    the engine's own dry run, so it is the one the real run returns.
    """
    from sagewai.context._forgetting import matching_facts

    records = await matching_facts(
        engine.port, subject=subject, session_id=session_id, user_id=user_id
    )
    receipt = await engine.forget(
        subject=subject, session_id=session_id, user_id=user_id, dry_run=True
    )
    return records, receipt
