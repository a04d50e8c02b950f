"""Complete forgetting by criteria: one request reaches every store, and returns a receipt.

``ContextEngine.forget`` names what to forget (a subject, a session, a user, a scope, or
everything); :func:`forget_matching` then takes one step a store: the records naming it (of every
kind and status, deleted with their vectors, each leaving a content-free tombstone), the audit
text of the records kept (:mod:`sagewai.context._naming`), the graph, the episodes and the
bridges' journals (:mod:`sagewai.context._journal_files`). Each step counts what it removes, so
the receipt (:class:`ForgetReport`) says what each store lost; with ``dry_run`` every step only
counts. Forgetting facts by id for one user (the agent's ``forget``) is
:mod:`sagewai.context._forget_by_id`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, TypedDict

from sagewai.context._journal_files import forget_in_journals, journal_matcher
from sagewai.context._naming import audit_names, record_names, redact_text, redacted_change
from sagewai.context._ranking import CONTEXT_MARK
from sagewai.core import _lifecycle as lifecycle
from sagewai.core._episode_records import EpisodeRedaction, subject_pattern
from sagewai.core._graph_matching import plan_session_forget
from sagewai.core._graph_records import MAX_GRAPH_WRITE
from sagewai.core._pieces import piece_ids
from sagewai.core._profile import user_name_key
from sagewai.core._queries import ChangeQuery, FactQuery, WriteBatch
from sagewai.core._records import Fact, FactChange, FactKind
from sagewai.core._scope import ContextScope, scope_key, validate_identifier
from sagewai.core._text import clean_text
from sagewai.errors import InvalidInputError
from sagewai.stores.base._graph import GraphWrite

if TYPE_CHECKING:
    from sagewai.context._access import StoreAccess
    from sagewai.core._graph_records import Relation
    from sagewai.stores.base._graph import ProjectGraph

__all__ = [
    "ForgetReport",
    "checked_subject",
    "delete_records",
    "forget_everything",
    "forget_matching",
    "matching_facts",
    "same_source",
    "syntheses_resting_on",
]


_PAGE = 500
_MAX_EPISODES = 10_000


@dataclass(frozen=True, slots=True)
class ForgetReport:
    """The receipt of a ``forget`` call: what it removed from each store, counted.

    A dry run (``forget(..., dry_run=True)``) returns the same receipt and changes nothing;
    ``dry_run`` says which one this is and is left out of comparisons, so a dry run's receipt
    equals the real run's.
    """

    facts: int = 0
    """Fact records deleted (every status)."""
    messages: int = 0
    """Verbatim message records deleted (the parts of a long message count one each)."""
    context_records: int = 0
    """Context records deleted (a message with the end of the turn before it)."""
    documents: int = 0
    """Document chunks deleted."""
    vectors: int = 0
    """Points deleted from the vector index (records and long records' pieces)."""
    graph_entities: int = 0
    """Graph entities deleted."""
    graph_relations: int = 0
    """Graph relations deleted."""
    episodes_redacted: int = 0
    """Episodes kept without the messages that named what was forgotten."""
    episodes_removed: int = 0
    """Episodes deleted whole."""
    episode_messages: int = 0
    """Messages (turns) removed from episodes, in the redacted and the deleted ones."""
    journal_entries: int = 0
    """Entries removed from the bridges' write-ahead journals (a replay cannot restore them)."""
    audit_rows_removed: int = 0
    """Audit rows of the deleted records, replaced by one content-free tombstone each."""
    audit_rows_redacted: int = 0
    """Audit rows of kept records whose text named what was forgotten, rewritten without it."""
    journals_locked: int = 0
    """Journals another process held open, so they could not be rewritten (logged)."""
    user_names: int = 0
    """Names users gave ("My name is Dana") erased from the name store: the name is forgotten,
    or the message that gave it was (a later turn no longer reads "Dana (the user)")."""
    dry_run: bool = field(default=False, compare=False)
    """True for the receipt of a dry run: nothing was changed."""

    @property
    def facts_deleted(self) -> int:
        """Records deleted from the metadata store, of every kind."""
        return self.facts + self.messages + self.context_records + self.documents

    @property
    def graph_items_deleted(self) -> int:
        """Graph entities plus relations deleted."""
        return self.graph_entities + self.graph_relations

    @property
    def episodes_deleted(self) -> int:
        """Episodes touched: redacted or deleted whole."""
        return self.episodes_redacted + self.episodes_removed

    def as_dict(self) -> dict[str, int | bool]:
        """The counts by store (and the totals the CLI and the server always showed)."""
        counts: dict[str, int | bool] = {f.name: getattr(self, f.name) for f in fields(self)}
        counts["facts_deleted"] = self.facts_deleted
        counts["graph_items_deleted"] = self.graph_items_deleted
        counts["episodes_deleted"] = self.episodes_deleted
        return counts


async def delete_records(
    access: StoreAccess, fact_ids: Sequence[str], *, reason: str, rule: str = "engine.delete"
) -> int:
    """Delete records of this project by id, each leaving a content-free tombstone.

    Ids of no record of this project are skipped. The deletes land in atomic batches of a few
    hundred (vectors and pieces with them); returns how many records were deleted.

    Raises:
        InvalidInputError: ``reason`` or ``rule`` is not text.
    """
    if not isinstance(reason, str) or not isinstance(rule, str):
        raise InvalidInputError("reason and rule must be text")
    wanted = list(dict.fromkeys(fact_ids))
    deleted = 0
    for start in range(0, len(wanted), _PAGE):
        ids = [
            fact.id
            for fact in await access.get_many(wanted[start : start + _PAGE])
            if fact.project_id == access.project_id
        ]
        if not ids:
            continue
        cause = lifecycle.Cause("engine", rule, reason)
        tombstones = [lifecycle.tombstone(i, access.project_id, cause) for i in ids]
        await access.commit(WriteBatch(access.project_id, deletes=ids, changes=tombstones))
        deleted += len(ids)
    return deleted


def _query(
    access: StoreAccess,
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
        keys = (scope_key(scope, access.project_id, access.project_id),)
    elif scope is ContextScope.USER and user_id is not None:
        keys = (scope_key(scope, access.project_id, user_id),)
    # A SESSION scope is checked fact by fact: a session's facts are keyed by their owner too,
    # and forgetting a session reaches every owner's facts of it (the user_id narrows it).
    return FactQuery(
        project_id=access.project_id,
        scope_keys=keys,
        session_id=session_id,
        user_id=user_id,
        limit=_PAGE,
    )


def checked_subject(
    *,
    subject: str | None,
    session_id: str | None,
    user_id: str | None,
    scope: ContextScope | None,
    everything: bool,
) -> str | None:
    """Check that a ``forget`` names what to forget, and return its subject as stored.

    Raises:
        InvalidInputError: nothing named, ``everything`` with other criteria, a bad value.
    """
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
    return subject


async def forget_matching(
    access: StoreAccess,
    *,
    subject: str | None,
    session_id: str | None,
    user_id: str | None,
    scope: ContextScope | None,
    reason: str,
    dry_run: bool = False,
) -> ForgetReport:
    """Delete what checked criteria name from every store the engine reaches; the receipt.

    One step a store: the records (tombstones, one commit per page, their vectors with them),
    the audit rows of kept records that name the subject, the graph, the episodes and the
    bridges' journals. With ``dry_run`` every step only counts, so the receipt is the one a
    real run returns.
    """
    pattern = None if subject is None else subject_pattern(subject)
    records = await matching_facts(
        access, subject=subject, session_id=session_id, user_id=user_id, scope=scope
    )
    doomed = {record.id for record in records}
    vectors = await _vector_count(access, records)
    # The audit: the rows of doomed records go with them; kept rows naming the subject are
    # rewritten (a subject forgotten within a session, a user or a scope leaves other rows).
    whole = pattern is not None and session_id is None and user_id is None and scope is None
    removed_rows, redacted_rows = await _audit_plan(access, doomed, pattern if whole else None)
    if not dry_run:
        tombstone_reason = reason if pattern is None else redact_text(reason, pattern)
        await delete_records(access, list(doomed), reason=tombstone_reason, rule="engine.forget")
        if redacted_rows:
            await access.metadata.redact_changes(access.project_id, redacted_rows)
    entities, relations = await _forget_in_graph(
        access,
        subject=subject,
        pattern=pattern,
        session_id=session_id,
        user_id=user_id,
        scope=scope,
        dry_run=dry_run,
    )
    episodes = await _forget_in_episodes(
        access,
        subject=subject,
        session_id=session_id,
        user_id=user_id,
        scope=scope,
        dry_run=dry_run,
    )
    entries, locked = (
        (0, 0)
        if scope is not None
        else await forget_in_journals(
            access, journal_matcher(pattern, session_id, user_id), dry_run=dry_run
        )
    )
    names = await _forget_user_names(
        access,
        records,
        pattern=pattern if session_id is None and scope is None else None,
        user_id=user_id,
        dry_run=dry_run,
    )
    kinds = _count_kinds(records)
    return ForgetReport(
        **kinds,
        vectors=vectors,
        graph_entities=entities,
        graph_relations=relations,
        episodes_redacted=episodes.episodes_redacted,
        episodes_removed=episodes.episodes_deleted,
        episode_messages=episodes.messages_removed,
        journal_entries=entries,
        audit_rows_removed=removed_rows,
        audit_rows_redacted=len(redacted_rows),
        journals_locked=locked,
        user_names=names,
        dry_run=dry_run,
    )


async def _forget_user_names(
    access: StoreAccess,
    records: Sequence[Fact],
    *,
    pattern: re.Pattern[str] | None,
    user_id: str | None,
    dry_run: bool,
) -> int:
    """Erase the names users gave (the bridge's name store, :mod:`sagewai.context.bridge._names`)
    that this forget reaches: a name the forgotten subject names, or one given in a message
    being deleted. Returns how many were (or, in a dry run, would be) erased.

    The users looked at are those of the deleted records (the message giving a name is the
    user's), the ``user_id`` named, and the default user.
    """
    doomed = {record.id for record in records}
    users: set[str | None] = {None, *(r.user_id for r in records)}
    if user_id is not None:
        users = {user_id}
    erased = 0
    for user in sorted(users, key=lambda u: u or ""):
        key = user_name_key(user)
        saved = await access.get_state(key)
        if not isinstance(saved, dict):
            continue
        name, said_in = saved.get("name"), saved.get("message")
        named = pattern is not None and isinstance(name, str) and bool(pattern.search(name))
        if not named and not (isinstance(said_in, str) and said_in in doomed):
            continue
        erased += 1
        if not dry_run:
            await access.set_state(key, None)
    return erased


async def forget_everything(access: StoreAccess, *, dry_run: bool) -> ForgetReport:
    """Forget a whole project: every record, vector, graph item, episode and journal entry.

    Its audit log goes with it (nothing is left to hold a reason).
    """
    kinds = _Kinds(facts=0, messages=0, context_records=0, documents=0)
    vectors = 0
    page: list[Fact] = []
    async for record in access.iter_facts(FactQuery(project_id=access.project_id)):
        if record.project_id == access.project_id:
            page.append(record)
        if len(page) == _PAGE:
            vectors += await _vector_count(access, page)
            _add_kinds(kinds, page)
            page = []
    vectors += await _vector_count(access, page)
    _add_kinds(kinds, page)
    audit = len(await access.changes(ChangeQuery(project_id=access.project_id)))
    graph = access.graph
    counts = await graph.counts() if graph is not None else None
    episodes = access.episode_store
    listed = (
        []
        if episodes is None
        else await episodes.list_episodes(project_id=access.project_id, limit=_MAX_EPISODES)
    )
    if not dry_run:
        await access.metadata.delete_project(access.project_id)
        await access.vectors.delete_project(access.project_id)
        if graph is not None:
            await graph.delete_all()
        if episodes is not None:
            await episodes.delete_project(access.project_id)
    entries, locked = await forget_in_journals(access, lambda payload: True, dry_run=dry_run)
    return ForgetReport(
        **kinds,
        vectors=vectors,
        graph_entities=0 if counts is None else counts.entities,
        graph_relations=0 if counts is None else counts.relations,
        episodes_removed=len(listed),
        episode_messages=sum(len(e.messages) for e in listed),
        journal_entries=entries,
        audit_rows_removed=audit,
        journals_locked=locked,
        dry_run=dry_run,
    )


async def _audit_plan(
    access: StoreAccess, doomed: AbstractSet[str], pattern: re.Pattern[str] | None
) -> tuple[int, list[FactChange]]:
    """How many audit rows go with the doomed records, and the kept rows to redact.

    Redacting reads the whole audit log (no store searches its text); without a pattern only
    the doomed records' rows are read.
    """
    if pattern is None:
        removed = 0
        for fact_id in doomed:
            query = ChangeQuery(project_id=access.project_id, fact_id=fact_id)
            removed += len(await access.changes(query))
        return removed, []
    history = await access.changes(ChangeQuery(project_id=access.project_id))
    removed = sum(1 for change in history if change.fact_id in doomed)
    redacted = [
        redacted_change(change, pattern)
        for change in history
        if change.fact_id not in doomed and audit_names(change, pattern)
    ]
    return removed, redacted


class _Kinds(TypedDict):
    """The records deleted, by kind: the first four fields of a :class:`ForgetReport`."""

    facts: int
    messages: int
    context_records: int
    documents: int


def _count_kinds(records: Iterable[Fact]) -> _Kinds:
    counts = _Kinds(facts=0, messages=0, context_records=0, documents=0)
    _add_kinds(counts, records)
    return counts


def _add_kinds(counts: _Kinds, records: Iterable[Fact]) -> None:
    for record in records:
        if record.kind is FactKind.DOCUMENT:
            counts["documents"] += 1
        elif record.kind is not FactKind.MESSAGE:
            counts["facts"] += 1
        elif CONTEXT_MARK in record.metadata:
            counts["context_records"] += 1
        else:
            counts["messages"] += 1


async def _vector_count(access: StoreAccess, records: Sequence[Fact]) -> int:
    """How many points of the index these records hold (with their long records' pieces)."""
    ids = [i for record in records for i in (record.id, *piece_ids(record.id, record.content))]
    found = 0
    for start in range(0, len(ids), _PAGE):
        found += len(await access.get_vectors(ids[start : start + _PAGE]))
    return found


async def _forget_in_graph(
    access: StoreAccess,
    *,
    subject: str | None,
    pattern: re.Pattern[str] | None,
    session_id: str | None,
    user_id: str | None,
    scope: ContextScope | None,
    dry_run: bool,
) -> tuple[int, int]:
    """The graph's part: (entities, relations) deleted. The graph records sessions, not users
    or scopes: a request narrowed by those leaves it."""
    graph = access.graph
    if graph is None or user_id is not None or scope is not None:
        return 0, 0
    if session_id is not None:
        if not dry_run:
            done = await graph.delete_session(session_id, subject=subject)
            return done.entities_deleted, done.relations_deleted
        if subject is None:
            entities, relations = await graph.entities(), await graph.relations()
        else:
            entities = await graph.entities_named(subject)
            relations = await _touching(graph, [e.id for e in entities])
        plan = plan_session_forget(session_id, entities, relations)
        return len(plan.delete_entities), len(plan.delete_relations)
    if pattern is None:
        return 0, 0
    doomed_entities = [e.id for e in await graph.entities() if record_names(e, pattern)]
    gone = set(doomed_entities)
    doomed_relations = [
        r
        for r in await graph.relations()
        if r.subject_id in gone or r.object_id in gone or record_names(r, pattern)
    ]
    if not dry_run:
        step = MAX_GRAPH_WRITE // 2
        for start in range(0, len(doomed_relations), step):
            part = doomed_relations[start : start + step]
            await graph.apply(GraphWrite(graph.project_id, delete_relations=part))
        for start in range(0, len(doomed_entities), step):
            part_ids = doomed_entities[start : start + step]
            await graph.apply(GraphWrite(graph.project_id, delete_entities=part_ids))
    return len(doomed_entities), len(doomed_relations)


async def _touching(graph: ProjectGraph, entity_ids: Sequence[str]) -> list[Relation]:
    found: dict[str, Relation] = {}
    for entity_id in entity_ids:
        for relation in (
            *await graph.relations(subject_id=entity_id),
            *await graph.relations(object_id=entity_id),
        ):
            found[relation.id] = relation
    return list(found.values())


async def _forget_in_episodes(
    access: StoreAccess,
    *,
    subject: str | None,
    session_id: str | None,
    user_id: str | None,
    scope: ContextScope | None,
    dry_run: bool,
) -> EpisodeRedaction:
    """The episodes' part. Episodes are kept per session and user, not per scope."""
    store = access.episode_store
    if store is None or scope is not None:
        return EpisodeRedaction()
    project = access.project_id
    if subject is not None:
        return await store.redact_subject(
            subject, project_id=project, session_id=session_id, user_id=user_id, dry_run=dry_run
        )
    if session_id is None and user_id is None:
        return EpisodeRedaction()
    listed = await store.list_episodes(
        project_id=project, session_id=session_id, user_id=user_id, limit=_MAX_EPISODES
    )
    if not dry_run:
        if session_id is not None:
            await store.delete_session(session_id, project_id=project, user_id=user_id)
        elif user_id is not None:
            await store.delete_user(user_id, project_id=project)
    return EpisodeRedaction(
        episodes_deleted=len(listed), messages_removed=sum(len(e.messages) for e in listed)
    )


async def matching_facts(
    access: StoreAccess,
    *,
    subject: str | None = None,
    session_id: str | None = None,
    user_id: str | None = None,
    scope: ContextScope | None = None,
) -> list[Fact]:
    """The records (of every status and kind) a ``forget`` with these criteria deletes.

    With a subject: every record naming it as a word (case-insensitive, whole words, in its
    content, subject, object, values, tags, metadata or speakers), and the verbatim messages
    the facts naming it were drawn from. A dry run lists these and changes nothing; the real
    run deletes exactly these.
    """
    for value, what in ((subject, "subject"), (session_id, "session_id"), (user_id, "user_id")):
        if value is not None:
            validate_identifier(value, what)
    # The store is asked for the other criteria and the subject is checked here, page by
    # page. Every criterion named narrows the request (AND), in every store.
    query = _query(access, session_id=session_id, user_id=user_id, scope=scope)
    naming = None if subject is None else subject_pattern(subject)
    if subject is not None and naming is None:
        return []
    found: list[Fact] = []
    messages: list[Fact] = []
    sources: set[tuple[str | None, str]] = set()
    async for fact in access.iter_facts(query, page_size=_PAGE):
        if fact.project_id != access.project_id or (scope is not None and fact.scope is not scope):
            continue
        if naming is None or record_names(fact, naming):
            found.append(fact)
            if fact.kind is not FactKind.MESSAGE:
                sources.update(_source_keys(fact))
        elif fact.kind is FactKind.MESSAGE:
            messages.append(fact)
    found.extend(m for m in messages if sources.intersection(_source_keys(m)))
    found.extend(await syntheses_resting_on(access, found))
    return found


async def syntheses_resting_on(access: StoreAccess, found: Sequence[Fact]) -> list[Fact]:
    """The syntheses (consolidation's reflection) that quote a record of ``found`` and are not
    in it: a synthesis repeats its facts' words, so it goes with them."""
    ids = {fact.id for fact in found if fact.kind is FactKind.FACT}
    if not ids:
        return []
    listed = {fact.id for fact in found}
    extra: list[Fact] = []
    query = FactQuery(project_id=access.project_id, kinds=(FactKind.SYNTHESIS,))
    async for record in access.iter_facts(query, page_size=_PAGE):
        about = record.metadata.get("reflection")  # see intelligence.consolidation._reflection
        rests_on = about.get("rests_on") if isinstance(about, dict) else None
        if (
            record.id not in listed
            and isinstance(rests_on, list)
            and ids.intersection(str(i) for i in rests_on)
        ):
            extra.append(record)
    return extra


async def same_source(access: StoreAccess, record: Fact) -> list[Fact]:
    """The other records drawn from the same message as ``record``, oldest first.

    For a fact, the verbatim message it was drawn from (every part of a long one); for a
    message, the facts drawn from it. Forgetting one record by id takes these with it, or the
    message would still say what the fact said (and the other way round).
    """
    keys = _source_keys(record)
    if not keys or record.session_id is None:
        return []
    in_session = await matching_facts(access, session_id=record.session_id, user_id=record.user_id)
    return [f for f in in_session if f.id != record.id and keys.intersection(_source_keys(f))]


def _source_keys(fact: Fact) -> set[tuple[str | None, str]]:
    return {
        (source.session_id or fact.session_id, source.message_id)
        for source in fact.sources
        if source.message_id is not None
    }
