"""One consolidation run: its view of the facts, the three rules applied fact by fact, its batches.

Why separate from :class:`~sagewai.intelligence.consolidation.MemoryConsolidator`: the public
class owns settings, locking, checkpoints and reporting; this module owns what happens inside a
run. For each fact of a batch, in scan order, it resolves the contradictions of the fact's group,
merges its near-duplicates and decays it, asking the pure rules (``contradictions``, ``dedup``,
``decay``) and turning their answers into fact versions and audit rows (``planning``).

A run sees the facts through an *overlay* of the changes it made and has not committed yet (the
current batch, and the one a writer process is still writing; in a dry run, every change, since a
dry run never writes). Because every decision reads the overlay first, a dry run takes exactly the
decisions a real run takes, and each batch is flushed as one ``ContextEngine.commit`` (with a
:class:`~sagewai.context._commit_queue.CommitQueue`, one transaction in a writer process while
the next batch is decided, then its index payloads).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import JsonValue

from sagewai.context._commit_queue import CommitQueue
from sagewai.context._standing import mark_changed_sources
from sagewai.core._embedder import Embedder, Vector
from sagewai.core._port import MemoryPort
from sagewai.core._profile import is_profile_entry
from sagewai.core._queries import VectorFilter, VectorHit, WriteBatch
from sagewai.core._records import Fact, FactChange, FactStatus, utcnow
from sagewai.intelligence.consolidation._candidates import CandidateTable
from sagewai.intelligence.consolidation._config import ConsolidationSettings
from sagewai.intelligence.consolidation._contradictions import (
    Flagging,
    Supersession,
    claim_of,
    resolve_group,
)
from sagewai.intelligence.consolidation._decay import decide_decay
from sagewai.intelligence.consolidation._dedup import DedupProfile, canonical_key, merge_rule
from sagewai.intelligence.consolidation._planning import (
    PlannedStep,
    plan_decay,
    plan_flagging,
    plan_merge,
    plan_supersession,
)
from sagewai.intelligence.consolidation._report import ActionKind, ConsolidationAction
from sagewai.intelligence.consolidation._selection import Selection, scope_key_of
from sagewai.intelligence.consolidation._structure import has_structure, structure_json

__all__ = ["Lookahead", "Run", "Tally"]

_GROUP_PAGE = 1_000
_GROUPS_READ = 10_000
"""Rows at most in the one query that reads a batch's subject groups together."""
_VALUE_CANDIDATES = 25
_GROUP_MEMO = 50_000


@dataclass(slots=True)
class Tally:
    duplicates_removed: int = 0
    facts_decayed: int = 0
    facts_archived: int = 0
    contradictions_resolved: int = 0
    facts_flagged: int = 0
    total_processed: int = 0
    batches: int = 0
    index_repairs: int = 0
    changed: int = 0
    actions: list[ConsolidationAction] = field(default_factory=list)
    actions_omitted: int = 0


@dataclass(slots=True)
class Lookahead:
    """Neighbour searches made for the next page while the current page is processed."""

    vectors: dict[str, Vector] = field(default_factory=dict)
    found: dict[str, tuple[VectorFilter, list[VectorHit]]] = field(default_factory=dict)


