"""Write-time reconciliation: each new fact is written as new (ADD), a change (UPDATE) or a
repeat (NOOP), with the rules of :mod:`sagewai.core._claims` or a model.

Without it, memory fills with "Alice lives in Paris", "Alice lives in Paris", "Alice lives in
Berlin", all active, and retrieval returns a contradiction. Each candidate fact is compared with
its nearest existing facts *in the same scope* (a user's conversation never changes a
project-wide fact) before it is written:

* ``reconcile.triple`` (UPDATE): same subject, same single-valued predicate, a different object
  ("lives in Paris" -> "lives in Berlin"). The old fact is superseded, its validity closed when
  the new statement began, so ``search(..., as_of=...)`` still finds it.
* ``reconcile.negation`` (UPDATE): the candidate negates an existing statement, by triple
  ("likes tea" / ``likes tea`` negated) or, without triples, by wording ("Alice likes tea" /
  "Alice does not like tea").
* ``reconcile.duplicate`` (NOOP): the same triple, or a cosine similarity at or above the
  threshold with the same exact values; the existing fact is reinforced instead.
* ``reconcile.new`` (ADD): anything else.

The rules are pure functions of the candidate and its neighbours; the bridge does the I/O.
:class:`LLMReconciler` asks a model instead, when the rules find nothing certain, and falls back to
the rules whenever the model is unreachable or answers nonsense.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from sagewai.core import _lifecycle as lifecycle
from sagewai.core._claims import (
    DEFAULT_DUPLICATE_THRESHOLD,
    Claim,
    Neighbour,
    ReconcileAction,
    ReconcileDecision,
    StatedChange,
    already_sourced,
    decide,
    is_echo,
    supersedes,
    unnamed_change_predicate,
)
from sagewai.core._embedder import Embedder, Vector, Vectors
from sagewai.core._predicates import UNNAMED_CHANGE
from sagewai.core._queries import FactQuery, VectorFilter, VectorHit, WriteBatch
from sagewai.core._records import (
    Fact,
    FactChange,
    FactKind,
    FactStatus,
    Provenance,
    utcnow,
)

if TYPE_CHECKING:
    from sagewai.core._port import MemoryPort
    from sagewai.llm._base import LLMClient

__all__ = [
    "Candidate",
    "ClaimIndex",
    "LLMReconciler",
    "Reconciler",
    "ReconcilingWriter",
    "RuleReconciler",
    "SharedVector",
    "WriteOutcome",
]

logger = logging.getLogger("sagewai.context._reconcile")

# --------------------------------------------------------------------------- strategies


@runtime_checkable
class Reconciler(Protocol):
    """Decides ADD / UPDATE / NOOP for a candidate fact given its neighbours."""

    async def decide(self, candidate: Fact, neighbours: Sequence[Neighbour]) -> ReconcileDecision:
        """The decision for ``candidate``."""
        ...


class RuleReconciler:
    """The default: the rules of :func:`decide`, no model.

    Args:
        duplicate_threshold: Cosine at or above which two facts are the same statement.

    Example:
        >>> import asyncio
        >>> fact = Fact(project_id="p", content="Alice likes tea")
        >>> asyncio.run(RuleReconciler().decide(fact, [])).action
        <ReconcileAction.ADD: 'add'>
    """

    def __init__(self, *, duplicate_threshold: float = DEFAULT_DUPLICATE_THRESHOLD) -> None:
        if not 0.0 < duplicate_threshold <= 1.0:
            raise ValueError("duplicate_threshold must be in (0, 1]")
        self.duplicate_threshold = duplicate_threshold

    async def decide(self, candidate: Fact, neighbours: Sequence[Neighbour]) -> ReconcileDecision:
        return decide(candidate, neighbours, duplicate_threshold=self.duplicate_threshold)


_LLM_PROMPT = """You keep an agent's long-term memory consistent.
A new fact arrived. Compare it with the existing facts and answer with JSON only:
{"action": "ADD" | "UPDATE" | "NOOP", "targets": [numbers of existing facts], "reason": "..."}
- NOOP: the new fact says the same as an existing fact (name it in targets).
- UPDATE: the new fact replaces or contradicts existing facts that are no longer true (name them).
- ADD: the new fact is new information.
Never treat different exact values (ids, numbers, versions, paths) as the same."""


class LLMReconciler:
    """A model judges ADD / UPDATE / NOOP when the rules are not certain.

    The rules still decide alone when they are certain (a triple contradiction or repeat) or when
    no neighbour is similar enough to matter (an obvious ADD), so the model is asked only about
    the ambiguous cases. Any failure (unreachable model, malformed JSON, a target number that does
    not exist) falls back to the rules' decision, logged once per reconciler.

    Args:
        client: The model, through the LLM layer (``LiteLLMClient``, ``ScriptedLLM``, ...).
        duplicate_threshold: The rules' threshold (see :class:`RuleReconciler`).
        ask_above: Ask the model only when a neighbour is at least this similar.
        max_neighbours: How many neighbours the model is shown.
        timeout: Seconds per model call.

    Example:
        >>> import asyncio
        >>> from sagewai.testing import ScriptedLLM
        >>> llm = ScriptedLLM(['{"action": "NOOP", "targets": [1], "reason": "same"}'])
        >>> old = Fact(project_id="p", content="Alice enjoys green tea")
        >>> new = Fact(project_id="p", content="Alice is fond of green tea")
        >>> asyncio.run(LLMReconciler(llm).decide(new, [Neighbour(old, 0.7)])).rule
        'reconcile.llm'
    """

    def __init__(
        self,
        client: LLMClient,
        *,
        duplicate_threshold: float = DEFAULT_DUPLICATE_THRESHOLD,
        ask_above: float = 0.5,
        max_neighbours: int = 5,
        timeout: float | None = 30.0,
    ) -> None:
        self.client = client
        self.rules = RuleReconciler(duplicate_threshold=duplicate_threshold)
        self.ask_above = ask_above
        self.max_neighbours = max_neighbours
        self.timeout = timeout
        self._warned = False

    async def decide(self, candidate: Fact, neighbours: Sequence[Neighbour]) -> ReconcileDecision:
        ruled = await self.rules.decide(candidate, neighbours)
        if ruled.rule in ("reconcile.triple", "reconcile.change", "reconcile.negation") or (
            ruled.rule == "reconcile.duplicate" and Claim.of(candidate) is not None
        ):
            return ruled
        shown = sorted(
            (
                n
                for n in neighbours
                if n.fact.scope_key == candidate.scope_key and n.similarity >= self.ask_above
            ),
            key=lambda n: -n.similarity,
        )[: self.max_neighbours]
        if not shown:
            return ruled
        try:
            return await self._ask(candidate, shown)
        except Exception as exc:  # the model must never break a conversation loop
            if not self._warned:
                self._warned = True
                logger.warning("LLM reconciler fell back to the rules: %s", exc)
            return ruled

    async def _ask(self, candidate: Fact, shown: Sequence[Neighbour]) -> ReconcileDecision:
        from sagewai.llm._errors import MalformedOutputError
        from sagewai.llm._jsonparse import parse_json_lenient

        listing = "\n".join(f"{i}. {n.fact.content}" for i, n in enumerate(shown, start=1))
        response = await self.client.complete(
            [
                {"role": "system", "content": _LLM_PROMPT},
                {
                    "role": "user",
                    "content": f"Existing facts:\n{listing}\n\nNew fact: {candidate.content}",
                },
            ],
            response_format={"type": "json_object"},
            timeout=self.timeout,
        )
        answer: Any = parse_json_lenient(response.content or "")
        if not isinstance(answer, dict):
            raise MalformedOutputError("the reconciler's answer is not a JSON object")
        try:
            action = ReconcileAction(str(answer.get("action", "")).lower())
        except ValueError as exc:
            raise MalformedOutputError(f"unknown action {answer.get('action')!r}") from exc
        raw_targets = answer.get("targets", answer.get("target", []))
        if not isinstance(raw_targets, list):
            raw_targets = [raw_targets]
        targets: list[Fact] = []
        for number in raw_targets:
            if not isinstance(number, int) or not 1 <= number <= len(shown):
                raise MalformedOutputError(f"target {number!r} names no listed fact")
            targets.append(shown[number - 1].fact)
        if action is not ReconcileAction.ADD and not targets:
            raise MalformedOutputError(f"{action.value} without a target")
        if action is ReconcileAction.NOOP:
            targets = targets[:1]
            if frozenset(candidate.exact_values) != frozenset(targets[0].exact_values):
                raise MalformedOutputError("the model merged facts with different exact values")
        reason = answer.get("reason")
        return ReconcileDecision(
            action,
            "reconcile.llm",
            str(reason)[:500] if reason else f"the model judged {action.value}",
            tuple({f.id: f for f in targets}.values()) if action is not ReconcileAction.ADD else (),
        )


# --------------------------------------------------------------------------- applying decisions

TEXT_CACHE = 4096
"""Texts whose vectors a bridge's writer keeps (:class:`TextVectors`)."""

