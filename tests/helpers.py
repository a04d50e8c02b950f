"""Builders shared by the tests."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

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


async def add_dated(ctx: ContextEngine, texts: Sequence[str], now: datetime) -> None:
    """Add ``texts`` as facts ``f0000``, ``f0001``, ... created one day apart, the last a day
    before ``now`` (so scan order is the order of ``texts``)."""
    await ctx.add_many(
        {
            "content": text,
            "created_at": now - timedelta(days=len(texts) - i),
            "fact_id": f"f{i:04d}",
        }
        for i, text in enumerate(texts)
    )
