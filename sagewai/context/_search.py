"""Hybrid search: :class:`Searcher`, the body of :meth:`ContextEngine.search`.

A search is eight steps (``docs/architecture.md`` draws them), the first building a
:class:`SearchRequest`, the others methods of :class:`Searcher`:

1. :meth:`SearchRequest.of`: the arguments checked, the scope's readable keys, the store
   filters, the query analysed once (:mod:`sagewai.context._query`);
2. ``_candidates``: the keyword index and the dense index side by side, the graph's bonus with
   ``graph_hops`` (:mod:`sagewai.context._graph_expansion`), every hit read back and re-checked
   against the truth;
3. ``_rank``: dense and keyword evidence fused with the speaker, time and graph bonuses
   (:func:`sagewai.context._ranking.fuse`);
4. ``_with_neighbours``: the turns next to the best candidates fetched and ranked with them;
5. ``_standing``: the claims the candidates stated that changed since, and what holds now
   (:mod:`sagewai.context._standing`); which of them the query asks about;
6. ``_present_first``: for a question about the present, a changed claim gives way to what
   replaced it (:func:`~sagewai.context._ranking.prefer_current`); for a question about a value
   now, a later statement of the value comes before an earlier one
   (:func:`~sagewai.context._ranking.later_values_first`); for a search ``as_of`` a past time, a
   claim that had changed by then gives way to what held then; and a message that holds no
   statement (a question, small talk) gives way to the records that answer
   (:func:`~sagewai.context._ranking.answers_first`);
7. ``_results``: a message and the facts drawn from it folded into one result, repeats of the
   same statement folded into it too, each with its standing; ``top_k`` kept; when the query
   only names a subject, that subject's synthesis (consolidation's reflection) first
   (:func:`~sagewai.context._subject_search.synthesis_first`);
8. ``_mark_read``: the results' read marks (recent use slows decay).

The searcher stores nothing: every read goes through the engine's port
(:class:`~sagewai.core.MemoryPort`). How each step is tuned is in :class:`SearchConfig`; the one
thing it remembers between searches is whether the index holds pieces of long records.
"""

from __future__ import annotations

import asyncio
import dataclasses
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sagewai.context._graph_expansion import graph_bonus
from sagewai.context._query import QueryAnalysis, analyse_query, is_chatter
from sagewai.context._ranking import (
    RankedCandidate,
    SearchConfig,
    SourceGroup,
    SourceKey,
    answers_first,
    fuse,
    group_by_source,
    later_values_first,
    limit_per_message,
    message_text,
    neighbour_key,
    neighbour_wanted,
    normal_form,
    prefer_current,
    source_key,
)
from sagewai.context._slots import later_statements_first
from sagewai.context._standing import MAX_CHAIN, claim_changes
from sagewai.context._subject_search import synthesis_first
from sagewai.core._arguments import aware_time, check_int, check_number, enum_values, string_list
from sagewai.core._embedder import Vector
from sagewai.core._pieces import is_piece, record_id
from sagewai.core._queries import FactQuery, VectorFilter, VectorHit
from sagewai.core._records import (
    ClaimChange,
    Fact,
    FactKind,
    FactStatus,
    FactType,
    SearchResult,
    Standing,
    assembled,
    utcnow,
)
from sagewai.core._scope import ContextScope
from sagewai.core._text import clean_text
from sagewai.errors import InvalidInputError

if TYPE_CHECKING:
    from sagewai.core._port import MemoryPort
    from sagewai.stores.base._graph import ProjectGraph

__all__ = [
    "AS_OF_STATUSES",
    "MAX_QUERY_CHARS",
    "MAX_TOP_K",
    "SEARCHABLE",
    "SearchRequest",
    "Searcher",
]

MAX_QUERY_CHARS = 4_000
_VALUE_WINDOW = 2
_SLOT_WINDOW = 5
"""A later statement of a value moves up among the first ``top_k`` times this many candidates
(a source's message and its facts are several candidates of one result)."""
MAX_TOP_K = 1_000
SEARCHABLE = (FactStatus.ACTIVE, FactStatus.FLAGGED)
"""The statuses a search reads by default (and ``list`` lists)."""
AS_OF_STATUSES = (FactStatus.ACTIVE, FactStatus.FLAGGED, FactStatus.SUPERSEDED)
"""The statuses a search ``as_of`` a past time reads: what was believed then."""


