-- A search marks the facts it returns as read (last_accessed_at, written every half second by the
-- engine's access log). On a full page the new row version cannot stay on the page (not a HOT
-- update), so every index of the table gets an entry for it, the keyword index's in its pending
-- list, which every keyword query scans until the list is merged (at 4 MB by default). At a
-- million facts after about 1,300 searches half the marks were not HOT and the list held 161
-- pages: keyword search p50 / p95 9.2 / 18.7 ms, against 7.4 / 13.8 once the list was merged.
-- A tenth of each page left free keeps most marks on their page (no index entry; applies to
-- pages written from now on, a bulk load's included), and a 512 kB limit bounds the list a
-- query scans (the writer that fills it merges it, off the search path).

ALTER TABLE __SCHEMA__.facts SET (fillfactor = 90);
ALTER INDEX __SCHEMA__.facts_search SET (gin_pending_list_limit = 512);
