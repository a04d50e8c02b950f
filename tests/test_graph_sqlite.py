"""SQLite graph store specifics: where the file goes, reopening it, a corrupt or newer file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sagewai.errors import BackendError
from sagewai.graph import GRAPH_FILENAME, Entity, SqliteGraphStore


def test_path_rules(tmp_path: Path) -> None:
    assert SqliteGraphStore(tmp_path).path == tmp_path / GRAPH_FILENAME
    assert (
        SqliteGraphStore(tmp_path / "new-folder").path == tmp_path / "new-folder" / GRAPH_FILENAME
    )
    assert SqliteGraphStore(tmp_path / "g.db").path == tmp_path / "g.db"
    assert SqliteGraphStore(":memory:").path is None


async def test_reopening_the_folder_finds_everything(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    async with SqliteGraphStore(folder) as store:
        await store.upsert_entity("p", Entity(project_id="p", name="Ana", aliases=("A",)))
    assert (folder / GRAPH_FILENAME).is_file()
    async with SqliteGraphStore(folder) as again:
        [ana] = await again.entities_named("p", "a")
        assert ana.name == "Ana"
        await again.close()  # closing twice is fine; the next call reopens
        assert (await again.counts("p")).entities == 1


async def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "graph.sqlite3"
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA user_version = 99")
    connection.close()
    with pytest.raises(BackendError, match="upgrade sagewai"):
        await SqliteGraphStore(path).entities("p")


async def test_a_corrupt_row_is_a_backend_error(tmp_path: Path) -> None:
    async with SqliteGraphStore(tmp_path) as store:
        await store.upsert_entity("p", Entity(project_id="p", name="Ana"))
    connection = sqlite3.connect(tmp_path / GRAPH_FILENAME)
    connection.execute("UPDATE graph_entities SET aliases = 'not json'")
    connection.commit()
    connection.close()
    async with SqliteGraphStore(tmp_path) as store:
        with pytest.raises(BackendError, match="does not decode"):
            await store.entities("p")
