"""Episodes: whole sessions kept as they happened, found again by what was discussed.

Three stores share one behaviour (the base class holds it): :class:`InMemoryEpisodeStore`,
:class:`SqliteEpisodeStore` for the embedded default (``episodes.sqlite3`` in the engine's folder)
and :class:`PostgresEpisodeStore` on PostgreSQL. ``EpisodeStore`` and ``PersistentEpisodeStore``
are the same classes under the names of the original design (in memory and PostgreSQL). Give one
to ``ContextEngine(episode_store=...)`` and ``engine.forget(...)`` reaches it.

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

from sagewai.context.episodes.base import EpisodeStoreBase, rank_episodes
from sagewai.context.episodes.memory import EpisodeStore
from sagewai.context.episodes.postgres import PersistentEpisodeStore
from sagewai.context.episodes.sqlite import SqliteEpisodeStore
from sagewai.context.episodes.summary import (
    EpisodeSummarizer,
    ExtractiveSummarizer,
    LLMSummarizer,
    extractive_summary,
)
from sagewai.core.episode_records import Episode, EpisodeFilter

InMemoryEpisodeStore = EpisodeStore
"""Episodes in memory: the descriptive name of :class:`EpisodeStore`."""
PostgresEpisodeStore = PersistentEpisodeStore
"""Episodes on PostgreSQL: the descriptive name of :class:`PersistentEpisodeStore`."""

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
