"""Embedders: the offline MiniLM default, sentence-transformers and litellm adapters."""

from sagewai.embeddings.base import Embedder, Vector, Vectors, normalize_rows

__all__ = ["Embedder", "Vector", "Vectors", "normalize_rows"]
