"""An embedded folder of the previous release (points keyed by fact id alone) is upgraded on open.

The "old" folder is built the way the previous release left it: vectors written through the raw
backend under bare fact ids (and bare piece ids of a long record), the facts in the SQLite store,
and a manifest without the ``vector_ids`` marker.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from sagewai.context._engine import ContextEngine
from sagewai.core._pieces import piece_ids
from sagewai.core._queries import VectorFilter, VectorPayload, VectorRecord, WriteBatch
from sagewai.core._records import Fact
from sagewai.stores import SqliteMetadataStore
from sagewai.stores._local import MANIFEST, LocalLayout
from sagewai.stores._local_migration import migrate_vector_ids
from sagewai.stores.qdrant._edge import QdrantEdgeVectorStore
from sagewai.testing import FakeEmbedder

pytest.importorskip("qdrant_edge")

SEP = "\x1f"
LONG = " ".join(f"Sentence {n} is about the harbour crane number {n}." for n in range(120))
EMBEDDER = FakeEmbedder()


def build(project_id: str, content: str, fact_id: str) -> Fact:
    return ContextEngine.in_memory(project_id=project_id, embedder=EMBEDDER).port.build_fact(
        content, fact_id=fact_id
    )


FACTS = [
    build("alpha", "Alice prefers green tea", "tea"),
    build("alpha", "The deploy runs on Fridays", "deploy"),
    build("alpha", "Carol keeps the spare keys", "keys"),
    build("beta", "Bob drives a red truck", "truck"),
    build("beta", LONG, "crane"),
]
NO_VECTOR = build("beta", "Dave has no vector at all", "ghost")


def old_ids(fact: Fact) -> list[str]:
    return [fact.id, *piece_ids(fact.id, fact.content)]


def new_ids(fact: Fact) -> list[str]:
    return [fact.project_id + SEP + old for old in old_ids(fact)]


async def make_old_folder(folder: Path) -> None:
    async with SqliteMetadataStore(folder / "metadata.sqlite3") as metadata:
        for project in ("alpha", "beta"):
            mine = [f for f in [*FACTS, NO_VECTOR] if f.project_id == project]
            await metadata.apply(WriteBatch(project_id=project, upserts=mine))
    records = []
    for fact in FACTS:
        texts = [fact.content, *(LONG[i : i + 900] for i in range(len(old_ids(fact)) - 1))]
        vectors = await EMBEDDER.embed_documents(texts)
        records += [
            VectorRecord(old, vector, VectorPayload.of(fact))
            for old, vector in zip(old_ids(fact), vectors, strict=True)
        ]
    async with QdrantEdgeVectorStore(folder / "vectors", dimension=EMBEDDER.dimension) as store:
        await store.upsert(records)
    manifest = {"format": 1, "embedder": EMBEDDER.name, "dimension": EMBEDDER.dimension}
    (folder / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")


async def raw_points(folder: Path) -> tuple[set[str], int]:
    """(which of the old and new ids hold a vector, how many points the store has)."""
    every = [i for fact in [*FACTS, NO_VECTOR] for i in (*old_ids(fact), *new_ids(fact))]
    keys = tuple({fact.scope_key for fact in FACTS})
    async with QdrantEdgeVectorStore(folder / "vectors", dimension=EMBEDDER.dimension) as store:
        found = set(await store.get_vectors(every))
        total = await store.count(VectorFilter(scope_keys=keys, statuses=None))
    return found, total


def marked(folder: Path) -> bool:
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    return bool(manifest.get("vector_ids") == "project")


def local(folder: Path, project_id: str) -> ContextEngine:
    return ContextEngine.local(folder, project_id=project_id, embedder=EMBEDDER)


def migration_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "vector ids now carry" in r.getMessage()]


async def test_an_old_folder_is_rekeyed_on_open_and_its_vectors_are_found(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await make_old_folder(tmp_path)
    total_before = (await raw_points(tmp_path))[1]
    with caplog.at_level(logging.INFO, logger="sagewai.stores._local_migration"):
        async with local(tmp_path, "alpha") as alpha:
            results = await alpha.search("green tea")
            assert results[0].fact.id == "tea"
            assert results[0].parts.dense is not None, "the old vector was not found"
    assert migration_lines(caplog) == [
        "vector ids now carry the project: 2 projects, 6 facts, "
        f"{total_before} points moved, 0 already moved, 1 facts without a vector (skipped)"
    ]
    assert marked(tmp_path)
    found, total = await raw_points(tmp_path)
    assert found == {i for fact in FACTS for i in new_ids(fact)}, "old ids left or new ids missing"
    assert total == total_before
    async with local(tmp_path, "beta") as beta:
        results = await beta.search("harbour crane number 7")
        assert results[0].fact.id == "crane"
        assert results[0].parts.dense is not None


async def test_delete_and_forget_remove_migrated_points(tmp_path: Path) -> None:
    await make_old_folder(tmp_path)
    async with local(tmp_path, "alpha") as alpha:
        await alpha.delete("tea")
        await alpha.forget(everything=True)
    async with local(tmp_path, "beta") as beta:
        await beta.delete("crane")
    found, total = await raw_points(tmp_path)
    assert found == set(new_ids(FACTS[3])), "a deleted fact kept a vector"
    assert total == 1


async def test_a_second_open_changes_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await make_old_folder(tmp_path)
    async with local(tmp_path, "alpha"):
        pass
    after_first = await raw_points(tmp_path)
    manifest = (tmp_path / MANIFEST).read_text(encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="sagewai.stores._local_migration"):
        async with local(tmp_path, "beta") as beta:
            assert (await beta.search("red truck"))[0].parts.dense is not None
    assert migration_lines(caplog) == []
    assert await raw_points(tmp_path) == after_first
    assert (tmp_path / MANIFEST).read_text(encoding="utf-8") == manifest


async def test_an_interrupted_migration_completes_on_the_next_open(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await make_old_folder(tmp_path)
    total = (await raw_points(tmp_path))[1]
    # Stopped after two batches of one fact each; and one more fact's point written under its
    # new id but not yet deleted under its old one (a stop between the two writes).
    async with (
        SqliteMetadataStore(tmp_path / "metadata.sqlite3") as metadata,
        QdrantEdgeVectorStore(tmp_path / "vectors", dimension=EMBEDDER.dimension) as store,
    ):
        half = await migrate_vector_ids(metadata, store, batch_size=1, max_batches=2)
        assert (half.facts, half.moved, half.missing) == (2, 2, 0)
        truck = FACTS[3]
        vector = (await store.get_vectors([truck.id]))[truck.id]
        await store.upsert([VectorRecord(new_ids(truck)[0], vector, VectorPayload.of(truck))])
    assert not marked(tmp_path)
    with caplog.at_level(logging.INFO, logger="sagewai.stores._local_migration"):
        async with local(tmp_path, "beta") as beta:
            assert (await beta.search("red truck"))[0].parts.dense is not None
    assert migration_lines(caplog) == [
        "vector ids now carry the project: 2 projects, 6 facts, "
        f"{total - 2} points moved, 2 already moved, 1 facts without a vector (skipped)"
    ]
    assert marked(tmp_path)
    found, _ = await raw_points(tmp_path)
    assert found == {i for fact in FACTS for i in new_ids(fact)}


async def test_a_new_folder_is_created_with_the_marker(tmp_path: Path) -> None:
    async with local(tmp_path, "alpha") as alpha:
        await alpha.add("Alice prefers green tea")
    assert marked(tmp_path)
    assert LocalLayout(tmp_path).metadata_path.exists()
