"""Complete forgetting: one request reaches the metadata, vector and graph stores and episodes."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sagewai.context.episodes.records import subject_pattern
from sagewai.context.scope import ContextScope, scope_key, validate_identifier
from sagewai.context.text import clean_text
from sagewai.errors import InvalidInputError
from sagewai.records import Fact, FactKind
from sagewai.stores.base.metadata import FactQuery, WriteBatch

if TYPE_CHECKING:
    from sagewai.context.engine import ContextEngine

__all__ = ["ForgetReport", "forget", "matching_facts"]

_PAGE = 500


@dataclass(frozen=True, slots=True)
class ForgetReport:
    """What a ``forget`` call removed."""

    facts_deleted: int
    graph_items_deleted: int
    episodes_deleted: int


def _query(
    engine: ContextEngine,
    *,
    session_id: str | None,
    user_id: str | None,
    scope: ContextScope | None,
) -> FactQuery:
    if scope is not None:
        if scope is ContextScope.ORG:
            raise InvalidInputError("forget(scope=ORG) is not allowed from one project")
        needed = {ContextScope.USER: user_id, ContextScope.SESSION: session_id}
        if scope in needed and needed[scope] is None:
            raise InvalidInputError(f"forget(scope={scope.value}) needs the {scope.value} id")
    keys: tuple[str, ...] | None = None
    if scope is ContextScope.PROJECT:
        keys = (scope_key(scope, engine.project_id, engine.project_id),)
    elif scope is ContextScope.USER and user_id is not None:
        keys = (scope_key(scope, engine.project_id, user_id),)
    # A SESSION scope is checked fact by fact: a session's facts are keyed by their owner too,
    # and forgetting a session reaches every owner's facts of it (the user_id narrows it).
    return FactQuery(
        project_id=engine.project_id,
        scope_keys=keys,
        session_id=session_id,
        user_id=user_id,
        limit=_PAGE,
    )


async def forget(
    engine: ContextEngine,
    *,
    subject: str | None,
    session_id: str | None,
    user_id: str | None,
    scope: ContextScope | None,
    everything: bool,
    reason: str,
) -> ForgetReport:
    """Delete what the criteria name from every store the engine reaches."""
    named = [value for value in (subject, session_id, user_id, scope) if value is not None]
    if not named and not everything:
        raise InvalidInputError(
            "forget needs subject=, session_id=, user_id=, scope= or everything=True"
        )
    if everything and named:
        raise InvalidInputError("everything=True cannot be combined with other criteria")
    if subject is not None:
        # Subjects are text: repaired like every stored subject, then held to the same limits.
        if not isinstance(subject, str):
            raise InvalidInputError(f"subject must be text, got {type(subject).__name__}")
        subject = clean_text(subject)
    for value, what in ((subject, "subject"), (session_id, "session_id"), (user_id, "user_id")):
        if value is not None:
            validate_identifier(value, what)
    if everything:
        return await _forget_project(engine, reason)

    doomed = [
        fact.id
        for fact in await matching_facts(
            engine, subject=subject, session_id=session_id, user_id=user_id, scope=scope
        )
    ]
    for start in range(0, len(doomed), _PAGE):
        ids = doomed[start : start + _PAGE]
        await engine.commit(
            WriteBatch(
                engine.project_id,
                deletes=ids,
                changes=[engine._tombstone(i, reason, "engine.forget") for i in ids],
            )
        )
    deleted = len(doomed)

    graph_deleted = 0
    graph = engine.graph_store
    # The graph records sessions, not users or scopes: a request narrowed by those leaves it.
    if graph is not None and user_id is None and scope is None:
        if session_id is not None:
            graph_deleted += (await graph.delete_session(session_id, subject=subject)).total
        elif subject is not None:
            graph_deleted += (await graph.delete_subject(subject)).total
    episodes_deleted = 0
    episodes = engine.episode_store
    if episodes is not None and scope is None:
        if subject is not None:
            episodes_deleted += await episodes.forget_subject(
                subject, project_id=engine.project_id, session_id=session_id, user_id=user_id
            )
        elif session_id is not None:
            episodes_deleted += await episodes.delete_session(
                session_id, project_id=engine.project_id, user_id=user_id
            )
        elif user_id is not None:
            episodes_deleted += await episodes.delete_user(user_id, project_id=engine.project_id)
    return ForgetReport(deleted, graph_deleted, episodes_deleted)


async def matching_facts(
    engine: ContextEngine,
    *,
    subject: str | None = None,
    session_id: str | None = None,
    user_id: str | None = None,
    scope: ContextScope | None = None,
) -> list[Fact]:
    """The records (of every status) a ``forget`` with these criteria deletes, oldest first.

    A verbatim message goes with the facts drawn from it, and when it names the subject. A dry
    run lists these and changes nothing; the real run deletes exactly these.
    """
    for value, what in ((subject, "subject"), (session_id, "session_id"), (user_id, "user_id")):
        if value is not None:
            validate_identifier(value, what)
    # Subjects match case-insensitively on a fact's subject or object, so the store is asked for
    # the other criteria and the subject is checked here, page by page. Every criterion named
    # narrows the request (AND), in every store.
    query = _query(engine, session_id=session_id, user_id=user_id, scope=scope)
    wanted = None if subject is None else subject.casefold()
    naming = None if subject is None else subject_pattern(subject)
    found: list[Fact] = []
    messages: list[Fact] = []
    sources: set[tuple[str | None, str]] = set()
    cursor: tuple[datetime, str] | None = None
    while True:
        page = await engine.metadata_store.query(dataclasses.replace(query, after=cursor))
        if not page:
            break
        cursor = (page[-1].created_at, page[-1].id)
        for fact in page:
            if fact.project_id != engine.project_id or (
                scope is not None and fact.scope is not scope
            ):
                continue
            if wanted is None:
                found.append(fact)
            elif fact.kind is FactKind.MESSAGE:
                if naming is not None and naming.search(fact.content):
                    found.append(fact)
                else:
                    messages.append(fact)
            elif _names(fact, wanted):
                found.append(fact)
                sources.update(_source_keys(fact))
    found.extend(m for m in messages if sources.intersection(_source_keys(m)))
    return found


async def same_source(engine: ContextEngine, record: Fact) -> list[Fact]:
    """The other records drawn from the same message as ``record``, oldest first.

    For a fact, the verbatim message it was drawn from (every part of a long one); for a
    message, the facts drawn from it. Forgetting one record by id takes these with it, or the
    message would still say what the fact said (and the other way round).
    """
    keys = _source_keys(record)
    if not keys or record.session_id is None:
        return []
    in_session = await matching_facts(engine, session_id=record.session_id, user_id=record.user_id)
    return [f for f in in_session if f.id != record.id and keys.intersection(_source_keys(f))]


def _source_keys(fact: Fact) -> set[tuple[str | None, str]]:
    return {
        (source.session_id or fact.session_id, source.message_id)
        for source in fact.sources
        if source.message_id is not None
    }


def _names(fact: Fact, wanted: str) -> bool:
    """True when the fact's subject or object is ``wanted`` (already casefolded)."""
    return any(
        value is not None and value.casefold() == wanted for value in (fact.subject, fact.object)
    )


async def _forget_project(engine: ContextEngine, reason: str) -> ForgetReport:
    deleted = await engine.metadata_store.delete_project(engine.project_id)
    await engine.vector_store.delete_project(engine.project_id)
    graph_deleted = 0
    if engine.graph_store is not None:
        graph_deleted = (await engine.graph_store.delete_all()).total
    episodes_deleted = 0
    if engine.episode_store is not None:
        episodes_deleted = await engine.episode_store.delete_project(engine.project_id)
    del reason  # the project's audit log goes with it: nothing is left to attach a reason to
    return ForgetReport(deleted, graph_deleted, episodes_deleted)
