"""A deterministic embedder for tests: no model, no download, stable across runs and machines.

Each word is hashed to a fixed random direction; a text's vector is the normalised sum of its
words' directions (plus character trigrams, lightly weighted). Texts that share words are close,
so retrieval tests behave like retrieval, and the same text always gives the same vector.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from sagewai.core._embedder import Vector, Vectors, normalize_rows
from sagewai.core._text import keyword_terms

__all__ = ["FakeEmbedder"]


class FakeEmbedder:
    """A bag-of-words hashing embedder implementing :class:`~sagewai.embeddings.Embedder`.

    Args:
        dimension: Vector length (default 64: small and fast).

    Example:
        >>> import asyncio
        >>> embedder = FakeEmbedder()
        >>> asyncio.run(embedder.embed_query("hello world")).shape
        (64,)
    """

    def __init__(self, dimension: int = 64) -> None:
        if dimension < 8:
            raise ValueError("dimension must be at least 8")
        self._dimension = dimension
        self._cache: dict[str, Vector] = {}
        self.calls = 0
        """How many texts were embedded (tests assert on batching with it)."""

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def name(self) -> str:
        return f"fake-hashing-{self._dimension}"

    def _direction(self, token: str) -> Vector:
        cached = self._cache.get(token)
        if cached is None:
            seed = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "big")
            cached = np.random.default_rng(seed).standard_normal(self._dimension).astype(np.float32)
            self._cache[token] = cached
        return cached

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        """Embed without an event loop (benchmarks and property tests use this)."""
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            self.calls += 1
            for term in keyword_terms(text, limit=512):
                out[row] += self._direction(term)
                padded = f"#{term}#"
                for i in range(len(padded) - 2):
                    out[row] += 0.15 * self._direction(padded[i : i + 3])
            if not out[row].any():
                out[row] += self._direction("\x00empty")
        return normalize_rows(out)

    async def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self.embed_sync(texts)

    async def embed_query(self, text: str) -> Vector:
        vector: Vector = self.embed_sync([text])[0]
        return vector
