"""The graph store conformance suite, run on every sagewai graph backend.

The suite itself ships as :class:`sagewai.testing.conformance.GraphStoreConformance`; each class
below gives it one backend: :class:`InMemoryGraphStore` (the reference), :class:`SqliteGraphStore`
(a file in a temporary folder), :class:`NebulaGraphStore` on :class:`FakeNebulaSession` (the
recording stand-in that answers in nebula3's result shapes) and, when ``NEBULA_ADDRESS`` is set
(``host:port``), on a real NebulaGraph cluster in a fresh space dropped afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from sagewai.stores import GraphStore, InMemoryGraphStore, NebulaGraphStore, SqliteGraphStore
from sagewai.testing.conformance import GraphStoreConformance
from sagewai.testing.conformance._graph import GraphStoreFactory
from sagewai.testing.conformance._support import async_fixture


class TestInMemoryGraphStore(GraphStoreConformance):
    @pytest.fixture
    def make_store(self) -> Callable[[], GraphStore]:
        return InMemoryGraphStore


class TestSqliteGraphStore(GraphStoreConformance):
    @pytest.fixture
    def make_store(self, tmp_path: Path) -> Callable[[], GraphStore]:
        return lambda: SqliteGraphStore(tmp_path / "graph.sqlite3")


class TestNebulaGraphStoreOnTheStandIn(GraphStoreConformance):
    @pytest.fixture
    def make_store(self) -> GraphStoreFactory:
        from sagewai.testing._nebula import FakeNebulaSession

        async def make() -> GraphStore:
            store = NebulaGraphStore(session=FakeNebulaSession(), retry_delay=0.0)
            await store.setup(wait_seconds=0)
            return store

        return make


@pytest.mark.skipif(not os.environ.get("NEBULA_ADDRESS"), reason="NEBULA_ADDRESS is not set")
class TestNebulaGraphStoreOnACluster(GraphStoreConformance):
    @async_fixture
    async def store(self) -> AsyncIterator[GraphStore]:
        space = f"sagewai_test_{uuid.uuid4().hex[:10]}"
        store = NebulaGraphStore(addresses=[os.environ["NEBULA_ADDRESS"]], space=space)
        await store.setup(partition_num=1, wait_seconds=90)
        try:
            yield store
        finally:
            await store.drop_space()
            await store.close()
