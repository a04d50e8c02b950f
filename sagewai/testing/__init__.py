"""Test doubles shipped with sagewai: a deterministic embedder, a scripted LLM, a recording
NebulaGraph session and the agent's memory-block readers.

Use them in your own tests so they run offline, fast and deterministically. To hold a store
backend of your own to the contract every sagewai backend passes, subclass a suite of
:mod:`sagewai.testing.conformance` (it needs pytest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.embeddings._fake import FakeEmbedder
    from sagewai.testing._agent import memory_block, memory_lines, offline_stand_in
    from sagewai.testing._crewai import ScriptedCrewLLM
    from sagewai.testing._llm import ScriptedLLM, ScriptExhaustedError
    from sagewai.testing._nebula import FakeNebulaSession

__all__ = [
    "FakeEmbedder",
    "FakeNebulaSession",
    "ScriptExhaustedError",
    "ScriptedCrewLLM",
    "ScriptedLLM",
    "memory_block",
    "memory_lines",
    "offline_stand_in",
]

_LAZY = {
    "FakeEmbedder": "sagewai.embeddings._fake",
    "FakeNebulaSession": "sagewai.testing._nebula",
    "ScriptExhaustedError": "sagewai.testing._llm",
    "ScriptedCrewLLM": "sagewai.testing._crewai",
    "ScriptedLLM": "sagewai.testing._llm",
    "memory_block": "sagewai.testing._agent",
    "memory_lines": "sagewai.testing._agent",
    "offline_stand_in": "sagewai.testing._agent",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
