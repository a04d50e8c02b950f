-- The token count of each fact's keyword vector, for BM25's length normalisation (the same
-- ranking as SQLite's FTS5 bm25()). A stored generated column, so every write path keeps it
-- without a change; adding it rewrites the facts table once.

CREATE FUNCTION __SCHEMA__.search_length(tsvector) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN (SELECT coalesce(sum(cardinality(positions)), 0)::integer FROM unnest($1));

ALTER TABLE __SCHEMA__.facts
    ADD COLUMN search_length integer GENERATED ALWAYS AS (__SCHEMA__.search_length(search)) STORED;
