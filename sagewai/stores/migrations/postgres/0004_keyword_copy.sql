-- What a search process needs to keep an exact in-memory copy of the keyword index's frequent
-- words (sagewai.stores.postgres._frequent): seq, a number per fact for the copy's bitmaps, and
-- written, the transaction that last wrote the fact's keyword vector. A copy read in a snapshot
-- catches up with the facts written by the transactions that snapshot does not see (an index
-- range on written from the snapshot's xmin), so a fact committed late by a slow writer is never
-- missed, whatever the order in which writers commit. Adding the columns rewrites the table once.

ALTER TABLE __SCHEMA__.facts
    ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY,
    ADD COLUMN written xid8 NOT NULL DEFAULT pg_current_xact_id();

CREATE UNIQUE INDEX facts_seq ON __SCHEMA__.facts (seq);
CREATE INDEX facts_written ON __SCHEMA__.facts (written);
