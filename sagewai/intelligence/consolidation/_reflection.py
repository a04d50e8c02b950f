"""Reflection: a short synthesis per subject, what is current about it, linked to its facts.

Why: facts are learned one message at a time; nothing said what many of them add up to. After
a run's other steps, reflection writes one record per subject (a person, a project, a service)
that has at least ``reflection_min_facts`` current facts in one scope: "Dana (summary): lives in
Munich (since 2026-03-09); works at Siemens; prefers short answers." It is a record of kind
:attr:`~sagewai.core._records.FactKind.SYNTHESIS`, so it is embedded and searched like a fact,
never taken for something a user said (it has no ``sources``), and never merged, decayed or
resolved against a fact (consolidation reads facts proper only).

How it stays safe:

- One synthesis per (scope, subject, selection tags), with an id derived from them, so a dry run
  reports the ids the real run writes and two runs never write two syntheses of one subject.
  Facts of different users, sessions or projects never meet in one synthesis.
- It lists the newest ``reflection_max_facts`` current facts; their ids are in
  ``metadata["reflection"]["rests_on"]`` with a signature of their ids and texts. A later run
  rewrites it (an audited UPDATED change of the same record, re-embedded) only when the
  signature changed; otherwise it writes nothing. When the subject falls below the minimum, the
  synthesis is archived.
- Exact values are kept verbatim: the plain version quotes every fact's text; a version written
  by a model is used only when it contains every exact value, number and name of its facts, and
  is otherwise replaced by the plain one.
- ``ContextEngine.revert`` of a rewrite restores the previous text (and its vector). A synthesis
  the user reverted is not rewritten to the version they undid: only a further change of its
  facts rewrites it again.
"""

from __future__ import annotations

import hashlib
import heapq
import logging
import re
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import JsonValue

from sagewai.core import _lifecycle as lifecycle
from sagewai.core._port import MemoryPort
from sagewai.core._queries import ChangeQuery, FactQuery, WriteBatch
from sagewai.core._records import ChangeAction, Fact, FactChange, FactKind, FactStatus, utcnow
from sagewai.core._scope import ContextScope
from sagewai.intelligence.consolidation._config import ConsolidationSettings
from sagewai.intelligence.consolidation._planning import ACTOR
from sagewai.intelligence.consolidation._report import ActionKind, ConsolidationAction
from sagewai.intelligence.consolidation._selection import Selection, scope_key_of
from sagewai.llm._base import LLMClient
from sagewai.llm._errors import LLMCallError, ModelNotConfiguredError, is_model_unreachable

__all__ = [
    "REFLECTION_KEY",
    "REVERT_RULES",
    "WRITE_RULE",
    "Reflection",
    "ReflectionOutcome",
    "missing_values",
    "plain_synthesis",
    "required_values",
    "signature",
    "subject_key",
    "synthesis_id",
]

logger = logging.getLogger("sagewai.consolidation")

REFLECTION_KEY = "reflection"
"""The metadata key of a synthesis: its subject, the facts it rests on, their signature, writer."""
WRITE_RULE = "reflection.write"
"""The audit rule of a synthesis written or rewritten."""
RETIRE_RULE = "reflection.retire"
"""The audit rule of a synthesis archived because its subject has too few current facts."""
REVERT_RULES = frozenset({"engine.revert", "consolidation.revert"})
"""Rules of a user's undo: a synthesis whose last change is one is not rewritten to the
version the user undid."""

_NAMESPACE = uuid.UUID("5a6e3c1e-7f0b-4c55-9a43-2f6d0c1b8e21")
_BATCH = 100
_MAX_WRITTEN_FACTOR = 3
"""A model's synthesis may be at most this many times longer than the plain one (plus 200)."""
_NUMBER = re.compile(r"\d(?:[\d.,:/%-]*\d)?")
_CAPITALISED = re.compile(r"\b[A-Z][\w-]*")
_GENERIC_SUBJECTS = frozenset({"user", "the user", "i", "me", "we", "us"})

