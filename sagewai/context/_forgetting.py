"""Complete forgetting: one request reaches the metadata, vector and graph stores and episodes.

Two requests, one cascade. ``ContextEngine.forget`` names what to forget by criteria (a
subject, a session, a user, a scope): the matching records, then what the graph and the
episodes hold under the same criteria. ``ContextEngine.forget_facts`` names facts by id for one
user (the agent's ``forget``): the facts with the values they replaced, the messages they came
from, those messages in the user's episodes and the graph relations read from them. Records are
deleted through the engine (tombstones, one commit per page); the graph and episode stores are
reached through the engine's own views.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from sagewai.context._journal_lines import PayloadMatcher, forget_in_closed_journal
from sagewai.context._ranking import CONTEXT_MARK
from sagewai.core import _lifecycle as lifecycle
from sagewai.core._episode_records import EpisodeRedaction, subject_pattern
from sagewai.core._graph_matching import plan_session_forget
from sagewai.core._graph_records import MAX_GRAPH_WRITE
from sagewai.core._pieces import piece_ids
from sagewai.core._queries import ChangeQuery, FactQuery, WriteBatch
from sagewai.core._records import Fact, FactChange, FactKind
from sagewai.core._scope import ContextScope, scope_key, validate_identifier
from sagewai.core._text import clean_text
from sagewai.errors import InvalidInputError, LockedError
from sagewai.stores.base._graph import GraphWrite
from sagewai.stores.base._summary import extractive_summary

if TYPE_CHECKING:
    from sagewai.context._access import StoreAccess
    from sagewai.core._graph_records import Entity, Relation
    from sagewai.stores.base._episodes import EpisodeStoreBase
    from sagewai.stores.base._graph import ProjectGraph

__all__ = [
    "FACT_TEXT_FIELDS",
    "PROVENANCE_TEXT_FIELDS",
    "ForgetReport",
    "ForgottenFacts",
    "checked_subject",
    "delete_graph_relations",
    "delete_records",
    "forget_everything",
    "forget_facts",
    "forget_in_journals",
    "forget_matching",
    "matching_facts",
    "may_forget",
    "mentions_any",
    "record_names",
    "redact_episodes",
    "redact_text",
    "redacted_change",
    "same_source",
    "text_names",
]

logger = logging.getLogger("sagewai.context")

_PAGE = 500
_MAX_CHAIN = 200
_MIN_TERM_CHARS = 2
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
            access, _journal_matcher(pattern, session_id, user_id), dry_run=dry_run
        )
    )
    kinds = _count_kinds(records)
    return ForgetReport(
        facts=kinds["facts"],
        messages=kinds["messages"],
        context_records=kinds["context_records"],
        documents=kinds["documents"],
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
        dry_run=dry_run,
    )


async def forget_everything(access: StoreAccess, *, dry_run: bool) -> ForgetReport:
    """Forget a whole project: every record, vector, graph item, episode and journal entry.

    Its audit log goes with it (nothing is left to hold a reason).
    """
    kinds = dict.fromkeys(("facts", "messages", "context_records", "documents"), 0)
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
        facts=kinds["facts"],
        messages=kinds["messages"],
        context_records=kinds["context_records"],
        documents=kinds["documents"],
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
        if change.fact_id not in doomed and _audit_names(change, pattern)
    ]
    return removed, redacted


def _count_kinds(records: Iterable[Fact]) -> dict[str, int]:
    counts = dict.fromkeys(("facts", "messages", "context_records", "documents"), 0)
    _add_kinds(counts, records)
    return counts


def _add_kinds(counts: dict[str, int], records: Iterable[Fact]) -> None:
    for record in records:
        if record.kind is FactKind.DOCUMENT:
            counts["documents"] += 1
        elif record.kind is FactKind.MESSAGE:
            counts["context_records" if CONTEXT_MARK in record.metadata else "messages"] += 1
        else:
            counts["facts"] += 1


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


def _journal_matcher(
    pattern: re.Pattern[str] | None, session_id: str | None, user_id: str | None
) -> PayloadMatcher:
    """Which journal entries (bridge turns) a forget with these criteria removes."""

    def matches(payload: dict[str, JsonValue]) -> bool:
        if session_id is not None and payload.get("session_id") != session_id:
            return False
        if user_id is not None and payload.get("user_id") != user_id:
            return False
        return pattern is None or text_names(payload, pattern)

    return matches


async def forget_in_journals(
    access: StoreAccess, matches: PayloadMatcher, *, dry_run: bool
) -> tuple[int, int]:
    """Remove matching entries from the project's journals: (entries, journals locked).

    The journals of this process's bridges are rewritten through their journal objects (they
    hold the pending entries in memory too); the other journal files of the engine's folder
    are rewritten under their lock. A journal another process holds open is left, counted and
    logged: close that bridge and forget again.
    """
    entries = locked = 0
    held: set[Path] = set()
    """Journals a bridge of this process holds open: rewritten through it, once."""
    for journal in access.journals:
        path = journal.path.resolve()
        if journal.is_open and path not in held:
            held.add(path)
            entries += journal.forget(matches, dry_run=dry_run)
    files = [path.resolve() for path in access.journal_paths]
    folder = access.stores.folder
    if folder is not None and folder.is_dir():
        files.extend(
            path.resolve()
            for path in sorted(folder.glob("bridge-*.journal"))
            if _journal_of(path.name, access.project_id)
        )
    for path in dict.fromkeys(files):
        if path in held or not path.exists():
            continue
        try:
            entries += forget_in_closed_journal(path, matches, dry_run=dry_run)
        except LockedError:
            locked += 1
            logger.warning("forget: journal %s is open in another process; left as it is", path)
    return entries, locked


def _journal_of(name: str, project_id: str) -> bool:
    """Whether a file name is one of the project's default journals (see the bridge)."""
    base = f"bridge-{project_id}"
    if name == f"{base}.journal":
        return True
    middle = name.removeprefix(f"{base}.").removesuffix(".journal")
    return name.startswith(f"{base}.") and name.endswith(".journal") and middle.isdigit()


