-- Episodes: one row per session, an FTS5 keyword index over the searchable text (kept by
-- triggers), and the summary vector as a float32 blob. Times are integer microseconds (UTC).

CREATE TABLE episodes (
    seq        INTEGER PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,
    project_id TEXT,
    user_id    TEXT,
    session_id TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    summary    TEXT    NOT NULL,
    messages   TEXT    NOT NULL,
    metadata   TEXT    NOT NULL,
    vector     BLOB    NOT NULL,
    search     TEXT    NOT NULL
);

CREATE INDEX episodes_project_created ON episodes (project_id, created_at);
CREATE INDEX episodes_project_session ON episodes (project_id, session_id);
CREATE INDEX episodes_project_user ON episodes (project_id, user_id);

CREATE VIRTUAL TABLE episodes_fts USING fts5(
    search, content = 'episodes', content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 0'
);

CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN
    INSERT INTO episodes_fts (rowid, search) VALUES (new.seq, new.search);
END;

CREATE TRIGGER episodes_fts_update AFTER UPDATE OF search ON episodes BEGIN
    INSERT INTO episodes_fts (episodes_fts, rowid, search)
        VALUES ('delete', old.seq, old.search);
    INSERT INTO episodes_fts (rowid, search) VALUES (new.seq, new.search);
END;

CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
    INSERT INTO episodes_fts (episodes_fts, rowid, search)
        VALUES ('delete', old.seq, old.search);
END;
