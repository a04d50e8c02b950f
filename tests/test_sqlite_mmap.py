"""The embedded metadata store reads its file through a memory map, and means the same.

``SqliteMetadataStore(mmap_size=...)`` sets SQLite's ``PRAGMA mmap_size`` on each connection
(2 GB by default, SQLite's own cap): these tests hold that the setting reaches the connections,
that a bad value is refused before anything opens, and that a mapped store reads exactly what
an unmapped one reads, including rows another process's connection wrote after the map was made
and pages the file grew by since.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sagewai.core._queries import FactQuery, WriteBatch
from sagewai.core._records import Fact
from sagewai.errors import InvalidInputError
from sagewai.stores import SqliteMetadataStore
from sagewai.stores.sqlite._metadata import DEFAULT_MMAP_SIZE

P = "p"
WORDS = ("tea", "coffee", "ramen", "Lisbon", "Kyoto", "invoice", "dentist", "birthday")


def _facts(count: int, start: int = 0) -> list[Fact]:
    return [
        Fact(
            project_id=P,
            content=f"note {n}: {WORDS[n % len(WORDS)]} with {WORDS[(n * 3) % len(WORDS)]} #{n}",
        )
        for n in range(start, start + count)
    ]


async def _pragma(store: SqliteMetadataStore) -> int:
    def read() -> int:
        return int(store._db().execute("PRAGMA mmap_size").fetchone()[0])

    return await store._run(read)


async def _fill(store: SqliteMetadataStore, facts: list[Fact]) -> None:
    for start in range(0, len(facts), 500):
        await store.apply(WriteBatch(project_id=P, upserts=facts[start : start + 500]))


async def _answers(store: SqliteMetadataStore, ids: list[str]) -> tuple[Any, ...]:
    query = FactQuery(project_id=P)
    keyword = [await store.keyword_search(query, word, 20) for word in (*WORDS, "tea ramen")]
    records = sorted((f.id, f.content) for f in await store.get(P, ids))
    return keyword, records, await store.count(query)


async def test_the_default_maps_as_much_as_sqlite_allows(tmp_path: Path) -> None:
    async with SqliteMetadataStore(tmp_path / "m.db") as store:
        assert store.mmap_size == DEFAULT_MMAP_SIZE
        mapped = await _pragma(store)
    assert 0 < mapped <= DEFAULT_MMAP_SIZE  # SQLite caps it at its build's limit


async def test_zero_reads_without_a_map(tmp_path: Path) -> None:
    async with SqliteMetadataStore(tmp_path / "m.db", mmap_size=0) as store:
        assert await _pragma(store) == 0


@pytest.mark.parametrize("bad", [-1, True, 1.5, "1073741824", None])
def test_a_bad_size_is_refused_before_anything_opens(tmp_path: Path, bad: Any) -> None:
    with pytest.raises(InvalidInputError, match="mmap_size"):
        SqliteMetadataStore(tmp_path / "m.db", mmap_size=bad)
    assert not (tmp_path / "m.db").exists()


async def test_a_mapped_store_reads_what_an_unmapped_one_reads(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    facts = _facts(3_000)
    ids = [f.id for f in facts[::7]]
    async with SqliteMetadataStore(path, mmap_size=0) as plain:
        await _fill(plain, facts)
        expected = await _answers(plain, ids)
    async with SqliteMetadataStore(path) as mapped:
        assert await _answers(mapped, ids) == expected
    assert expected[2] == 3_000
    assert all(expected[0])


async def test_rows_written_by_another_connection_after_the_map_are_read(tmp_path: Path) -> None:
    """The file grows under an open, mapped reader: its new pages and rows are read."""
    path = tmp_path / "m.db"
    first = _facts(200)
    async with SqliteMetadataStore(path) as reader:
        await _fill(reader, first)
        assert len(await reader.get(P, [f.id for f in first])) == 200
        size_before = path.stat().st_size
        later = _facts(4_000, start=200)
        async with SqliteMetadataStore(path) as writer:  # a second store, as another process
            await _fill(writer, later)
        # Rows another connection committed, some in WAL frames, some checkpointed into pages
        # past the end of the file as it was when the reader mapped it.
        checkpoint = sqlite3.connect(path)
        try:
            checkpoint.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            checkpoint.close()
        assert path.stat().st_size > size_before
        found = await reader.get(P, [f.id for f in later])
        assert sorted(f.content for f in found) == sorted(f.content for f in later)
        assert await reader.count(FactQuery(project_id=P)) == 4_200
        hits = await reader.keyword_search(FactQuery(project_id=P), "note 4199", 5)
        assert later[-1].id in [fact_id for fact_id, _ in hits]
