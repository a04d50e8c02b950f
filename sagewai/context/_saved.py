"""The engine's doors to its graph and its saved sessions (episodes).

Why a module of its own: the agent saves and resumes sessions, the bridge keeps a conversation
as an episode, archives export and import the graph and the episodes, and the agent's recall
reads both. They used to call the stores they found on the engine (``engine.episode_store``,
``engine.graph_store``); these methods are what they need, each bound to the engine's project
and opening the stores first, so that no subsystem calls a store's write method.
:class:`~sagewai.context._engine.ContextEngine` inherits them.

The graph builder is the one writer of the graph besides these methods: DESIGN's wiring hands it
the engine's project view (``ConversationGraphBuilder(graph_store=ctx.graph_store)``), which
binds every write to the project and validates every record.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pydantic import JsonValue

from sagewai.errors import ConfigurationError, InvalidInputError

if TYPE_CHECKING:
    from sagewai.core._conversation import ChatMessage, MessageLike
    from sagewai.core._episode_records import Episode
    from sagewai.core._graph_records import Entity, Relation
    from sagewai.stores.base._episodes import EpisodeStoreBase
    from sagewai.stores.base._graph import GraphWrite, ProjectGraph

__all__ = ["SavedRecords"]


class SavedRecords(ABC):
    """Episode and graph methods of :class:`~sagewai.context._engine.ContextEngine`."""

    project_id: str

    @property
    @abstractmethod
    def graph_store(self) -> ProjectGraph | None:
        """This project's view of the knowledge graph, or ``None``."""

    @property
    @abstractmethod
    def episode_store(self) -> EpisodeStoreBase | None:
        """The engine's episode store, or ``None``."""

    @abstractmethod
    async def open(self) -> None:
        """Open the stores (a no-op once open)."""

    # ------------------------------------------------------------------ episodes

    @property
    def keeps_episodes(self) -> bool:
        """Whether this engine has an episode store."""
        return self.episode_store is not None

    def _episodes(self) -> EpisodeStoreBase:
        store = self.episode_store
        if store is None:
            raise ConfigurationError(
                "this engine has no episode store: open it with ContextEngine.local(...), or "
                "give it one (ContextEngine(..., episode_store=...) or attach_episodes)"
            )
        return store

    def check_episode(
        self,
        session_id: str,
        messages: Sequence[MessageLike],
        metadata: Mapping[str, JsonValue] | None = None,
        *,
        user_id: str | None = None,
    ) -> tuple[tuple[ChatMessage, ...], dict[str, JsonValue]]:
        """Validate what :meth:`save_episode` would store, without storing it.

        Raises:
            ConfigurationError: no episode store.
            InvalidInputError: empty or oversized session, malformed messages or metadata.
        """
        return self._episodes().check_episode(
            session_id, messages, metadata, project_id=self.project_id, user_id=user_id
        )

    async def save_episode(
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
        store = self._episodes()
        await self.open()
        return await store.save_episode(
            session_id,
            messages,
            metadata,
            project_id=self.project_id,
            user_id=user_id,
            episode_id=episode_id,
        )

    async def restore_episode(self, episode: Episode) -> None:
        """Store an episode record of this project as it is (an archive's, a backup's).

        Raises:
            ConfigurationError: no episode store.
            InvalidInputError: the episode belongs to another project.
        """
        if episode.project_id != self.project_id:
            raise InvalidInputError(
                f"this engine keeps project {self.project_id!r}, not {episode.project_id!r}"
            )
        store = self._episodes()
        await self.open()
        await store.put_episode(episode)

    async def get_episode(self, episode_id: str) -> Episode | None:
        """This project's episode with this id, or ``None`` (also with no episode store)."""
        store = self.episode_store
        if store is None:
            return None
        await self.open()
        return await store.get_episode(episode_id, project_id=self.project_id)

    async def list_episodes(
        self,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        limit: int = 100,
    ) -> list[Episode]:
        """This project's most recent episodes matching the filters, newest first."""
        store = self.episode_store
        if store is None:
            return []
        await self.open()
        return await store.list_episodes(
            project_id=self.project_id, session_id=session_id, user_id=user_id, limit=limit
        )

    async def search_episodes(
        self, query: str, *, limit: int = 10, user_id: str | None = None
    ) -> list[Episode]:
        """This project's episodes relevant to ``query``, best first (``[]``: no store)."""
        store = self.episode_store
        if store is None:
            return []
        await self.open()
        return await store.search_episodes(
            query, project_id=self.project_id, limit=limit, user_id=user_id
        )

    # ------------------------------------------------------------------ the graph

    def _graph_view(self) -> ProjectGraph:
        graph = self.graph_store
        if graph is None:
            raise ConfigurationError("this engine has no graph store")
        return graph

    async def graph_entities(self, ids: Sequence[str] | None = None) -> list[Entity]:
        """This project's graph entities (those of ``ids``, or all); ``[]`` with no graph."""
        graph = self.graph_store
        if graph is None:
            return []
        await self.open()
        return await (graph.entities() if ids is None else graph.get_entities(ids))

    async def graph_relations(self) -> list[Relation]:
        """This project's graph relations; ``[]`` with no graph."""
        graph = self.graph_store
        if graph is None:
            return []
        await self.open()
        return await graph.relations()

    async def apply_graph(self, write: GraphWrite) -> None:
        """Write entities and relations into this project's graph, all or nothing.

        Raises:
            ConfigurationError: no graph store.
            InvalidInputError: a record fails validation (nothing is written).
        """
        graph = self._graph_view()
        await self.open()
        await graph.apply(write)
