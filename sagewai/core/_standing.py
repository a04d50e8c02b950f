"""What makes a record's statement current or changed: the marks a supersession leaves.

A fact that is superseded (``lives_in Berlin`` by ``lives_in Munich``) says so itself (status,
``superseded_by``, ``valid_to``). The verbatim message it was read from ("I live in Berlin and I
work at Siemens.") and that message's context record do not: they are kept as said. So when a
fact is superseded, each record of its source message is *marked* with the fact's id
(:data:`CHANGED_CLAIMS` in its metadata); a search reads the marks, checks the marked facts are
still superseded (a revert may have restored one), and shows the record as changed, with what
replaced the claim. Pure functions; :mod:`sagewai.context._standing` does the reading and
writing through the engine's port.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import JsonValue

from sagewai.core._ids import context_record_id, message_record_id
from sagewai.core._records import Fact, FactKind

__all__ = ["CHANGED_CLAIMS", "marked_facts", "source_record_ids", "with_marks"]

CHANGED_CLAIMS = "changed_claims"
"""Metadata key of a message record: ids of the facts read from it that were superseded since."""


def marked_facts(record: Fact) -> tuple[str, ...]:
    """The ids of superseded facts a record is marked with (none for a record without marks).

    Example:
        >>> marked_facts(Fact(project_id="p", content="x", metadata={CHANGED_CLAIMS: ["f1"]}))
        ('f1',)
    """
    marks = record.metadata.get(CHANGED_CLAIMS)
    if not isinstance(marks, list):
        return ()
    return tuple(mark for mark in marks if isinstance(mark, str))


def with_marks(record: Fact, fact_ids: Iterable[str]) -> Fact | None:
    """The record with these fact ids added to its marks, or ``None`` when it has them all."""
    known = marked_facts(record)
    added = [fact_id for fact_id in dict.fromkeys(fact_ids) if fact_id not in known]
    if not added:
        return None
    marks: list[JsonValue] = [*known, *added]
    return record.model_copy(update={"metadata": {**record.metadata, CHANGED_CLAIMS: marks}})


def source_record_ids(project_id: str, fact: Fact) -> list[str]:
    """The ids of the message records a fact was read from: each source message's first part
    and its context record (a long message's other parts say the rest of the message).

    Example:
        >>> from sagewai.core._records import Provenance
        >>> fact = Fact(project_id="p", content="x",
        ...             sources=(Provenance(session_id="s", message_id="m"),))
        >>> len(source_record_ids("p", fact))
        2
    """
    if fact.kind is not FactKind.FACT:
        return []
    ids: list[str] = []
    for source in fact.sources:
        session = source.session_id or fact.session_id
        if session is None or source.message_id is None:
            continue
        ids.append(message_record_id(project_id, session, source.message_id))
        ids.append(context_record_id(project_id, session, source.message_id))
    return list(dict.fromkeys(ids))
