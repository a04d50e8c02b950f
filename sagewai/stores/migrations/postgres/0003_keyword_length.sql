-- What BM25 needs per fact beyond the keyword vector, so the ranking matches SQLite's FTS5 bm25():
-- search_length, the number of tokens (length normalisation), and search_repeats, the words that
-- occur more than once with their counts (every other word of the vector occurs once), which lets
-- a query score a fact with one expression instead of unpacking its whole vector. Both are stored
-- generated columns, so every write path keeps them without a change; adding them rewrites the
-- facts table once.

CREATE FUNCTION __SCHEMA__.search_length(tsvector) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN (SELECT coalesce(sum(cardinality(positions)), 0)::integer FROM unnest($1));

CREATE FUNCTION __SCHEMA__.search_repeats(tsvector) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN (
        SELECT coalesce(jsonb_object_agg(lexeme, cardinality(positions)), '{}'::jsonb)
        FROM unnest($1) WHERE cardinality(positions) > 1
    );

ALTER TABLE __SCHEMA__.facts
    ADD COLUMN search_length integer GENERATED ALWAYS AS (__SCHEMA__.search_length(search)) STORED,
    ADD COLUMN search_repeats jsonb GENERATED ALWAYS AS (__SCHEMA__.search_repeats(search)) STORED;
