-- The in-memory copies of frequent words (stores/sqlite/_frequent.py), saved for the next
-- process: a process that reads a word from the keyword index (35 ms for a word in a tenth of a
-- million facts, plus the facts' token counts) saves it here, and a later process loads it in
-- one row and reads only the facts added since. One row per word: the bitmap over the facts'
-- seq, the facts holding the word more than once (seqs as int64, counts as int32), the highest
-- seq it covers and the keyword epoch it was read in (a copy of another epoch is never used).
-- Deleting a fact or rewriting its text empties both tables, so what a forgotten fact was part
-- of does not outlive it here.
CREATE TABLE keyword_copies (
    word     TEXT PRIMARY KEY,
    epoch    INTEGER NOT NULL,
    upto     INTEGER NOT NULL,
    facts    INTEGER NOT NULL,
    bits     BLOB NOT NULL,
    repeated BLOB NOT NULL,
    counts   BLOB NOT NULL
);

-- The facts' token counts (FTS5's docsize), up to upto, once read for the whole index.
CREATE TABLE keyword_lengths (
    id      INTEGER PRIMARY KEY CHECK (id = 0),
    epoch   INTEGER NOT NULL,
    upto    INTEGER NOT NULL,
    lengths BLOB NOT NULL
);

CREATE TRIGGER facts_keyword_copies_deleted AFTER DELETE ON facts BEGIN
    DELETE FROM keyword_copies;
    DELETE FROM keyword_lengths;
END;

CREATE TRIGGER facts_keyword_copies_rewritten AFTER UPDATE OF content ON facts
WHEN old.content IS NOT new.content BEGIN
    DELETE FROM keyword_copies;
    DELETE FROM keyword_lengths;
END;
