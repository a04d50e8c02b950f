"""Test doubles shipped with sagewai: a deterministic embedder and a scripted LLM.

Use them in your own tests so they run offline, fast and deterministically.
"""

from sagewai.testing.embeddings import FakeEmbedder

__all__ = ["FakeEmbedder"]
