-- A counter bumped whenever a fact's text is rewritten or a fact is deleted, by whichever process
-- writes: a reader that keeps a copy of the keyword index's frequent words in memory
-- (stores/sqlite/_frequent.py) drops it when the counter moves. New facts do not bump it (the
-- copy catches up on the rows above the sequence number it covers).
CREATE TABLE keyword_epoch (
    id     INTEGER PRIMARY KEY CHECK (id = 0),
    epoch  INTEGER NOT NULL
);
INSERT INTO keyword_epoch (id, epoch) VALUES (0, 0);

CREATE TRIGGER facts_keyword_deleted AFTER DELETE ON facts BEGIN
    UPDATE keyword_epoch SET epoch = epoch + 1 WHERE id = 0;
END;

CREATE TRIGGER facts_keyword_rewritten AFTER UPDATE OF content ON facts
WHEN old.content IS NOT new.content BEGIN
    UPDATE keyword_epoch SET epoch = epoch + 1 WHERE id = 0;
END;
