"""An upsert of stored facts rewrites only the columns that changed, and means what it meant.

The SQLite store writes an existing row's changed columns (a decay: strength and metadata)
instead of every column; these tests hold it to the upsert's meaning: the stored record equals
the last version given, ``updated_at`` moves, tags and the keyword index follow the new version,
and two versions of one fact in a batch leave the last.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from sagewai.core._queries import FactQuery, WriteBatch
from sagewai.core._records import Fact, FactStatus
from sagewai.stores import SqliteMetadataStore

P = "p"


def _updated_at(path: Path, fact_id: str) -> int:
    connection = sqlite3.connect(path)
    try:
        return int(
            connection.execute("SELECT updated_at FROM facts WHERE id = ?", (fact_id,)).fetchone()[
                0
            ]
        )
    finally:
        connection.close()


async def _by_id(store: SqliteMetadataStore, *ids: str) -> dict[str, Fact]:
    return {fact.id: fact for fact in await store.get(P, list(ids))}


def _ids(*facts: Fact) -> dict[str, Fact]:
    return {fact.id: fact for fact in facts}


async def test_rewritten_rows_read_back_as_the_versions_given(tmp_path: Path) -> None:
    path = tmp_path / "metadata.sqlite3"
    a = Fact(project_id=P, content="Ben likes ramen.", tags=("food",), strength=1.0)
    b = Fact(project_id=P, content="Ana uses Rust.", exact_values=("Rust",))
    async with SqliteMetadataStore(path) as store:
        await store.apply(WriteBatch(P, upserts=[a, b]))
        first = _updated_at(path, a.id)
        decayed = a.model_copy(update={"strength": 0.4, "metadata": {"consolidation": {"x": 1}}})
        retagged = b.model_copy(update={"tags": ("lang", "work"), "content": "Ana uses Go."})
        archived = decayed.model_copy(update={"status": FactStatus.ARCHIVED})
        new = Fact(project_id=P, content="Eli plays chess.")
        twice = new.model_copy(update={"strength": 0.7})
        # Two versions of `a` and of the new fact in one batch: the last of each is stored.
        await store.apply(WriteBatch(P, upserts=[decayed, retagged, new, archived, twice]))
        assert await _by_id(store, a.id, b.id, new.id) == _ids(archived, retagged, twice)
        assert _updated_at(path, a.id) > first
        tagged = await store.query(FactQuery(P, tags_any=("work",)))
        assert [f.id for f in tagged] == [b.id]
        assert await store.query(FactQuery(P, tags_any=("food",))) == [archived]
        assert [i for i, _ in await store.keyword_search(FactQuery(P), "Go", 5)] == [b.id]
        assert await store.keyword_search(FactQuery(P), "Rust", 5) == []
        # The same, where the later version's change is of a kind an earlier fact's was.
        b2 = retagged.model_copy(update={"strength": 0.2, "status": FactStatus.ARCHIVED})
        a2 = archived.model_copy(update={"strength": 0.3})
        a3 = a2.model_copy(update={"strength": 0.1, "status": FactStatus.ACTIVE})
        await store.apply(WriteBatch(P, upserts=[b2, a2, a3]))
        assert await _by_id(store, a.id, b.id) == _ids(a3, b2)
        archived, retagged = a3, b2
        # An upsert that changes nothing still marks the row as written now.
        before = _updated_at(path, new.id)
        await store.apply(WriteBatch(P, upserts=[twice]))
        assert await store.get(P, [new.id]) == [twice]
        assert _updated_at(path, new.id) >= before
    async with SqliteMetadataStore(path) as reopened:
        assert await _by_id(reopened, a.id, b.id, new.id) == _ids(archived, retagged, twice)
        since = await reopened.query(
            FactQuery(P, updated_since=datetime.fromtimestamp(first / 1e6, UTC))
        )
        assert {f.id for f in since} == {a.id, b.id, new.id}
