"""Builders shared by the tests."""

from __future__ import annotations

from sagewai.context._engine import ContextEngine
from sagewai.stores.memory._metadata import InMemoryMetadataStore
from sagewai.stores.memory._vector import InMemoryVectorStore
from sagewai.testing import FakeEmbedder


def memory_engine(
    project_id: str = "p1",
    *,
    metadata: InMemoryMetadataStore | None = None,
    vectors: InMemoryVectorStore | None = None,
    org_id: str | None = None,
) -> ContextEngine:
    """An engine on in-memory stores with the fake embedder; stores may be shared."""
    embedder = FakeEmbedder()
    return ContextEngine(
        metadata_store=metadata or InMemoryMetadataStore(),
        vector_store=vectors or InMemoryVectorStore(embedder.dimension),
        project_id=project_id,
        embedder=embedder,
        org_id=org_id,
    )
