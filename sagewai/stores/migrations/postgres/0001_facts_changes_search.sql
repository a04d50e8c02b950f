-- Facts, their audit log and a keyword index, in the schema named by __SCHEMA__ (validated and
-- quoted by the store before it is substituted).
-- Identifiers compare with COLLATE "C" so that (created_at, id) keyset pagination orders ids by
-- code point, exactly as the other backends (and Python) do, whatever the database's locale.
-- metadata/sources are json (not jsonb): the text is kept verbatim, so numbers round-trip exactly.
-- search is a tsvector built by the store from the same word split as keyword_terms().

CREATE TABLE __SCHEMA__.facts (
    id               text COLLATE "C" PRIMARY KEY,
    project_id       text COLLATE "C" NOT NULL,
    scope            text NOT NULL,
    scope_key        text COLLATE "C" NOT NULL,
    org_id           text,
    user_id          text,
    session_id       text,
    kind             text NOT NULL,
    content          text NOT NULL,
    fact_type        text NOT NULL,
    confidence       double precision NOT NULL,
    subject          text,
    predicate        text,
    object           text,
    exact_values     text[] NOT NULL,
    tags             text[] NOT NULL,
    metadata         json NOT NULL,
    sources          json NOT NULL,
    created_at       timestamptz NOT NULL,
    last_accessed_at timestamptz,
    valid_from       timestamptz,
    valid_to         timestamptz,
    status           text NOT NULL,
    strength         double precision NOT NULL,
    superseded_by    text,
    merged_into      text,
    updated_at       timestamptz NOT NULL,
    search           tsvector NOT NULL
);

CREATE INDEX facts_project_created ON __SCHEMA__.facts (project_id, created_at, id);
CREATE INDEX facts_scope_created ON __SCHEMA__.facts (scope_key, created_at, id);
CREATE INDEX facts_project_subject ON __SCHEMA__.facts (project_id, subject)
    WHERE subject IS NOT NULL;
CREATE INDEX facts_project_user ON __SCHEMA__.facts (project_id, user_id)
    WHERE user_id IS NOT NULL;
CREATE INDEX facts_project_session ON __SCHEMA__.facts (project_id, session_id)
    WHERE session_id IS NOT NULL;
CREATE INDEX facts_project_updated ON __SCHEMA__.facts (project_id, updated_at);
CREATE INDEX facts_tags ON __SCHEMA__.facts USING gin (tags);
CREATE INDEX facts_search ON __SCHEMA__.facts USING gin (search);

CREATE TABLE __SCHEMA__.changes (
    seq              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id               text COLLATE "C" NOT NULL UNIQUE,
    fact_id          text COLLATE "C" NOT NULL,
    project_id       text COLLATE "C" NOT NULL,
    action           text NOT NULL,
    at               timestamptz NOT NULL,
    actor            text NOT NULL,
    rule             text NOT NULL,
    reason           text NOT NULL,
    related_fact_ids text[] NOT NULL,
    before           json,
    after            json,
    run_id           text
);

CREATE INDEX changes_project_at ON __SCHEMA__.changes (project_id, at, seq);
CREATE INDEX changes_fact ON __SCHEMA__.changes (fact_id);
CREATE INDEX changes_project_run ON __SCHEMA__.changes (project_id, run_id)
    WHERE run_id IS NOT NULL;
