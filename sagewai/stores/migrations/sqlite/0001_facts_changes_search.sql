-- Facts, their audit log, a tag index and an FTS5 keyword index.
-- Times are integer microseconds since the Unix epoch (UTC): exact, compact, and ordered.
-- Lists (tags, exact_values, related_fact_ids) and documents (metadata, sources) are JSON text.

CREATE TABLE facts (
    seq              INTEGER PRIMARY KEY,
    id               TEXT    NOT NULL UNIQUE,
    project_id       TEXT    NOT NULL,
    scope            TEXT    NOT NULL,
    scope_key        TEXT    NOT NULL,
    org_id           TEXT,
    user_id          TEXT,
    session_id       TEXT,
    kind             TEXT    NOT NULL,
    content          TEXT    NOT NULL,
    fact_type        TEXT    NOT NULL,
    confidence       REAL    NOT NULL,
    subject          TEXT,
    predicate        TEXT,
    object           TEXT,
    exact_values     TEXT    NOT NULL CHECK (json_type(exact_values) = 'array'),
    tags             TEXT    NOT NULL CHECK (json_type(tags) = 'array'),
    metadata         TEXT    NOT NULL CHECK (json_type(metadata) = 'object'),
    sources          TEXT    NOT NULL CHECK (json_type(sources) = 'array'),
    created_at       INTEGER NOT NULL,
    last_accessed_at INTEGER,
    valid_from       INTEGER,
    valid_to         INTEGER,
    status           TEXT    NOT NULL,
    strength         REAL    NOT NULL,
    superseded_by    TEXT,
    merged_into      TEXT,
    updated_at       INTEGER NOT NULL
);

CREATE INDEX facts_project_created ON facts (project_id, created_at, id);
CREATE INDEX facts_scope_created ON facts (scope_key, created_at, id);
CREATE INDEX facts_project_subject ON facts (project_id, subject) WHERE subject IS NOT NULL;
CREATE INDEX facts_project_user ON facts (project_id, user_id) WHERE user_id IS NOT NULL;
CREATE INDEX facts_project_session ON facts (project_id, session_id) WHERE session_id IS NOT NULL;
CREATE INDEX facts_project_updated ON facts (project_id, updated_at);

-- One row per (fact, tag) so that a tags_any filter is an index lookup, kept by triggers.
CREATE TABLE fact_tags (
    tag      TEXT    NOT NULL,
    fact_seq INTEGER NOT NULL,
    PRIMARY KEY (tag, fact_seq)
) WITHOUT ROWID;

CREATE TRIGGER facts_tags_insert AFTER INSERT ON facts
WHEN new.tags <> '[]' BEGIN
    INSERT INTO fact_tags (tag, fact_seq) SELECT value, new.seq FROM json_each(new.tags);
END;
CREATE TRIGGER facts_tags_update AFTER UPDATE OF tags ON facts
WHEN old.tags IS NOT new.tags BEGIN
    DELETE FROM fact_tags
     WHERE fact_seq = old.seq AND tag IN (SELECT value FROM json_each(old.tags));
    INSERT INTO fact_tags (tag, fact_seq) SELECT value, new.seq FROM json_each(new.tags);
END;
CREATE TRIGGER facts_tags_delete AFTER DELETE ON facts
WHEN old.tags <> '[]' BEGIN
    DELETE FROM fact_tags
     WHERE fact_seq = old.seq AND tag IN (SELECT value FROM json_each(old.tags));
END;

-- Keyword index over the content (external content: no second copy of the text).
-- unicode61 without diacritic folding splits words like keyword_terms() does (letters and digits).
-- The store keeps it in step in bulk, one statement per batch, not with per-row triggers: FTS5
-- flushes its pending terms at every statement that writes to it, so a trigger made each insert
-- about six times slower.
CREATE VIRTUAL TABLE facts_fts USING fts5(
    content,
    content = 'facts',
    content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 0'
);

-- Per-term document counts, used to recognise words too common to rank (see keyword_search).
CREATE VIRTUAL TABLE facts_vocab USING fts5vocab(facts_fts, 'row');

CREATE TABLE changes (
    seq              INTEGER PRIMARY KEY,
    id               TEXT    NOT NULL UNIQUE,
    fact_id          TEXT    NOT NULL,
    project_id       TEXT    NOT NULL,
    action           TEXT    NOT NULL,
    at               INTEGER NOT NULL,
    actor            TEXT    NOT NULL,
    rule             TEXT    NOT NULL,
    reason           TEXT    NOT NULL,
    related_fact_ids TEXT    NOT NULL CHECK (json_type(related_fact_ids) = 'array'),
    before           TEXT    CHECK (before IS NULL OR json_type(before) = 'object'),
    after            TEXT    CHECK (after IS NULL OR json_type(after) = 'object'),
    run_id           TEXT
);

CREATE INDEX changes_project_at ON changes (project_id, at, seq);
CREATE INDEX changes_fact ON changes (fact_id);
CREATE INDEX changes_project_run ON changes (project_id, run_id) WHERE run_id IS NOT NULL;
