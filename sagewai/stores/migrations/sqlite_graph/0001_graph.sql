-- Entities (with a name-key index for matching) and time-bounded relations, per project.
-- IF NOT EXISTS: files written before the graph store recorded its migrations already hold these
-- tables (marked by PRAGMA user_version = 1); this step then records them and changes nothing.

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
