"""Builders shared by the tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from sagewai.context._engine import ContextEngine
from sagewai.embeddings import Embedder, MiniLMEmbedder
from sagewai.stores import PostgresMetadataStore
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


def postgres_of(request: pytest.FixtureRequest) -> tuple[str, str] | None:
    """``(dsn, schema)`` of the test's PostgreSQL when the fixture's param is ``"postgres"``
    (fails under CI=true without PostgreSQL, skips on a laptop), else ``None``."""
    if request.param != "postgres":
        return None
    return request.getfixturevalue("postgres_dsn"), request.getfixturevalue("postgres_schema")


def engine_on(
    kind: str,
    folder: Path,
    *,
    project_id: str = "p",
    embedder: Embedder | None = None,
    postgres: tuple[str, str] | None = None,
) -> ContextEngine:
    """The same project on one backend: ``"memory"``, ``"local"`` (the embedded folder at
    ``folder``) or ``"postgres"`` (metadata in ``postgres``'s ``(dsn, schema)``, vectors in
    memory). The default embedder is each backend's own (MiniLM on PostgreSQL)."""
    if kind == "memory":
        return ContextEngine.in_memory(project_id=project_id, embedder=embedder)
    if kind == "local":
        return ContextEngine.local(folder, project_id=project_id, embedder=embedder)
    assert postgres is not None, "a PostgreSQL engine needs (dsn, schema)"
    dsn, schema = postgres
    embedder = embedder if embedder is not None else MiniLMEmbedder()
    return ContextEngine(
        metadata_store=PostgresMetadataStore(dsn, schema=schema),
        vector_store=InMemoryVectorStore(embedder.dimension),
        embedder=embedder,
        project_id=project_id,
    )


@pytest.fixture(params=["memory", "local", "postgres"])
def every_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], ContextEngine]:
    """How to make an engine in memory, in the embedded folder and on PostgreSQL (fake
    embedder); PostgreSQL is looked for here, outside the event loop."""
    postgres = postgres_of(request)
    return lambda: engine_on(
        request.param, tmp_path / "m", embedder=FakeEmbedder(), postgres=postgres
    )


@pytest.fixture
async def engine_on_every_backend(
    every_backend: Callable[[], ContextEngine],
) -> AsyncIterator[ContextEngine]:
    """A migrated engine of :func:`every_backend`; a suite takes it under its own name
    (``engine = engine_on_every_backend``) and imports ``every_backend`` beside it."""
    ctx = every_backend()
    async with ctx:
        await ctx.migrate()
        yield ctx
