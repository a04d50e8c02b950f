"""SQLite graph store specifics: where the file goes, reopening it, a corrupt or newer file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sagewai.errors import BackendError
from sagewai.graph import GRAPH_FILENAME, Entity
from sagewai.stores import SqliteGraphStore


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


# The schema a graph file of the previous release holds (before graph_migrations existed).
_PREVIOUS_RELEASE_SCHEMA = """
CREATE TABLE IF NOT EXISTS graph_entities (
    project_id TEXT NOT NULL,
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    label TEXT NOT NULL,
    aliases TEXT NOT NULL,
    session_ids TEXT NOT NULL,
    created_at TEXT NOT NULL,
    metadata TEXT NOT NULL,
    PRIMARY KEY (project_id, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS graph_entity_keys (
    project_id TEXT NOT NULL,
    key TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    PRIMARY KEY (project_id, key, entity_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS graph_entity_keys_entity ON graph_entity_keys (project_id, entity_id);
CREATE TABLE IF NOT EXISTS graph_relations (
    project_id TEXT NOT NULL,
    id TEXT NOT NULL,
    subject_id TEXT NOT NULL,
    predicate TEXT NOT NULL,
    object_id TEXT NOT NULL,
    valid_from TEXT NOT NULL,
    valid_to TEXT,
    confidence REAL NOT NULL,
    sources TEXT NOT NULL,
    created_at TEXT NOT NULL,
    superseded_by TEXT,
    PRIMARY KEY (project_id, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS graph_relations_subject ON graph_relations (project_id, subject_id);
CREATE INDEX IF NOT EXISTS graph_relations_object ON graph_relations (project_id, object_id);
"""


async def test_a_file_of_the_previous_release_opens_and_is_recorded_as_migrated(
    tmp_path: Path,
) -> None:
    path = tmp_path / GRAPH_FILENAME
    connection = sqlite3.connect(path)
    connection.executescript(_PREVIOUS_RELEASE_SCHEMA)
    connection.execute("PRAGMA user_version = 1")
    connection.execute(
        "INSERT INTO graph_entities VALUES"
        " ('p', 'e1', 'Ana', 'person', '[]', '[]', '2024-03-01T12:00:00+00:00', '{}')"
    )
    connection.execute("INSERT INTO graph_entity_keys VALUES ('p', 'ana', 'e1')")
    connection.commit()
    connection.close()
    async with SqliteGraphStore(path) as store:
        [ana] = await store.entities_named("p", "ana")
        assert (ana.id, ana.name) == ("e1", "Ana")
        await store.upsert_entity("p", Entity(project_id="p", name="Bo"))
        assert (await store.counts("p")).entities == 2
    connection = sqlite3.connect(path)
    try:
        versions = [row[0] for row in connection.execute("SELECT version FROM graph_migrations")]
        user_version = connection.execute("PRAGMA user_version").fetchone()[0]
    finally:
        connection.close()
    assert versions == ["0001"]
    assert user_version == 1
