"""Episodes: whole sessions kept as they happened, found again by what was discussed.

Three stores share one behaviour (the base class holds it): :class:`InMemoryEpisodeStore`,
:class:`SqliteEpisodeStore` for the embedded default (``episodes.sqlite3`` in the engine's folder)
and :class:`PostgresEpisodeStore` on PostgreSQL. ``EpisodeStore`` and ``PersistentEpisodeStore``
are the same classes under the names of the original design (in memory and PostgreSQL). Give one
to ``ContextEngine(episode_store=...)`` and ``engine.forget(...)`` reaches it. The stores live
with every other backend in :mod:`sagewai.stores` (their contract in ``sagewai.stores.base``); this
package holds the episode records and summarizers, and names the stores too.

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

from sagewai.core._episode_records import Episode, EpisodeFilter
from sagewai.stores.base._episodes import EpisodeStoreBase, rank_episodes
from sagewai.stores.base._summary import (
    EpisodeSummarizer,
    ExtractiveSummarizer,
    LLMSummarizer,
    extractive_summary,
)
from sagewai.stores.memory._episodes import EpisodeStore, InMemoryEpisodeStore
from sagewai.stores.postgres._episodes import PersistentEpisodeStore, PostgresEpisodeStore
from sagewai.stores.sqlite._episodes import SqliteEpisodeStore

__all__ = [
    "Episode",
    "EpisodeFilter",
    "EpisodeStore",
    "EpisodeStoreBase",
    "EpisodeSummarizer",
    "ExtractiveSummarizer",
    "InMemoryEpisodeStore",
    "LLMSummarizer",
    "PersistentEpisodeStore",
    "PostgresEpisodeStore",
    "SqliteEpisodeStore",
    "extractive_summary",
    "rank_episodes",
]
