"""Test doubles shipped with sagewai: a deterministic embedder and a scripted LLM.

Use them in your own tests so they run offline, fast and deterministically.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports
from sagewai.embeddings.fake import FakeEmbedder
from sagewai.testing.llm import ScriptedLLM, ScriptExhaustedError

if TYPE_CHECKING:
    from sagewai.testing.agent import offline_stand_in

__all__ = ["FakeEmbedder", "ScriptExhaustedError", "ScriptedLLM", "offline_stand_in"]

__getattr__, __dir__ = lazy_exports(
    __name__, {"offline_stand_in": "sagewai.testing.agent"}, __all__
)
