"""The embedder protocol: text in, unit-length float32 vectors out.

Documents and queries are embedded by separate methods because some models treat them differently
(instruction prefixes, asymmetric encoders); symmetric models such as MiniLM use one path for both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["Embedder", "Vector", "Vectors", "normalize_rows"]

Vector = npt.NDArray[np.float32]
"""One embedding, shape ``(dimension,)``."""
Vectors = npt.NDArray[np.float32]
"""A batch of embeddings, shape ``(n, dimension)``."""


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors of a fixed dimension.

    Implementations must be safe to call from several tasks; heavy work should run off the event
    loop (``asyncio.to_thread``).
    """

    @property
    def dimension(self) -> int:
        """Length of every vector this embedder returns."""
        ...

    @property
    def name(self) -> str:
        """A stable model identifier, recorded beside stored vectors."""
        ...

    async def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed texts to be stored; returns shape ``(len(texts), dimension)``."""
        ...

    async def embed_query(self, text: str) -> Vector:
        """Embed one search query; returns shape ``(dimension,)``."""
        ...


def normalize_rows(matrix: npt.NDArray[np.floating]) -> Vectors:
    """L2-normalise each row; all-zero rows stay zero."""
    array = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(array, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    normalized: Vectors = (array / norms).astype(np.float32, copy=False)
    return normalized