_LIVE = (FactStatus.ACTIVE, FactStatus.FLAGGED)
_NOT_MESSAGES = (FactKind.FACT.value, FactKind.DOCUMENT.value)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A fact the bridge wants to store, with the turn it came from."""

    fact: Fact
    role: str
    source: Provenance
    recalled: tuple[str, ...] | None = None
    """Ids of the facts the agent was shown in this candidate's session (an assistant's
    restatement of one is an echo); ``None``: the ``recalled`` given to the write."""


@dataclass(frozen=True, slots=True)
class SharedVector:
    """A record's vector made of vectors a write has anyway, instead of embedding its text.

    The vector is the weighted sum of the named records' vectors, normalised: records of this
    write that are embedded, or records already stored. When one of them has no vector, the
    record's own text is embedded instead (see :mod:`sagewai.context.bridge._sharing`).

    Example:
        >>> SharedVector((("message-record", 1.0),)).parts
        (('message-record', 1.0),)
    """

    parts: tuple[tuple[str, float], ...]


@dataclass(slots=True)
class WriteOutcome:
    """What one reconciled write did."""

    added: int = 0
    updated: int = 0
    reinforced: int = 0
    echoes: int = 0
    already_stored: int = 0
    messages_stored: int = 0
    """Verbatim message records written with the batch (new ones; a replay writes none)."""
    decisions: list[tuple[str, ReconcileDecision]] = field(default_factory=list)
    """``(candidate fact id, decision)`` for every candidate that reached a decision."""

    def merge(self, other: WriteOutcome) -> None:
        """Add ``other``'s counts to these."""
        self.added += other.added
        self.updated += other.updated
        self.reinforced += other.reinforced
        self.echoes += other.echoes
        self.already_stored += other.already_stored
        self.messages_stored += other.messages_stored
        self.decisions.extend(other.decisions)