# --------------------------------------------------------------------------- naming a subject

_ID_FIELDS = frozenset(
    {
        "id",
        "project_id",
        "org_id",
        "user_id",
        "session_id",
        "session_ids",
        "message_id",
        "document_id",
        "fact_id",
        "subject_id",
        "object_id",
        "superseded_by",
        "merged_into",
        "related_fact_ids",
        "run_id",
        "entry_id",
    }
)
"""Fields holding identifiers, not text: a subject is not "named" by an id that spells it."""
REDACTED = "[forgotten]"
"""What stands in the audit where forgotten text was."""


def text_names(value: Any, pattern: re.Pattern[str]) -> bool:
    """Whether ``pattern`` matches any text in a JSON-like value (identifier fields skipped)."""
    if isinstance(value, str):
        return pattern.search(value) is not None
    if isinstance(value, dict):
        return any(
            k not in _ID_FIELDS and (text_names(k, pattern) or text_names(v, pattern))
            for k, v in value.items()
        )
    if isinstance(value, list | tuple):
        return any(text_names(item, pattern) for item in value)
    return False


FACT_TEXT_FIELDS = frozenset(
    {"content", "subject", "predicate", "object", "exact_values", "tags", "metadata", "sources"}
)
"""The fields of a :class:`Fact` that hold text (the others are ids, enums, numbers, times)."""
PROVENANCE_TEXT_FIELDS = frozenset({"role", "speaker", "extractor"})
"""The fields of a :class:`Provenance` that hold text (the others are ids, numbers, times)."""


def record_names(record: Fact | Entity | Relation, pattern: re.Pattern[str]) -> bool:
    """Whether a record names the subject anywhere in its text.

    A fact: its content, subject, predicate, object, exact values, tags, metadata and its
    sources' speakers (read field by field: every record of a project is checked, and a
    whole dump costs thirty times more). An entity or a relation: every text field.
    """
    if not isinstance(record, Fact):
        return text_names(record.model_dump(mode="json"), pattern)
    search = pattern.search
    if search(record.content):
        return True
    for value in (record.subject, record.predicate, record.object):
        if value is not None and search(value):
            return True
    if any(search(value) for value in (*record.exact_values, *record.tags)):
        return True
    if record.metadata and text_names(record.metadata, pattern):
        return True
    return any(
        value is not None and search(value)
        for source in record.sources
        for value in (source.speaker, source.role, source.extractor)
    )


def redact_text(text: str, pattern: re.Pattern[str]) -> str:
    """``text`` with every mention of the subject replaced by :data:`REDACTED`."""
    return pattern.sub(REDACTED, text)


def _redact_json(value: JsonValue, pattern: re.Pattern[str]) -> JsonValue:
    """A JSON value with every string naming the subject replaced whole by :data:`REDACTED`."""
    if isinstance(value, str):
        return REDACTED if pattern.search(value) else value
    if isinstance(value, dict):
        return {k: _redact_json(v, pattern) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_json(item, pattern) for item in value]
    return value


