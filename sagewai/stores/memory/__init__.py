"""In-memory backends of every role: the reference semantics, for tests and short-lived agents.

Each is a real implementation (not a mock) that the conformance suites hold every other backend to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.stores.memory.episodes import EpisodeStore, InMemoryEpisodeStore
    from sagewai.stores.memory.graph import InMemoryGraphStore
    from sagewai.stores.memory.metadata import InMemoryMetadataStore
    from sagewai.stores.memory.vector import InMemoryVectorStore

__all__ = [
    "EpisodeStore",
    "InMemoryEpisodeStore",
    "InMemoryGraphStore",
    "InMemoryMetadataStore",
    "InMemoryVectorStore",
]

_LAZY = {
    "InMemoryMetadataStore": "sagewai.stores.memory.metadata",
    "InMemoryVectorStore": "sagewai.stores.memory.vector",
    "InMemoryGraphStore": "sagewai.stores.memory.graph",
    "EpisodeStore": "sagewai.stores.memory.episodes",
    "InMemoryEpisodeStore": "sagewai.stores.memory.episodes",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
