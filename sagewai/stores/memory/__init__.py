"""In-memory backends of every role: the reference semantics, for tests and short-lived agents.

Each is a real implementation (not a mock) that the conformance suites hold every other backend to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.stores.memory._episodes import EpisodeStore, InMemoryEpisodeStore
    from sagewai.stores.memory._graph import InMemoryGraphStore
    from sagewai.stores.memory._metadata import InMemoryMetadataStore
    from sagewai.stores.memory._vector import InMemoryVectorStore

__all__ = [
    "EpisodeStore",
    "InMemoryEpisodeStore",
    "InMemoryGraphStore",
    "InMemoryMetadataStore",
    "InMemoryVectorStore",
]

_LAZY = {
    "InMemoryMetadataStore": "sagewai.stores.memory._metadata",
    "InMemoryVectorStore": "sagewai.stores.memory._vector",
    "InMemoryGraphStore": "sagewai.stores.memory._graph",
    "EpisodeStore": "sagewai.stores.memory._episodes",
    "InMemoryEpisodeStore": "sagewai.stores.memory._episodes",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
