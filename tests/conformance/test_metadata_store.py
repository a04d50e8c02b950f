"""The metadata store conformance suite, run on every sagewai metadata backend.

The suite itself ships as :class:`sagewai.testing.conformance.MetadataStoreConformance`; the
classes at the end give it :class:`InMemoryMetadataStore` (the reference),
:class:`SqliteMetadataStore` (a file in a temporary folder) and :class:`PostgresMetadataStore` (a
fresh schema per test). The tests here only make sense for one backend or the SQL stores (a lock
held by another process, a reopened file, migrations, the SQL text builders) and say so.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import sagewai
from sagewai.core._queries import ChangeQuery, FactQuery, WriteBatch
from sagewai.core._records import (
    utcnow,
)
from sagewai.core._text import keyword_terms
from sagewai.errors import (
    BackendUnavailableError,
    ConfigurationError,
    LockedError,
)
from sagewai.stores import PostgresMetadataStore, SqliteMetadataStore
from sagewai.stores.base._metadata import MetadataStore
from sagewai.stores.base._sql import (
    index_terms,
    match_expression,
    query_terms,
    tsquery_literal,
    tsvector_literal,
)
from sagewai.stores.memory._metadata import InMemoryMetadataStore
from sagewai.stores.postgres._pool import lock_key
from sagewai.testing.conformance import MetadataStoreConformance
from sagewai.testing.conformance._metadata import (
    FILTERS,
    P1,
    P2,
    MetadataStoreFactory,
    filter_dataset,
    full_fact,
    ids,
    make_change,
    make_fact,
    put,
)


@dataclass
class Backend:
    """How to make (more) stores that share one underlying database."""

    name: str
    make: Callable[[], MetadataStore]
    location: str = ""
    dsn: str = ""

    async def new_store(self) -> MetadataStore:
        store = self.make()
        await store.open()
        await store.migrate()
        return store


@pytest.fixture(
    params=[
        "memory",
        "sqlite",
        pytest.param("postgres", marks=pytest.mark.postgres),
    ]
)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "memory":
        shared = InMemoryMetadataStore()  # one process, one object: "another instance" is it
        return Backend("memory", lambda: shared)
    if request.param == "sqlite":
        path = str(tmp_path / "store" / "metadata.db")
        return Backend("sqlite", lambda: SqliteMetadataStore(path), path)
    dsn: str = request.getfixturevalue("postgres_dsn")
    schema: str = request.getfixturevalue("postgres_schema")
    return Backend(
        "postgres", lambda: PostgresMetadataStore(dsn, schema=schema, max_size=4), schema, dsn
    )


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[MetadataStore]:
    opened = await backend.new_store()
    try:
        yield opened
    finally:
        await opened.close()


async def test_sqlite_tag_filter_reads_the_same_either_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sagewai.stores.sqlite._metadata as sqlite_module

    dataset = filter_dataset()
    async with SqliteMetadataStore(str(tmp_path / "metadata.db")) as store:
        await put(store, *dataset)
        for few_tagged in (10_000, 0):  # tag-driven plan, then the per-row probe
            monkeypatch.setattr(sqlite_module, "_FEW_TAGGED", few_tagged)
            for name in ("tags_any", "tags_any_unknown", "combined"):
                query = FactQuery(project_id=P1, **FILTERS[name], limit=7)
                expected = sorted(
                    (f for f in dataset if query.matches(f)), key=lambda f: (f.created_at, f.id)
                )
                assert ids(await store.query(query)) == ids(expected[:7]), (few_tagged, name)


async def test_words_in_most_facts_of_a_large_store_are_ignored(
    backend: Backend, store: MetadataStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend.name == "memory":
        pytest.skip("the in-memory store scores every posting; only the SQL stores prune")
    import sagewai.stores.postgres._metadata as postgres_module
    import sagewai.stores.sqlite._metadata as sqlite_module

    # Pretend 40 facts is a large store (the real threshold is 10,000 facts).
    monkeypatch.setattr(sqlite_module, "_COMMON_TERM_MIN_FACTS", 40)
    monkeypatch.setattr(postgres_module, "_COMMON_TERM_MIN_FACTS", 40)
    facts = [make_fact(f"the note {i} about the weather") for i in range(38)]
    quokkas = [make_fact("the quokka"), make_fact("the quokka and the wombat")]
    await put(store, *facts, *quokkas)
    if isinstance(store, PostgresMetadataStore):
        import asyncpg

        connection = await asyncpg.connect(backend.dsn)
        try:
            await connection.execute(f'ANALYZE "{backend.location}".facts')
        finally:
            await connection.close()

    everything = FactQuery(project_id=P1)
    hits = await store.keyword_search(everything, "the quokka", 10)
    assert {i for i, _ in hits} == {f.id for f in quokkas}
    # A query made only of common words still finds what it can.
    assert len(await store.keyword_search(everything, "the", 10)) == 10


LOCK_PROBE = """
import asyncio, sys
from sagewai.errors import LockedError
from sagewai.stores import SqliteMetadataStore

