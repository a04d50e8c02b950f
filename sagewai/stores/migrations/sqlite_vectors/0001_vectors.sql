-- The vectors of an embedded folder, shared by every process that opens it.
-- Each row holds one point's unit vector (float32, little-endian) and the payload filters read.
-- seq orders every change: a write gives each row it touches the next numbers of the counter in
-- vector_state, so a process catches up by reading the rows above the last number it saw. A
-- deleted point keeps its row with a NULL vector (a tombstone), so other processes see the
-- deletion the same way.

CREATE TABLE vectors (
    point_id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    vector BLOB,
    project_id TEXT NOT NULL,
    scope_key TEXT NOT NULL,
    status TEXT NOT NULL,
    kind TEXT NOT NULL,
    fact_type TEXT NOT NULL,
    tags TEXT NOT NULL,
    created_at REAL NOT NULL,
    valid_from REAL NOT NULL,
    valid_to REAL NOT NULL
);

CREATE UNIQUE INDEX vectors_seq ON vectors (seq);

CREATE INDEX vectors_project ON vectors (project_id) WHERE vector IS NOT NULL;

CREATE TABLE vector_state (
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO vector_state (key, value) VALUES ('seq', 0);