_score = operator.attrgetter("score")


def _record_hits(hits: Sequence[VectorHit], piece_weight: float) -> list[VectorHit]:
    """Vector hits (records and pieces of long records) as one hit per record, best first.

    A record scores ``own + piece_weight * (best piece - own)`` when a piece of it beats its own
    vector; a record found only through a piece gets the lowest returned score as its own (its
    own vector ranked below every hit).
    """
    if not any(is_piece(hit.id) for hit in hits):  # records only, the usual case
        first: dict[str, VectorHit] = {}
        for hit in hits:
            first.setdefault(hit.id, hit)
        return sorted(first.values(), key=_score, reverse=True)  # equal scores keep their order
    own: dict[str, float] = {}
    piece: dict[str, float] = {}
    for hit in hits:
        owner = record_id(hit.id)
        scores = own if owner == hit.id else piece
        scores.setdefault(owner, hit.score)
    floor = min((hit.score for hit in hits), default=0.0)
    merged: list[VectorHit] = []
    for owner in dict.fromkeys([record_id(hit.id) for hit in hits]):
        base = own.get(owner, floor)
        best = piece.get(owner, base)
        merged.append(VectorHit(owner, base + piece_weight * max(0.0, best - base)))
    merged.sort(key=_score, reverse=True)
    return merged


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One search, checked: what to find, where to look, how to rank (built by :meth:`of`)."""

    text: str
    top_k: int
    fact_query: FactQuery
    vector_filter: VectorFilter
    analysis: QueryAnalysis
    config: SearchConfig
    pool: int
    graph_hops: int
    as_of: datetime | None
    min_score: float | None

    @classmethod
    def of(
        cls,
        port: MemoryPort,
        query: str,
        top_k: int,
        *,
        scope: ContextScope | str | None,
        user_id: str | None,
        session_id: str | None,
        fact_types: Sequence[FactType | str] | None,
        kinds: Sequence[FactKind | str] | None,
        tags: Sequence[str] | None,
        statuses: Sequence[FactStatus | str] | None,
        as_of: datetime | None,
        graph_hops: int,
        min_score: float | None,
        config: SearchConfig,
    ) -> SearchRequest:
        """Step 1: the arguments checked, the scope's filters built, the query analysed once.

        Raises:
            InvalidInputError: empty or oversized query, bad ``top_k`` or filters.
            ScopeError: a scope named without its identifier.
        """
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("the search query must be non-empty text")
        query = clean_text(query)
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidInputError(f"the search query is longer than {MAX_QUERY_CHARS} characters")
        check_int(top_k, "top_k", low=1, high=MAX_TOP_K)
        check_int(graph_hops, "graph_hops", low=0, high=2)
        if not isinstance(config, SearchConfig):
            raise InvalidInputError(
                f"search_config must be a SearchConfig, got {type(config).__name__}"
            )
        if min_score is not None:
            check_number(min_score, "min_score")
        as_of = aware_time(as_of, "as_of")
        fact_types = enum_values(fact_types, FactType, "fact_types")
        kinds = enum_values(kinds, FactKind, "kinds")
        statuses = enum_values(statuses, FactStatus, "statuses")
        tags = string_list(tags, "tags")
        address = port.address(scope, user_id=user_id, session_id=session_id)
        if statuses is None:
            statuses = AS_OF_STATUSES if as_of is not None else SEARCHABLE
        fact_query = FactQuery(
            project_id=port.project_id,
            scope_keys=address.readable_keys(),
            statuses=tuple(FactStatus(s) for s in statuses),
            kinds=None if kinds is None else tuple(FactKind(k) for k in kinds),
            fact_types=None if fact_types is None else tuple(FactType(t) for t in fact_types),
            tags_any=None if tags is None else tuple(tags),
            valid_at=as_of,
        )
        vector_filter = VectorFilter.for_types(
            fact_query.scope_keys or (),
            statuses=fact_query.statuses,
            kinds=fact_query.kinds,
            fact_types=fact_query.fact_types,
            tags_any=fact_query.tags_any,
            valid_at=as_of,
        )
        return cls(
            text=query,
            top_k=top_k,
            fact_query=fact_query,
            vector_filter=vector_filter,
            analysis=analyse_query(query, strip_stopwords=config.strip_stopwords),
            config=config,
            # Grouping by source folds several records into one result: fetch enough for top_k.
            pool=max(config.candidates, 2 * top_k if config.group_by_source else top_k),
            graph_hops=graph_hops,
            as_of=as_of,
            min_score=min_score,
        )


@dataclass(slots=True)
class _Candidates:
    """What the indexes found, read back from the truth."""

    facts: dict[str, Fact]
    dense: list[tuple[str, float]]
    keyword: list[tuple[str, float]]
    bonus: dict[str, float]
    query_vector: Vector
    now: datetime


@dataclass(frozen=True, slots=True)
class _Standing:
    """What changed among a search's candidates (step 5)."""

    changes: Mapping[str, list[ClaimChange]] = dataclasses.field(default_factory=dict)
    """Record id -> the claims it stated that changed since."""
    asked: frozenset[str] = frozenset()
    """Records whose answering claim is one of those."""
    rested_on: Mapping[str, list[ClaimChange]] = dataclasses.field(default_factory=dict)
    """Record id -> the claims it rested on that changed since."""

    def of(self, fact: Fact) -> Standing:
        """A result's standing: changed when the claim it answers with changed, possibly stale
        when a claim it rested on did."""
        if fact.id in self.asked:
            return Standing.CHANGED
        if fact.id in self.rested_on:
            return Standing.POSSIBLY_STALE
        return Standing.CURRENT

    def rested_on_of(self, group: SourceGroup) -> tuple[ClaimChange, ...]:
        """The changed claims a result's records rested on, each once."""
        found: dict[str, ClaimChange] = {}
        for candidate in (group.best, *group.others):
            for change in self.rested_on.get(candidate.fact.id, ()):
                found.setdefault(change.old.id, change)
        return tuple(found.values())

    def changed_before(self, then: datetime) -> frozenset[str]:
        """The asked candidates whose claim had already changed at ``then`` (an ``as_of``
        search: what held then comes before what had changed by then)."""
        return frozenset(
            candidate
            for candidate in self.asked
            if any(c.at is not None and c.at <= then for c in self.changes.get(candidate, ()))
        )

    def changes_of(self, group: SourceGroup) -> tuple[ClaimChange, ...]:
        """The changes of a result's records, each old claim once, newest first."""
        found: dict[str, ClaimChange] = {}
        for candidate in (group.best, *group.others):
            for change in self.changes.get(candidate.fact.id, ()):
                found.setdefault(change.old.id, change)
        return tuple(
            sorted(found.values(), key=lambda c: c.at.timestamp() if c.at else 0.0, reverse=True)
        )


