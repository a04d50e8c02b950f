"""The SQLite vector store beyond the conformance suite: several stores (processes) on one file.

Two store objects on one file have two connections and two copies in memory, exactly as two
processes would (the multi-process test, ``tests/test_multiprocess.py``, runs real processes).
"""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from sagewai import ContextEngine
from sagewai.core._queries import VectorRecord
from sagewai.errors import ConfigurationError, InvalidInputError
from sagewai.stores import ProjectStores
from sagewai.stores.qdrant._edge import QdrantEdgeVectorStore
from sagewai.stores.sqlite._vectors import SqliteVectorStore
from sagewai.testing import FakeEmbedder
from sagewai.testing.conformance._vector import DIM, K_P1, K_U1, payload, unit, where


async def ids(store: SqliteVectorStore, *scopes: str, **fields: object) -> list[str]:
    return [hit.id for hit in await store.search(unit(1.0), 100, where(*scopes, **fields))]


async def test_every_change_of_one_store_reaches_the_next_read_of_another(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite3"
    async with SqliteVectorStore(path, DIM) as writer, SqliteVectorStore(path, DIM) as reader:
        assert await ids(reader) == []  # the reader's copy exists (and is empty) from here on
        await writer.upsert(
            [
                VectorRecord("a", unit(1.0), payload()),
                VectorRecord("b", unit(1.0, 0.5), payload()),
                VectorRecord("c", unit(0.0, 1.0), payload(K_U1)),
            ]
        )
        assert await ids(reader) == ["a", "b"]
        assert await reader.count(where(K_P1, K_U1)) == 3
        await writer.update_payloads({"a": payload(status="superseded"), "zz": payload()})
        assert await ids(reader) == ["b"]
        assert await ids(reader, statuses=("superseded",)) == ["a"]
        await writer.upsert([VectorRecord("b", unit(0.0, 1.0), payload(tags=("t",)))])
        [hit] = await reader.search(unit(0.0, 1.0), 1, where(tags_any=("t",)))
        assert hit.id == "b"
        assert hit.score == pytest.approx(1.0)
        await writer.delete(["b", "missing"])
        assert await ids(reader, statuses=None) == ["a"]
        assert await reader.get_vectors(["b"]) == {}
        # The reader writes too; the writer's copy (made now) sees both.
        await reader.upsert([VectorRecord("d", unit(1.0), payload(project_id="p2"))])
        assert await ids(writer, statuses=None) == ["a", "d"]
        await reader.delete_project("p2")
        assert await ids(writer, statuses=None) == ["a"]
        # A deleted point written again comes back, in both.
        await writer.upsert([VectorRecord("b", unit(1.0), payload())])
        assert await ids(reader) == ["b"]
        assert await ids(writer) == ["b"]


async def test_a_store_opened_later_reads_everything_and_sequence_numbers_never_repeat(
    tmp_path: Path,
) -> None:
    path = tmp_path / "vectors.sqlite3"
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((50, DIM)).astype(np.float32)
    async with SqliteVectorStore(path, DIM) as first:
        for start in range(0, 50, 10):
            await first.upsert(
                [VectorRecord(f"f{n}", vectors[n], payload()) for n in range(start, start + 10)]
            )
        await first.delete([f"f{n}" for n in range(0, 50, 5)])
    async with SqliteVectorStore(path, DIM) as later:
        assert await later.count(where()) == 40
        query = vectors[7] / np.linalg.norm(vectors[7])
        assert (await later.search(query, 1, where()))[0].id == "f7"
    with sqlite3.connect(path) as db:
        seqs = [row[0] for row in db.execute("SELECT seq FROM vectors ORDER BY seq")]
        (counter,) = db.execute("SELECT value FROM vector_state WHERE key = 'seq'").fetchone()
    assert len(seqs) == len(set(seqs)) == 50
    assert max(seqs) == counter == 60  # 50 writes, then 10 deletions with numbers of their own


async def test_a_file_of_another_dimension_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite3"
    async with SqliteVectorStore(path, DIM) as store:
        await store.upsert([VectorRecord("a", unit(1.0), payload())])
    with pytest.raises(ConfigurationError, match=f"holds {DIM}-d vectors"):
        await SqliteVectorStore(path, DIM * 2).open()
    async with SqliteVectorStore(path, DIM) as store:
        assert await store.count(where()) == 1


async def test_bad_input_is_refused_without_a_partial_write(tmp_path: Path) -> None:
    async with SqliteVectorStore(tmp_path / "v.sqlite3", DIM) as store:
        with pytest.raises(InvalidInputError, match="NaN"):
            await store.upsert(
                [
                    VectorRecord("good", unit(1.0), payload()),
                    VectorRecord("bad", unit(1.0), payload(created_at=math.nan)),
                ]
            )
        with pytest.raises(InvalidInputError, match="NaN"):
            await store.update_payloads({"good": payload(valid_to=math.nan)})
        assert await store.count(where(statuses=None)) == 0
    for bad in (0, -3, True, 2.5):
        with pytest.raises(InvalidInputError, match="dimension"):
            SqliteVectorStore(tmp_path / "w.sqlite3", bad)  # type: ignore[arg-type]


async def test_a_new_folder_keeps_its_vectors_in_sqlite_and_an_older_one_in_qdrant(
    tmp_path: Path,
) -> None:
    embedder = FakeEmbedder(16)
    new = ProjectStores.local(tmp_path / "new", embedder=embedder)
    assert isinstance(new.vectors, SqliteVectorStore)
    async with ContextEngine(stores=new, project_id="p") as ctx:
        await ctx.add("Alice prefers green tea")
    assert (tmp_path / "new" / "vectors.sqlite3").exists()
    assert not (tmp_path / "new" / "vectors").exists()
    # A folder written before vectors.sqlite3: its vectors stay in Qdrant's engine.
    (tmp_path / "old" / "vectors").mkdir(parents=True)
    old = ProjectStores.local(tmp_path / "old", embedder=embedder)
    assert isinstance(old.vectors, QdrantEdgeVectorStore)
    async with ContextEngine(stores=old, project_id="p") as ctx:
        await ctx.add("Bob prefers coffee")
        assert (await ctx.search("coffee", top_k=1))[0].fact.content == "Bob prefers coffee"
    assert not (tmp_path / "old" / "vectors.sqlite3").exists()


async def test_two_engines_on_one_folder_see_each_others_writes(tmp_path: Path) -> None:
    embedder = FakeEmbedder(16)
    async with (
        ContextEngine.local(tmp_path, project_id="p", embedder=embedder) as first,
        ContextEngine.local(tmp_path, project_id="p", embedder=embedder) as second,
    ):
        assert await second.search("tea") == []
        fact = await first.add("Alice prefers green tea")
        [found] = await second.search("green tea", top_k=1)
        assert found.fact.id == fact.id
        await second.delete(fact.id)
        assert await first.search("green tea") == []


async def test_an_older_folder_is_copied_once_into_a_new_shared_one(tmp_path: Path) -> None:
    # What the "in use" message tells the user to run: sagewai migrate into a new folder.
    import asyncio

    from sagewai.cli._main import main

    embedder = FakeEmbedder(16)
    (tmp_path / "old" / "vectors").mkdir(parents=True)
    async with ContextEngine.local(tmp_path / "old", project_id="p", embedder=embedder) as ctx:
        kept = await ctx.add("Alice prefers green tea")
    arguments = ["--project", "p", "--from", str(tmp_path / "old"), "--to", str(tmp_path / "new")]
    code = await asyncio.to_thread(main, ["migrate", *arguments, "--embedder", "fake:16"])
    assert code == 0
    assert (tmp_path / "new" / "vectors.sqlite3").exists()
    new = ProjectStores.local(tmp_path / "new", embedder=embedder)
    assert isinstance(new.vectors, SqliteVectorStore)
    async with (
        ContextEngine(stores=new, project_id="p") as first,
        ContextEngine.local(tmp_path / "new", project_id="p", embedder=embedder) as second,
    ):
        assert (await first.search("green tea", top_k=1))[0].fact.id == kept.id
        assert (await second.search("green tea", top_k=1))[0].fact.id == kept.id


def test_a_postgres_store_may_keep_its_vectors_in_a_shared_sqlite_file(tmp_path: Path) -> None:
    from sagewai.stores import resolve_stores

    target = str(tmp_path / "vectors.sqlite3")
    stores = resolve_stores(
        "postgresql://nobody@127.0.0.1:9/none", vectors=target, embedder=FakeEmbedder(16)
    )
    assert isinstance(stores.vectors, SqliteVectorStore)
    assert stores.vectors.path == target
    edge = resolve_stores(
        "postgresql://nobody@127.0.0.1:9/none",
        vectors=str(tmp_path / "edge"),
        embedder=FakeEmbedder(16),
    )
    assert isinstance(edge.vectors, QdrantEdgeVectorStore)


def test_the_index_filters_as_the_reference_through_rewrites_and_deletions() -> None:
    # Every filter field agrees with VectorFilter.matches, through rewrites that move points
    # between scopes, deletions and reused rows, over many small scopes and one large one.
    import json
    import random

    from sagewai.core._queries import VectorFilter, VectorPayload
    from sagewai.stores.sqlite._vector_index import VectorIndex

    rng = random.Random(5)
    scopes = [f"session:p:s{n}" for n in range(40)] + ["project:p:p"] * 30
    truth: dict[str, VectorPayload] = {}
    index = VectorIndex(4)
    seq = 0

    def write(point_id: str) -> tuple[object, ...]:
        nonlocal seq
        seq += 1
        created = float(rng.choice([100, 200, 300]))
        found = VectorPayload(
            "p",
            rng.choice(scopes),
            rng.choice(["active", "active", "flagged", "superseded"]),
            rng.choice(["fact", "message"]),
            rng.choice(["general", "event"]),
            tuple(rng.sample(["a", "b", "c"], rng.randint(0, 2))),
            created,
            created,
            rng.choice([math.inf, created + 100]),
        )
        truth[point_id] = found
        vector = np.array([1.0, 0.0, 0.0, 0.0], dtype="<f4").tobytes()
        return (seq, point_id, vector, found.project_id, found.scope_key, found.status,
                found.kind, found.fact_type, json.dumps(list(found.tags)), found.created_at,
                found.valid_from, found.valid_to)  # fmt: skip

    def delete(point_id: str) -> tuple[object, ...]:
        nonlocal seq
        seq += 1
        del truth[point_id]
        return (seq, point_id, None, "p", "x", "active", "fact", "general", "[]", 0.0, 0.0, 0.0)

    ids = [f"f{n}" for n in range(1500)]
    index.apply([write(i) for i in ids])
    for _ in range(3):  # rewrites (some change scope) and deletions, in batches
        batch = [write(i) for i in rng.sample(ids, 300)]
        batch += [delete(i) for i in rng.sample(sorted(truth), 100)]
        index.apply(batch)
        index.apply([write(i) for i in rng.sample(ids, 100) if i not in truth])
    names = index._ids
    for _ in range(300):
        where = VectorFilter(
            scope_keys=tuple(rng.sample(sorted(set(scopes)), rng.choice([1, 2, 3, 30]))),
            statuses=rng.choice([None, ("active", "flagged"), ("superseded",)]),
            kinds=rng.choice([None, ("message",)]),
            fact_types=rng.choice([None, ("event",)]),
            tags_any=rng.choice([None, None, ("a",), ("b", "c")]),
            valid_at=rng.choice([None, None, 150.0, 250.0]),
            ids=rng.choice([None, None, tuple(rng.sample(ids, 200))]),
        )
        expected = {i for i, p in truth.items() if where.matches(p, i)}
        found = [names[row] for row in index.rows(where)]
        assert len(found) == len(set(found))
        assert set(found) == expected
        assert index.count(where) == len(expected)


async def test_a_consolidation_in_one_engine_reaches_the_next_search_of_another(
    tmp_path: Path,
) -> None:
    # The reader's copy of the vectors is loaded before the other engine merges a duplicate;
    # its next search sees the merge (the merged fact's vector is no longer searched).
    from sagewai.core._queries import VectorFilter
    from sagewai.intelligence import MemoryConsolidator

    async with ContextEngine.local(tmp_path, project_id="demo") as reader:
        await reader.add("The staging database runs PostgreSQL 15", fact_id="a")
        await reader.add("The staging database runs PostgreSQL 15.", fact_id="b")
        query = await reader.port.embedder.embed_query("staging database")
        where = VectorFilter(scope_keys=((await reader.get("a")).scope_key,))
        assert {h.id for h in await reader.port.vectors.search(query, 5, where)} == {"a", "b"}
        async with ContextEngine.local(tmp_path, project_id="demo") as other:
            report = await MemoryConsolidator(other).consolidate()
        assert report.duplicates_removed == 1
        hits = {h.id for h in await reader.port.vectors.search(query, 5, where)}
        assert len(hits) == 1
        [kept] = hits
        merged = await reader.get("b" if kept == "a" else "a")
        assert merged.status.value == "merged"


@pytest.mark.parametrize("dense", [True, False])
def test_a_batch_of_queries_scores_alike_in_one_thread_and_through_blas(
    monkeypatch: pytest.MonkeyPatch, dense: bool
) -> None:
    # A batch is scored in numpy's own loop up to _ONE_THREAD_SCORES (no BLAS threads left
    # spinning after a bridge's write), by BLAS above it, and one query at a time up to
    # _FEW_QUERIES: the three give the same hits.
    from sagewai.core._queries import VectorFilter, VectorHit
    from sagewai.stores.sqlite import _vector_index
    from sagewai.stores.sqlite._vector_index import VectorIndex

    rng = np.random.default_rng(3)
    rows = rng.normal(size=(3000, 16)).astype("<f4")
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    index = VectorIndex(16)
    scope = [f"user:p:u{0 if dense else n % 3}" for n in range(len(rows))]
    payload = ("active", "fact", "general", "[]", 1.0, 1.0, math.inf)
    index.apply(
        [(n + 1, f"p{n}", row.tobytes(), "p", scope[n], *payload) for n, row in enumerate(rows)]
    )
    queries = rows[:40] * 0.6 + rng.normal(size=(40, 16)).astype("<f4") * 0.4
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    where = VectorFilter(scope_keys=("user:p:u0",))

    def ranked(found: list[list[VectorHit]]) -> tuple[list[list[str]], np.ndarray]:
        return [[h.id for h in line] for line in found], np.array(
            [[h.score for h in line] for line in found]
        )

    one_thread = ranked(index.search(queries, 10, where))
    one_by_one = ranked([index.search(q[None, :], 10, where)[0] for q in queries])
    monkeypatch.setattr(_vector_index, "_ONE_THREAD_SCORES", 0)
    through_blas = ranked(index.search(queries, 10, where))
    for other in (one_by_one, through_blas):
        assert other[0] == one_thread[0]
        assert np.allclose(other[1], one_thread[1], atol=1e-5)
