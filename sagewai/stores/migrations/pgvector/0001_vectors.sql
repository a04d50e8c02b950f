-- The vectors of PgVectorStore, in the table __SCHEMA__.__TABLE__ (both validated and quoted by
-- the store before they are substituted), for vectors of __DIMENSION__ dimensions.
-- id is bytea: sagewai ids are arbitrary strings and PostgreSQL text cannot hold a NUL character.
-- Vectors are stored normalised, so the inner product of two rows is their cosine. The HNSW index
-- serves the approximate (cosine) search; the payload columns mirror VectorPayload, and valid_to is
-- 'Infinity' while a fact still holds.

CREATE TABLE __SCHEMA__.__TABLE__ (
    id          bytea PRIMARY KEY,
    embedding   vector(__DIMENSION__) NOT NULL,
    project_id  text COLLATE "C" NOT NULL,
    scope_key   text COLLATE "C" NOT NULL,
    status      text COLLATE "C" NOT NULL,
    kind        text COLLATE "C" NOT NULL,
    fact_type   text COLLATE "C" NOT NULL,
    tags        text[] COLLATE "C" NOT NULL,
    created_at  double precision NOT NULL,
    valid_from  double precision NOT NULL,
    valid_to    double precision NOT NULL
);

CREATE INDEX __TABLE___embedding ON __SCHEMA__.__TABLE__
    USING hnsw (embedding vector_cosine_ops) WITH (m = __HNSW_M__, ef_construction = __EF_CONSTRUCT__);
CREATE INDEX __TABLE___scope ON __SCHEMA__.__TABLE__ (scope_key, status);
CREATE INDEX __TABLE___project ON __SCHEMA__.__TABLE__ (project_id);
CREATE INDEX __TABLE___tags ON __SCHEMA__.__TABLE__ USING gin (tags);
