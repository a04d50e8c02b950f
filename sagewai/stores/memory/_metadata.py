"""An in-memory metadata store: a real implementation (BM25 keyword search, atomic batches).

It keeps everything in dictionaries, so it is lost when the process ends; use the SQLite store for
an embedded store that persists. It passes the same conformance suite as the other backends.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime

from sagewai.core._queries import ChangeQuery, FactQuery, WriteBatch
from sagewai.core._records import Fact, FactChange, utcnow
from sagewai.core._scope import ContextScope
from sagewai.core._text import keyword_terms
from sagewai.errors import FactConflictError
from sagewai.stores.base._metadata import MetadataStore

__all__ = ["InMemoryMetadataStore"]

_K1 = 1.2
_B = 0.75


class InMemoryMetadataStore(MetadataStore):
    """Facts, audit rows and a BM25 inverted index held in process memory."""

    @property
    def persistent(self) -> bool:
        """Nothing outlives the process."""
        return False

    def __init__(self) -> None:
        super().__init__()
        self._facts: dict[str, Fact] = {}
        self._updated_at: dict[str, datetime] = {}
        self._changes: list[FactChange] = []
        self._postings: dict[str, dict[str, int]] = defaultdict(dict)
        self._lengths: dict[str, int] = {}

    def _index(self, fact: Fact) -> None:
        counts = Counter(keyword_terms(fact.content, limit=10_000))
        for term, n in counts.items():
            self._postings[term][fact.id] = n
        self._lengths[fact.id] = sum(counts.values())

    def _unindex(self, fact_id: str) -> None:
        old = self._facts.get(fact_id)
        if old is None:
            return
        for term in set(keyword_terms(old.content, limit=10_000)):
            postings = self._postings.get(term)
            if postings is not None:
                postings.pop(fact_id, None)
                if not postings:
                    del self._postings[term]
        self._lengths.pop(fact_id, None)

    async def apply(self, batch: WriteBatch) -> None:
        batch.validate()
        for upsert in batch.upserts:
            held = self._facts.get(upsert.id)
            if held is not None and held.project_id != batch.project_id:
                # An id another project holds is never taken over, nor skipped in silence.
                raise FactConflictError(upsert.id, in_project=False)
        now = utcnow()
        # Everything is validated above, so the mutations below cannot fail half-way.
        doomed = {
            fact_id
            for fact_id in batch.deletes
            if (fact := self._facts.get(fact_id)) is not None
            and fact.project_id == batch.project_id
        }
        for fact_id in doomed:
            self._unindex(fact_id)
            del self._facts[fact_id]
            del self._updated_at[fact_id]
        if doomed:
            self._changes = [c for c in self._changes if c.fact_id not in doomed]
        for fact in batch.upserts:
            existing = self._facts.get(fact.id)
            if existing is None or existing.content != fact.content:
                self._unindex(fact.id)
                self._facts[fact.id] = fact
                self._index(fact)
            else:
                self._facts[fact.id] = fact
            self._updated_at[fact.id] = now
        self._changes.extend(batch.changes)

    def _visible(self, project_id: str, fact: Fact) -> bool:
        return fact.project_id == project_id or fact.scope is ContextScope.ORG

    async def get(self, project_id: str, ids: Sequence[str]) -> list[Fact]:
        out = []
        for fact_id in dict.fromkeys(ids):
            fact = self._facts.get(fact_id)
            if fact is not None and self._visible(project_id, fact):
                out.append(fact)
        return out

    def _select(self, query: FactQuery) -> list[Fact]:
        candidates = (
            (self._facts[i] for i in query.ids if i in self._facts)
            if query.ids is not None
            else iter(self._facts.values())
        )
        selected = [
            fact
            for fact in candidates
            if query.matches(fact)
            and (query.updated_since is None or self._updated_at[fact.id] >= query.updated_since)
        ]
        selected.sort(key=lambda fact: (fact.created_at, fact.id))
        return selected

    async def query(self, query: FactQuery) -> list[Fact]:
        selected = self._select(query)
        if query.after is not None:
            selected = [f for f in selected if (f.created_at, f.id) > query.after]
        return selected[: query.limit] if query.limit is not None else selected

    async def count(self, query: FactQuery) -> int:
        return len(self._select(query))

    async def keyword_search(
        self, query: FactQuery, text: str, top_k: int
    ) -> list[tuple[str, float]]:
        terms = keyword_terms(text)
        if not terms or top_k <= 0 or not self._lengths:
            return []
        total = len(self._lengths)
        average = sum(self._lengths.values()) / total
        scores: dict[str, float] = defaultdict(float)
        for term in terms:
            postings = self._postings.get(term)
            if not postings:
                continue
            idf = math.log(1 + (total - len(postings) + 0.5) / (len(postings) + 0.5))
            for fact_id, tf in postings.items():
                norm = tf + _K1 * (1 - _B + _B * self._lengths[fact_id] / average)
                scores[fact_id] += idf * tf * (_K1 + 1) / norm
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        out: list[tuple[str, float]] = []
        for fact_id, score in ranked:
            fact = self._facts[fact_id]
            if query.matches(fact) and (
                query.updated_since is None or self._updated_at[fact_id] >= query.updated_since
            ):
                out.append((fact_id, score))
                if len(out) == top_k:
                    break
        return out

    async def changes(self, query: ChangeQuery) -> list[FactChange]:
        selected = [
            change
            for change in self._changes
            if change.project_id == query.project_id
            and (query.fact_id is None or change.fact_id == query.fact_id)
            and (query.run_id is None or change.run_id == query.run_id)
            and (query.since is None or change.at >= query.since)
        ]
        selected.sort(key=lambda change: change.at)
        return selected[: query.limit] if query.limit is not None else selected

    async def redact_changes(self, project_id: str, changes: Sequence[FactChange]) -> int:
        wanted = {change.id: change for change in changes if change.project_id == project_id}
        rewritten = 0
        for position, held in enumerate(self._changes):
            new = wanted.get(held.id)
            if new is not None and held.project_id == project_id:
                update = {"reason": new.reason, "before": new.before, "after": new.after}
                self._changes[position] = held.model_copy(update=update)
                rewritten += 1
        return rewritten

    async def touch(self, project_id: str, ids: Sequence[str], at: datetime) -> None:
        for fact_id in ids:
            fact = self._facts.get(fact_id)
            if fact is not None and fact.project_id == project_id:
                self._facts[fact_id] = fact.model_copy(update={"last_accessed_at": at})

    async def project_ids(self) -> list[str]:
        return sorted({fact.project_id for fact in self._facts.values()})

    async def delete_project(self, project_id: str) -> int:
        doomed = [i for i, f in self._facts.items() if f.project_id == project_id]
        await self.apply(WriteBatch(project_id=project_id, deletes=doomed))
        self._changes = [c for c in self._changes if c.project_id != project_id]
        self._state = {key: v for key, v in self._state.items() if key[0] != project_id}
        return len(doomed)
