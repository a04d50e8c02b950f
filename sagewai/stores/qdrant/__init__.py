"""The Qdrant vector backends: the embedded engine and ``qdrant-client`` (server or local).

:class:`QdrantEdgeVectorStore` runs Qdrant's engine in-process (``qdrant-edge-py``);
:class:`QdrantVectorStore` talks to a Qdrant server, or to ``qdrant-client``'s local mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagewai._lazy import lazy_exports

if TYPE_CHECKING:
    from sagewai.stores.qdrant._edge import QdrantEdgeVectorStore
    from sagewai.stores.qdrant._server import QdrantVectorStore

__all__ = [
    "QdrantEdgeVectorStore",
    "QdrantVectorStore",
]

_LAZY = {
    "QdrantEdgeVectorStore": "sagewai.stores.qdrant._edge",
    "QdrantVectorStore": "sagewai.stores.qdrant._server",
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