async def main() -> None:
    store = SqliteMetadataStore(sys.argv[1])
    try:
        async with store.lock("proj-1", "consolidation"):
            print("acquired")
    except LockedError:
        print("locked")
    finally:
        await store.close()

asyncio.run(main())
"""


WRITER = """
import asyncio, sys
from sagewai.core._queries import WriteBatch
from sagewai.core._records import Fact
from sagewai.stores import SqliteMetadataStore

async def main() -> None:
    async with SqliteMetadataStore(sys.argv[1]) as store:
        print("ready", flush=True)
        for b in range(20):
            facts = [Fact(project_id="proj-1", content=f"child {b} {i}") for i in range(10)]
            await store.apply(WriteBatch(project_id="proj-1", upserts=facts))
    print("done")

asyncio.run(main())
"""


async def run_in_another_process(script: str, path: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(Path(sagewai.__file__).parent.parent))
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        script,
        path,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 0, err.decode()
    return out.decode().strip()


async def test_sqlite_lock_is_exclusive_across_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "metadata.db")
    async with SqliteMetadataStore(path) as store:
        async with store.lock(P1, "consolidation"):
            assert await run_in_another_process(LOCK_PROBE, path) == "locked"
        assert await run_in_another_process(LOCK_PROBE, path) == "acquired"


async def test_sqlite_two_processes_write_to_one_file(tmp_path: Path) -> None:
    path = str(tmp_path / "metadata.db")
    async with SqliteMetadataStore(path) as store:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            WRITER,
            path,
            env=dict(os.environ, PYTHONPATH=str(Path(sagewai.__file__).parent.parent)),
            stdout=asyncio.subprocess.PIPE,
        )
        assert process.stdout is not None
        assert await asyncio.wait_for(process.stdout.readline(), 60) == b"ready\n"
        for b in range(20):  # meanwhile the child writes its 20 batches
            await put(store, *[make_fact(f"parent {b} {i}") for i in range(10)])
        out, _ = await asyncio.wait_for(process.communicate(), 60)
        assert out == b"done\n"
        assert await store.count(FactQuery(project_id=P1)) == 400
        assert len(await store.keyword_search(FactQuery(project_id=P1), "child", 500)) == 200


async def acquire_soon(store: MetadataStore, seconds: float = 10.0) -> None:
    """Take and release the lock, waiting while the server reaps a dead session."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        try:
            async with store.lock(P1, "consolidation"):
                return
        except LockedError:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.05)


@pytest.mark.postgres
async def test_postgres_lock_is_released_when_its_holder_dies(
    postgres_dsn: str, postgres_schema: str
) -> None:
    import asyncpg

    holder = PostgresMetadataStore(postgres_dsn, schema=postgres_schema, close_timeout=1)
    waiter = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    await holder.migrate()
    admin = await asyncpg.connect(postgres_dsn)
    try:
        async with holder.lock(P1, "consolidation"):
            with pytest.raises(LockedError):
                async with waiter.lock(P1, "consolidation"):
                    pass
            # The holder's session dies (a crashed process): the server releases its lock.
            # Only the session holding this very key is ended (the database may be shared).
            key = lock_key("sagewai.lock", postgres_schema, P1, "consolidation")
            killed = await admin.fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_locks"
                " WHERE locktype = 'advisory' AND granted AND objsubid = 1"
                " AND classid::bigint = $1 AND objid::bigint = $2",
                (key >> 32) & 0xFFFFFFFF,
                key & 0xFFFFFFFF,
            )
            assert killed == 1
            await acquire_soon(waiter)
        # Leaving the dead holder's block neither raises nor leaks a held connection.
        async with holder.lock(P1, "consolidation"):
            pass
    finally:
        await admin.close()
        await waiter.close()
        await holder.close()


@pytest.mark.postgres
async def test_postgres_close_does_not_hang_on_a_held_lock(
    postgres_dsn: str, postgres_schema: str
) -> None:
    holder = PostgresMetadataStore(postgres_dsn, schema=postgres_schema, close_timeout=0.5)
    waiter = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    await holder.migrate()
    try:
        lock = holder.lock(P1, "consolidation")
        await lock.__aenter__()  # a holder that never leaves its block
        await asyncio.wait_for(holder.close(), timeout=10)
        await acquire_soon(waiter)  # terminating the pool freed the lock
    finally:
        await waiter.close()


