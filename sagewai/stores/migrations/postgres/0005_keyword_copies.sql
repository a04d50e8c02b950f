-- The in-memory copies of frequent words (sagewai.stores.postgres._frequent), saved for the next
-- process: a search process that reads a word's facts from the heap (half a second for a word in
-- a tenth of a million facts, cold) saves the result here, and a later process loads it in one
-- row and catches up with what was written since its snapshot. One row per word: the bitmap over
-- the facts' seq (TOAST compresses a sparse one), their token counts in seq order, the facts
-- holding the word more than once, the snapshot it was read in and the table's size then (a
-- copy is not used once the table has grown or shrunk by a tenth).
--
-- Every statement that deletes facts (or truncates the table) empties it, so what a forgotten
-- fact was part of does not outlive it here. The delete skips rows another transaction holds
-- (a concurrent delete empties them anyway; a process saving a word holds its row for one
-- statement): it never waits, so it can never take part in a deadlock of two writers.

CREATE TABLE __SCHEMA__.keyword_copies (
    word       text COLLATE "C" PRIMARY KEY,
    snapshot   text NOT NULL,
    table_size double precision NOT NULL,
    facts      integer NOT NULL,
    bits       bytea NOT NULL,
    lengths    bytea NOT NULL,
    repeated   bigint[] NOT NULL,
    counts     integer[] NOT NULL
);

CREATE FUNCTION __SCHEMA__.forget_keyword_copies() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM gone) THEN
        DELETE FROM __SCHEMA__.keyword_copies WHERE word IN (
            SELECT word FROM __SCHEMA__.keyword_copies FOR UPDATE SKIP LOCKED
        );
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION __SCHEMA__.forget_all_keyword_copies() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM __SCHEMA__.keyword_copies WHERE word IN (
        SELECT word FROM __SCHEMA__.keyword_copies FOR UPDATE SKIP LOCKED
    );
    RETURN NULL;
END
$$;

CREATE TRIGGER facts_deleted_forget_keyword_copies
    AFTER DELETE ON __SCHEMA__.facts REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION __SCHEMA__.forget_keyword_copies();

CREATE TRIGGER facts_truncated_forget_keyword_copies
    AFTER TRUNCATE ON __SCHEMA__.facts
    FOR EACH STATEMENT EXECUTE FUNCTION __SCHEMA__.forget_all_keyword_copies();