def _cosine(vector: Vector, query: Vector) -> float:
    """The dot product of two unit vectors."""
    import numpy as np

    return float(np.asarray(vector, dtype=np.float32) @ np.asarray(query, dtype=np.float32))


class Searcher:
    """The hybrid search of one engine (see the module and ``ContextEngine.search``).

    Args:
        port: The engine's reads.
        graph: The project's graph view, for ``graph_hops`` (``None``: no graph).
        config: The ranking settings used when a search names none.
    """

    def __init__(
        self, port: MemoryPort, *, graph: ProjectGraph | None, config: SearchConfig
    ) -> None:
        self.port = port
        self.graph = graph
        self.config = config
        self.dense_pieces_seen = False
        """Whether a search has met a long record's piece among its dense hits: from then on
        every search asks the dense index for twice its pool (see :meth:`_dense`)."""

    async def search(self, request: SearchRequest) -> list[SearchResult]:
        """Answer a checked search (see the module for the steps)."""
        found = await self._candidates(request)  # both indexes, the graph, re-checked
        ranked = self._rank(request, found)  # fused evidence and bonuses
        ranked = await self._with_neighbours(request, found, ranked)  # turns next to the best
        standing = await self._standing(found, ranked)  # changed claims and what holds now
        held = await self._held_then(request, standing)  # an as_of search: what held then
        ranked, later = self._present_first(request, ranked, standing, held)  # now first
        results = self._results(request, ranked, standing, later)  # one per statement, top_k
        results = await synthesis_first(  # a subject asked about: its synthesis first
            self.port, request.text, request.fact_query, results, request.top_k
        )
        self._mark_read(request, results, found.now)  # recent use slows decay
        return results

    async def _candidates(self, request: SearchRequest) -> _Candidates:
        """Both indexes' hits (and the graph's bonus), read back and re-checked."""
        # The keyword index and the dense path (embed, then search) run side by side; the keyword
        # side reads its hits' records as it goes. It starts first: its store reads in a thread of
        # its own, while a dense index may search in this one (Qdrant edge does: see
        # ``QdrantEdgeVectorStore._call``), and would otherwise finish before the keyword side
        # began.
        keyword_found, (query_vector, dense) = await asyncio.gather(
            self.port.keyword_facts(
                request.fact_query, request.analysis.keyword_text, request.pool
            ),
            self._dense(request),
        )
        bonus: dict[str, float] = {}
        if request.graph_hops and self.graph is not None:
            bonus = await graph_bonus(
                self.port,
                self.graph,
                request.text,
                request.fact_query,
                request.graph_hops,
                request.pool,
            )
        read = {fact.id: fact for fact, _ in keyword_found}
        missing = [i for i in dict.fromkeys([h.id for h in dense] + list(bonus)) if i not in read]
        hydrated = [*read.values(), *(await self.port.get_many(missing) if missing else ())]
        # Defence in depth: every hit is re-checked against the truth, whatever the index said.
        facts = {fact.id: fact for fact in hydrated if request.fact_query.matches(fact)}
        return _Candidates(
            facts=facts,
            dense=[(h.id, h.score) for h in dense],
            keyword=[(fact.id, score) for fact, score in keyword_found],
            bonus=bonus,
            query_vector=query_vector,
            now=utcnow(),
        )

    async def _dense(self, request: SearchRequest) -> tuple[Vector, list[VectorHit]]:
        """The query's vector and the dense index's hits, one per record, best first."""
        vector = await self.port.embedder.embed_query(request.text)
        pool, where, weight = request.pool, request.vector_filter, request.config.piece_weight
        # A long record's pieces are hits of their own: a store holding them is asked for
        # twice the pool, each record scored by its best vector (its own or a piece's), and
        # ``pool`` records kept. Until a search meets a piece, the index is asked for ``pool``
        # hits: without a piece among them they are the records the larger answer would keep,
        # in the same order (a piece ranked below them cannot lift its record above them; an
        # approximate index searches with the same beam while twice the pool is within its
        # own, 128 by default); with one, it is asked again. Half the hits read at a million
        # facts: 0.2 to 0.3 ms of a search.
        if not self.dense_pieces_seen:
            hits = await self.port.nearest(vector, pool, where)
            if not any(is_piece(hit.id) for hit in hits):
                return vector, _record_hits(hits, weight)
            self.dense_pieces_seen = True
        hits = await self.port.nearest(vector, 2 * pool, where)
        return vector, _record_hits(hits, weight)[:pool]

    def _rank(
        self,
        request: SearchRequest,
        found: _Candidates,
        extra_dense: Mapping[str, float] | None = None,
    ) -> list[RankedCandidate]:
        """The candidates fused (see :func:`~sagewai.context._ranking.fuse`)."""
        return fuse(
            found.facts,
            found.dense,
            found.keyword,
            config=request.config,
            now=found.now,
            bonus=found.bonus,
            query=request.analysis,
            extra_dense=extra_dense,
        )

    async def _with_neighbours(
        self, request: SearchRequest, found: _Candidates, ranked: list[RankedCandidate]
    ) -> list[RankedCandidate]:
        """The ranking again, with the turns next to the best candidates in their sessions.

        Neighbouring turns of the best candidates may be outside both candidate pools: they are
        fetched (one indexed query per session), scored on the dense scale, and ranked with the
        rest. The per-session query filters on the project only (cheap in every backend); the
        few facts at the wanted positions are then checked against the full scope filter.
        """
        import numpy as np

        config, fact_query = request.config, request.fact_query
        if config.neighbour_weight <= 0 or not ranked:
            return ranked
        seeds = sorted(ranked, key=lambda c: (-c.relevance, c.fact.id))[: config.neighbour_seeds]
        wanted = neighbour_wanted((c.fact for c in seeds), config.neighbour_window)
        neighbours: list[Fact] = []
        for session in sorted(wanted):
            in_session = await self.port.find(
                dataclasses.replace(fact_query, scope_keys=None, session_id=session)
            )
            neighbours.extend(
                fact
                for fact in in_session
                if fact.id not in found.facts
                and (key := neighbour_key(fact)) is not None
                and key[0] == session
                and key[1] in wanted[session]
                and fact_query.matches(fact)
            )
        if not neighbours:
            return ranked
        vectors = await self.port.get_vectors([fact.id for fact in neighbours])
        query_array = np.asarray(found.query_vector, dtype=np.float32)
        extra = {
            fact_id: float(np.asarray(vector, dtype=np.float32) @ query_array)
            for fact_id, vector in vectors.items()
        }
        found.facts.update((fact.id, fact) for fact in neighbours if fact.id in extra)
        return self._rank(request, found, extra)

    async def _standing(self, found: _Candidates, ranked: list[RankedCandidate]) -> _Standing:
        """The claims the candidates stated that changed since, and the candidates whose
        answering claim is one of them.

        A message may state several claims ("I live in Berlin and I work at Siemens."): it
        answers with a changed one when that claim's fact is nearer the query than every fact of
        the message that still holds (the vectors of both are read, one call).
        """
        found_changes = await claim_changes(self.port, [c.fact for c in ranked])
        if not found_changes:
            return _Standing()
        changes = found_changes.own
        siblings: dict[SourceKey, list[str]] = {}
        for candidate in ranked:
            key = source_key(candidate.fact)
            fact = candidate.fact
            if key is not None and fact.kind is FactKind.FACT and fact.id not in changes:
                siblings.setdefault(key, []).append(fact.id)
        wanted = {change.old.id for listed in changes.values() for change in listed}
        for changed in changes:
            key = source_key(found.facts[changed]) if changed in found.facts else None
            wanted.update(siblings.get(key, ()) if key is not None else ())
        vectors = await self.port.get_vectors(sorted(wanted))
        query = found.query_vector

        def nearness(fact_id: str) -> float:
            vector = vectors.get(fact_id)
            return -1.0 if vector is None else _cosine(vector, query)

        asked: set[str] = set()
        for candidate in ranked:
            listed = changes.get(candidate.fact.id)
            if not listed:
                continue
            if candidate.fact.kind is not FactKind.MESSAGE:
                asked.add(candidate.fact.id)  # a superseded fact answers with its own claim
                continue
            key = source_key(candidate.fact)
            holding = siblings.get(key, []) if key is not None else []
            old = max(nearness(change.old.id) for change in listed)
            if old >= max((nearness(i) for i in holding), default=-1.0):
                asked.add(candidate.fact.id)
        return _Standing(changes, frozenset(asked), found_changes.rested_on)

    async def _held_then(
        self, request: SearchRequest, standing: _Standing
    ) -> dict[str, list[Fact]] | None:
        """For a search ``as_of`` a past time: the candidates whose claim had changed by then,
        each with the facts that held in its place at that time (``None`` for other
        searches). The chain of successors is read one link at a time (a few reads, only
        for changed claims)."""
        then = request.as_of
        if then is None or not request.config.prefer_current or not standing.asked:
            return None
        held: dict[str, list[Fact]] = {}
        for candidate in sorted(standing.changed_before(then)):
            facts = held.setdefault(candidate, [])
            for change in standing.changes[candidate]:
                fact: Fact | None = change.old
                for _ in range(MAX_CHAIN):
                    if fact is None or fact.superseded_by is None:
                        break
                    found = await self.port.get_many([fact.superseded_by])
                    fact = found[0] if found else None
                    if fact is not None and fact.valid_at(then):
                        if request.fact_query.matches(fact):
                            facts.append(fact)
                        break
        return held

    def _present_first(
        self,
        request: SearchRequest,
        ranked: list[RankedCandidate],
        standing: _Standing,
        held: dict[str, list[Fact]] | None = None,
    ) -> tuple[list[RankedCandidate], dict[str, Fact]]:
        """For a question about the present: what holds now before what changed; for a search
        ``as_of`` a past time, what held then before what had changed by then (``held``, from
        :meth:`_held_then`); for a question about a value now, its later statements first
        (with, for each earlier one, the later statement that may have changed it); answers
        before a message that holds no statement and echoes the query (the same question asked
        before, small talk)."""
        config = request.config
        present = request.as_of is None and not request.analysis.asks_past
        if config.prefer_current and standing.asked and present:
            successors = {
                changed: [
                    change.new
                    for change in standing.changes[changed]
                    if change.new is not None and request.fact_query.matches(change.new)
                ]
                for changed in standing.asked
            }
            ranked = prefer_current(
                ranked,
                successors,
                changed_weight=config.changed_weight,
                quoted_from=config.changed_quoted,
            )
        elif held:
            ranked = prefer_current(
                ranked,
                held,
                changed_weight=config.changed_weight,
                quoted_from=config.changed_quoted,
            )
        if config.later_values and present and request.analysis.asks_value_now:
            terms = request.analysis.keyword_text.lower().split()
            ranked = later_values_first(ranked, terms, window=_VALUE_WINDOW * request.top_k)
        analysis = request.analysis
        later: dict[str, Fact] = {}
        if config.later_values and analysis.asks_value_now and not analysis.asks_past:
            ranked, later = later_statements_first(
                ranked, analysis, window=_SLOT_WINDOW * request.top_k
            )
        asked = normal_form(request.text)
        chatter = {
            c.fact.id
            for c in ranked
            if c.fact.kind is FactKind.MESSAGE
            and (
                (c.part_values[0] or 0.0) >= config.chatter_echo
                or normal_form(c.fact.content) == asked
            )
            and is_chatter(message_text(c.fact))
        }
        return answers_first(ranked, chatter, floor=config.chatter_floor), later

    def _results(
        self,
        request: SearchRequest,
        ranked: list[RankedCandidate],
        standing: _Standing,
        later: Mapping[str, Fact],
    ) -> list[SearchResult]:
        """One result per statement: a message with the facts drawn from it, and any repeat of
        the same statement (the same normalised text, said again elsewhere); ``top_k`` of them,
        each with its standing and the later statements that may have changed it."""
        config = request.config
        if config.group_by_source:
            groups = group_by_source(ranked, config.related_weight)
        else:
            groups = [
                SourceGroup(c.score, c, ())
                for c in limit_per_message(ranked, config.max_per_message)
            ]
        kept: list[tuple[SourceGroup, list[Fact]]] = []
        seen: dict[str, int] = {}
        for group in groups:
            if request.min_score is not None and group.score < request.min_score:
                continue
            form = normal_form(message_text(group.best.fact))
            if form in seen:  # said again: one result, with the repeat as a source
                kept[seen[form]][1].append(group.best.fact)
            elif len(kept) < request.top_k:
                seen[form] = len(kept)
                kept.append((group, []))
        # Every field is valid already (records as stored, parts as fused): assembled, not
        # validated again (validation re-checked each record's scope, for every result).
        return [
            assembled(
                SearchResult,
                {
                    "fact": group.best.fact,
                    "score": group.score,
                    "parts": group.best.parts,
                    "related": tuple(other.fact for other in group.others),
                    "standing": standing.of(group.best.fact),
                    "changes": standing.changes_of(group),
                    "rested_on": standing.rested_on_of(group),
                    "repeats": tuple(repeats),
                    "later": _later_of(group, later),
                },
            )
            for group, repeats in kept
        ]

    def _mark_read(
        self, request: SearchRequest, results: Sequence[SearchResult], now: datetime
    ) -> None:
        """Stamp the results' own records as read (a search of the past stamps nothing)."""
        if not results or not request.config.track_access or request.as_of is not None:
            return
        own = [
            fact.id
            for result in results
            for fact in (result.fact, *result.related)
            if fact.project_id == self.port.project_id
        ]
        self.port.record_access(own, now)


def _later_of(group: SourceGroup, later: Mapping[str, Fact]) -> tuple[Fact, ...]:
    """The later statements that may have changed what a result's records say (not its own)."""
    if not later:
        return ()
    own = {group.best.fact.id, *(other.fact.id for other in group.others)}
    found = {
        statement.id: statement
        for record in own
        if (statement := later.get(record)) is not None and statement.id not in own
    }
    return tuple(found.values())