# -- persistence and migrations --------------------------------------------------------------------


async def test_sqlite_persists_across_close_and_reopen(tmp_path: Path) -> None:
    path = str(tmp_path / "nested" / "metadata.db")
    fact = full_fact()
    change = make_change(fact.id, run_id="r1")
    async with SqliteMetadataStore(path) as store:
        await store.apply(WriteBatch(project_id=P1, upserts=[fact], changes=[change]))

    async with SqliteMetadataStore(path) as reopened:
        assert await reopened.get(P1, [fact.id]) == [fact]
        assert await reopened.changes(ChangeQuery(project_id=P1)) == [change]
        assert [
            i for i, _ in await reopened.keyword_search(FactQuery(project_id=P1), "café", 3)
        ] == [fact.id]
    store = SqliteMetadataStore(path)
    await store.close()
    await store.close()  # closing twice, or never opened, is fine
    assert await store.count(FactQuery(project_id=P1)) == 1  # and it reopens on use
    await store.close()


async def test_sqlite_keyword_index_stays_in_step_with_the_facts(tmp_path: Path) -> None:
    path = str(tmp_path / "metadata.db")
    facts = [make_fact(f"quokka number {i}") for i in range(30)]
    theirs = [make_fact(f"wombat number {i}", project_id=P2) for i in range(5)]
    async with SqliteMetadataStore(path) as store:
        await put(store, *facts)
        await put(store, *theirs, project_id=P2)
        newest = facts[-1]
        await store.apply(
            WriteBatch(
                project_id=P1,
                deletes=[newest.id, facts[0].id],  # frees the largest row number for reuse
                upserts=[
                    facts[1].evolve(content="numbat now"),  # text changes
                    facts[2].evolve(strength=0.1),  # text stays
                    make_fact("fresh quokka"),
                    newest.evolve(content="reborn numbat"),
                ],
            )
        )
        await store.delete_project(P2)
        numbats = await store.keyword_search(FactQuery(project_id=P1), "numbat", 10)
        assert {i for i, _ in numbats} == {facts[1].id, newest.id}
        assert len(await store.keyword_search(FactQuery(project_id=P1), "quokka", 50)) == 28

    connection = sqlite3.connect(path)
    try:  # FTS5 compares its index with the facts table and raises on any difference
        connection.execute("INSERT INTO facts_fts (facts_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        connection.close()


async def test_sqlite_memory_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(
        tmp_path
    )  # a ":memory:" store must leave no file (database, WAL or lock) behind
    async with SqliteMetadataStore(":memory:") as store:
        await put(store, make_fact("in memory quokka"))
        assert await store.count(FactQuery(project_id=P1)) == 1
        async with store.lock(P1, "x"):
            with pytest.raises(LockedError):
                async with store.lock(P1, "x"):
                    pass
    assert not os.listdir(tmp_path)


async def test_sqlite_migrations_are_versioned_and_idempotent(tmp_path: Path) -> None:
    path = str(tmp_path / "metadata.db")
    store = SqliteMetadataStore(path)
    assert await store.migrate() == ["0001", "0002", "0003", "0004"]
    assert await store.migrate() == []
    await store.close()
    async with SqliteMetadataStore(path) as again:
        assert await again.migrate() == []

    connection = sqlite3.connect(path)
    try:
        rows = connection.execute(
            "SELECT version, name, applied_at FROM schema_migrations"
        ).fetchall()
        assert [(v, n) for v, n, _ in rows] == [
            ("0001", "facts_changes_search"),
            ("0002", "project_state"),
            ("0003", "keyword_epoch"),
            ("0004", "keyword_copies"),
        ]
        assert abs(rows[0][2] / 1e6 - utcnow().timestamp()) < 60
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        connection.close()


async def test_sqlite_refuses_a_database_from_a_newer_version(tmp_path: Path) -> None:
    path = str(tmp_path / "metadata.db")
    async with SqliteMetadataStore(path):
        pass
    connection = sqlite3.connect(path)
    connection.execute("INSERT INTO schema_migrations VALUES ('9999', 'future', 0)")
    connection.commit()
    connection.close()
    with pytest.raises(ConfigurationError, match="newer sagewai"):
        await SqliteMetadataStore(path).open()


async def test_sqlite_rejects_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "metadata.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ConfigurationError):
        await SqliteMetadataStore(path).open()


@pytest.mark.postgres
async def test_postgres_migrations_are_versioned_idempotent_and_concurrent(
    postgres_dsn: str, postgres_schema: str
) -> None:
    import asyncpg

    stores = [PostgresMetadataStore(postgres_dsn, schema=postgres_schema) for _ in range(3)]
    try:
        results = await asyncio.gather(*(s.migrate() for s in stores))
        assert sorted(results) == [[], [], ["0001", "0002", "0003", "0004", "0005", "0006"]]
        assert await stores[0].migrate() == []
    finally:
        for s in stores:
            await s.close()
    connection = await asyncpg.connect(postgres_dsn)
    try:
        rows = await connection.fetch(
            f'SELECT version, name, applied_at FROM "{postgres_schema}".schema_migrations'
        )
    finally:
        await connection.close()
    assert [(r["version"], r["name"]) for r in rows] == [
        ("0001", "facts_changes_search"),
        ("0002", "project_state"),
        ("0003", "keyword_length"),
        ("0004", "keyword_copy"),
        ("0005", "keyword_copies"),
        ("0006", "facts_room_for_reads"),
    ]
    assert rows[0]["applied_at"].tzinfo is not None


@pytest.mark.postgres
async def test_postgres_unmigrated_schema_is_a_configuration_error(
    postgres_dsn: str, postgres_schema: str
) -> None:
    store = PostgresMetadataStore(postgres_dsn, schema=postgres_schema)
    try:
        with pytest.raises(ConfigurationError, match=r"migrate\(\)"):
            await store.count(FactQuery(project_id=P1))
        with pytest.raises(ConfigurationError, match=r"migrate\(\)"):
            await put(store, make_fact("too early"))
        await store.migrate()
        await put(store, make_fact("now it works"))
        assert await store.count(FactQuery(project_id=P1)) == 1
    finally:
        await store.close()


async def test_unreachable_postgres_is_backend_unavailable() -> None:
    pytest.importorskip("asyncpg")
    store = PostgresMetadataStore(
        "postgresql://sagewai:s3cr3t-pw@127.0.0.1:1/nowhere", connect_timeout=5
    )
    with pytest.raises(BackendUnavailableError) as caught:
        await store.count(FactQuery(project_id=P1))
    message = str(caught.value)
    assert "127.0.0.1:1/nowhere" in message
    assert "s3cr3t-pw" not in message
    await store.close()


@pytest.mark.parametrize("schema", ["Sagewai", "1abc", 'x"; DROP SCHEMA public; --', "a-b", ""])
def test_postgres_schema_names_are_validated(schema: str) -> None:
    with pytest.raises(ConfigurationError):
        PostgresMetadataStore("postgresql://127.0.0.1/test", schema=schema)


# -- query building (pure functions shared by the SQL stores) --------------------------------------


@pytest.mark.parametrize(
    "text",
    ["Alice's café (v1.2.3) alice@example.com", "don’t stop_me now", "x²+y² ½ Ⅻ", "İstanbul ǅ"],
)
def test_index_terms_split_words_like_keyword_terms(text: str) -> None:
    assert list(dict.fromkeys(index_terms(text))) == keyword_terms(text, limit=10_000)


def test_query_expressions_hold_only_quoted_terms() -> None:
    hostile = "\" NEAR( *x -y '; DROP TABLE facts; -- a:b"
    assert match_expression(hostile) == (
        '"near" OR "x" OR "y" OR "drop" OR "table" OR "facts" OR "a" OR "b"'
    )
    assert (
        tsquery_literal(query_terms(hostile))
        == "'near' | 'x' | 'y' | 'drop' | 'table' | 'facts' | 'a' | 'b'"
    )
    assert match_expression("?! --") is None
    assert tsquery_literal(query_terms("")) is None
    assert tsvector_literal("b a b") == "'b':1,3 'a':2"


class TestInMemoryMetadataStore(MetadataStoreConformance):
    faults_mid_batch = False  # it validates the whole batch before it changes anything

    @pytest.fixture
    def make_store(self) -> MetadataStoreFactory:
        shared = InMemoryMetadataStore()  # one process, one object: "another instance" is it
        return lambda: shared


class TestSqliteMetadataStore(MetadataStoreConformance):
    @pytest.fixture
    def make_store(self, tmp_path: Path) -> MetadataStoreFactory:
        path = str(tmp_path / "store" / "metadata.db")
        return lambda: SqliteMetadataStore(path)


@pytest.mark.postgres
class TestPostgresMetadataStore(MetadataStoreConformance):
    @pytest.fixture
    def make_store(self, postgres_dsn: str, postgres_schema: str) -> MetadataStoreFactory:
        return lambda: PostgresMetadataStore(postgres_dsn, schema=postgres_schema, max_size=4)