@dataclass(slots=True)
class _ScopeClaims:
    subjects: dict[str, dict[str, Claim]]
    synced: datetime


class ClaimIndex:
    """The live claims per (scope, subject) a writer has seen, kept in step incrementally.

    Finding every live fact that a candidate repeats or contradicts needs all live facts of its
    subject, which grow with the conversation (hundreds about one person). Loading them for each
    candidate is quadratic; this index loads a subject's group once, then, before each write,
    asks the metadata store only for the scope's facts written since its last look
    (``FactQuery.updated_since``, with a safety margin for clock skew), so it also sees what other
    writers (the consolidator, another process) changed. It only *names* candidates: the writer
    re-reads them from the store before deciding, so a fact deleted meanwhile is never acted on.

    Args:
        port: The project's reads (the engine's port).
        max_scopes: Scopes kept; the least recently used is dropped beyond it.
        margin: Seconds re-read before the last look, against clock skew between writers.
    """

    def __init__(self, port: MemoryPort, *, max_scopes: int = 10_000, margin: float = 5.0) -> None:
        self.port = port
        self.max_scopes = max_scopes
        self.margin = timedelta(seconds=margin)
        self._scopes: OrderedDict[str, _ScopeClaims] = OrderedDict()

    async def prepare(self, wanted: Mapping[str, Iterable[str]]) -> None:
        """Bring these scopes (scope key to subjects) up to date; call before :meth:`related`."""
        port, project_id = self.port, self.port.project_id
        for key, subjects in wanted.items():
            started = utcnow()
            scope = self._scopes.get(key)
            if scope is None:
                scope = self._scopes[key] = _ScopeClaims({}, started - self.margin)
                while len(self._scopes) > self.max_scopes:
                    self._scopes.popitem(last=False)
            else:
                self._scopes.move_to_end(key)
                # Only the subjects whose groups are kept: a change to any other is not read
                # (the margin re-reads every write of the last seconds, and a conversation's
                # messages are most of them).
                if scope.subjects:
                    changed = await port.find(
                        FactQuery(
                            project_id=project_id,
                            scope_keys=(key,),
                            subjects=tuple(scope.subjects),
                            updated_since=scope.synced,
                        )
                    )
                    for fact in changed:
                        group = scope.subjects.get(fact.subject or "")
                        if group is not None:
                            self._apply(group, fact)
                scope.synced = started - self.margin
            for subject in subjects:
                if subject not in scope.subjects:
                    scope.subjects[subject] = await self._load(key, subject)

    async def _load(self, key: str, subject: str) -> dict[str, Claim]:
        port, project_id = self.port, self.port.project_id
        group: dict[str, Claim] = {}
        after: tuple[datetime, str] | None = None
        while True:
            page = await port.find(
                FactQuery(
                    project_id=project_id,
                    scope_keys=(key,),
                    subject=subject,
                    statuses=_LIVE,
                    after=after,
                    limit=1000,
                )
            )
            for fact in page:
                self._apply(group, fact)
            if len(page) < 1000:
                return group
            after = (page[-1].created_at, page[-1].id)

    def related(
        self, key: str, subject: str, claim: Claim, change: StatedChange | None = None
    ) -> list[str]:
        """Ids of live facts of ``subject`` in the scope that ``claim`` repeats or ends (a
        contradiction, or what a stated ``change`` replaces)."""
        scope = self._scopes.get(key)
        group = scope.subjects.get(subject, {}) if scope is not None else {}
        return [
            i for i, other in group.items() if other == claim or supersedes(claim, change, other)
        ]

    def held(self, key: str, subject: str) -> list[Claim]:
        """The live claims of ``subject`` in the scope (after :meth:`prepare`)."""
        scope = self._scopes.get(key)
        return list(scope.subjects.get(subject, {}).values()) if scope is not None else []

    @staticmethod
    def _apply(group: dict[str, Claim], fact: Fact) -> None:
        claim = Claim.of(fact) if fact.status in _LIVE else None
        if claim is None:
            group.pop(fact.id, None)
        else:
            group[fact.id] = claim


