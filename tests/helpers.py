"""Builders shared by the tests."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from types import ModuleType

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


BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def load_benchmark(name: str) -> ModuleType:
    """Import ``benchmarks/<name>.py`` as module ``name`` (its folder on the path, for its
    own imports of the other benchmark modules)."""
    sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
