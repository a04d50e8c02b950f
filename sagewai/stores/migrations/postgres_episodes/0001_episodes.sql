-- Episodes on PostgreSQL: summary vectors as real[] (cosine is computed by the shared scorer),
-- a 'simple' tsvector with a GIN index for keywords. __SCHEMA__ is the quoted schema.

CREATE TABLE __SCHEMA__.episodes (
    id         text COLLATE "C" PRIMARY KEY,
    project_id text COLLATE "C",
    user_id    text COLLATE "C",
    session_id text COLLATE "C" NOT NULL,
    created_at timestamptz NOT NULL,
    summary    text NOT NULL,
    messages   json NOT NULL,
    metadata   json NOT NULL,
    vector     real[] NOT NULL,
    search     tsvector NOT NULL
);

CREATE INDEX episodes_project_created ON __SCHEMA__.episodes (project_id, created_at);
CREATE INDEX episodes_project_session ON __SCHEMA__.episodes (project_id, session_id);
CREATE INDEX episodes_project_user ON __SCHEMA__.episodes (project_id, user_id);
CREATE INDEX episodes_search ON __SCHEMA__.episodes USING gin (search);
