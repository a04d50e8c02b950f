"""What makes a record's statement current or changed: the marks a supersession leaves.

A fact that is superseded (``lives_in Berlin`` by ``lives_in Munich``) says so itself (status,
``superseded_by``, ``valid_to``). The verbatim message it was read from ("I live in Berlin and I
work at Siemens.") and that message's context record do not: they are kept as said. So when a
fact is superseded, each record of its source message is *marked* with the fact's id
(:data:`CHANGED_CLAIMS` in its metadata); a search reads the marks, checks the marked facts are
still superseded (a revert may have restored one), and shows the record as changed, with what
replaced the claim.

**Dependent records.** Some statements rest on a claim without repeating it: after "I moved to
Munich", "my commute is 20 minutes" and "my gym is in Kreuzberg" may no longer hold. A record
*depends on* a changed claim (:func:`depends_on`) when all of these hold:

* it belongs to the same owner and scope as the old claim, and was said before the change;
* it is about the claim's subject: a fact whose subject is the claim's subject or a part of it
  ("the user's commute"), or a message the same speaker's role said (a user's claim, a user's
  message);
* it names the old value as a word ("the Berlin office"), or speaks of something that goes with
  the changed predicate (:data:`DEPENDENT_WORDS`: a home's commute, gym, neighbourhood, rent; an
  employer's manager, team, office, salary; a database's host, password, connection string).

Such a record is marked :data:`DEPENDS_ON` and shown as possibly stale, with the change it rested
on; it is not ranked lower (it may still hold). The rule never looks at other owners' records.
Pure functions; :mod:`sagewai.context._standing` does the reading and writing through the
engine's port.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from pydantic import JsonValue

from sagewai.core._ids import context_record_id, message_record_id
from sagewai.core._records import Fact, FactKind

__all__ = [
    "CHANGED_CLAIMS",
    "DEPENDENT_WORDS",
    "DEPENDS_ON",
    "dependent_query",
    "depends_on",
    "marked_facts",
    "source_record_ids",
    "with_marks",
]

CHANGED_CLAIMS = "changed_claims"
"""Metadata key of a message record: ids of the facts read from it that were superseded since."""
DEPENDS_ON = "depends_on_changed"
"""Metadata key of a record: ids of superseded facts it rested on (see the module)."""

_HOME = """commute commuting gym neighbourhood neighborhood neighbour neighbours neighbor neighbors
landlord rent flat apartment house street address local nearby district block bus tram train
metro subway station doctor dentist school kindergarten daycare park supermarket grocery
weather city town village"""
_EMPLOYER = """manager boss team teammate teammates colleague colleagues coworker coworkers office
desk salary pay badge payroll title role position department project projects standup commute
contract onboarding hr"""
_SYSTEM = """host hostname port password credentials credential connection string dsn url uri
endpoint replica replicas schema backup backups migration driver pool user username secret
version cluster instance"""

DEPENDENT_WORDS: dict[str, frozenset[str]] = {
    "lives_in": frozenset(_HOME.split()),
    "works_at": frozenset(_EMPLOYER.split()),
    "works_as": frozenset(_EMPLOYER.split()),
    "uses_database": frozenset(_SYSTEM.split()),
    "uses": frozenset(_SYSTEM.split()),
}
"""Words of what rests on a claim of each predicate (see the module); a predicate not listed
has dependents only by its old value."""

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)


def marked_facts(record: Fact, key: str = CHANGED_CLAIMS) -> tuple[str, ...]:
    """The ids of superseded facts a record is marked with under ``key`` (none without marks).

    Example:
        >>> marked_facts(Fact(project_id="p", content="x", metadata={CHANGED_CLAIMS: ["f1"]}))
        ('f1',)
    """
    marks = record.metadata.get(key)
    if not isinstance(marks, list):
        return ()
    return tuple(mark for mark in marks if isinstance(mark, str))


def with_marks(record: Fact, fact_ids: Iterable[str], key: str = CHANGED_CLAIMS) -> Fact | None:
    """The record with these fact ids added to its marks under ``key``, or ``None`` when it has
    them all."""
    known = marked_facts(record, key)
    added = [fact_id for fact_id in dict.fromkeys(fact_ids) if fact_id not in known]
    if not added:
        return None
    marks: list[JsonValue] = [*known, *added]
    return record.model_copy(update={"metadata": {**record.metadata, key: marks}})


def _words(text: str) -> set[str]:
    return {word.casefold().replace("’", "'") for word in _WORD.findall(text)}


def dependent_query(old: Fact) -> str:
    """Keyword text that finds the records which may rest on ``old`` (its value and the words
    of its predicate's dependents)."""
    words = sorted(DEPENDENT_WORDS.get(old.predicate or "", ()))
    return " ".join([old.object or "", *words]).strip()


def depends_on(record: Fact, old: Fact, at: datetime, *, text: str | None = None) -> bool:
    """Whether ``record`` rested on the claim ``old`` that stopped holding at ``at``.

    The rule is the module's; ``old``'s own source records are not dependents (they are marked
    as stating the changed claim). ``text`` is what the record says itself (a context record's
    own message, without the turn before it); its content by default.

    Example:
        >>> from datetime import datetime, UTC
        >>> from sagewai import Provenance
        >>> said = datetime(2026, 3, 1, tzinfo=UTC)
        >>> home = Fact(project_id="p", user_id="u", content="The user lives in Berlin.",
        ...             subject="user", predicate="lives_in", object="Berlin", valid_from=said)
        >>> commute = Fact(project_id="p", user_id="u", kind=FactKind.MESSAGE,
        ...                content="My commute is 20 minutes.", valid_from=said,
        ...                sources=(Provenance(role="user", message_id="m2"),))
        >>> moved = datetime(2026, 3, 9, tzinfo=UTC)
        >>> depends_on(commute, home, moved)
        True
        >>> depends_on(commute.model_copy(update={"content": "I like jazz."}), home, moved)
        False
    """
    if record.id == old.id or record.scope_key != old.scope_key or record.user_id != old.user_id:
        return False
    if record.effective_from > at or record.kind is FactKind.DOCUMENT:
        return False
    old_sources = {(s.session_id, s.message_id) for s in old.sources if s.message_id}
    if any((s.session_id, s.message_id) in old_sources for s in record.sources):
        return False  # said in the same message: marked as stating the claim itself
    subject = (old.subject or "").casefold()
    if record.kind is FactKind.MESSAGE:
        roles = {s.role for s in old.sources if s.role}
        about = not roles or any(s.role in roles for s in record.sources)
    else:
        mine = (record.subject or "").casefold()
        about = bool(subject) and (
            mine == subject or mine.startswith((f"{subject}'s", "the user's"))
        )
    if not about:
        return False
    words = _words(record.content if text is None else text)
    value = _words(old.object or "")
    if value and value <= words:
        return True
    return bool(words & DEPENDENT_WORDS.get(old.predicate or "", frozenset()))


def source_record_ids(project_id: str, fact: Fact) -> list[str]:
    """The ids of the message records a fact was read from: each source message's first part
    and its context record (a long message's other parts say the rest of the message).

    Example:
        >>> from sagewai import Provenance
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
