"""EpisodeAccess: the engine's door to its saved sessions (``ctx.episodes``).

Why an object of its own: the agent saves and resumes sessions, the bridge keeps a conversation
as an episode, archives export and import them, and the agent's recall reads them. Each method
here is bound to the engine's project and opens the stores first, so no subsystem calls an
episode store's write method, and the engine itself keeps a short list of members.

Example:
    >>> import asyncio
    >>> from sagewai import ContextEngine
    >>> from sagewai.context.episodes import EpisodeStore
    >>> from sagewai.testing import FakeEmbedder
    >>> async def demo() -> list[str]:
    ...     embedder = FakeEmbedder()
    ...     async with ContextEngine.in_memory(embedder=embedder) as ctx:
    ...         ctx.episodes.attach(EpisodeStore(embedder=embedder))
    ...         await ctx.episodes.save("s1", [{"role": "user", "content": "We launch in May"}])
    ...         return [e.session_id for e in await ctx.episodes.search("launch")]
    >>> asyncio.run(demo())
    ['s1']
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pydantic import JsonValue

from sagewai.errors import ConfigurationError, InvalidInputError

if TYPE_CHECKING:
    from sagewai.context._access import StoreAccess
    from sagewai.core._conversation import ChatMessage, MessageLike
    from sagewai.core._episode_records import Episode
    from sagewai.stores.base._episodes import EpisodeStoreBase

__all__ = ["EpisodeAccess"]


class EpisodeAccess:
    """Save, find and restore a project's episodes (see the module)."""

    def __init__(self, access: StoreAccess) -> None:
        self._access = access

    @property
    def store(self) -> EpisodeStoreBase | None:
        """The engine's episode store (``None`` until one is given or attached)."""
        return self._access.episode_store

    @property
    def enabled(self) -> bool:
        """Whether the engine has an episode store."""
        return self._access.episode_store is not None

    def attach(self, store: EpisodeStoreBase) -> None:
        """Give the engine its episode store, so ``forget`` reaches the saved sessions.

        Attaching the store the engine already has does nothing.

        Raises:
            InvalidInputError: ``store`` is not an episode store.
            ConfigurationError: the engine has another episode store already (a second one
                would be missed by ``forget``).
        """
        from sagewai.stores.base._episodes import EpisodeStoreBase

        if not isinstance(store, EpisodeStoreBase):
            raise InvalidInputError(f"not an episode store: {type(store).__name__}")
        self._access.attach_episodes(store)

    def _store(self) -> EpisodeStoreBase:
        store = self._access.episode_store
        if store is None:
            raise ConfigurationError(
                "this engine has no episode store: open it with ContextEngine.local(...), or "
                "give it one (ContextEngine(..., episode_store=...) or ctx.episodes.attach)"
            )
        return store

    def check(
        self,
        session_id: str,
        messages: Sequence[MessageLike],
        metadata: Mapping[str, JsonValue] | None = None,
        *,
        user_id: str | None = None,
    ) -> tuple[tuple[ChatMessage, ...], dict[str, JsonValue]]:
        """Validate what :meth:`save` would store, without storing it.

        Raises:
            ConfigurationError: no episode store.
            InvalidInputError: empty or oversized session, malformed messages or metadata.
        """
        return self._store().check_episode(
            session_id, messages, metadata, project_id=self._access.project_id, user_id=user_id
        )

    async def save(
        self,
        session_id: str,
        messages: Sequence[MessageLike],
        metadata: Mapping[str, JsonValue] | None = None,
        *,
        user_id: str | None = None,
        episode_id: str | None = None,
    ) -> str:
        """Keep a whole session of this project as an episode and return its id.

        Raises:
            ConfigurationError: no episode store.
            InvalidInputError: empty or oversized session, malformed messages or metadata.
        """
        store = self._store()
        await self._access.open()
        return await store.save_episode(
            session_id,
            messages,
            metadata,
            project_id=self._access.project_id,
            user_id=user_id,
            episode_id=episode_id,
        )

    async def restore(self, episode: Episode) -> None:
        """Store an episode record of this project as it is (an archive's, a backup's).

        Raises:
            ConfigurationError: no episode store.
            InvalidInputError: the episode belongs to another project.
        """
        if episode.project_id != self._access.project_id:
            raise InvalidInputError(
                f"this engine keeps project {self._access.project_id!r}, not {episode.project_id!r}"
            )
        store = self._store()
        await self._access.open()
        await store.put_episode(episode)

    async def get(self, episode_id: str) -> Episode | None:
        """This project's episode with this id, or ``None`` (also with no episode store)."""
        store = self._access.episode_store
        if store is None:
            return None
        await self._access.open()
        return await store.get_episode(episode_id, project_id=self._access.project_id)

    async def list(
        self,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        limit: int = 100,
    ) -> builtins.list[Episode]:
        """This project's most recent episodes matching the filters, newest first."""
        store = self._access.episode_store
        if store is None:
            return []
        await self._access.open()
        return await store.list_episodes(
            project_id=self._access.project_id, session_id=session_id, user_id=user_id, limit=limit
        )

    async def search(
        self, query: str, *, limit: int = 10, user_id: str | None = None
    ) -> builtins.list[Episode]:
        """This project's episodes relevant to ``query``, best first (``[]``: no store)."""
        store = self._access.episode_store
        if store is None:
            return []
        await self._access.open()
        return await store.search_episodes(
            query, project_id=self._access.project_id, limit=limit, user_id=user_id
        )

    def __repr__(self) -> str:
        return f"EpisodeAccess(project_id={self._access.project_id!r}, enabled={self.enabled})"
