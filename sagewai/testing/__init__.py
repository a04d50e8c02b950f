"""Test doubles and conformance suites shipped with sagewai.

Use the doubles (a deterministic embedder, a scripted LLM, a recording NebulaGraph session) in
your own tests so they run offline, fast and deterministically; subclass a conformance suite
(:mod:`sagewai.testing.conformance`, which needs pytest) to hold a store backend of your own to
the contract every sagewai backend passes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports
from sagewai.embeddings._fake import FakeEmbedder
from sagewai.testing._llm import ScriptedLLM, ScriptExhaustedError

if TYPE_CHECKING:
    from sagewai.testing._agent import memory_block, memory_lines, offline_stand_in
    from sagewai.testing._nebula import FakeNebulaSession
    from sagewai.testing.conformance import (
        EpisodeStoreConformance,
        GraphStoreConformance,
        MetadataStoreConformance,
        VectorStoreConformance,
    )

__all__ = [
    "EpisodeStoreConformance",
    "FakeEmbedder",
    "FakeNebulaSession",
    "GraphStoreConformance",
    "MetadataStoreConformance",
    "ScriptExhaustedError",
    "ScriptedLLM",
    "VectorStoreConformance",
    "memory_block",
    "memory_lines",
    "offline_stand_in",
]

_LAZY = {
    "EpisodeStoreConformance": "sagewai.testing.conformance._episodes",
    "FakeNebulaSession": "sagewai.testing._nebula",
    "GraphStoreConformance": "sagewai.testing.conformance._graph",
    "MetadataStoreConformance": "sagewai.testing.conformance._metadata",
    "VectorStoreConformance": "sagewai.testing.conformance._vector",
    "memory_block": "sagewai.testing._agent",
    "memory_lines": "sagewai.testing._agent",
    "offline_stand_in": "sagewai.testing._agent",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