class ReconcilingWriter:
    """Writes candidate facts through a :class:`ContextEngine`, reconciled, in one atomic commit.

    The I/O edge of reconciliation: it finds each candidate's neighbours in its own scope (nearest
    vectors plus every live fact of the same subject that it repeats or contradicts, so a
    contradiction is found however far apart the wordings are), asks the reconciler, and turns
    the decisions into one :class:`~sagewai.core._queries.WriteBatch` with an audited change
    per decision. The reads of a batch are gathered up front (vector searches run concurrently,
    facts are read in one call), so a batch costs a handful of store round trips, not a few per
    fact.

    Every decided candidate leaves a record under its (deterministic) id: ADD and UPDATE store
    the fact, NOOP stores the repeat with status MERGED (``merged_into`` the reinforced fact; not
    indexed, not searched by default). A candidate whose id is already stored is skipped, so
    writing the same candidates again (a replay after a crash) changes nothing, even when the
    first write changed what the candidates would now be compared with.

    Args:
        port: Where the facts go (the engine's port).
        reconciler: Decides ADD / UPDATE / NOOP (rules by default).
        neighbours: How many nearest facts each candidate is compared with.
        echo_threshold: Cosine at or above which an assistant's fact restates memory.
        reinforce_step: How much a repeat adds to a fact's strength.
        actor: Recorded as the author of the changes.
        remembered_texts: How many recently embedded texts the writer keeps the vectors of
            (:class:`TextVectors`); 0 embeds every write's texts.
    """

    def __init__(
        self,
        port: MemoryPort,
        *,
        reconciler: Reconciler | None = None,
        neighbours: int = 8,
        echo_threshold: float = 0.85,
        reinforce_step: float = 0.2,
        actor: str = "bridge",
        remembered_texts: int = 0,
    ) -> None:
        self.port = port
        self.reconciler: Reconciler = reconciler or RuleReconciler()
        self.neighbours = neighbours
        self.echo_threshold = echo_threshold
        self.reinforce_step = reinforce_step
        self.actor = actor
        self.claims = ClaimIndex(port)
        self._texts = TextVectors(remembered_texts)
        self._lock = asyncio.Lock()

    async def write(
        self,
        candidates: Sequence[Candidate],
        *,
        recalled: Sequence[str] = (),
        verbatim: Sequence[Fact] = (),
        shared: Mapping[str, SharedVector] | None = None,
    ) -> WriteOutcome:
        """Reconcile and store ``candidates`` (in order) in one commit.

        Args:
            candidates: The facts to store, oldest turn first.
            recalled: Ids of facts the agent was shown this session (assistant turns restating
                them are echoes); a candidate's own ``recalled`` wins, so one write may hold
                the turns of several sessions.
            verbatim: Records stored as they are, without reconciliation, in the same commit
                (the messages the candidates were drawn from); those already stored are skipped.
            shared: Candidates and records (by id) whose vector is made of other records'
                vectors instead of embedding their text (:class:`SharedVector`).
        """
        outcome = WriteOutcome()
        if not candidates and not verbatim:
            return outcome
        port = self.port
        async with self._lock:  # decisions read what earlier writes stored: one write at a time
            stored = await port.get_many([c.fact.id for c in candidates] + [r.id for r in verbatim])
            known = {fact.id for fact in stored}
            fresh = await self._name_changes([c for c in candidates if c.fact.id not in known])
            records = [r for r in verbatim if r.id not in known]
            outcome.already_stored = len(candidates) - len(fresh)
            if not fresh and not records:
                return outcome
            # One embedding call for the batch's facts and messages, each distinct text once;
            # a record that shares vectors the batch has anyway is not embedded at all.
            embedded = await self._vectors([c.fact for c in fresh] + records, shared or {})
            vectors = embedded[: len(fresh)]
            reads = await self._read(fresh, vectors, recalled) if fresh else []
            plan = _Plan(at=utcnow())
            for candidate, vector, seen in zip(fresh, vectors, reads, strict=True):
                if candidate.role == "assistant":
                    best = max([seen.known_best, *self._pending_cosines(vector, plan)])
                    if is_echo(candidate.role, best, threshold=self.echo_threshold):
                        outcome.echoes += 1
                        continue
                neighbours = self._neighbours(candidate.fact, vector, seen, plan)
                decision = await self.reconciler.decide(candidate.fact, neighbours)
                outcome.decisions.append((candidate.fact.id, decision))
                self._apply(candidate, vector, decision, plan, outcome)
            # After the decisions: a message is never a neighbour of the facts drawn from it.
            for record, vector in zip(records, embedded[len(fresh) :], strict=True):
                plan.upserts[record.id] = record
                plan.new_ids.append(record.id)
                plan.vectors[record.id] = vector
                plan.changes.append(
                    lifecycle.created(
                        record,
                        lifecycle.Cause(self.actor, "bridge.message", "the message, verbatim"),
                    )
                )
            outcome.messages_stored = len(records)
            if plan.upserts:
                batch = WriteBatch(
                    port.project_id, upserts=list(plan.upserts.values()), changes=plan.changes
                )
                await port.commit(
                    batch,
                    new=[plan.upserts[i] for i in plan.new_ids],
                    vectors=np.stack([plan.vectors[i] for i in plan.new_ids])
                    if plan.new_ids
                    else None,
                )
        return outcome

    async def _name_changes(self, fresh: list[Candidate]) -> list[Candidate]:
        """Each change of unnamed kind ("Amara just switched over to Zalando") read as a change
        of the one named value its subject holds that it can change (where Amara works), so it
        ends that value like any change; one that cannot be told stays as it is
        (:func:`~sagewai.core._claims.unnamed_change_predicate`)."""
        unnamed = [
            row
            for row, c in enumerate(fresh)
            if c.fact.predicate == UNNAMED_CHANGE and c.fact.subject
        ]
        if not unnamed:
            return fresh
        wanted: dict[str, set[str]] = {}
        for row in unnamed:
            fact = fresh[row].fact
            wanted.setdefault(fact.scope_key, set()).add(fact.subject or "")
        await self.claims.prepare(wanted)
        named = list(fresh)
        for row in unnamed:
            fact = fresh[row].fact
            claim = Claim.of(fact)
            via = fact.metadata.get("via")
            predicate = (
                unnamed_change_predicate(
                    claim,
                    self.claims.held(fact.scope_key, fact.subject or ""),
                    via=via if isinstance(via, str) else None,
                )
                if claim is not None
                else None
            )
            if predicate is not None:
                named[row] = replace(
                    fresh[row], fact=fact.model_copy(update={"predicate": predicate})
                )
        return named

    async def _vectors(
        self, records: Sequence[Fact], shared: Mapping[str, SharedVector]
    ) -> Vectors:
        """The vectors of ``records``: shared ones made of the others' (or stored) vectors, the
        rest embedded in one call, each distinct text once (an LRU of recent texts first)."""
        port = self.port
        own = {r.id for r in records if r.id not in shared}
        outside = sorted(
            {i for r in records if r.id in shared for i, _ in shared[r.id].parts} - own
        )
        stored = await port.get_vectors(outside) if outside else {}
        made = {
            r.id
            for r in records
            if r.id in shared and all(i in own or i in stored for i, _ in shared[r.id].parts)
        }
        texts = [r.content for r in records if r.id not in made]
        embedded = iter(await self._texts.embed(port.embedder, texts))
        found: dict[str, Vector] = dict(stored)
        for record in records:
            if record.id not in made:
                found[record.id] = next(embedded)
        for record in records:
            if record.id in made:
                parts = shared[record.id].parts
                total = sum((w * found[i] for i, w in parts), np.zeros_like(found[parts[0][0]]))
                norm = float(np.linalg.norm(total))
                found[record.id] = (total / norm if norm > 0 else found[parts[0][0]]).astype(
                    np.float32
                )
        if not records:
            return np.zeros((0, port.embedder.dimension), dtype=np.float32)
        return np.stack([found[r.id] for r in records])

    async def _read(
        self, fresh: Sequence[Candidate], vectors: Vectors, recalled: Sequence[str]
    ) -> list[_Seen]:
        """Everything the decisions of a batch read, in a few round trips."""
        port = self.port
        live = tuple(s.value for s in _LIVE)
        keys = [c.fact.scope_key for c in fresh]
        # Verbatim messages are the sources of facts, never their neighbours: a fact is not a
        # repeat of the message it was drawn from, and no decision may supersede a message.
        kinds = _NOT_MESSAGES
        searches = [
            (vector, self.neighbours, VectorFilter((key,), live, kinds=kinds))
            for vector, key in zip(vectors, keys, strict=True)
        ]
        assistant = [i for i, c in enumerate(fresh) if c.role == "assistant"]
        searches += [
            (vectors[i], 3, VectorFilter(fresh[i].fact.address.readable_keys(), kinds=kinds))
            for i in assistant
        ]
        hits = await self._nearest(searches)
        shown: list[tuple[str, ...]] = [
            tuple(recalled) if c.recalled is None else c.recalled for c in fresh
        ]
        wanted_vectors = list(dict.fromkeys(i for row in assistant for i in shown[row]))
        recalled_vectors = await port.get_vectors(wanted_vectors) if wanted_vectors else {}
        wanted: dict[str, set[str]] = {}
        claims = [Claim.of(c.fact) for c in fresh]
        for candidate, key, claim in zip(fresh, keys, claims, strict=True):
            if claim is not None and candidate.fact.subject:
                wanted.setdefault(key, set()).add(candidate.fact.subject)
        await self.claims.prepare(wanted)
        related = [
            self.claims.related(key, c.fact.subject, claim, StatedChange.of(c.fact))
            if claim is not None and c.fact.subject
            else []
            for c, key, claim in zip(fresh, keys, claims, strict=True)
        ]
        ids = {h.id for found in hits[: len(fresh)] for h in found}
        ids.update(i for group in related for i in group)
        facts = {
            f.id: f
            for f in await port.get_many(sorted(ids))
            if f.project_id == port.project_id
            and f.status in _LIVE
            and f.kind is not FactKind.MESSAGE
        }
        scores = {h.id: h.score for found in hits[: len(fresh)] for h in found}
        unscored = [i for i in facts if i not in scores]
        extra = await port.get_vectors(unscored) if unscored else {}
        echo_best = dict(zip(assistant, hits[len(fresh) :], strict=True))
        seen: list[_Seen] = []
        for row, key in enumerate(keys):
            vector = vectors[row]
            mine = {h.id: h.score for h in hits[row]} | {
                i: float(extra[i] @ vector) for i in related[row] if i in extra
            }
            # Defence in depth: whatever the index said, a neighbour is of this exact scope.
            neighbours = {i: facts[i] for i in mine if i in facts and facts[i].scope_key == key}
            best = max(
                [
                    -1.0,
                    *(h.score for h in echo_best.get(row, [])),
                    *(
                        float(recalled_vectors[i] @ vector)
                        for i in (shown[row] if row in echo_best else ())
                        if i in recalled_vectors
                    ),
                ]
            )
            seen.append(_Seen(neighbours, mine, best))
        return seen

    async def _nearest(
        self, searches: Sequence[tuple[Vector, int, VectorFilter]]
    ) -> list[list[VectorHit]]:
        """The hits of each ``(vector, top_k, filter)`` search: one batch query per distinct
        ``(top_k, filter)`` (a write's candidates mostly share one scope), run concurrently."""
        groups: dict[tuple[int, VectorFilter], list[int]] = {}
        for row, (_, top_k, where) in enumerate(searches):
            groups.setdefault((top_k, where), []).append(row)
        found = await asyncio.gather(
            *(
                self.port.nearest_many([searches[row][0] for row in rows], top_k, where)
                for (top_k, where), rows in groups.items()
            )
        )
        hits: list[list[VectorHit]] = [[] for _ in searches]
        for rows, answers in zip(groups.values(), found, strict=True):
            for row, answer in zip(rows, answers, strict=True):
                hits[row] = answer
        return hits

    @staticmethod
    def _pending_cosines(vector: Vector, plan: _Plan) -> list[float]:
        return [float(plan.vectors[i] @ vector) for i in plan.new_ids]

    def _neighbours(self, fact: Fact, vector: Vector, seen: _Seen, plan: _Plan) -> list[Neighbour]:
        """The candidate's neighbours as they stand now: read state plus this batch's writes."""
        key = fact.scope_key
        found = dict(seen.facts)
        similarity = dict(seen.similarity)
        for fact_id, pending in plan.upserts.items():
            if fact_id in found or (fact_id in plan.vectors and plan.keys[fact_id] == key):
                found[fact_id] = pending
                if fact_id in plan.vectors:
                    similarity[fact_id] = float(plan.vectors[fact_id] @ vector)
        return [
            Neighbour(other, similarity.get(fact_id, 0.0))
            for fact_id, other in found.items()
            if other.status in _LIVE
        ]

    def _apply(
        self,
        candidate: Candidate,
        vector: Vector,
        decision: ReconcileDecision,
        plan: _Plan,
        outcome: WriteOutcome,
    ) -> None:
        fact = candidate.fact
        why = lifecycle.Cause(self.actor, decision.rule, decision.reason, at=plan.at)
        if decision.action is ReconcileAction.NOOP:
            target = plan.upserts.get(decision.targets[0].id, decision.targets[0])
            # The repeat is kept as a MERGED record (not indexed, never searched by default): the
            # audit trail of what was said, and the marker that makes a replay skip it.
            merged = lifecycle.merge(fact, why, into_id=target.id, stored=False)
            plan.upserts[merged.fact.id] = merged.fact
            plan.changes.append(merged.change)
            if already_sourced(target, candidate.source):
                return  # the same message said it twice: one reinforcement per message
            stronger = lifecycle.reinforce(
                target,
                why.because(f"{decision.reason}; repeated as {fact.content!r}"),
                source=candidate.source,
                step=self.reinforce_step,
                confidence=fact.confidence,
                related=(merged.fact.id,),
            )
            plan.upserts[target.id] = stronger.fact
            plan.changes.append(stronger.change)
            outcome.reinforced += 1
            return
        targets = [plan.upserts.get(t.id, t) for t in decision.targets]
        newer = sorted(
            (t for t in targets if t.effective_from > fact.effective_from),
            key=lambda t: t.effective_from,
        )
        older = [t for t in targets if t.effective_from <= fact.effective_from]
        stored = fact
        late: lifecycle.Transition | None = None
        if newer:  # the statement predates what memory holds: keep it as history
            late = lifecycle.supersede(
                fact,
                why.because(f"{decision.reason}; a later statement already holds"),
                successor_id=newer[0].id,
                ends=newer[0].effective_from,
            )
            stored = late.fact
        plan.upserts[stored.id] = stored
        plan.new_ids.append(stored.id)
        plan.vectors[stored.id] = vector
        plan.keys[stored.id] = stored.scope_key
        plan.changes.append(lifecycle.created(stored, why, related=tuple(t.id for t in targets)))
        if late is not None:
            plan.changes.append(late.change)
        for target in older:
            closed = lifecycle.supersede(
                target, why, successor_id=stored.id, ends=fact.effective_from
            )
            plan.upserts[target.id] = closed.fact
            plan.changes.append(closed.change)
        if decision.action is ReconcileAction.UPDATE:
            outcome.updated += 1
        else:
            outcome.added += 1


