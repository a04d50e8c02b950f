"""The in-memory episode store: a real implementation (BM25 keywords, cosine), nothing persists."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from sagewai.core._embedder import Embedder, Vector
from sagewai.core._episode_records import Episode, EpisodeFilter, episode_text
from sagewai.core._text import keyword_terms
from sagewai.stores.base._episodes import EpisodeStoreBase
from sagewai.stores.base._summary import EpisodeSummarizer

__all__ = ["EpisodeStore", "InMemoryEpisodeStore", "bm25"]

_K1 = 1.2
_B = 0.75


def bm25(
    terms: Sequence[str], documents: dict[str, Counter[str]], *, require_all: bool = False
) -> list[tuple[str, float]]:
    """Okapi BM25 scores of ``documents`` (id to term counts) for ``terms``, best first.

    Example:
        >>> from collections import Counter
        >>> [(i, round(s, 3)) for i, s in bm25(["tea"], {"a": Counter(["tea", "tea"]),
        ...                                              "b": Counter(["coffee"])})]
        [('a', 0.871)]
    """
    if not documents or not terms:
        return []
    wanted = list(dict.fromkeys(terms))
    average = sum(sum(c.values()) for c in documents.values()) / len(documents)
    frequency = {t: sum(1 for c in documents.values() if t in c) for t in wanted}
    scores: list[tuple[str, float]] = []
    for doc_id, counts in documents.items():
        present = [t for t in wanted if t in counts]
        if not present or (require_all and len(present) < len(wanted)):
            continue
        length = sum(counts.values())
        score = 0.0
        for term in present:
            idf = math.log(1 + (len(documents) - frequency[term] + 0.5) / (frequency[term] + 0.5))
            tf = counts[term]
            score += idf * tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * length / max(average, 1)))
        scores.append((doc_id, score))
    scores.sort(key=lambda item: (-item[1], item[0]))
    return scores


class InMemoryEpisodeStore(EpisodeStoreBase):
    """Episodes held in process memory; for tests, notebooks and short-lived agents.

    Args:
        embedder: Embeds summaries and queries (the offline MiniLM model when omitted).
        summarizer: Writes summaries (extractive when omitted).
        candidates: How many keyword hits and recent episodes a search scores.

    Example:
        >>> import asyncio
        >>> from sagewai.testing import FakeEmbedder
        >>> async def demo() -> int:
        ...     store = EpisodeStore(embedder=FakeEmbedder())
        ...     await store.save_episode("s1", ["We chose PostgreSQL for billing"], project_id="p")
        ...     return await store.delete_session("s1", project_id="p")
        >>> asyncio.run(demo())
        1
    """

    def __init__(
        self,
        *,
        embedder: Embedder | None = None,
        summarizer: EpisodeSummarizer | None = None,
        candidates: int = 200,
    ) -> None:
        super().__init__(embedder=embedder, summarizer=summarizer, candidates=candidates)
        self._episodes: dict[str, Episode] = {}
        self._vectors_by_id: dict[str, Vector] = {}
        self._terms: dict[str, Counter[str]] = {}
        self._order: dict[str, int] = {}
        self._clock = 0

    async def _put(self, episode: Episode, vector: Vector) -> None:
        self._clock += 1
        self._episodes[episode.id] = episode
        self._vectors_by_id[episode.id] = vector
        self._terms[episode.id] = Counter(keyword_terms(episode_text(episode), limit=1_000_000))
        self._order.setdefault(episode.id, self._clock)

    async def _load(self, ids: Sequence[str], where: EpisodeFilter) -> list[Episode]:
        found = (self._episodes.get(i) for i in dict.fromkeys(ids))
        return [e for e in found if e is not None and where.matches(e)]

    async def _keyword(
        self, terms: Sequence[str], where: EpisodeFilter, limit: int | None, require_all: bool
    ) -> list[tuple[str, float]]:
        documents = {i: self._terms[i] for i, e in self._episodes.items() if where.matches(e)}
        ranked = bm25(terms, documents, require_all=require_all)
        return ranked if limit is None else ranked[:limit]

    async def _recent(self, where: EpisodeFilter, limit: int) -> list[str]:
        matching = [e for e in self._episodes.values() if where.matches(e)]
        matching.sort(key=lambda e: (e.created_at, self._order[e.id]), reverse=True)
        return [e.id for e in matching[:limit]]

    async def _vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        return {i: self._vectors_by_id[i] for i in ids if i in self._vectors_by_id}

    async def _delete(self, where: EpisodeFilter, ids: Sequence[str] | None = None) -> int:
        chosen = self._episodes if ids is None else dict.fromkeys(ids)
        doomed = [
            i for i in chosen if (e := self._episodes.get(i)) is not None and where.matches(e)
        ]
        for episode_id in doomed:
            del self._episodes[episode_id]
            del self._vectors_by_id[episode_id]
            del self._terms[episode_id]
            del self._order[episode_id]
        return len(doomed)


EpisodeStore = InMemoryEpisodeStore
"""The seed's name of :class:`InMemoryEpisodeStore` (DESIGN: ``EpisodeStore()``)."""
