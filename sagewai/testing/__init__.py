"""Test doubles shipped with sagewai: a deterministic embedder and a scripted LLM.

Use them in your own tests so they run offline, fast and deterministically.
"""

from sagewai.testing.embeddings import FakeEmbedder
from sagewai.testing.llm import ScriptedLLM, ScriptExhaustedError

__all__ = ["FakeEmbedder", "ScriptExhaustedError", "ScriptedLLM"]