def _audit_names(change: FactChange, pattern: re.Pattern[str] | None) -> bool:
    if pattern is None:
        return False
    return text_names([change.reason, change.before, change.after], pattern)


def redacted_change(change: FactChange, pattern: re.Pattern[str] | None) -> FactChange:
    """An audit row without the forgotten text: the rule, the time and the actor stay."""
    if pattern is None:
        return change
    before = None if change.before is None else _redact_json(change.before, pattern)
    after = None if change.after is None else _redact_json(change.after, pattern)
    return change.model_copy(
        update={
            "reason": redact_text(change.reason, pattern),
            "before": before,
            "after": after,
        }
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
    return found


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


# --------------------------------------------------------------------------- by id, for a user


@dataclass(frozen=True, slots=True)
class ForgottenFacts:
    """What :func:`forget_facts` deleted, and how to recognise it in text."""

    deleted: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()
    """Ids that were unknown, not this user's, or document chunks: left untouched."""
    message_ids: frozenset[str] = frozenset()
    terms: tuple[str, ...] = ()
    messages_deleted: int = 0
    """Verbatim message records deleted with the facts (their sources, or naming a value)."""
    episodes_changed: int = 0
    """Saved episodes the forgotten messages were removed from (or deleted, left empty)."""
    relations_deleted: int = 0
    """Graph relations read from the forgotten messages that carried a forgotten value."""

    def patterns(self) -> list[re.Pattern[str]]:
        """Whole-word, case-insensitive patterns of the forgotten values."""
        found = (subject_pattern(term) for term in self.terms)
        return [pattern for pattern in found if pattern is not None]


def may_forget(fact: Fact, user_id: str | None) -> bool:
    """Whether a chat with ``user_id`` may delete ``fact`` (a fact or a verbatim message)."""
    return fact.kind in (FactKind.FACT, FactKind.MESSAGE) and fact.user_id == user_id


def _terms(facts: Iterable[Fact]) -> tuple[str, ...]:
    terms: list[str] = []
    for fact in facts:
        for value in (fact.object, *fact.exact_values):
            if value and len(value.strip()) >= _MIN_TERM_CHARS and value.strip() not in terms:
                terms.append(value.strip())
    return tuple(terms)


async def forget_facts(
    access: StoreAccess,
    fact_ids: Sequence[str],
    *,
    user_id: str | None,
    graph: ProjectGraph | None,
) -> ForgottenFacts:
    """Delete facts by id, and every record of the user's that could show them again.

    The facts go with the values they replaced and the repeats merged into them; then the
    verbatim records of their messages (and of the user's messages naming their values), the
    same messages in the user's saved episodes (the engine's episode store), and the relations
    ``graph`` read from them.

    Args:
        access: The port of the engine holding the facts.
        fact_ids: The facts to forget.
        user_id: The user asking; only facts this user may change are deleted.
        graph: The graph the relations were written to (the engine's, or an agent's builder's).

    Returns:
        The deleted ids, the refused ids, the source message ids, the forgotten values and
        how many messages, episodes and relations went with them.
    """
    chosen: dict[str, Fact] = {}
    refused: list[str] = []
    pending: list[tuple[str, str | None]] = [(fact_id, None) for fact_id in fact_ids]
    while pending and len(chosen) < _MAX_CHAIN:
        fact_id, successor = pending.pop()
        if fact_id in chosen:
            continue
        try:
            found = await access.get_many([validate_identifier(fact_id, "fact_id")])
        except InvalidInputError:
            found = []
        if not found:
            if successor is None:
                refused.append(fact_id)
            continue
        fact = found[0]
        linked = successor is None or successor in (fact.superseded_by, fact.merged_into)
        if not linked:
            continue
        if not may_forget(fact, user_id):
            if successor is None:
                refused.append(fact_id)
            continue
        chosen[fact.id] = fact
        history = await access.changes(ChangeQuery(project_id=access.project_id, fact_id=fact.id))
        for change in history:
            pending.extend((related, fact.id) for related in change.related_fact_ids)
    await delete_records(access, list(chosen), reason="forgotten at the user's request")
    message_ids = frozenset(
        source.message_id
        for fact in chosen.values()
        for source in fact.sources
        if source.message_id is not None
    )
    records = await _message_records(access, chosen.values(), user_id=user_id)
    outcome = ForgottenFacts(
        deleted=tuple(chosen),
        refused=tuple(dict.fromkeys(refused)),
        message_ids=message_ids,
        terms=_terms(chosen.values()),
        messages_deleted=len(records),
    )
    if not outcome.deleted:
        return outcome
    episodes = relations = 0
    if access.episode_store is not None:
        episodes = await redact_episodes(
            access.episode_store, outcome, project_id=access.project_id, user_id=user_id
        )
    if graph is not None:
        relations = await delete_graph_relations(graph, outcome, user_id=user_id)
    return dataclasses.replace(outcome, episodes_changed=episodes, relations_deleted=relations)


async def _message_records(
    access: StoreAccess, forgotten: Iterable[Fact], *, user_id: str | None
) -> list[str]:
    """Delete the verbatim records of the messages the forgotten facts came from, and of the
    user's messages naming a forgotten value; return their ids."""
    facts = list(forgotten)
    if not facts:
        return []
    known = {fact.id for fact in facts}
    sources = {
        (source.session_id or fact.session_id, source.message_id)
        for fact in facts
        for source in fact.sources
        if source.message_id is not None
    }
    patterns = ForgottenFacts(terms=_terms(facts)).patterns()
    doomed: list[str] = []
    query = FactQuery(project_id=access.project_id, user_id=user_id, kinds=(FactKind.MESSAGE,))
    async for record in access.iter_facts(query, page_size=_PAGE):
        if record.id in known or not may_forget(record, user_id):
            continue
        source = record.sources[0] if record.sources else None
        key = (source.session_id or record.session_id, source.message_id) if source else None
        if key in sources or mentions_any(record.content, patterns):
            doomed.append(record.id)
    await delete_records(access, doomed, reason="forgotten at the user's request")
    return doomed


def mentions_any(text: str, patterns: Sequence[re.Pattern[str]]) -> bool:
    """Whether ``text`` names any of the patterns."""
    return any(pattern.search(text) for pattern in patterns)


async def redact_episodes(
    store: EpisodeStoreBase,
    forgotten: ForgottenFacts,
    *,
    project_id: str,
    user_id: str | None,
) -> int:
    """Remove the forgotten messages from the user's episodes; return how many episodes changed.

    A message goes when it is one a forgotten fact came from, or when it names a forgotten
    value. The summary is rewritten from what is left (and made extractive if a written summary
    still names a value); an episode left without messages is deleted.
    """
    patterns = forgotten.patterns()
    if not patterns and not forgotten.message_ids:
        return 0
    changed = 0
    episodes = await store.list_episodes(
        project_id=project_id, user_id=user_id, limit=_MAX_EPISODES
    )
    for episode in episodes:
        kept = tuple(
            message
            for message in episode.messages
            if message.id not in forgotten.message_ids
            and not mentions_any(message.content, patterns)
        )
        if len(kept) == len(episode.messages) and not mentions_any(episode.summary, patterns):
            continue
        changed += 1
        if all(message.is_empty for message in kept):
            await store.delete_session(episode.session_id, project_id=project_id)
            continue
        metadata = {
            key: value
            for key, value in episode.metadata.items()
            if not (isinstance(value, str) and mentions_any(value, patterns))
        }
        summary = await store.summarizer.summarize(kept)
        if not summary or mentions_any(summary, patterns):
            summary = extractive_summary(kept) or kept[0].line()[:600]
        await store.save_episode(
            episode.session_id,
            kept,
            metadata=metadata,
            project_id=episode.project_id,
            user_id=episode.user_id,
            episode_id=episode.id,
            summary=summary,
        )
    return changed


async def delete_graph_relations(
    graph: ProjectGraph, forgotten: ForgottenFacts, *, user_id: str | None
) -> int:
    """Delete the relations read from the forgotten messages that carry a forgotten value.

    A relation goes when one of its sources is a forgotten message and it touches an entity
    named like a forgotten value; other relations read from the same message (another fact of
    it) stay. When the facts had no value to name (no object, no exact value), the relations of
    those messages touching the user's entity go instead. Returns how many were deleted.
    """
    if not forgotten.message_ids:
        return 0
    names = list(forgotten.terms) or ([user_id] if user_id else [])
    doomed: dict[str, Relation] = {}
    for name in names:
        for entity in await graph.entities_named(name):
            touching = [
                *await graph.relations(subject_id=entity.id),
                *await graph.relations(object_id=entity.id),
            ]
            for relation in touching:
                if any(s.message_id in forgotten.message_ids for s in relation.sources):
                    doomed[relation.id] = relation
    if doomed:
        write = GraphWrite(graph.project_id, delete_relations=list(doomed.values()))
        await graph.apply(write)
    return len(doomed)
