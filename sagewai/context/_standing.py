"""Reading and writing the marks that tell a changed record from a current one.

* :func:`mark_changed_sources`: a batch that supersedes facts also marks the message records
  they were read from, and the records that rested on them (:mod:`sagewai.core._standing`); the
  engine's port calls it for every commit, consolidation for the batches it writes in the
  background.
* :func:`claim_changes`: for records a search found, the claims they stated that are superseded
  now, and the claims they rested on that are, each with the fact that holds today (the end of
  the chain of successors) and when the old one stopped being true. A mark whose fact is no
  longer superseded (a revert restored it) is ignored, so a mark never has to be taken back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sagewai.context._ranking import message_text
from sagewai.core._ids import message_record_id
from sagewai.core._port import MemoryPort
from sagewai.core._queries import FactQuery, WriteBatch
from sagewai.core._records import ChangeAction, ClaimChange, Fact, FactKind, FactStatus
from sagewai.core._standing import (
    DEPENDS_ON,
    dependent_query,
    depends_on,
    marked_facts,
    source_record_ids,
    with_marks,
)

__all__ = ["MAX_CHAIN", "MAX_DEPENDENTS", "Changes", "claim_changes", "mark_changed_sources"]

MAX_CHAIN = 16
"""Most successors followed from a superseded fact to the one that holds now."""
MAX_DEPENDENTS = 50
"""Most records read as possible dependents of one changed claim."""


@dataclass(frozen=True, slots=True)
class Changes:
    """What changed among some records: record id -> the claims it stated (``own``) and the
    claims it rested on (``rested_on``) that are superseded now."""

    own: dict[str, list[ClaimChange]] = field(default_factory=dict)
    rested_on: dict[str, list[ClaimChange]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.own or self.rested_on)


async def mark_changed_sources(
    port: MemoryPort, batch: WriteBatch, *, known: Mapping[str, Fact] | None = None
) -> WriteBatch:
    """``batch`` with the message records of the facts it supersedes marked, and the records
    that rested on those facts (see the module).

    ``known`` holds newer versions of records than the store has (a caller's batches that have
    not landed yet). A batch that supersedes nothing is returned as it is, with no read.
    """
    superseded = {c.fact_id for c in batch.changes if c.action is ChangeAction.SUPERSEDED}
    if not superseded:
        return batch
    wanted: dict[str, list[str]] = {}
    for fact in batch.upserts:
        if fact.id in superseded:
            for record_id in source_record_ids(port.project_id, fact):
                wanted.setdefault(record_id, []).append(fact.id)
    in_batch = {fact.id: fact for fact in batch.upserts}
    newer = {**(known or {}), **in_batch}
    found = {f.id: f for f in await port.get_many([i for i in wanted if i not in newer])}
    # A long message is stored in parts: every part says the message.
    parts: dict[str, list[str]] = {}
    for record_id, record in {**found, **{i: newer[i] for i in wanted if i in newer}}.items():
        count = record.metadata.get("parts")
        source = record.sources[0] if record.sources else None
        if isinstance(count, int) and count > 1 and source and source.message_id:
            session = source.session_id or record.session_id or ""
            for part in range(1, count):
                part_id = message_record_id(port.project_id, session, source.message_id, part)
                parts[part_id] = wanted[record_id]
    if parts:
        found.update((f.id, f) for f in await port.get_many([i for i in parts if i not in newer]))
        for part_id, fact_ids in parts.items():
            wanted.setdefault(part_id, []).extend(fact_ids)
    marked: dict[str, Fact] = {}
    for old in (f for f in batch.upserts if f.id in superseded and f.kind is FactKind.FACT):
        for record in await _dependents(port, old, newer):
            updated = with_marks(marked.get(record.id, record), [old.id], DEPENDS_ON)
            if updated is not None:
                marked[record.id] = updated
    for record_id, fact_ids in wanted.items():
        stored = newer.get(record_id) or found.get(record_id)
        if stored is None or stored.kind is not FactKind.MESSAGE:
            continue
        if stored.project_id != port.project_id:
            continue
        updated = with_marks(marked.get(record_id, stored), fact_ids)
        if updated is not None:
            marked[record_id] = updated
    if not marked:
        return batch
    upserts = [marked.pop(fact.id, fact) for fact in batch.upserts] + list(marked.values())
    return WriteBatch(
        batch.project_id, upserts=upserts, deletes=batch.deletes, changes=batch.changes
    )


async def _dependents(port: MemoryPort, old: Fact, newer: Mapping[str, Fact]) -> list[Fact]:
    """The records that may rest on ``old`` (:func:`~sagewai.core._standing.depends_on`)."""
    at = old.valid_to
    text = dependent_query(old)
    if at is None or not text:
        return []
    query = FactQuery(
        project_id=port.project_id,
        scope_keys=(old.scope_key,),
        statuses=(FactStatus.ACTIVE, FactStatus.FLAGGED),
        kinds=(FactKind.FACT, FactKind.MESSAGE),
    )
    found = await port.keyword_facts(query, text, MAX_DEPENDENTS)
    records = [newer.get(record.id, record) for record, _ in found]
    return [r for r in records if depends_on(r, old, at, text=message_text(r))]


async def claim_changes(port: MemoryPort, records: Sequence[Fact]) -> Changes:
    """The claims these records stated, or rested on, that are superseded now (see the module).

    A superseded fact's own change is its first; a message record's are those of the facts it
    is marked with; a dependent record's those of its :data:`DEPENDS_ON` marks. Records without
    marks cost no read.
    """
    wanted: dict[str, tuple[str, ...]] = {}
    resting: dict[str, tuple[str, ...]] = {}
    for record in records:
        if record.kind is FactKind.MESSAGE:
            marks = marked_facts(record)
            if marks:
                wanted[record.id] = marks
        elif record.status is FactStatus.SUPERSEDED:
            wanted[record.id] = (record.id,)
        rests = marked_facts(record, DEPENDS_ON)
        if rests:
            resting[record.id] = rests
    if not wanted and not resting:
        return Changes()
    known: dict[str, Fact] = {r.id: r for r in records}
    missing = {i for ids in [*wanted.values(), *resting.values()] for i in ids if i not in known}
    known.update((f.id, f) for f in await port.get_many(sorted(missing)))
    # Follow the chains of successors to the facts that hold now.
    for _ in range(MAX_CHAIN):
        successors = {
            f.superseded_by
            for f in known.values()
            if f.status is FactStatus.SUPERSEDED
            and f.superseded_by
            and f.superseded_by not in known
        }
        if not successors:
            break
        known.update((f.id, f) for f in await port.get_many(sorted(successors)))
    return Changes(own=_listed(wanted, known), rested_on=_listed(resting, known))


def _listed(
    wanted: Mapping[str, Sequence[str]], known: Mapping[str, Fact]
) -> dict[str, list[ClaimChange]]:
    """Record id -> the changes of its marked facts that are still superseded, newest first."""
    out: dict[str, list[ClaimChange]] = {}
    for record_id, fact_ids in wanted.items():
        changes = [
            ClaimChange(old=old, new=_holds_now(old, known), at=old.valid_to)
            for fact_id in fact_ids
            if (old := known.get(fact_id)) is not None and old.status is FactStatus.SUPERSEDED
        ]
        if changes:
            changes.sort(key=lambda c: c.at.timestamp() if c.at else 0.0, reverse=True)
            out[record_id] = changes
    return out


def _holds_now(old: Fact, known: Mapping[str, Fact]) -> Fact | None:
    """The last fact of ``old``'s chain of successors (``None`` when the chain is broken)."""
    current = old
    for _ in range(MAX_CHAIN):
        nxt = known.get(current.superseded_by or "")
        if nxt is None:
            return None
        if nxt.status is not FactStatus.SUPERSEDED:
            return nxt
        current = nxt
    return None
