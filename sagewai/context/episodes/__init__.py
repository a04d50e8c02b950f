"""Episodes: whole sessions kept as they happened, found again by what was discussed.

The seed's names live here: :class:`EpisodeStore` (in memory) and :class:`PersistentEpisodeStore`
(PostgreSQL), with the :class:`Episode` record. The same stores, and the SQLite one of the
embedded default (``episodes.sqlite3`` in the engine's folder), are in :mod:`sagewai.stores` under
their descriptive names (``InMemoryEpisodeStore``, ``PostgresEpisodeStore``,
``SqliteEpisodeStore``); their contract is :class:`~sagewai.stores.EpisodeStoreBase`. This package
also holds what an episode's summary is made with. Give a store to
``ContextEngine(episode_store=...)`` (or ``ctx.episodes.attach``) and ``forget`` reaches it.

Example:
    >>> import asyncio
    >>> from sagewai.context.episodes import EpisodeStore
    >>> from sagewai.testing import FakeEmbedder
    >>> async def demo() -> list[str]:
    ...     store = EpisodeStore(embedder=FakeEmbedder())
    ...     await store.save_episode("s1", [{"role": "user", "content": "Our launch is in May"}])
    ...     return [e.session_id for e in await store.search_episodes("launch date")]
    >>> asyncio.run(demo())
    ['s1']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.core._episode_records import Episode, EpisodeFilter
    from sagewai.stores.base._episodes import rank_episodes
    from sagewai.stores.base._summary import (
        EpisodeSummarizer,
        ExtractiveSummarizer,
        LLMSummarizer,
        extractive_summary,
    )
    from sagewai.stores.memory._episodes import EpisodeStore
    from sagewai.stores.postgres._episodes import PersistentEpisodeStore

__all__ = [
    "Episode",
    "EpisodeFilter",
    "EpisodeStore",
    "EpisodeSummarizer",
    "ExtractiveSummarizer",
    "LLMSummarizer",
    "PersistentEpisodeStore",
    "extractive_summary",
    "rank_episodes",
]

_LAZY = {
    "Episode": "sagewai.core._episode_records",
    "EpisodeFilter": "sagewai.core._episode_records",
    "EpisodeStore": "sagewai.stores.memory._episodes",
    "EpisodeSummarizer": "sagewai.stores.base._summary",
    "ExtractiveSummarizer": "sagewai.stores.base._summary",
    "LLMSummarizer": "sagewai.stores.base._summary",
    "PersistentEpisodeStore": "sagewai.stores.postgres._episodes",
    "extractive_summary": "sagewai.stores.base._summary",
    "rank_episodes": "sagewai.stores.base._episodes",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