class Run:
    """One run's working state: the view of the facts, the pending batch, the tallies.

    Args:
        port: The project's reads and its ``commit`` (the engine's port).
        config: The run's settings.
        embedder: Embeds a fact whose vector is missing from the index (never stored).
        selection: The facts the run may read and change.
        run_id: Written in every audit row.
        now: The reference time of decay.
        dry_run: Keep every change in the overlay instead of committing it.
        incremental: Skip facts this run changed itself when the scan reaches them.
    """

    def __init__(
        self,
        port: MemoryPort,
        config: ConsolidationSettings,
        embedder: Embedder,
        selection: Selection,
        *,
        run_id: str,
        now: datetime,
        dry_run: bool,
        incremental: bool,
    ) -> None:
        self.port = port
        self.config = config
        self.embedder = embedder
        self.selection = selection
        self.run_id = run_id
        self.now = now
        self.dry_run = dry_run
        self.incremental = incremental
        self.tally = Tally()
        # Facts changed by this run and not yet visible in the store: the current batch in a
        # real run, everything in a dry run (which never writes).
        # With a writer, also the batch in flight until it landed (see ``finish``).
        self.overlay: dict[str, Fact] = {}
        self.pending: dict[str, Fact] = {}
        self.pending_changes: list[FactChange] = []
        self.pending_actions: list[ConsolidationAction] = []
        # Per-batch caches (bounded by the batch and its neighbourhoods).
        self.known: dict[str, Fact] = {}
        self.vectors: dict[str, Vector] = {}
        self.hits: dict[str, list[VectorHit]] = {}
        self.profiles: dict[str, DedupProfile] = {}
        self.stale_payloads: dict[str, Fact] = {}
        # Facts the last flush wrote: a look-ahead search ran before that commit, so the index
        # may have called them active then without any crash being involved.
        self.just_committed: dict[str, Fact] = {}
        self.groups_done: OrderedDict[tuple[str, str, str], None] = OrderedDict()
        # First pages of the batch's subject groups, read together before the batch's rules.
        self.group_pages: dict[str, list[Fact]] = {}
        self.changed_ids: set[str] = set()
        self.threshold = self.config.similarity_threshold
        # Neighbours down to this cosine are candidates; below the threshold only a pair that
        # states the same thing (dedup.structure) merges.
        self.floor = min(self.threshold, self.config.structure_threshold)
        self.rules: dict[tuple[str, str], str] = {}
        # merge_rule answers of this batch by pair (the rule is symmetric), with the two
        # profiles and the cosine they were asked for: a pair is judged again only when one of
        # its facts changed (a new version, a new profile) or the cosine differs.
        # Wider searches made for the batch at once, for facts whose weak candidates are sure to
        # be too few (``weak_candidates``): fact id -> (k, filter, hits). The index does not
        # change while a batch is decided, so a search made early finds what it would later.
        self.widened: dict[str, tuple[int, VectorFilter, list[VectorHit]]] = {}
        self.pair_rules: dict[
            tuple[str, str], tuple[DedupProfile, DedupProfile, float, str | None]
        ] = {}
        self.widths: dict[str, tuple[int, bool]] = {}
        # The candidates of every fact active when the run started, found exactly before the
        # first decision (see ``candidates``); ``None``: the index is searched fact by fact.
        self.table: CandidateTable | None = None
        # Writes each batch in a writer process while the next is decided (``None``: here).
        self.queue: CommitQueue | None = None
        # The batch in the queue and not yet seen landed: its task and its facts.
        self.landing: tuple[asyncio.Task[None], dict[str, Fact]] | None = None

    # ---------------------------------------------------------------- view of the facts

    def view(self, fact_id: str) -> Fact | None:
        """The fact as this run sees it: its own pending change, else the stored version."""
        return self.overlay.get(fact_id) or self.known.get(fact_id)

    def structure_to_keep(self, fact: Fact) -> JsonValue | None:
        """The fact's structure as JSON when this batch read it and the fact does not hold it
        yet (``None``: nothing to add; a fact never compared is not read just to store it)."""
        cached = self.profiles.get(fact.id)
        if cached is None or cached.fact.content != fact.content:
            return None
        if cached.structure.source == "triple" or has_structure(fact):
            return None
        return structure_json(cached.structure, fact.content)

    def profile(self, fact: Fact) -> DedupProfile:
        cached = self.profiles.get(fact.id)
        if cached is None or cached.fact is not fact:
            # A full run read every compared fact's words for its table: not read again here.
            reading = None if self.table is None else self.table.reading(fact)
            cached = DedupProfile.of(fact, reading)
            self.profiles[fact.id] = cached
        return cached

    async def hydrate(self, ids: Sequence[str], *, from_index: bool = False) -> None:
        """Read the stored versions of ``ids`` not seen yet in this batch.

        With ``from_index`` the ids are nearest-neighbour hits, which the index returned as
        ACTIVE: one the metadata store says is not had its payload left behind by a crash.
        """
        missing = [i for i in dict.fromkeys(ids) if i not in self.known and i not in self.overlay]
        if not missing:
            return
        found = await self.port.get_many(missing)
        for fact in found:
            self.known[fact.id] = fact
            if (
                from_index
                and not self.dry_run
                and fact.status is not FactStatus.ACTIVE
                and fact.project_id == self.port.project_id
                and fact.id not in self.just_committed
            ):
                # The index said active, the truth says otherwise: a crash between the metadata
                # commit and the payload update. Repaired after this batch commits.
                self.stale_payloads[fact.id] = fact

    def _active(self, fact: Fact | None) -> bool:
        return (
            fact is not None and fact.status is FactStatus.ACTIVE and self.selection.contains(fact)
        )

    # ---------------------------------------------------------------- recording decisions

    def record(self, step: PlannedStep) -> None:
        for fact in step.updates:
            self.overlay[fact.id] = fact
            self.pending[fact.id] = fact
            if self.incremental:
                self.changed_ids.add(fact.id)
        self.pending_changes.extend(step.changes)
        action = step.action
        if self.dry_run:
            action = action.model_copy(update={"change_ids": ()})
        self.pending_actions.append(action)
        tally = self.tally
        tally.changed += len(step.updates)
        if action.kind is ActionKind.MERGE:
            tally.duplicates_removed += len(action.fact_ids)
        elif action.kind is ActionKind.SUPERSEDE:
            tally.contradictions_resolved += 1
        elif action.kind is ActionKind.FLAG:
            tally.contradictions_resolved += 1
            tally.facts_flagged += 1
        elif action.kind is ActionKind.ARCHIVE:
            tally.facts_decayed += 1
            tally.facts_archived += 1
        elif action.kind is ActionKind.DECAY:
            tally.facts_decayed += 1

    async def flush(self, state: tuple[str, JsonValue] | None = None) -> None:
        """Commit the pending batch (one transaction), or keep it in the overlay (dry run).

        ``state`` (a key and value) is the run's checkpoint, written once the batch landed.
        With a :attr:`queue` the batch is sent to the writer process and stays in the overlay
        until it landed, which the next flush (or :meth:`finish`) awaits: this batch is written
        while the next one is decided.
        """
        tally = self.tally
        limit = self.config.max_report_actions
        for action in self.pending_actions:
            if limit is None or len(tally.actions) < limit:
                tally.actions.append(action)
            else:
                tally.actions_omitted += 1
        if self.dry_run:
            self.just_committed = {}
        else:
            landed = await self.finish()
            previous = {
                fact_id: self.known[fact_id]
                for fact_id in self.pending
                if fact_id in self.known and fact_id not in self.stale_payloads
            }
            batch = WriteBatch(
                self.port.project_id,
                upserts=list(self.pending.values()),
                changes=list(self.pending_changes),
            )
            queue = self.queue
            if queue is not None:
                # Written behind this run, so marked here (``commit`` marks its own batches): the
                # versions this run committed but that may not have landed yet are the newest.
                batch = await mark_changed_sources(self.port, batch, known=landed)
                landing = queue.submit(batch, previous=previous, state=state)
                self.landing = (landing, dict(self.pending))
                # The store may still hold the older versions of both batches: a page read
                # before this one lands takes them from here.
                self.just_committed = {**landed, **self.pending}
            else:
                if self.pending:
                    # The versions read this batch let the commit skip index writes for
                    # changes that leave the payload as it was (decay, reinforcement); a
                    # payload the index is known to hold stale is always rewritten.
                    await self.port.commit(batch, previous=previous)
                self.overlay.clear()
                self.just_committed = dict(self.pending)
                if state is not None:
                    await self.port.set_state(*state)
            repairs = {k: v for k, v in self.stale_payloads.items() if k not in self.pending}
            if repairs:
                tally.index_repairs += await self.port.refresh_index(repairs.values())
        self.pending.clear()
        self.pending_changes.clear()
        self.pending_actions.clear()
        self.stale_payloads.clear()
        self.known.clear()
        self.group_pages.clear()
        self.vectors.clear()
        self.hits.clear()
        self.profiles.clear()
        self.rules.clear()
        self.pair_rules.clear()
        self.widened.clear()
        self.widths.clear()

    async def finish(self) -> dict[str, Fact]:
        """Wait for the batch in the writer process to land, then bring its index payloads in
        step and drop it from the overlay; returns its facts (nothing without a writer)."""
        landing, self.landing = self.landing, None
        if landing is None:
            return {}
        task, facts = landing
        await task
        for fact_id, fact in facts.items():
            if self.overlay.get(fact_id) is fact:  # not changed again since
                del self.overlay[fact_id]
        return facts

    # ---------------------------------------------------------------- neighbours

    async def vector_of(self, fact: Fact) -> Vector:
        vector = self.vectors.get(fact.id)
        if vector is None:
            stored = await self.port.get_vectors([fact.id])
            vector = stored.get(fact.id)
            if vector is None:
                # The index lost this vector; embed it to look for neighbours (never stored here).
                vector = (await self.embedder.embed_documents([fact.content]))[0]
            self.vectors[fact.id] = vector
        return vector

    async def nearest_many(
        self, vectors: Sequence[Vector], top_k: int, where: VectorFilter
    ) -> list[list[VectorHit]]:
        return await self.port.nearest_many(vectors, top_k, where, ef=self.config.search_ef)

    async def nearest(self, vector: Vector, top_k: int, where: VectorFilter) -> list[VectorHit]:
        return (await self.nearest_many([vector], top_k, where))[0]

    def from_table(self, fact: Fact) -> bool:
        """Take ``fact``'s candidates from the run's table, when it has them.

        The table's lists are complete (every fact that could merge, at or above the floor), so
        they are never widened.
        """
        table = self.table
        if table is None or fact.id not in table:
            return False
        hits = table.hits(fact.id)
        self.hits[fact.id] = hits
        self.widths[fact.id] = (len(hits), False)
        return True

    async def search(self, fact: Fact) -> list[VectorHit]:
        """Every neighbour of ``fact`` at or above the candidate floor (the store's active ones)."""
        cached = self.hits.get(fact.id)
        if cached is not None:
            return cached
        if self.from_table(fact):
            return self.hits[fact.id]
        where = self.selection.neighbours(fact)
        k = self.config.neighbours
        found = await self.nearest(await self.vector_of(fact), k + 1, where)
        return await self.settle(fact, where, found, k)

    async def settle(
        self, fact: Fact, where: VectorFilter, found: list[VectorHit], k: int
    ) -> list[VectorHit]:
        """Keep the hits at or above the candidate floor, asking for more while all ``k`` were.

        Doubling while even the last hit is a duplicate makes the set complete (up to
        ``max_neighbours``) whatever else the store holds, which is what lets a dry run, whose
        store still has the facts it plans to merge, see the same neighbours as the real run.
        """
        await self.settle_many([fact], where, {fact.id: found}, k)
        return self.hits[fact.id]

    def _wants_more(self, found: list[VectorHit], k: int) -> bool:
        return (
            len(found) == k + 1
            and found[-1].score >= self.threshold
            and k < self.config.max_neighbours
        )

    async def settle_many(
        self, facts: Sequence[Fact], where: VectorFilter, found: dict[str, list[VectorHit]], k: int
    ) -> None:
        """:meth:`settle` for facts searched together under ``where`` with ``k``: the searches
        that must be widened are widened together, one batch of searches per doubling."""
        found = dict(found)
        widths = dict.fromkeys((f.id for f in facts), k)
        wider = [f for f in facts if self._wants_more(found[f.id], k)]
        while wider:
            k = min(self.config.max_neighbours, k * 2)
            vectors = [await self.vector_of(f) for f in wider]
            results = await self.nearest_many(vectors, k + 1, where)
            for fact, hits in zip(wider, results, strict=True):
                found[fact.id] = hits
                widths[fact.id] = k
            wider = [f for f in wider if self._wants_more(found[f.id], k)]
        for fact in facts:
            # Below the threshold only the nearest few are candidates (see
            # ``weak_candidates``); the search is not widened for them: in a dense corpus
            # hundreds of facts sit between the floor and the threshold ("<someone> likes
            # tea"), and none of them is a restatement.
            hits, width = found[fact.id], widths[fact.id]
            self.hits[fact.id] = [h for h in hits if h.id != fact.id and h.score >= self.floor]
            self.widths[fact.id] = (
                width,
                len(hits) == width + 1 and hits[-1].score >= self.floor,
            )

    async def weak_candidates(self, fact: Fact, hits: list[VectorHit]) -> list[VectorHit]:
        """The ``neighbours`` nearest hits below the threshold that this run sees as active.

        Counted among the facts the run's view calls active, not among the index's hits, so a
        dry run (whose index still holds the facts it merged) and the real run (whose index no
        longer does) consider the same candidates: the search widens while fewer than
        ``neighbours`` active ones were found and the list may go on above the floor.
        """
        wanted = self.config.neighbours
        while True:
            weak = sorted(
                (h for h in hits if h.score < self.threshold), key=lambda h: (-h.score, h.id)
            )
            await self.hydrate(
                [h.id for h in weak], from_index=self.table is None or fact.id not in self.table
            )
            active: list[VectorHit] = []
            for hit in weak:  # only the nearest ``wanted`` active ones are ever used
                if self._active(self.view(hit.id)):
                    active.append(hit)
                    if len(active) == wanted:
                        break
            k, full = self.widths.get(fact.id, (self.config.neighbours, False))
            if len(active) >= wanted or not full or k >= self.config.max_neighbours:
                return active
            k = min(self.config.max_neighbours, k * 2)
            where = self.selection.neighbours(fact)
            ahead = self.widened.pop(fact.id, None)
            if ahead is not None and ahead[0] == k and ahead[1] == where:
                found = ahead[2]
            else:
                found = await self.nearest(await self.vector_of(fact), k + 1, where)
            hits = [h for h in found if h.id != fact.id and h.score >= self.floor]
            self.hits[fact.id] = hits
            self.widths[fact.id] = (k, len(found) == k + 1 and found[-1].score >= self.floor)

    async def widen_weak(self, facts: Sequence[Fact], where: VectorFilter) -> None:
        """Make together the wider searches :meth:`weak_candidates` is sure to ask for.

        A fact whose hits below the threshold are fewer than ``neighbours`` while its search
        was full will have its search widened (its active weak candidates can only be fewer);
        those searches are made here in one batch per width instead of one by one.
        """
        if self.floor >= self.threshold:
            return
        wanted, ceiling = self.config.neighbours, self.config.max_neighbours
        by_width: dict[int, list[Fact]] = {}
        for fact in facts:
            k, full = self.widths.get(fact.id, (wanted, False))
            hits = self.hits.get(fact.id, ())
            weak = sum(1 for h in hits if h.score < self.threshold)
            if hits and full and k < ceiling and weak < wanted:
                by_width.setdefault(min(ceiling, k * 2), []).append(fact)
        for k, group in by_width.items():
            vectors = [await self.vector_of(f) for f in group]
            results = await self.nearest_many(vectors, k + 1, where)
            self.widened.update(
                (f.id, (k, where, found)) for f, found in zip(group, results, strict=True)
            )

    async def search_ahead(self, facts: Sequence[Fact]) -> Lookahead:
        """Search the neighbours of the next page's facts, to overlap with this page's work.

        Only the index is read: nothing is decided until the page's turn, after this page
        commits. The index may still call active a fact that this page then merges; the
        decisions re-read every hit, so such hits only cost a lookup.
        """
        table = self.table
        candidates = [
            f
            for f in facts
            if f.status is FactStatus.ACTIVE and (table is None or f.id not in table)
        ]
        ahead = Lookahead(vectors=await self.port.get_vectors([f.id for f in candidates]))
        groups: dict[VectorFilter, list[Fact]] = {}
        for fact in candidates:
            if fact.id in ahead.vectors:
                groups.setdefault(self.selection.neighbours(fact), []).append(fact)
        k = self.config.neighbours
        for where, group in groups.items():
            vectors = [ahead.vectors[f.id] for f in group]
            results = await self.nearest_many(vectors, k + 1, where)
            ahead.found.update(
                (f.id, (where, found)) for f, found in zip(group, results, strict=True)
            )
        return ahead

    async def prefetch(self, facts: Sequence[Fact], ahead: Lookahead | None = None) -> None:
        """Search the neighbours of a batch at once, then hydrate them in one read.

        Searches already made by :meth:`search_ahead` under the same filter are reused.
        """
        todo = [f for f in facts if f.id not in self.hits and not self.from_table(f)]
        if ahead is not None:
            self.vectors.update((f.id, ahead.vectors[f.id]) for f in todo if f.id in ahead.vectors)
        missing = [f.id for f in todo if f.id not in self.vectors]
        self.vectors.update(await self.port.get_vectors(missing))
        groups: dict[VectorFilter, list[Fact]] = {}
        for fact in todo:
            groups.setdefault(self.selection.neighbours(fact), []).append(fact)
        k = self.config.neighbours
        for where, group in groups.items():
            answered: dict[str, list[VectorHit]] = {}
            for fact in group:
                made = None if ahead is None else ahead.found.get(fact.id)
                if made is not None and made[0] == where:
                    answered[fact.id] = made[1]
            rest = [f for f in group if f.id not in answered]
            if rest:
                vectors = [await self.vector_of(f) for f in rest]
                results = await self.nearest_many(vectors, k + 1, where)
                answered.update((f.id, found) for f, found in zip(rest, results, strict=True))
            await self.settle_many(group, where, answered, k)
            await self.widen_weak(group, where)
        table = self.table
        await self.hydrate(
            [h.id for f in facts if table is not None and f.id in table for h in self.hits[f.id]]
        )
        await self.hydrate(
            [
                h.id
                for f in facts
                if table is None or f.id not in table
                for h in self.hits.get(f.id, ())
            ],
            from_index=True,
        )

    async def members(self, fact: Fact) -> list[tuple[Fact, float]]:
        """Active facts that may merge with ``fact``, with their cosine to it."""
        hits = await self.search(fact)
        if not hits:
            return []
        strong = [h for h in hits if h.score >= self.threshold]
        indexed = self.table is None or fact.id not in self.table
        await self.hydrate([h.id for h in strong], from_index=indexed)
        if self.floor < self.threshold:
            strong += await self.weak_candidates(fact, self.hits[fact.id])
        found = [(other, hit) for hit in strong if self._active(other := self.view(hit.id))]
        if not found:
            # Profiled only when compared: a run that resumes after the candidate became
            # inactive must keep (or not keep) the fact's structure as the first run did.
            return []
        mine = self.profile(fact)
        out: list[tuple[Fact, float]] = []
        for other, hit in found:
            assert other is not None
            rule = self.rule_between(mine, self.profile(other), hit.score)
            if rule is not None:
                self.rules[(fact.id, other.id)] = rule
                out.append((other, hit.score))
        return out

    def rule_between(self, a: DedupProfile, b: DedupProfile, similarity: float) -> str | None:
        """:func:`merge_rule` of a pair, answered once per batch for the same two versions."""
        key = (a.id, b.id) if a.id < b.id else (b.id, a.id)
        memo = self.pair_rules.get(key)
        if (
            memo is not None
            and memo[2] == similarity
            and ((memo[0] is a and memo[1] is b) or (memo[0] is b and memo[1] is a))
        ):
            return memo[3]
        rule = merge_rule(a, b, similarity, threshold=self.threshold, floor=self.floor)
        self.pair_rules[key] = (a, b, similarity, rule)
        return rule

    # ---------------------------------------------------------------- the three rules

    async def dedup(self, fact_id: str) -> None:
        """Merge ``fact_id``'s near-duplicates, climbing to the fact that must survive.

        The survivor of a group is the best (by :func:`canonical_key`) among a fact and its own
        mergeable neighbours; when that is another fact, the search continues from it, so a
        canonical always absorbs its whole neighbourhood and is never merged away later.
        """
        while True:
            current = self.view(fact_id)
            if current is None or not self._active(current):
                return
            members = await self.members(current)
            if not members:
                return
            center = current
            while True:
                best = min(
                    [self.profile(center), *(self.profile(m) for m, _ in members)],
                    key=canonical_key,
                )
                if best.id == center.id:
                    break
                center = best.fact
                members = await self.members(center)
            values = self.profile(center).values
            # Sorted by the canonical order, so ties between equally close hits (which stores
            # return in any order) never change the merged fact.
            absorbed = sorted(
                ((m, s) for m, s in members if self.profile(m).values <= values),
                key=lambda pair: canonical_key(self.profile(pair[0])),
            )
            if not absorbed:
                return
            rules = {m.id: self.rules.get((center.id, m.id), "dedup.cosine") for m, _ in absorbed}
            self.record(
                plan_merge(
                    center,
                    absorbed,
                    threshold=self.threshold,
                    run_id=self.run_id,
                    at=utcnow(),
                    rules=rules,
                    structure=self.structure_to_keep(center),
                )
            )
            await self.decay(center.id)
            if center.id == fact_id:
                return

    async def prefetch_groups(self, facts: Sequence[Fact]) -> None:
        """Read the subject groups the batch will resolve before its rules run.

        The store does not change while a batch is decided (the run writes at its flush), so a
        group read now is the group :meth:`contradictions` would read. One query reads every
        subject of the batch; when that would exceed ``_GROUPS_READ`` rows (or a subject has a
        full page or more), those subjects are read one query each, queued together.
        """
        subjects: list[str] = []
        for fact in facts:
            claim = claim_of(fact)
            if claim is None or fact.subject is None or fact.subject in self.group_pages:
                continue
            if (scope_key_of(fact), claim.subject, claim.predicate) in self.groups_done:
                continue
            subjects.append(fact.subject)
        subjects = list(dict.fromkeys(subjects))
        if not subjects:
            return
        together = await self.port.find(self.selection.groups(subjects, limit=_GROUPS_READ))
        if len(together) < _GROUPS_READ:
            pages: dict[str, list[Fact]] = {subject: [] for subject in subjects}
            for fact in together:
                if fact.subject in pages:
                    pages[fact.subject].append(fact)
            self.group_pages.update(
                (s, page) for s, page in pages.items() if len(page) < _GROUP_PAGE
            )
            subjects = [s for s in subjects if s not in self.group_pages]
        found = await asyncio.gather(
            *(
                self.port.find(self.selection.group(subject, after=None, limit=_GROUP_PAGE))
                for subject in subjects
            )
        )
        self.group_pages.update(zip(subjects, found, strict=True))

    async def contradictions(self, fact: Fact) -> None:
        """Resolve the contradictions of ``fact``'s (subject, predicate) group."""
        claim = claim_of(fact)
        if claim is None or fact.subject is None:
            return
        key = (scope_key_of(fact), claim.subject, claim.predicate)
        if key in self.groups_done:
            return
        group: list[Fact] = []
        after: tuple[datetime, str] | None = None
        while True:
            page = self.group_pages.pop(fact.subject, None) if after is None else None
            if page is None:
                page = await self.port.find(
                    self.selection.group(fact.subject, after=after, limit=_GROUP_PAGE)
                )
            for stored in page:
                member = self.overlay.get(stored.id, stored)
                if member.status not in (FactStatus.ACTIVE, FactStatus.FLAGGED):
                    continue
                if scope_key_of(member) != key[0] or not self.selection.contains(member):
                    continue
                other = claim_of(member)
                if other is not None and other.same_group(claim):
                    group.append(member)
            if len(page) < _GROUP_PAGE:
                break
            after = (page[-1].created_at, page[-1].id)
        strategy = self.config.contradiction_strategy
        for decision in resolve_group(group, strategy):
            at = utcnow()
            if isinstance(decision, Supersession):
                step = plan_supersession(decision, strategy=strategy, run_id=self.run_id, at=at)
            else:
                assert isinstance(decision, Flagging)
                step = plan_flagging(decision, run_id=self.run_id, at=at)
            self.record(step)
        self.groups_done[key] = None
        if len(self.groups_done) > _GROUP_MEMO:
            self.groups_done.popitem(last=False)

    async def decay(self, fact_id: str) -> None:
        """Decay ``fact_id`` at the run's reference time; archive it unless it must stay."""
        fact = self.view(fact_id)
        if fact is None or not self._active(fact):
            return
        config = self.config
        decision = decide_decay(
            fact,
            self.now,
            halflife_days=config.decay_halflife_days,
            archive_below=config.archive_below,
            min_change=config.decay_min_change,
        )
        if decision is None:
            return
        protected: str | None = None
        # A standing instruction holds until the user changes it, used or not (issue 42); a
        # fact holding the only copy of an exact value is kept too. Either only weakens.
        if decision.archive and (
            is_profile_entry(fact) or (protected := await self.only_copy(fact)) is not None
        ):
            if abs(fact.strength - decision.strength) < config.decay_min_change:
                return
            decision = dataclasses.replace(decision, archive=False)
        self.record(
            plan_decay(
                fact,
                decision,
                halflife_days=config.decay_halflife_days,
                archive_below=config.archive_below,
                protected_value=protected,
                run_id=self.run_id,
                at=utcnow(),
                structure=self.structure_to_keep(fact),
            )
        )

    async def only_copy(self, fact: Fact) -> str | None:
        """An exact value of ``fact`` that no other active fact of its scope holds, if any.

        Other holders are looked up through the keyword index; a value whose other copy cannot
        be found is treated as the only copy, so decay errs on the side of keeping.
        """
        for value in sorted(self.profile(fact).values):
            hits = await self.port.keyword_hits(
                self.selection.value_holders(fact), value, _VALUE_CANDIDATES
            )
            ids = [i for i, _ in hits if i != fact.id]
            await self.hydrate(ids)
            held = False
            for other_id in ids:
                other = self.view(other_id)
                if (
                    other is not None
                    and other.status in (FactStatus.ACTIVE, FactStatus.FLAGGED)
                    and value in self.profile(other).values
                ):
                    held = True
                    break
            if not held:
                return value
        return None

    # ---------------------------------------------------------------- batches

    async def process(self, page: Sequence[Fact], ahead: Lookahead | None = None) -> None:
        """Consolidate one page of the scan; the caller flushes it."""
        for fact in page:
            self.known.setdefault(fact.id, fact)
        todo = [f for f in page if self._turn(f.id)]
        versions = [self.view(f.id) or f for f in todo]
        await self.prefetch(versions, ahead)
        await self.prefetch_groups(versions)
        for fact in todo:
            if not self._turn(fact.id):
                continue
            current = self.view(fact.id)
            assert current is not None
            self.tally.total_processed += 1
            await self.contradictions(current)
            await self.dedup(fact.id)
            await self.decay(fact.id)
        self.tally.batches += 1

    def _turn(self, fact_id: str) -> bool:
        fact = self.view(fact_id)
        if fact is None or not self._active(fact):
            return False
        # An incremental run skips what it changed itself: that is already consolidated.
        return not (self.incremental and fact_id in self.changed_ids)