@dataclass(frozen=True, slots=True)
class _Seen:
    """What one candidate's decision reads from the stores (before this batch's writes)."""

    facts: dict[str, Fact]
    similarity: dict[str, float]
    known_best: float
    """Highest cosine to a fact the turn's reader can already see (echo detection)."""


@dataclass(slots=True)
class _Plan:
    """The writes one reconciled batch accumulates before its single commit."""

    at: datetime
    upserts: dict[str, Fact] = field(default_factory=dict)
    new_ids: list[str] = field(default_factory=list)
    vectors: dict[str, Vector] = field(default_factory=dict)
    """Vectors of the facts this batch creates (they are not in the index yet)."""
    keys: dict[str, str] = field(default_factory=dict)
    """Scope keys of the facts this batch creates."""
    changes: list[FactChange] = field(default_factory=list)


class TextVectors:
    """The vectors of the texts a writer embedded last (an LRU keyed by the exact text).

    A conversation repeats short texts ("Thanks!", "Sounds good") across sessions and batches;
    a text met again is not embedded again. Keyed by the text as it is (an embedder may read
    case and spacing); bounded by ``size`` texts.

    Example:
        >>> import asyncio
        >>> from sagewai.testing import FakeEmbedder
        >>> cache = TextVectors(size=2)
        >>> asyncio.run(cache.embed(FakeEmbedder(8), ["a", "b", "a"])).shape
        (3, 8)
    """

    def __init__(self, size: int = TEXT_CACHE) -> None:
        self.size = size
        self._known: OrderedDict[str, Vector] = OrderedDict()
        self._embedder: Embedder | None = None

    async def embed(self, embedder: Embedder, texts: Sequence[str]) -> Vectors:
        """``texts``' vectors: the known ones from the cache, the rest in one call (another
        embedder than the last call's empties the cache)."""
        if self.size <= 0:
            return await embed_distinct(embedder, texts)
        if embedder is not self._embedder:
            self._known.clear()
            self._embedder = embedder
        known = self._known
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            fresh = await embed_distinct(embedder, missing)
            for text, vector in zip(missing, fresh, strict=True):
                known[text] = vector
        rows = []
        for text in texts:
            known.move_to_end(text)
            rows.append(known[text])
        while len(known) > self.size:
            known.popitem(last=False)
        if not rows:
            return np.zeros((0, embedder.dimension), dtype=np.float32)
        return np.stack(rows)


async def embed_distinct(embedder: Embedder, texts: Sequence[str]) -> Vectors:
    """``embedder.embed_documents(texts)``, embedding each distinct text once.

    A batch often holds the same text twice (a short message and the fact that restates it
    word for word, two sessions' "Thanks!"); the copies share one vector.
    """
    import numpy as np

    distinct = list(dict.fromkeys(texts))
    if len(distinct) == len(texts):
        return await embedder.embed_documents(texts)
    vectors = await embedder.embed_documents(distinct)
    row = {text: n for n, text in enumerate(distinct)}
    return np.stack([vectors[row[text]] for text in texts]) if texts else vectors