_SYSTEM_PROMPT = (
    "You write a short synthesis of what is currently known about one subject, from the facts "
    "given and nothing else. Write two to four plain sentences that name the subject. Copy every "
    "number, date, name, identifier and version exactly as written in the facts: never round, "
    "reformat or paraphrase them. Answer with the synthesis only."
)


def subject_key(subject: str) -> str:
    """How subjects are compared: case and spacing ignored.

    Example:
        >>> subject_key("  Dana ") == subject_key("dana")
        True
    """
    return " ".join(subject.casefold().split())


def synthesis_id(project_id: str, scope_key: str, key: str, tags: Sequence[str] = ()) -> str:
    """The id of the synthesis of subject ``key`` in one scope (and selection tags).

    Derived, not random: a dry run names the record the real run writes, and two runs can only
    ever write the same record.

    Example:
        >>> synthesis_id("p", "k", "dana") == synthesis_id("p", "k", "dana")
        True
    """
    name = "\x1f".join([project_id, scope_key, key, *sorted(tags)])
    return str(uuid.uuid5(_NAMESPACE, name))


def _newest(fact: Fact) -> tuple[datetime, datetime, str]:
    return (fact.effective_from, fact.created_at, fact.id)


def signature(facts: Sequence[Fact]) -> str:
    """A short hash of the facts a synthesis rests on: their ids, texts and start of validity.

    Example:
        >>> a = Fact(project_id="p", content="Dana lives in Munich.", subject="Dana")
        >>> signature([a]) == signature([a.evolve(content="Dana lives in Berlin.")])
        False
    """
    text = "\x1e".join(
        f"{fact.id}\x1f{fact.content}\x1f{fact.effective_from.isoformat()}"
        for fact in sorted(facts, key=lambda f: f.id)
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def display_name(subjects: Sequence[str]) -> str:
    """The subject as most of its facts write it (the first such on a tie), capitalised."""
    counts = Counter(subjects)
    best = max(counts, key=lambda s: (counts[s], -subjects.index(s)))
    return best[:1].upper() + best[1:]


def _since(fact: Fact) -> str | None:
    return None if fact.valid_from is None else fact.valid_from.date().isoformat()


def _clause(fact: Fact, subject: str) -> str:
    """What the fact says about ``subject``: its text without the subject in front, verbatim."""
    text = fact.content.strip().rstrip(".!?;").strip()
    lowered = text.casefold()
    rest = text
    for prefix in (subject, f"the {subject}"):
        head = prefix.casefold() + " "
        if lowered.startswith(head):
            rest = text[len(head) :].strip()
            break
    if not rest or any(value not in rest for value in fact.exact_values):
        rest = text  # the subject held an exact value: quote the whole text
    since = _since(fact)
    return rest if since is None else f"{rest} (since {since})"


def plain_synthesis(subject: str, facts: Sequence[Fact]) -> str:
    """The offline synthesis: the subject, then each fact's words verbatim, oldest first.

    Example:
        >>> from datetime import UTC, datetime
        >>> facts = [
        ...     Fact(project_id="p", content="Dana lives in Munich.", subject="Dana",
        ...          valid_from=datetime(2026, 3, 9, tzinfo=UTC)),
        ...     Fact(project_id="p", content="Dana works at Siemens.", subject="Dana"),
        ...     Fact(project_id="p", content="Dana prefers short answers.", subject="Dana"),
        ... ]
        >>> print(plain_synthesis("Dana", facts))
        Dana (summary): lives in Munich (since 2026-03-09); works at Siemens; prefers short answers.
    """
    clauses = [_clause(fact, subject) for fact in facts]
    return f"{subject} (summary): " + "; ".join(clauses) + "."


def required_values(subject: str, facts: Sequence[Fact]) -> list[str]:
    """What a written synthesis must contain verbatim: exact values, numbers, dates, names.

    Names are the capitalised words of the facts that do not open their sentence (and the
    subject itself unless it is the generic "the user").

    Example:
        >>> f = Fact(project_id="p", content="Dana moved to Munich in 2026.", subject="Dana")
        >>> required_values("Dana", [f])
        ['Dana', '2026', 'Munich']
    """
    wanted: list[str] = []
    if subject_key(subject) not in _GENERIC_SUBJECTS and subject[:1].isupper():
        wanted.append(subject)
    for fact in facts:
        wanted.extend(fact.exact_values)
        wanted.extend(_NUMBER.findall(fact.content))
        since = _since(fact)
        if since is not None:
            wanted.append(since)
        wanted.extend(m.group() for m in _CAPITALISED.finditer(fact.content) if m.start() > 0)
    return [value for value in dict.fromkeys(wanted) if value.strip()]


def missing_values(text: str, required: Sequence[str]) -> list[str]:
    """The required values ``text`` does not contain verbatim (as whole words where they are).

    Example:
        >>> missing_values("Dana lives in Munich since 150 days.", ["Munich", "15"])
        ['15']
    """
    missing: list[str] = []
    for value in required:
        start = r"(?<!\w)" if value[:1].isalnum() else ""
        end = r"(?!\w)" if value[-1:].isalnum() else ""
        if not re.search(start + re.escape(value) + end, text):
            missing.append(value)
    return missing


@dataclass(slots=True)
class _Group:
    """One subject in one scope: how many current facts it has, and its newest ones."""

    scope_key: str
    key: str
    count: int = 0
    newest: list[tuple[tuple[datetime, datetime, str], Fact]] = field(default_factory=list)
    subjects: list[str] = field(default_factory=list)

    def add(self, fact: Fact, limit: int) -> None:
        self.count += 1
        assert fact.subject is not None
        self.subjects.append(fact.subject)
        entry = (_newest(fact), fact)
        if len(self.newest) < limit:
            heapq.heappush(self.newest, entry)
        elif entry[0] > self.newest[0][0]:
            heapq.heapreplace(self.newest, entry)

    def listed(self) -> list[Fact]:
        """The newest facts, oldest first."""
        return [fact for _, fact in sorted(self.newest, key=lambda e: e[0])]


@dataclass(slots=True)
class ReflectionOutcome:
    """What a reflection step did (or, in a dry run, would do)."""

    actions: list[ConsolidationAction] = field(default_factory=list)
    written: int = 0
    archived: int = 0
    model_fallbacks: int = 0
    """Syntheses the model wrote with an exact value missing (or failed to write): plain ones."""


class Reflection:
    """The reflection step of one consolidation run (see the module).

    Args:
        port: The project's reads and its ``commit``.
        config: The run's settings (``reflection_min_facts``, ``reflection_max_facts``).
        selection: The facts the run may read; syntheses are written in their scopes.
        client: The model that writes syntheses (``None``: the offline rules write them).
        model_name: How the synthesis names its writer when a model wrote it.
        run_id: Written in every audit row.
        dry_run: Change nothing (and call no model); report what a real run does.
        overlay: The run's own changes not in the store (a dry run's): facts it merged or
            superseded are not current.
    """

    def __init__(
        self,
        port: MemoryPort,
        config: ConsolidationSettings,
        selection: Selection,
        *,
        client: LLMClient | None,
        model_name: str | None,
        run_id: str,
        dry_run: bool,
        overlay: Mapping[str, Fact],
    ) -> None:
        self.port = port
        self.config = config
        self.selection = selection
        self.client = client
        self.model_name = model_name or "model"
        self.run_id = run_id
        self.dry_run = dry_run
        self.overlay = overlay
        self.outcome = ReflectionOutcome()
        self.tags = tuple(sorted(selection.tags or ()))

    # ---------------------------------------------------------------- reading

    def _current(self, fact: Fact) -> Fact | None:
        seen = self.overlay.get(fact.id, fact)
        if seen.status is not FactStatus.ACTIVE or not self.selection.contains(seen):
            return None
        if seen.subject is None or not subject_key(seen.subject):
            return None
        return seen

    def _facts(self) -> FactQuery:
        selection = self.selection
        return FactQuery(
            project_id=selection.project_id,
            scope_keys=None if selection.scope_key is None else (selection.scope_key,),
            statuses=(FactStatus.ACTIVE,),
            kinds=(FactKind.FACT,),
            tags_any=selection.tags,
        )

    async def _syntheses(self) -> dict[tuple[str, str], Fact]:
        """This selection's stored syntheses (active or archived) by (scope key, subject)."""
        selection = self.selection
        query = FactQuery(
            project_id=selection.project_id,
            scope_keys=None if selection.scope_key is None else (selection.scope_key,),
            statuses=(FactStatus.ACTIVE, FactStatus.ARCHIVED),
            kinds=(FactKind.SYNTHESIS,),
        )
        found: dict[tuple[str, str], Fact] = {}
        async for record in self.port.iter_facts(query):
            if selection.scope is not None and record.scope is not selection.scope:
                continue
            about = record.metadata.get(REFLECTION_KEY)
            if not isinstance(about, dict) or not isinstance(about.get("key"), str):
                continue
            key = str(about["key"])
            scope = scope_key_of(record)
            if record.id == synthesis_id(record.project_id, scope, key, self.tags):
                found[(scope, key)] = record
        return found

    async def _groups(self, tracked: set[tuple[str, str]]) -> dict[tuple[str, str], _Group]:
        """The current facts of every subject, in two passes: count them all, then keep the
        newest of the subjects that have enough (or a synthesis), so memory holds a few facts
        per subject and not the whole selection."""
        counts: Counter[tuple[str, str]] = Counter()
        async for stored in self.port.iter_facts(self._facts()):
            fact = self._current(stored)
            if fact is not None:
                assert fact.subject is not None
                counts[(scope_key_of(fact), subject_key(fact.subject))] += 1
        wanted = {k for k, n in counts.items() if n >= self.config.reflection_min_facts} | tracked
        groups: dict[tuple[str, str], _Group] = {}
        limit = self.config.reflection_max_facts
        async for stored in self.port.iter_facts(self._facts()):
            fact = self._current(stored)
            if fact is None:
                continue
            assert fact.subject is not None
            where = (scope_key_of(fact), subject_key(fact.subject))
            if where in wanted:
                groups.setdefault(where, _Group(*where)).add(fact, limit)
        return groups

    async def _last_undo(self, existing: Fact) -> FactChange | None:
        """The synthesis's last change when it was a user's undo."""
        rows = await self.port.changes(
            ChangeQuery(project_id=self.port.project_id, fact_id=existing.id)
        )
        return rows[-1] if rows and rows[-1].rule in REVERT_RULES else None

    async def _declined(self, existing: Fact) -> str | None:
        """The signature of the version the user undid, when the last change was an undo."""
        undo = await self._last_undo(existing)
        if undo is None:
            return None
        metadata = (undo.before or {}).get("metadata")
        source = metadata if isinstance(metadata, dict) else existing.metadata
        about = source.get(REFLECTION_KEY)
        if isinstance(about, dict) and isinstance(about.get("signature"), str):
            return str(about["signature"])
        return None

    async def _unarchived_by_user(self, existing: Fact) -> bool:
        """True when the user undid the archiving of this synthesis: it is left as they want."""
        undo = await self._last_undo(existing)
        return undo is not None and (undo.before or {}).get("status") == "archived"

    # ---------------------------------------------------------------- writing

    async def _written(self, subject: str, facts: Sequence[Fact], plain: str) -> tuple[str, str]:
        """The synthesis text and its writer: the model's when it keeps every exact value."""
        if self.client is None or self.dry_run:
            return plain, "rules"
        lines = []
        for fact in facts:
            since = _since(fact)
            lines.append(f"- {fact.content}" + ("" if since is None else f" (since {since})"))
        prompt = f"Subject: {subject}\nCurrent facts:\n" + "\n".join(lines)
        try:
            answer = await self.client.complete(
                [
                    {"role": "system", "content": _SYSTEM_PROMPT},
                    {"role": "user", "content": prompt},
                ]
            )
        except LLMCallError as exc:
            self.outcome.model_fallbacks += 1
            if isinstance(exc, ModelNotConfiguredError) or is_model_unreachable(exc):
                logger.warning(
                    "reflection: %s cannot be reached (%s); the offline rules write the "
                    "syntheses of this run",
                    self.model_name,
                    exc,
                )
                self.client = None
            else:
                logger.info(
                    "reflection: %s failed on %r (%s); plain synthesis",
                    self.model_name,
                    subject,
                    exc,
                )
            return plain, "rules"
        text = " ".join((answer.content or "").split())
        missing = missing_values(text, required_values(subject, facts)) if text else ["text"]
        too_long = len(text) > _MAX_WRITTEN_FACTOR * len(plain) + 200
        if missing or too_long or answer.truncated:
            self.outcome.model_fallbacks += 1
            logger.info(
                "reflection: %s's synthesis of %r %s; the plain one is kept",
                self.model_name,
                subject,
                f"lost {missing[:5]}" if missing else "was too long",
            )
            return plain, "rules"
        return text, f"model:{self.model_name}"

    def _version(
        self,
        group: _Group,
        facts: Sequence[Fact],
        content: str,
        writer: str,
        existing: Fact | None,
        at: datetime,
    ) -> Fact:
        """The synthesis record of ``group`` with ``content`` (a new one, or ``existing``'s
        next version)."""
        first = facts[0]
        subject = display_name(group.subjects)
        exact = list(dict.fromkeys(v for fact in facts for v in fact.exact_values))
        shared = set(first.tags).intersection(*(f.tags for f in facts[1:]))
        about: dict[str, JsonValue] = {
            "key": group.key,
            "subject": subject,
            "rests_on": [fact.id for fact in facts],
            "current_facts": group.count,
            "signature": signature(facts),
            "writer": writer,
        }
        fields: dict[str, object] = {
            "content": content,
            "subject": subject,
            "exact_values": tuple(exact),
            "tags": tuple(t for t in first.tags if t in shared),
            "confidence": min(fact.confidence for fact in facts),
            "metadata": {REFLECTION_KEY: about},
            "status": FactStatus.ACTIVE,
        }
        if existing is not None:
            return existing.evolve(**fields, valid_from=at)
        return Fact.model_validate(
            {
                **fields,
                "id": synthesis_id(first.project_id, group.scope_key, group.key, self.tags),
                "project_id": first.project_id,
                "scope": first.scope,
                "org_id": first.org_id,
                "user_id": first.user_id,
                # Where a user's fact was said is not where its synthesis lives: only a
                # session's own facts give a session's synthesis.
                "session_id": first.session_id if first.scope is ContextScope.SESSION else None,
                "kind": FactKind.SYNTHESIS,
                "created_at": at,
            }
        )

    def _cause(self, rule: str, reason: str, at: datetime) -> lifecycle.Cause:
        return lifecycle.Cause(ACTOR, rule, reason, at=at, run_id=self.run_id)

    async def run(self) -> ReflectionOutcome:
        """Write, rewrite or archive the selection's syntheses; returns what was done."""
        config = self.config
        existing = await self._syntheses()
        tracked = {k for k, record in existing.items() if record.status is FactStatus.ACTIVE}
        groups = await self._groups(tracked)
        upserts: list[Fact] = []
        embed: list[Fact] = []
        changes: list[FactChange] = []
        for where in sorted(set(groups) | tracked):
            group = groups.get(where)
            record = existing.get(where)
            at = utcnow()
            if group is None or group.count < config.reflection_min_facts:
                if record is None or record.status is not FactStatus.ACTIVE:
                    continue
                if await self._unarchived_by_user(record):
                    continue
                count = 0 if group is None else group.count
                name = str(record.subject)
                reason = (
                    f"{name!r} has {count} current facts, fewer than "
                    f"{config.reflection_min_facts}: its synthesis is archived"
                )
                step = lifecycle.set_status(
                    record, FactStatus.ARCHIVED, self._cause(RETIRE_RULE, reason, at)
                )
                self._act(
                    RETIRE_RULE,
                    record,
                    reason,
                    {"subject": name, "current_facts": count},
                    [step.change],
                )
                upserts.append(step.fact)
                changes.append(step.change)
                self.outcome.archived += 1
            else:
                facts = group.listed()
                sig = signature(facts)
                about = {} if record is None else record.metadata.get(REFLECTION_KEY)
                stored = about.get("signature") if isinstance(about, dict) else None
                if record is not None and stored == sig and record.status is FactStatus.ACTIVE:
                    continue  # nothing changed: nothing written
                if record is not None and await self._declined(record) == sig:
                    continue  # the user undid exactly this synthesis
                subject = display_name(group.subjects)
                plain = plain_synthesis(subject, facts)
                content, writer = await self._written(subject, facts, plain)
                version = self._version(group, facts, content, writer, record, at)
                reason = self._reason(subject, facts, group.count, record)
                cause = self._cause(WRITE_RULE, reason, at)
                if record is None:
                    change = lifecycle.created(version, cause, related=[f.id for f in facts])
                else:
                    change = lifecycle.revise(
                        record,
                        version,
                        _REWRITTEN_FIELDS,
                        ChangeAction.UPDATED,
                        cause,
                        related=[f.id for f in facts],
                    )
                details: dict[str, JsonValue] = {
                    "subject": subject,
                    "rests_on": [f.id for f in facts],
                    "current_facts": group.count,
                    "signature": sig,
                }
                self._act(WRITE_RULE, version, reason, details, [change])
                upserts.append(version)
                embed.append(version)
                changes.append(change)
                self.outcome.written += 1
            if len(upserts) >= _BATCH:
                await self._commit(upserts, embed, changes)
                upserts, embed, changes = [], [], []
        await self._commit(upserts, embed, changes)
        return self.outcome

    def _reason(self, subject: str, facts: Sequence[Fact], count: int, record: Fact | None) -> str:
        if record is None:
            return f"synthesis of {subject!r} from {len(facts)} of its {count} current facts"
        about = record.metadata.get(REFLECTION_KEY)
        before = about.get("rests_on") if isinstance(about, dict) else None
        old = set(before) if isinstance(before, list) else set()
        now = {fact.id for fact in facts}
        if record.status is not FactStatus.ACTIVE:
            return f"synthesis of {subject!r} written again: it has {count} current facts again"
        added, gone = len(now - old), len(old - now)
        if added or gone:
            return f"synthesis of {subject!r} rewritten: {added} facts new to it, {gone} gone"
        return f"synthesis of {subject!r} rewritten: the text of its facts changed"

    def _act(
        self,
        rule: str,
        record: Fact,
        reason: str,
        details: dict[str, JsonValue],
        changes: Sequence[FactChange],
    ) -> None:
        self.outcome.actions.append(
            ConsolidationAction(
                kind=ActionKind.REFLECT,
                rule=rule,
                fact_ids=(record.id,),
                reason=reason,
                details=details,
                change_ids=() if self.dry_run else tuple(c.id for c in changes),
            )
        )

    async def _commit(
        self, upserts: list[Fact], embed: list[Fact], changes: list[FactChange]
    ) -> None:
        if self.dry_run or not upserts:
            return
        batch = WriteBatch(self.port.project_id, upserts=upserts, changes=changes)
        await self.port.commit(batch, new=embed)


_REWRITTEN_FIELDS = (
    "content",
    "subject",
    "exact_values",
    "tags",
    "confidence",
    "metadata",
    "status",
    "valid_from",
)
"""What a rewrite touches (and ``ContextEngine.revert`` restores)."""
